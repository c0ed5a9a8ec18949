"""Plugins bundled with Albumen, turned on by their short names (see plugins.manager.BUNDLED)."""
