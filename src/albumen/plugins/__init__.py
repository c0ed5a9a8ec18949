"""Albumen's plugins: what a plugin imports (see docs/PLUGINS.md and plugins.hookspecs).

    from albumen.plugins import ImageFilter, hookimpl, setting

Hook specifications are in hookspecs, loading and calling in manager, Albumen's own plugins in bundled/.
"""

from ..config.schema import setting
from ..process.filters import FilterContext
from ..process.specs import MediaFacts
from ..scan.kinds import KindContext
from .hookspecs import hookimpl
from .types import ExtraPage, ImageFilter, KindInfo, MediaKind, OptionsError, OutputFile, OutputInfo

__all__ = [
    "ExtraPage",
    "FilterContext",
    "ImageFilter",
    "KindContext",
    "KindInfo",
    "MediaFacts",
    "MediaKind",
    "OptionsError",
    "OutputFile",
    "OutputInfo",
    "hookimpl",
    "setting",
]
