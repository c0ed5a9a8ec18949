"""Where a theme's files are looked up (kept apart from Jinja: the build needs this long before it renders)."""

from __future__ import annotations

from pathlib import Path

DEFAULT_THEME = Path(__file__).resolve().parent.parent / "themes" / "default"


def theme_dirs(user_theme: Path | None) -> list[Path]:
    """Theme folders in lookup order: the user's theme overrides the default file by file."""
    dirs = [DEFAULT_THEME]
    if user_theme is not None:
        dirs.insert(0, user_theme)
    return dirs
