"""Albumen: a fast static photo gallery generator."""

__version__ = "0.1.0"
