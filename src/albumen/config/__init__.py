"""Typed, documented settings: declared in schema.py, loaded and validated in load.py."""

from .load import CONFIG_NAME, LoadedConfig, album_path, find_config, load_config, validate_config
from .schema import (
    Config,
    FeedsConfig,
    ImagesConfig,
    PagesConfig,
    SortConfig,
    StreamConfig,
    ThumbnailsConfig,
    iter_settings,
)

__all__ = [
    "CONFIG_NAME",
    "Config",
    "FeedsConfig",
    "StreamConfig",
    "album_path",
    "ImagesConfig",
    "LoadedConfig",
    "PagesConfig",
    "SortConfig",
    "ThumbnailsConfig",
    "find_config",
    "iter_settings",
    "load_config",
    "validate_config",
]
