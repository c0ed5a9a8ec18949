"""A Sigal configuration (sigal.conf.py) as an annotated albumen.toml: `albumen import-sigal`.

The file is read with pyconf (its literal assignments), never run. Every setting of Sigal 2.6.1 and
of its bundled plugins is looked at: it becomes a line of albumen.toml that says where it came from
and how it was converted, or it is listed (printed, and at the end of the file) as not needed in
Albumen or not carried over, with the reason. What becomes of each one is documented in
docs/SIGAL.md.

Settings the file does not set keep Albumen's defaults, with one exception: the orders of albums and
photos. Sigal sorts both by name unless told otherwise, Albumen by date; the import writes Sigal's
orders so that the gallery reads as it did.

The written file is checked before it is written: it must read back as the values meant, and
Albumen's own loader must accept it.
"""

from __future__ import annotations

import math
import os
import re
import textwrap
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..config.schema import SECTIONS, Config, ImagesConfig, iter_settings
from ..config.tomlwrite import toml_key, toml_value
from ..errors import BuildError
from .pyconf import Assigned, PyConf

SIGAL_VERSION = "2.6.1"

# sigal/settings.py's _DEFAULT_CONFIG in Sigal 2.6.1, and the defaults its bundled plugins use
SIGAL_DEFAULTS: dict[str, Any] = {
    "albums_sort_attr": "name", "albums_sort_reverse": False, "autorotate_images": True, "autoplay": False,
    "colorbox_column_size": 3, "copy_exif_data": False, "datetime_format": "%c", "display_timestamp": False,
    "destination": "_build", "files_to_copy": (), "galleria_theme": "classic", "google_analytics": "",
    "google_tag_manager": "", "ignore_directories": [], "ignore_files": [],
    "img_extensions": [".jpg", ".jpeg", ".png", ".gif", ".heic", ".tif", ".tiff", ".webp"],
    "img_processor": "ResizeToFit", "img_size": (640, 480), "img_format": None, "index_in_url": False,
    "jpg_options": {"quality": 85, "optimize": True, "progressive": True}, "keep_orig": False,
    "html_language": "en", "leaflet_provider": "OpenStreetMap.Mapnik", "links": "", "locale": "",
    "make_thumbs": True, "max_img_pixels": None, "map_height": "500px", "medias_sort_attr": "filename",
    "medias_sort_reverse": False, "mp4_options": ["-crf", "23", "-strict", "-2"], "mp4_options_second_pass": None,
    "orig_dir": "original", "orig_link": False, "rel_link": False, "output_filename": "index.html",
    "piwik": {"tracker_url": "", "site_id": 0}, "plugin_paths": [], "plugins": [], "site_logo": "",
    "show_map": False, "source": "", "theme": "colorbox", "thumb_dir": "thumbnails", "thumb_fit": True,
    "thumb_fit_centering": (0.5, 0.5), "thumb_prefix": "", "thumb_size": (200, 150), "thumb_suffix": "",
    "thumb_video_delay": 0, "thumb_video_black_retries": 0, "thumb_video_black_retry_offset": 1,
    "thumb_video_black_max_colors": 4, "title": "", "use_orig": False, "user_css": None,
    "video_converter": "ffmpeg", "video_extensions": [".3gp", ".avi", ".mkv", ".mov", ".mp4", ".ogv", ".webm"],
    "video_format": "webm", "video_always_convert": False, "video_size": (480, 360), "watermark": "",
    "webm_options": ["-crf", "10", "-b:v", "1.6M", "-qmin", "4", "-qmax", "63"], "webm_options_second_pass": None,
    "write_html": True, "zip_gallery": False, "zip_media_format": "resized",
    # read by the bundled plugins (sigal/plugins/*.py), with their defaults
    "author": "", "watermark_position": "scale", "watermark_opacity": 1, "copyright": "",
    "copyright_text_font": None, "copyright_text_font_size": 10, "copyright_text_color": (0, 0, 0),
    "copyright_text_position": None, "adjust_options": None,
    "compress_assets_options": {"suffixes": ["htm", "html", "css", "js", "svg"], "method": "gzip"},
    "encrypt_options": None, "titleregexp": None, "rss_feed": None, "atom_feed": None,
    "nonmedia_files_options": {}, "zip_skip_if_exists": False,
}
_BUILTIN_THEMES = ("colorbox", "galleria", "photoswipe")

# --------------------------------------------------------------------------------------------------
# Sigal's bundled plugins and Albumen's. The one place to change when an Albumen plugin or one of its
# options is renamed: `albumen` is the plugin's name in albumen.toml, `options` maps what a value
# means (the key used by the code below) to the option's name.

PLUGINS_KEY = "plugins"  # albumen.toml: plugins = ["watermark", ...], the plugins to run, in order
PLUGIN_TABLE = "plugin"  # albumen.toml: [plugin.watermark], the options of one plugin (a [plugins.NAME]
#                          table cannot sit beside a plugins = [...] list: TOML refuses a key defined twice)


@dataclass(frozen=True)
class PluginMap:
    """What becomes of one of Sigal's bundled plugins."""

    settings: tuple[str, ...]  # the Sigal settings it reads
    albumen: str = ""  # the Albumen plugin doing the same
    options: dict[str, str] = field(default_factory=dict)
    core: str = ""  # or: part of Albumen itself (what does it)
    lost: str = ""  # or: not carried over (why)


def _same(*names: str) -> dict[str, str]:
    return {name: name for name in names}


PLUGINS: dict[str, PluginMap] = {
    "sigal.plugins.adjust": PluginMap(("adjust_options",), "adjust", _same("brightness", "contrast", "color", "sharpness")),
    "sigal.plugins.compress_assets": PluginMap(("compress_assets_options",), "compress", _same("formats", "extensions")),
    "sigal.plugins.copyright": PluginMap(
        ("copyright", "copyright_text_font", "copyright_text_font_size", "copyright_text_color", "copyright_text_position"),
        "copyright", _same("text", "font", "size", "color", "opacity", "position"),
    ),
    "sigal.plugins.titleregexp": PluginMap(("titleregexp",), "titles", _same("rules", "pattern", "replace", "count", "albums", "media")),
    "sigal.plugins.watermark": PluginMap(
        ("watermark", "watermark_position", "watermark_opacity"), "watermark",
        _same("image", "position", "scale", "opacity", "margin"),
    ),
    "sigal.plugins.zip_gallery": PluginMap(("zip_gallery", "zip_media_format", "zip_skip_if_exists"), "zip", _same("source")),
    "sigal.plugins.feeds": PluginMap(
        ("rss_feed", "atom_feed"), core="part of Albumen: feed.xml (Atom) and rss.xml are written when url is set ([feeds])"
    ),
    "sigal.plugins.media_page": PluginMap((), core="part of Albumen: every photo and video has a page of its own"),
    "sigal.plugins.nomedia": PluginMap((), core="part of Albumen: .nomedia files hide files and folders as in Sigal"),
    "sigal.plugins.extended_caching": PluginMap(
        (), core="part of Albumen: its build cache keeps every file's metadata between builds"
    ),
    "sigal.plugins.encrypt": PluginMap(
        ("encrypt_options",), lost=(
            "use password albums: [passwords] in albumen.toml or 'password:' in an album's index.md, encrypted end to end (docs/PASSWORDS.md); Sigal's password is not copied: set it again"
        ),
    ),
    "sigal.plugins.nonmedia_files": PluginMap(("nonmedia_files_options",), "documents", _same("extensions")),
}
_PLUGIN_OF = {setting: module for module, plugin in PLUGINS.items() for setting in plugin.settings}

# Settings with nothing to write: (carried over?, why). False: Albumen needs no setting for it
# (it does the same, or the setting only mattered to Sigal's own files); True: something is lost.
_FIXED: dict[str, tuple[bool, str]] = {
    "autoplay": (True, "Albumen's viewer has no slideshow"),
    "colorbox_column_size": (True, "a setting of Sigal's colorbox theme; Albumen's grid fits the window"),
    "galleria_theme": (True, "a setting of Sigal's galleria theme"),
    "site_logo": (True, "Albumen's theme shows no logo; a theme of your own can (docs/THEMES.md)"),
    "user_css": (True, "Albumen has no extra style sheet setting: a theme's static/albumen.css replaces the default "
                 "one (copy it and add your rules; docs/THEMES.md)"),
    "datetime_format": (True, "dates are written in the site's language (language), in its usual form"),
    "display_timestamp": (True, "Albumen's pages do not show when they were built"),
    "files_to_copy": (True, "copy these files into the output folder yourself after the build (Albumen removes "
                      "only files it wrote), or put them in a theme's static/ folder"),
    "google_analytics": (True, "Albumen's theme makes no request to other sites; add a tracker in a theme's "
                         "base.html if you want one (docs/THEMES.md)"),
    "google_tag_manager": (True, "Albumen's theme makes no request to other sites; add it in a theme's base.html"),
    "piwik": (True, "Albumen's theme makes no request to other sites; add a tracker in a theme's base.html"),
    "links": (True, "Albumen's theme has no menu of links; a theme's base.html can add one (docs/THEMES.md)"),
    "show_map": (True, "Albumen's theme shows no map, and published images carry no GPS position unless "
                 "images.keep_metadata is true; pages.exif can show the coordinates as text ('gps')"),
    "leaflet_provider": (True, "Albumen's theme shows no map"),
    "map_height": (True, "Albumen's theme shows no map"),
    "img_extensions": (False, "Albumen recognises photos by their content, whatever their extension"),
    "video_extensions": (False, "Albumen recognises videos by their content, whatever their extension"),
    "thumb_dir": (False, "Albumen names and places thumbnails itself"),
    "thumb_prefix": (False, "Albumen names and places thumbnails itself"),
    "thumb_suffix": (False, "Albumen names and places thumbnails itself"),
    "thumb_video_delay": (False, "Albumen takes a video's poster from its first frame that is not black"),
    "thumb_video_black_retries": (False, "Albumen takes a video's poster from its first frame that is not black"),
    "thumb_video_black_retry_offset": (False, "Albumen takes a video's poster from its first frame that is not black"),
    "thumb_video_black_max_colors": (False, "Albumen takes a video's poster from its first frame that is not black"),
    "thumb_fit_centering": (True, "Albumen's square thumbnails are cropped about the centre"),
    "make_thumbs": (True, "Albumen's album pages need thumbnails: they are always made"),
    "autorotate_images": (True, "Albumen always turns photos upright from their EXIF orientation"),
    "orig_dir": (False, "Albumen names and places the originals it publishes itself"),
    "orig_link": (True, "Albumen publishes cleaned copies of originals, never links to the photo folder (a link "
                  "would publish the file as it is, its location included)"),
    "rel_link": (True, "Albumen publishes cleaned copies of originals, never links to the photo folder"),
    "use_orig": (True, "Albumen always publishes resized images; the originals can be offered beside them "
                 "(images.originals = \"copy\")"),
    "output_filename": (True, "Albumen's pages are always index.html"),
    "write_html": (True, "Albumen always writes the pages"),
    "plugin_paths": (True, "Albumen cannot run Sigal's plugins"),
}

# where a setting that could not be read goes in albumen.toml, for the hint to set it by hand
_ALBUMEN_KEY = {
    "title": "title", "author": "author", "source": "source", "destination": "output", "img_size": "images.sizes",
    "jpg_options": "images.quality", "thumb_size": "thumbnails.height", "thumb_fit": "thumbnails.style",
    "albums_sort_attr": "sort.albums", "albums_sort_reverse": "sort.albums", "medias_sort_attr": "sort.media",
    "medias_sort_reverse": "sort.media", "ignore_directories": "ignore", "ignore_files": "ignore",
    "keep_orig": "images.originals", "copy_exif_data": "images.keep_metadata", "max_img_pixels": "images.max_pixels",
    "video_size": "videos.max_size", "mp4_options": "videos.crf", "html_language": "language", "locale": "language",
    "index_in_url": "pages.links", "img_format": "images.formats", "video_format": "videos.formats",
    "plugins": PLUGINS_KEY,
}


@dataclass
class Line:
    """One setting written to albumen.toml."""

    table: str  # "" for the top level, "images", f"{PLUGIN_TABLE}.watermark"
    key: str
    value: Any
    origin: str  # 'sigal.conf.py line 12: img_size = (800, 600)', or that it is Sigal's default
    notes: list[str] = field(default_factory=list)
    approximate: bool = False


@dataclass
class Left:
    """A Sigal setting (or plugin) that gives no line: not needed, or not carried over."""

    name: str
    where: str  # 'line 12', '' for a default
    reason: str
    lost: bool  # True: not carried over; False: Albumen needs no setting for it


@dataclass
class SigalImport:
    conf_path: Path
    toml_path: Path
    lines: list[Line] = field(default_factory=list)
    left: list[Left] = field(default_factory=list)
    plugins: list[str] = field(default_factory=list)
    source: Path | None = None  # the photo folder, when the config names it

    @property
    def approximate(self) -> list[Line]:
        return [line for line in self.lines if line.approximate]


class _Importer:
    def __init__(self, conf: PyConf, conf_path: Path, toml_path: Path) -> None:
        self.conf = conf
        self.conf_name = conf_path.name
        self.conf_dir = conf_path.resolve().parent
        self.toml_dir = toml_path.resolve().parent
        self.used: set[str] = set()
        self.out = SigalImport(conf_path=conf_path, toml_path=toml_path)

    # ---- reading
    def given(self, name: str) -> Assigned | None:
        self.used.add(name)
        return self.conf.values.get(name)

    def value(self, name: str) -> Any:
        """The file's value, else Sigal's default (callers check unknown() first)."""
        assigned = self.given(name)
        return assigned.value if assigned is not None else SIGAL_DEFAULTS.get(name)

    def unknown(self, *names: str) -> bool:
        """A name set to something only running the file would give: what depends on it is not written
        (the name is reported with its reason)."""
        return any(name in self.conf.unread for name in names)

    def where(self, name: str) -> str:
        assigned = self.conf.values.get(name)
        if assigned is None:
            return ""
        return f"line {assigned.line}" if assigned.end_line == assigned.line else f"lines {assigned.line}-{assigned.end_line}"

    def origin(self, *names: str) -> str:
        """Where a value comes from: the lines of the file that gave it, and the Sigal defaults it took."""
        given = [name for name in names if name in self.conf.values]
        if not given:
            return f"Sigal's default ({self.conf_name} does not set {' or '.join(names)})"
        parts = []
        for name in names:
            assigned = self.conf.values.get(name)
            if assigned is None:
                parts.append(f"Sigal's default {name} ({_shown(SIGAL_DEFAULTS.get(name))})")
                continue
            text = " ".join(assigned.source.split())
            text = text if len(text) <= 80 else text[:77] + "..."
            parts.append(f"{self.conf_name} {self.where(name)}: {text}")
        return "; ".join(parts)

    # ---- writing
    def put(self, key: str, value: Any, names: tuple[str, ...] | str, note: str = "", approximate: bool = False) -> Line:
        names = (names,) if isinstance(names, str) else names
        table, _, leaf = key.rpartition(".")
        line = Line(table, leaf, value, self.origin(*names), [note] if note else [], approximate)
        self.out.lines.append(line)
        return line

    def lose(self, name: str, reason: str) -> None:
        self.used.add(name)
        self.out.left.append(Left(name, self.where(name), reason, lost=True))

    def skip(self, name: str, reason: str) -> None:
        self.used.add(name)
        self.out.left.append(Left(name, self.where(name), reason, lost=False))

    def plugin_left(self, module: str, reason: str, lost: bool) -> None:
        """A plugin of the plugins list that gives no line of albumen.toml."""
        self.out.left.append(Left(f"plugin {module}", self.where("plugins"), reason, lost))

    # ---- paths
    def path(self, value: str) -> str:
        """A path of sigal.conf.py (Sigal makes it relative to that file's folder) relative to the new
        albumen.toml's folder instead."""
        if os.path.isabs(value) or value.startswith("~"):
            return value
        absolute = os.path.normpath(os.path.join(self.conf_dir, value))
        try:
            return os.path.relpath(absolute, self.toml_dir)
        except ValueError:  # another drive (Windows)
            return absolute

    def display_size(self) -> tuple[int, int]:
        """Sigal's resized images' box (long, short), for the conversions that need a size in pixels."""
        size = self.value("img_size") if not self.unknown("img_size") else None
        if _pair(size):
            return max(size), min(size)
        return 640, 480


def map_sigal(conf: PyConf, conf_path: Path, toml_path: Path) -> SigalImport:
    """Every setting of the file: a line of albumen.toml, or a Left saying why not."""
    ctx = _Importer(conf, conf_path, toml_path)
    for step in (_site, _paths, _images, _thumbnails, _sort, _videos, _pages, _fixed, _plugins):
        step(ctx)
    _leftovers(ctx)
    return ctx.out


# ---------------------------------------------------------------------------------------- core settings
def _site(ctx: _Importer) -> None:
    for name in ("title", "author"):
        value = ctx.value(name)
        if ctx.unknown(name) or ctx.given(name) is None:
            continue
        if isinstance(value, str) and value.strip():
            ctx.put(name, value, name)
        elif value in ("", None):
            ctx.skip(name, "empty")
        else:
            ctx.lose(name, f"not text ({_shown(value)})")
    _language(ctx)


def _language(ctx: _Importer) -> None:
    allowed = _choices("language")
    html = ctx.given("html_language")
    locale = ctx.given("locale")
    chosen = None
    if html is not None and not ctx.unknown("html_language"):
        code = str(html.value or "").replace("_", "-").split("-")[0].lower()
        if code == _default("language"):
            ctx.skip("html_language", f"{code!r}, Albumen's default language too")
        elif code in allowed:
            chosen = ("html_language", code)
        elif code:
            ctx.lose("html_language", f"Albumen's theme speaks {_or(allowed)} only")
    if locale is not None and not ctx.unknown("locale"):
        code = str(locale.value or "").split(".")[0].replace("-", "_").split("_")[0].lower()
        if not code:
            ctx.skip("locale", "empty (this computer's locale)")
        elif chosen is not None or html is not None:
            ctx.skip("locale", "the language comes from html_language; Albumen formats dates in that language")
        elif code == _default("language"):
            ctx.skip("locale", f"{code!r}, Albumen's default language too")
        elif code in allowed:
            chosen = ("locale", code)
        else:
            ctx.lose("locale", f"Albumen's theme speaks {_or(allowed)} only (dates included)")
    if chosen is not None:
        name, code = chosen
        ctx.put("language", code, name, "the language of the theme's text and of the dates")


def _paths(ctx: _Importer) -> None:
    source = ctx.given("source")
    if source is not None and not ctx.unknown("source"):
        if isinstance(source.value, str) and source.value:
            rel = ctx.path(source.value)
            ctx.put("source", rel, "source", f"Sigal reads it relative to {ctx.conf_name}; here it is relative to this file")
            ctx.out.source = Path(ctx.toml_dir, os.path.expanduser(rel)).resolve()
        else:
            ctx.skip("source", "empty: give the photo folder to albumen build")
    destination = ctx.given("destination")
    if not ctx.unknown("destination"):
        value = destination.value if destination is not None else SIGAL_DEFAULTS["destination"]
        if isinstance(value, str) and value:
            rel = ctx.path(value)
            if os.path.normpath(rel) != _default("output") or destination is not None:
                ctx.put("output", rel, "destination", f"Sigal reads it relative to {ctx.conf_name}; here it is relative to this file")
    theme = ctx.given("theme")
    if theme is not None and not ctx.unknown("theme"):
        if theme.value in _BUILTIN_THEMES:
            ctx.lose("theme", f"Sigal's {theme.value} theme: Albumen has one theme of its own (a justified grid and a "
                     "full-screen viewer), changed file by file by a theme folder (theme = \"my-theme\", docs/THEMES.md)")
        else:
            ctx.lose("theme", "a Sigal theme's templates are written for Sigal's pages; an Albumen theme overrides the "
                     "default one file by file (docs/THEMES.md)")
    if ctx.given("ignore_directories") is not None or ctx.given("ignore_files") is not None:
        _ignore(ctx)


def _ignore(ctx: _Importer) -> None:
    names = ("ignore_directories", "ignore_files")
    patterns: list[str] = []
    for name in names:
        if ctx.unknown(name) or ctx.given(name) is None:
            continue
        value = ctx.value(name)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)) or not all(isinstance(p, str) for p in value):
            ctx.lose(name, f"not a list of patterns ({_shown(value)})")
            continue
        patterns += [p for p in value if p and p not in patterns]
    given = tuple(n for n in names if ctx.conf.values.get(n) is not None)
    if patterns:
        ctx.put("ignore", patterns, given,
                "Sigal matches ignore_directories against folders' paths and ignore_files against files' paths, "
                "relative to the photo folder; Albumen matches each pattern against the names and the relative "
                "paths of files and folders alike", approximate=True)
    else:
        for name in given:
            if not ctx.unknown(name) and not any(left.name == name for left in ctx.out.left):
                ctx.skip(name, "empty")


def _images(ctx: _Importer) -> None:
    processor = ctx.value("img_processor")
    resized = True
    if ctx.given("img_processor") is not None and not ctx.unknown("img_processor"):
        if not processor:
            resized = False
            ctx.lose("img_processor", "Sigal did not resize; Albumen always publishes resized images (the originals "
                     "can be offered beside them: images.originals = \"copy\")")
        elif processor in ("ResizeToFill", "SmartResize"):
            ctx.lose("img_processor", f"{processor} crops photos to the size's exact shape; Albumen never crops the "
                     "resized images (only square thumbnails)")
        elif processor == "ResizeToFit":
            ctx.skip("img_processor", "Sigal's default; Albumen fits photos in their size the same way")
        else:
            ctx.lose("img_processor", f"{processor!r} is not one of Sigal's processors")
    size = ctx.given("img_size")
    if size is not None and not ctx.unknown("img_size"):
        if not resized:
            ctx.skip("img_size", "unused by Sigal (img_processor is None)")
        elif _pair(size.value):
            _sizes(ctx, size.value)
        else:
            ctx.lose("img_size", f"not a (width, height) pair of whole numbers ({_shown(size.value)})")
    _img_format(ctx)
    _jpg_options(ctx)
    pixels = ctx.given("max_img_pixels")
    if pixels is not None and not ctx.unknown("max_img_pixels"):
        if pixels.value is None:
            ctx.skip("max_img_pixels", "Sigal's default (Pillow's limit, which is Albumen's default too)")
        elif _whole(pixels.value) and pixels.value >= 1:
            ctx.put("images.max_pixels", pixels.value, "max_img_pixels")
        else:
            ctx.lose("max_img_pixels", f"not a number of pixels ({_shown(pixels.value)})")
    exif = ctx.given("copy_exif_data")
    if exif is not None and not ctx.unknown("copy_exif_data"):
        if exif.value is True:
            ctx.put("images.keep_metadata", True, "copy_exif_data",
                    "publishes every photo's EXIF, GPS position and serial numbers included, as Sigal did; without "
                    "this line only Artist and Copyright are kept")
        else:
            ctx.skip("copy_exif_data", "Albumen's default too: published images keep only Artist and Copyright")
    orig = ctx.given("keep_orig")
    if orig is not None and not ctx.unknown("keep_orig"):
        if orig.value:
            ctx.put("images.originals", "copy", "keep_orig",
                    "a download copy of each original; unlike Sigal's, where it was taken is removed from it (GPS, "
                    "IPTC and XMP places) unless images.keep_metadata is true")
        else:
            ctx.skip("keep_orig", "Albumen's default too: originals are not published")


def _sizes(ctx: _Importer, size: tuple[int, int]) -> None:
    long, short = max(size), min(size)
    limits = next(f.metadata for key, f in iter_settings() if key == "images.sizes")
    clamped = min(max(long, limits["min"]), limits["max"])
    sizes = [s for s in ImagesConfig().sizes if s < clamped] + [clamped]
    note = (f"Sigal fits photos in {long}x{short} ({short}x{long} when upright); Albumen's sizes are long edges, so "
            f"its largest is {clamped} px")
    if long != short:
        note += (f": a photo squarer than {long}:{short} comes out up to {long / short:.2f} times larger than Sigal "
                 f"made it (a square one {long}x{long}, not {short}x{short})")
    if len(sizes) > 1:
        note += ". The smaller sizes (Albumen's defaults below it) serve small screens"
    if clamped != long:
        note += f". {long} px is outside Albumen's {limits['min']}-{limits['max']}: {clamped} px"
    ctx.put("images.sizes", sizes, "img_size", note, approximate=long != short or clamped != long)


def _img_format(ctx: _Importer) -> None:
    fmt = ctx.given("img_format")
    if fmt is None or ctx.unknown("img_format"):
        return
    name = str(fmt.value or "").upper()
    extra = {"WEBP": "webp", "AVIF": "avif"}.get(name)
    if not name:
        ctx.skip("img_format", "Sigal's default (each photo keeps its format); Albumen publishes JPEG")
    elif name in ("JPEG", "JPG"):
        ctx.skip("img_format", "Albumen publishes JPEG")
    elif extra:
        ctx.put("images.formats", ["jpeg", extra], "img_format",
                f"Albumen makes {name} images and JPEG ones for the browsers that cannot show {name}")
    else:
        ctx.lose("img_format", f"Albumen publishes JPEG, plus WebP or AVIF when asked (images.formats), not {name}")


def _jpg_options(ctx: _Importer) -> None:
    options = ctx.given("jpg_options")
    if options is None or ctx.unknown("jpg_options"):
        return
    if not isinstance(options.value, dict):
        ctx.lose("jpg_options", f"not a dict ({_shown(options.value)})")
        return
    others = []
    for key, value in options.value.items():
        if key == "quality" and _whole(value):
            quality = min(max(value, 1), 100)
            ctx.put("images.quality", quality, "jpg_options",
                    "JPEG quality, on the same scale as Sigal's (Pillow's)" + ("" if quality == value else f"; {value} is outside 1-100"))
        elif key == "progressive" and isinstance(value, bool):
            ctx.put("images.progressive", value, "jpg_options",
                    "for the resized images (Albumen writes its thumbnails baseline)" if value else "")
        elif key == "optimize":
            continue  # Albumen always does
        else:
            others.append(str(key))
    if others:
        ctx.out.left.append(Left(f"jpg_options ({', '.join(others)})", ctx.where("jpg_options"),
                                 "Albumen sets the other options of its JPEG encoder itself", lost=True))


def _thumbnails(ctx: _Importer) -> None:
    size, fit = ctx.given("thumb_size"), ctx.given("thumb_fit")
    box = ctx.value("thumb_size") if not ctx.unknown("thumb_size") else None
    w, h = box if _pair(box) else SIGAL_DEFAULTS["thumb_size"]
    square = fit is not None and not ctx.unknown("thumb_fit") and bool(fit.value)
    if size is not None and not ctx.unknown("thumb_size"):
        if _pair(size.value):
            limits = next(f.metadata for key, f in iter_settings() if key == "thumbnails.height")
            shown = min(max(h, limits["min"]), limits["max"])
            if square:
                note = f"the side of Albumen's square thumbnails; Sigal's filled a {w}x{h} box"
            else:
                note = (f"Sigal's thumbnails fit in (with thumb_fit, fill) a {w}x{h} box; Albumen's grid rows are "
                        f"{shown} px high and each photo keeps its shape, its width following")
            ctx.put("thumbnails.height", shown, "thumb_size", note, approximate=not square or w != h or shown != h)
        else:
            ctx.lose("thumb_size", f"not a (width, height) pair of whole numbers ({_shown(size.value)})")
    if fit is not None and not ctx.unknown("thumb_fit"):
        if fit.value:
            ctx.put("thumbnails.style", "square", "thumb_fit",
                    f"Sigal crops thumbnails to the {w}x{h} box; Albumen crops them square", approximate=w != h)
        else:
            ctx.put("thumbnails.style", "justified", "thumb_fit",
                    "Albumen's default: rows of thumbnails that keep each photo's shape")


_ALBUM_ATTRS = {"name": "name", "path": "name", "title": "title"}
_MEDIA_ATTRS = {"filename": "name", "dst_filename": "name", "src_filename": "name", "title": "title", "date": "date"}
_SORT_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")


def _sort(ctx: _Importer) -> None:
    """Sigal sorts albums and photos by name unless told otherwise, Albumen by date: the order is always
    written, Sigal's default included, so that the gallery reads as it did."""
    for kind, attr_name, reverse_name, attrs in (
        ("albums", "albums_sort_attr", "albums_sort_reverse", _ALBUM_ATTRS),
        ("media", "medias_sort_attr", "medias_sort_reverse", _MEDIA_ATTRS),
    ):
        if ctx.unknown(attr_name, reverse_name):
            for name, other in ((attr_name, reverse_name), (reverse_name, attr_name)):
                if name in ctx.conf.values and ctx.unknown(other):
                    ctx.lose(name, f"goes with {other}, which cannot be read: set sort.{kind} by hand")
            continue
        attr, reverse = ctx.value(attr_name), ctx.value(reverse_name)
        notes = []
        approximate = False
        if isinstance(attr, (list, tuple)) and attr and kind == "albums":
            if len(attr) > 1:
                notes.append(f"Sigal tries {', '.join(map(str, attr))} in turn; Albumen sorts by the first")
                approximate = True
            attr = attr[0]
        key = None
        if isinstance(attr, str):
            if attr.startswith("meta."):
                key = attr[5:] if _SORT_KEY.match(attr[5:]) else None
                if key:
                    notes.append(f"the sidecars' {key!r} key")
            else:
                key = attrs.get(attr)
        if key is None:
            ctx.lose(attr_name, f"Albumen sorts {'albums' if kind == 'albums' else 'photos'} by 'date', 'name', 'title' "
                     f"or a sidecar key, not {_shown(attr)}")
            continue
        if kind == "albums" and key == "date":
            notes.append("Albumen dates an album by its index.md's date, else by its newest photo")
        order = ("-" if reverse else "") + key
        given = tuple(n for n in (attr_name, reverse_name) if n in ctx.conf.values)
        line = ctx.put(f"sort.{kind}", order, given or (attr_name, reverse_name), "; ".join(notes), approximate)
        if not given:
            line.notes.insert(0, f"Sigal's order ({'albums' if kind == 'albums' else 'photos'} by name); Albumen's "
                              f"own default is {'newest first' if kind == 'albums' else 'by date'}")


def _videos(ctx: _Importer) -> None:
    fmt = ctx.given("video_format")
    video_format = ctx.value("video_format")
    if fmt is not None and not ctx.unknown("video_format"):
        if fmt.value == "webm":
            ctx.put("videos.formats", ["mp4", "webm"], "video_format",
                    "Albumen always makes H.264 MP4, which plays everywhere, and adds WebM (VP9) for the browsers that take it")
        elif fmt.value == "mp4":
            ctx.skip("video_format", "Albumen always makes H.264 MP4")
        else:
            ctx.lose("video_format", f"Albumen makes MP4, plus WebM or AV1 when asked (videos.formats), not {_shown(fmt.value)}")
    size = ctx.given("video_size")
    if size is not None and not ctx.unknown("video_size"):
        limits = next(f.metadata for key, f in iter_settings() if key == "videos.max_size")
        if size.value is None:
            ctx.put("videos.max_size", limits["max"], "video_size",
                    "Sigal did not resize videos; this is Albumen's largest size (videos are never upscaled)")
        elif _pair(size.value):
            long = max(size.value)
            shown = min(max(long, limits["min"]), limits["max"])
            ctx.put("videos.max_size", shown, "video_size",
                    f"Albumen's size is the long edge; Sigal fitted videos in {size.value[0]}x{size.value[1]}",
                    approximate=size.value[0] != size.value[1])
        else:
            ctx.lose("video_size", f"not a (width, height) pair ({_shown(size.value)})")
    convert = ctx.given("video_always_convert")
    if convert is not None and not ctx.unknown("video_always_convert"):
        if convert.value:
            ctx.put("videos.remux", False, "video_always_convert", "every video is encoded again, none copied as it is")
        else:
            ctx.skip("video_always_convert", "Albumen copies a video without encoding it again when it can (videos.remux)")
    converter = ctx.given("video_converter")
    if converter is not None and not ctx.unknown("video_converter"):
        value = str(converter.value or "")
        if os.path.isabs(value) and "ffmpeg" in os.path.basename(value):
            ctx.put("videos.ffmpeg", value, "video_converter", "a system ffmpeg instead of the one bundled with PyAV")
        elif os.path.basename(value) == "ffmpeg":
            ctx.skip("video_converter", "Albumen has FFmpeg of its own (bundled with PyAV)")
        else:
            ctx.lose("video_converter", "Albumen runs FFmpeg (its own, or a system ffmpeg named by videos.ffmpeg), "
                     f"not {_shown(value)}")
    for name in ("mp4_options", "webm_options"):
        options = ctx.given(name)
        if options is None or ctx.unknown(name):
            continue
        if name[:-8] != video_format:
            ctx.skip(name, f"unused by Sigal (video_format is {video_format!r})")
        elif _plain(options.value) == _plain(SIGAL_DEFAULTS[name]):
            ctx.skip(name, "Sigal's default")
        elif name == "mp4_options":
            _ffmpeg_options(ctx, name, options.value)
        else:
            ctx.lose(name, "Albumen chooses its WebM (VP9) encoding itself; videos.crf sets the H.264 quality")
    for name in ("mp4_options_second_pass", "webm_options_second_pass"):
        second = ctx.given(name)
        if second is not None and not ctx.unknown(name):
            if second.value:
                ctx.lose(name, "Albumen encodes in one pass, to a quality (videos.crf)")
            else:
                ctx.skip(name, "Sigal's default (one pass)")


def _ffmpeg_options(ctx: _Importer, name: str, options: Any) -> None:
    if not isinstance(options, (list, tuple)) or not all(isinstance(o, str) for o in options):
        ctx.lose(name, f"not a list of ffmpeg options ({_shown(options)})")
        return
    presets = _choices("videos.preset")
    rest: list[str] = []
    items = list(options)
    while items:
        flag = items.pop(0)
        value = items[0] if items and not items[0].startswith("-") else None
        if flag == "-crf" and value is not None and value.isdigit() and int(value) <= 51:
            ctx.put("videos.crf", int(items.pop(0)), name, "H.264 quality (CRF), on ffmpeg's scale")
        elif flag == "-preset" and value in presets:
            ctx.put("videos.preset", items.pop(0), name)
        elif flag in ("-b:a", "-ab") and value is not None and re.fullmatch(r"\d+k", value):
            ctx.put("videos.audio_bitrate", int(items.pop(0)[:-1]), name, "the AAC sound's bitrate, in kbit/s")
        else:
            rest.append(flag if value is None else f"{flag} {items.pop(0)}")
    if rest:
        ctx.out.left.append(Left(f"{name} ({' '.join(rest)})", ctx.where(name),
                                 "Albumen runs the encoder itself: videos.crf, videos.preset and videos.audio_bitrate "
                                 "are its settings", lost=True))


def _pages(ctx: _Importer) -> None:
    index = ctx.given("index_in_url")
    if index is not None and not ctx.unknown("index_in_url"):
        if index.value:
            ctx.put("pages.links", "index.html", "index_in_url", "links end in index.html, so the site also works from disk")
        else:
            ctx.skip("index_in_url", "Albumen's default: links end in '/'")
    ctx.out.lines.append(Line(
        "pages", "slugs", "original",
        "Sigal's addresses: albums are named after their folders, as they are",
        ["keeps the albums' addresses of the Sigal gallery (Albumen's default makes ASCII names: 'Été' -> 'ete'); "
         "photos' addresses change, since Albumen gives each photo a page of its own"],
    ))


def _fixed(ctx: _Importer) -> None:
    for name, (lost, reason) in _FIXED.items():
        assigned = ctx.given(name)
        if assigned is None or ctx.unknown(name):
            continue
        default = _plain(assigned.value) == _plain(SIGAL_DEFAULTS.get(name))
        if default or assigned.value in ("", None, [], ()):
            ctx.skip(name, "Sigal's default" if default else "empty")
        elif lost:
            ctx.lose(name, reason)
        else:
            ctx.skip(name, reason)


# ---------------------------------------------------------------------------------------------- plugins
class _Plugin:
    """The options being gathered for one Albumen plugin, under the names PLUGINS gives them."""

    def __init__(self, ctx: _Importer, module: str) -> None:
        self.ctx = ctx
        self.map = PLUGINS[module]
        self.lines: list[Line] = []

    def option(self, purpose: str, value: Any, names: tuple[str, ...] | str, note: str = "", approximate: bool = False) -> None:
        names = (names,) if isinstance(names, str) else names
        self.lines.append(Line(f"{PLUGIN_TABLE}.{self.map.albumen}", self.map.options[purpose], value,
                               self.ctx.origin(*names), [note] if note else [], approximate))


def _plugins(ctx: _Importer) -> None:
    enabled: list[str] = []
    given = ctx.given("plugins")
    if ctx.unknown("plugins"):
        for setting, module in _PLUGIN_OF.items():
            if ctx.given(setting) is not None:
                ctx.lose(setting, f"plugins cannot be read ({ctx.conf.unread['plugins'].why}), so whether Sigal used it "
                         f"({module}) is not known")
        return
    if given is not None:
        value = given.value
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, (list, tuple)):
            ctx.lose("plugins", f"not a list of plugins ({_shown(value)})")
            value = []
        for item in value:
            if item in PLUGINS:
                if item not in enabled:
                    enabled.append(item)
            else:
                ctx.out.left.append(Left(f"plugin {item}" if isinstance(item, str) else f"plugin {_shown(item)}",
                                         ctx.where("plugins"), "a plugin of your own: Albumen cannot run Sigal's plugins",
                                         lost=True))
    for module in enabled:
        plugin = PLUGINS[module]
        if plugin.lost or plugin.core:
            if module == "sigal.plugins.feeds":
                _feeds(ctx)
            ctx.plugin_left(module, plugin.lost or plugin.core, lost=bool(plugin.lost))
            for setting in plugin.settings:
                if ctx.given(setting) is not None and module != "sigal.plugins.feeds":
                    ctx.out.left.append(Left(setting, ctx.where(setting), f"a setting of {module}", lost=bool(plugin.lost)))
            continue
        gathered = _Plugin(ctx, module)
        if _PLUGIN_MAPPERS[module](ctx, gathered) and plugin.albumen not in ctx.out.plugins:
            ctx.out.plugins.append(plugin.albumen)
            ctx.out.lines.extend(gathered.lines)
    if ctx.out.plugins:
        ctx.out.lines.append(Line("", PLUGINS_KEY, list(ctx.out.plugins), ctx.origin("plugins"),
                                  ["Albumen's plugins doing what Sigal's did: " + ", ".join(
                                      f"{m.rpartition('.')[2]} -> {PLUGINS[m].albumen}" for m in enabled if PLUGINS[m].albumen
                                      and PLUGINS[m].albumen in ctx.out.plugins)]))
    for setting, module in _PLUGIN_OF.items():  # settings of plugins Sigal did not run
        if module not in enabled and ctx.given(setting) is not None and not ctx.unknown(setting):
            if setting == "zip_gallery" and ctx.value(setting):
                ctx.lose(setting, f"Sigal {SIGAL_VERSION} makes archives only with the zip_gallery plugin, which is not "
                         f"in plugins; add \"{PLUGINS[module].albumen}\" to {PLUGINS_KEY} to have them")
            else:
                ctx.skip(setting, f"unused by Sigal: {module} is not in plugins")


def _watermark(ctx: _Importer, p: _Plugin) -> bool:
    image = ctx.value("watermark")
    if ctx.unknown("watermark") or not isinstance(image, str) or not image:
        if not ctx.unknown("watermark"):
            ctx.plugin_left("sigal.plugins.watermark", "enabled without a watermark image: Sigal added none", lost=True)
        return False
    absolute = Path(ctx.conf_dir, os.path.expanduser(image)).resolve()
    problem = _mark_problem(ctx, absolute)
    if problem:
        ctx.plugin_left("sigal.plugins.watermark", problem + "; its position and opacity are not carried over either",
                        lost=True)
        return False
    note = f"Sigal reads it relative to {ctx.conf_name}; here it is relative to this file. {_MARKED_THUMBNAILS}"
    if ctx.out.source is not None and _inside(absolute, ctx.out.source) and not any(
            part.startswith(".") for part in absolute.relative_to(ctx.out.source.resolve()).parts):
        note += (" It is in the photo folder: Albumen publishes it as a photo unless it is hidden (a name starting "
                 "with '.') or ignored (ignore = [...])")
    p.option("image", ctx.path(image), "watermark", note)
    long, short = ctx.display_size()
    mark = _image_width(absolute)  # (the new file's folder may not exist yet)
    scale_note = (f"the mark is {mark} px wide on images {long} px wide (img_size): Albumen scales it with each image, "
                  "Sigal pasted it at its own size") if mark else ""
    if not ctx.unknown("watermark_position"):
        position = ctx.value("watermark_position")
        if position == "scale":
            p.option("position", "center", "watermark_position", "Sigal's 'scale': the mark made as large as the image, centred")
            p.option("scale", 1.0, "watermark_position", "the image's whole width (Sigal fits the mark in the image, so a "
                     "mark taller in shape than the photo came out narrower)")
        elif position == "tile":
            p.option("position", "tile", "watermark_position")
            if mark:
                p.option("scale", round(mark / long, 3), "watermark_position", scale_note, approximate=True)
        elif position is None or (isinstance(position, (tuple, list)) and len(position) in (2, 4)
                                  and all(_number(v) for v in position)):
            box = tuple(position or (0, 0))
            x = (box[0] + box[2]) / 2 if len(box) == 4 else box[0]
            y = (box[1] + box[3]) / 2 if len(box) == 4 else box[1]
            corner = _corner(x, y, long, short)
            p.option("position", corner, "watermark_position",
                     f"Sigal placed the mark at {_shown(box)} in pixels; the nearest corner of an image {long}x{short} "
                     f"(img_size) is {corner}", approximate=True)
            width = (box[2] - box[0]) if len(box) == 4 else mark
            if width:
                p.option("scale", round(width / long, 3), "watermark_position",
                         f"the mark is {width} px wide on images {long} px wide (img_size)", approximate=True)
        else:
            ctx.lose("watermark_position", f"not 'scale', 'tile' or a position in pixels ({_shown(position)})")
    if not ctx.unknown("watermark_opacity"):
        opacity = ctx.value("watermark_opacity")
        if _number(opacity) and 0 <= opacity <= 1:
            p.option("opacity", float(opacity), "watermark_opacity")
        else:
            ctx.lose("watermark_opacity", f"not a number from 0 to 1 ({_shown(opacity)})")
    return True


def _copyright(ctx: _Importer, p: _Plugin) -> bool:
    text = ctx.value("copyright")
    if ctx.unknown("copyright") or not isinstance(text, str) or not text:
        if not ctx.unknown("copyright"):
            ctx.plugin_left("sigal.plugins.copyright", "enabled without copyright text: Sigal wrote none", lost=True)
        return False
    braces = "{" in text or "}" in text
    p.option("text", text.replace("{", "{{").replace("}", "}}"), "copyright",
             ("Albumen fills in fields written in braces ({author}, {year}...): Sigal's braces are doubled to stay "
              "as they are. " if braces else "") + _MARKED_THUMBNAILS)
    long, short = ctx.display_size()
    font = ctx.value("copyright_text_font") if not ctx.unknown("copyright_text_font") else None
    if isinstance(font, str) and font:
        found, note = _font_file(ctx, font)
        if found:
            p.option("font", found, "copyright_text_font", note, approximate=bool(note))
        else:
            ctx.lose("copyright_text_font", f"{font!r}: {note}; Sigal then drew with Pillow's small default font, "
                     "Albumen draws with DejaVu Sans (bundled): give font = \"a font file\" for another")
    elif font not in (None, ""):
        ctx.lose("copyright_text_font", f"not a font file or name ({_shown(font)})")
    if not ctx.unknown("copyright_text_font_size"):
        pixels = ctx.value("copyright_text_font_size")
        if _number(pixels) and pixels > 0:
            note = (f"Sigal's {pixels} px text on images {short} px high (img_size): {pixels}/{short} of the shorter side; "
                    "Sigal's text had that size in pixels on every image")
            if not font:
                note += " (without a font Sigal used Pillow's default one, of about that size)"
            p.option("size", round(pixels / short, 4), ("copyright_text_font_size", "img_size"), note, approximate=True)
        else:
            ctx.lose("copyright_text_font_size", f"not a size in pixels ({_shown(pixels)})")
    if not ctx.unknown("copyright_text_color"):
        color = ctx.value("copyright_text_color")
        if isinstance(color, (tuple, list)) and len(color) in (3, 4) and all(_whole(c) and 0 <= c <= 255 for c in color):
            p.option("color", "#" + "".join(f"{c:02x}" for c in color[:3]), "copyright_text_color")
            p.option("opacity", round(color[3] / 255, 3) if len(color) == 4 else 1.0, "copyright_text_color")
        else:
            ctx.lose("copyright_text_color", f"not an (R, G, B) colour ({_shown(color)})")
    if not ctx.unknown("copyright_text_position"):
        position = ctx.value("copyright_text_position")
        if position is None:
            p.option("position", "bottom-left", "copyright_text_position", "Sigal's place: bottom left")
        elif isinstance(position, (tuple, list)) and len(position) == 2 and all(_number(v) for v in position):
            corner = _corner(position[0], position[1], long, short)
            p.option("position", corner, "copyright_text_position",
                     f"Sigal wrote the text at {_shown(tuple(position))} in pixels; the nearest corner of an image "
                     f"{long}x{short} (img_size) is {corner}", approximate=True)
        else:
            ctx.lose("copyright_text_position", f"not a (left, top) position ({_shown(position)})")
    return True


_MARKED_THUMBNAILS = ("Sigal made the thumbnails from the marked images; Albumen marks the thumbnails only with "
                      "thumbnails = true")
_FONT_FOLDERS = ("/usr/share/fonts", "/usr/local/share/fonts", "~/.local/share/fonts", "~/.fonts", "/Library/Fonts",
                 "/System/Library/Fonts", "~/Library/Fonts", os.path.join(os.environ.get("WINDIR", "C:\\Windows"), "Fonts"))


def _mark_problem(ctx: _Importer, absolute: Path) -> str | None:
    """Why Albumen's watermark plugin would refuse Sigal's mark, or None: it must be a PNG in the folder of
    albumen.toml or in the photo folder (checked when the config is loaded)."""
    from ..plugins.bundled.watermark import image_problem

    if not absolute.is_file():
        return f"the watermark {absolute} is not there (Albumen reads it when the config is loaded)"
    problem = image_problem(str(absolute))
    if problem:
        return f"the watermark {problem}: Albumen's watermark plugin lays a PNG over the images (convert it)"
    if _inside(absolute, ctx.toml_dir) or (ctx.out.source is not None and _inside(absolute, ctx.out.source)):
        return None
    return (f"the watermark {absolute} is outside the folder of albumen.toml ({ctx.toml_dir}) and the photo folder, "
            f"where Albumen's watermark must be: copy it beside albumen.toml, then add \"watermark\" to plugins and "
            f"[plugin.watermark] image = \"{absolute.name}\" (docs/PLUGINS.md)")


def _inside(path: Path, folder: Path) -> bool:
    root = folder.resolve()
    return path == root or root in path.parents


def _font_file(ctx: _Importer, font: str) -> tuple[str | None, str]:
    """(the font file for albumen.toml, a note) or (None, why not). Sigal gave the name to Pillow, which
    takes a path (from the folder sigal ran in) or a font file's name, looked for among the system's fonts."""
    from ..plugins.bundled.copyright import font_problem

    expanded = os.path.expanduser(font)
    candidates = [(Path(expanded), "")] if os.path.isabs(expanded) else [
        (Path(ctx.conf_dir, expanded), f"Sigal looked for it from the folder sigal ran in; taken here as relative to "
                                       f"{ctx.conf_name}")]
    if not os.path.isabs(expanded) and os.sep not in font and "/" not in font:
        names = {font.lower(), *((font.lower() + ext) for ext in (".ttf", ".otf") if "." not in font)}
        for folder in _FONT_FOLDERS:
            for dirpath, _, files in os.walk(os.path.expanduser(folder)):
                for name in files:
                    if name.lower() in names:
                        candidates.append((Path(dirpath, name), "a font's name, found among this machine's fonts"))
    for path, note in candidates:
        if path.is_file() and not font_problem(str(path)):
            return (str(path) if note.startswith("a font's name") or not note else ctx.path(font)), note
    return None, "no such font file here"


def _adjust(ctx: _Importer, p: _Plugin) -> bool:
    options = ctx.value("adjust_options")
    if ctx.unknown("adjust_options"):
        return False
    if not isinstance(options, dict) or not options:
        ctx.plugin_left("sigal.plugins.adjust", "enabled without adjust_options: Sigal changed nothing", lost=True)
        return False
    others = []
    for key, value in options.items():
        if key in p.map.options and _number(value):
            p.option(key, float(value), "adjust_options", "1.0 leaves the image as it is")
        else:
            others.append(str(key))
    if others:
        ctx.out.left.append(Left(f"adjust_options ({', '.join(others)})", ctx.where("adjust_options"),
                                 "not a brightness, contrast, color or sharpness factor", lost=True))
    return bool(p.lines)


def _zip(ctx: _Importer, p: _Plugin) -> bool:
    name = ctx.value("zip_gallery")
    if ctx.unknown("zip_gallery"):
        return False
    if not isinstance(name, str) or not name:
        ctx.skip("zip_gallery", f"{_shown(name)}, not a file name: Sigal made no archives (the zip_gallery plugin did nothing)")
        return False
    ctx.out.left.append(Left("zip_gallery", ctx.where("zip_gallery"),
                             f"Albumen names each album's archive itself (Sigal: {name!r})", lost=True))
    if not ctx.unknown("zip_media_format"):
        fmt = ctx.value("zip_media_format")
        source = {"orig": "originals", "resized": "largest"}.get(fmt)
        if source:
            p.option("source", source, ("zip_media_format",),
                     "the original files" if source == "originals" else "the largest resized images")
        else:
            ctx.lose("zip_media_format", f"not 'orig' or 'resized' ({_shown(fmt)})")
    if ctx.given("zip_skip_if_exists") is not None and not ctx.unknown("zip_skip_if_exists"):
        ctx.skip("zip_skip_if_exists", "archives are rebuilt only when their content changes")
    return True


def _compress(ctx: _Importer, p: _Plugin) -> bool:
    if ctx.unknown("compress_assets_options"):
        return False
    options = ctx.value("compress_assets_options")
    if not isinstance(options, dict):
        ctx.lose("compress_assets_options", f"not a dict ({_shown(options)})")
        return False
    defaults = SIGAL_DEFAULTS["compress_assets_options"]
    method = options.get("method", defaults["method"])
    formats = {"gzip": "gzip", "zopfli": "gzip", "brotli": "brotli"}.get(method)
    if formats is None:
        ctx.plugin_left("sigal.plugins.compress_assets", f"no such method {_shown(method)}: Sigal compressed nothing", lost=True)
        return False
    p.option("formats", [formats], "compress_assets_options",
             "Albumen makes its .gz files with zopfli too (zopfli = false: gzip -9)" if method == "zopfli" else "")
    suffixes = options.get("suffixes", defaults["suffixes"])
    if isinstance(suffixes, (list, tuple)) and all(isinstance(s, str) for s in suffixes):
        p.option("extensions", [s.lstrip(".") for s in suffixes], "compress_assets_options",
                 "" if "suffixes" in options else "Sigal's default suffixes")
    else:
        ctx.lose("compress_assets_options", f"suffixes is not a list of extensions ({_shown(suffixes)})")
    return True


def _titles(ctx: _Importer, p: _Plugin) -> bool:
    if ctx.unknown("titleregexp"):
        return False
    config = ctx.value("titleregexp")
    if not isinstance(config, dict) or not config:
        ctx.plugin_left("sigal.plugins.titleregexp", "enabled without titleregexp: Sigal changed no title", lost=True)
        return False
    o = p.map.options
    rules: list[dict] = []
    notes: list[str] = ["Sigal changes albums' titles only: media = false"]
    approximate = False
    regexps = config.get("regexp") or []
    regexps = regexps if isinstance(regexps, (list, tuple)) else []
    for number, rule in enumerate(regexps, start=1):
        if not isinstance(rule, dict) or not isinstance(rule.get("search"), str) or not isinstance(rule.get("replace"), str):
            ctx.out.left.append(Left(f"titleregexp regexp {number}", ctx.where("titleregexp"),
                                     "not a dict with 'search' and 'replace' strings", lost=True))
            continue
        try:
            re.compile(rule["search"])
        except re.error as exc:
            ctx.out.left.append(Left(f"titleregexp regexp {number}", ctx.where("titleregexp"),
                                     f"not a valid regular expression ({exc})", lost=True))
            continue
        count = rule.get("count", 0)
        rules.append({o["pattern"]: rule["search"], o["replace"]: rule["replace"],
                      o["count"]: count if _whole(count) and count >= 0 else 0, o["albums"]: True, o["media"]: False})
        if rule.get("break", "") != "" and number < len(regexps):
            approximate = True
            notes.append(f"rule {len(rules)} has Sigal's 'break' (the later regexps are skipped when it matched); "
                         "Albumen applies every rule in turn, so a later one may change a title it changed too")
        if rule.get("substitute"):
            ctx.out.left.append(Left(f"titleregexp regexp {number} substitute", ctx.where("titleregexp"),
                                     "replacements made only when this regexp matched: an Albumen rule cannot depend on "
                                     "another; add them as rules if they should apply to every title", lost=True))
    substitutes = config.get("substitute") or []
    for pair in substitutes if isinstance(substitutes, (list, tuple)) else []:
        if isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(s, str) for s in pair) and pair[0]:
            rules.append({o["pattern"]: re.escape(pair[0]), o["replace"]: pair[1].replace("\\", "\\\\"), o["count"]: 0,
                          o["albums"]: True, o["media"]: False})
        else:
            ctx.out.left.append(Left("titleregexp substitute", ctx.where("titleregexp"),
                                     f"not a [text, replacement] pair ({_shown(pair)})", lost=True))
    if any(key not in ("regexp", "substitute") for key in config):
        others = ", ".join(str(k) for k in config if k not in ("regexp", "substitute"))
        ctx.out.left.append(Left(f"titleregexp ({others})", ctx.where("titleregexp"), "not read by Sigal's plugin", lost=False))
    if substitutes:
        notes.append("Sigal's 'substitute' pairs are the last rules, as plain text (escaped)")
    if not rules:
        return False
    p.option("rules", rules, "titleregexp", "; ".join(notes), approximate)
    return True


def _documents(ctx: _Importer, p: _Plugin) -> bool:
    """Sigal listed every file of an album that is not a photo or a video (less ignore_ext), each with a
    tile showing its extension; Albumen's documents plugin shows the extensions it is given, PDFs with a
    picture of their first page."""
    p.option("extensions", ["pdf"], "plugins", "Sigal showed every file that is not a photo or a video (less "
             "ignore_ext); Albumen shows the extensions listed here: add those your albums hold", approximate=True)
    if ctx.given("nonmedia_files_options") is not None and not ctx.unknown("nonmedia_files_options"):
        ctx.skip("nonmedia_files_options", "Albumen draws documents' tiles itself (a PDF's first page, or the file's type)")
    return True


def _feeds(ctx: _Importer) -> None:
    """Sigal's feeds plugin gives the site's address (its feed_url without the file name) and the number of
    entries; Albumen always writes both an Atom and an RSS feed, named feed.xml and rss.xml."""
    urls = []
    for name, albumen_file in (("atom_feed", "feed.xml"), ("rss_feed", "rss.xml")):
        feed = ctx.given(name)
        if feed is None or ctx.unknown(name):
            continue
        if not isinstance(feed.value, dict):
            ctx.lose(name, f"not a dict ({_shown(feed.value)})")
            continue
        feed_url = str(feed.value.get("feed_url") or "")
        parts = urlsplit(feed_url)
        if parts.scheme in ("http", "https") and parts.netloc:
            base = feed_url.rsplit("/", 1)[0] + "/"
            urls.append((name, base))
            if not feed_url.endswith("/" + albumen_file):
                ctx.out.left.append(Left(f"{name} feed_url", ctx.where(name),
                                         f"Albumen's feed is {base}{albumen_file}: readers subscribed to {feed_url} "
                                         "need a redirect", lost=True))
        else:
            ctx.lose(name, f"feed_url is not an absolute http(s) address ({_shown(feed_url)})")
        items = feed.value.get("nb_items", 0)
        limits = next(f.metadata for key, f in iter_settings() if key == "feeds.items")
        if _whole(items) and items > 0:
            if not any(line.key == "items" and line.table == "feeds" for line in ctx.out.lines):
                ctx.put("feeds.items", min(max(items, limits["min"]), limits["max"]), name)
        elif items == 0:
            ctx.out.left.append(Left(f"{name} nb_items", ctx.where(name),
                                     "0, every photo: Albumen's feeds hold the latest feeds.items entries", lost=True))
    if urls:
        name, base = urls[0]
        ctx.put("url", base, name, "where the site lives: Sigal's feed address without its file name")
        if len({base for _, base in urls}) > 1:
            ctx.out.left.append(Left(urls[1][0], ctx.where(urls[1][0]), f"another address than {name}'s; url is {base}", lost=True))


_PLUGIN_MAPPERS: dict[str, Callable[[_Importer, _Plugin], bool]] = {
    "sigal.plugins.adjust": _adjust,
    "sigal.plugins.compress_assets": _compress,
    "sigal.plugins.copyright": _copyright,
    "sigal.plugins.nonmedia_files": _documents,
    "sigal.plugins.titleregexp": _titles,
    "sigal.plugins.watermark": _watermark,
    "sigal.plugins.zip_gallery": _zip,
}


def _leftovers(ctx: _Importer) -> None:
    """Names the steps above did not use: settings that could not be read, and names Sigal does not know."""
    for name, unread in ctx.conf.unread.items():
        known = name in SIGAL_DEFAULTS
        hint = f": set {_ALBUMEN_KEY[name]} by hand" if name in _ALBUMEN_KEY else ""
        if known:
            ctx.out.left.append(Left(name, f"line {unread.line}", f"{unread.why}; not run{hint}", lost=True))
        else:
            ctx.out.left.append(Left(name, f"line {unread.line}", f"{unread.why}; not run (not a setting of Sigal "
                                     f"{SIGAL_VERSION} or its plugins: a helper?)", lost=False))
    for statement in ctx.conf.statements:
        ctx.out.left.append(Left("(statement)", f"line {statement.line}", f"{statement.why}; not run", lost=False))
    for name, assigned in ctx.conf.values.items():
        if name in ctx.used or name.startswith("__"):
            continue
        if name in SIGAL_DEFAULTS:
            ctx.skip(name, "Sigal's default" if _plain(assigned.value) == _plain(SIGAL_DEFAULTS[name]) else "unused")
            continue
        import difflib

        guess = difflib.get_close_matches(name, list(SIGAL_DEFAULTS), n=1, cutoff=0.75)
        hint = f" (did you mean {guess[0]}?)" if guess else " (read by a plugin of your own?)"
        ctx.out.left.append(Left(name, ctx.where(name), f"not a setting of Sigal {SIGAL_VERSION} or its plugins{hint}",
                                 lost=True))
    order = {name: i for i, name in enumerate(ctx.conf.values)}
    ctx.out.left.sort(key=lambda left: (int(left.where.split()[1].split("-")[0]) if left.where else 0,
                                        order.get(left.name, 0)))


# ------------------------------------------------------------------------------------------ albumen.toml
def render_toml(result: SigalImport) -> str:
    """The annotated albumen.toml: each setting under comments saying where it came from and how it was
    converted; the top-level keys first, then Albumen's sections in their order, then the plugins' tables;
    what was not carried over (and what needs no setting) as comments at the end."""
    conf = result.conf_path.name
    out = [
        f"# albumen.toml, written by 'albumen import-sigal' from {conf} (Sigal {SIGAL_VERSION}'s settings).",
        f"# Each setting says which line of {conf} it comes from, and how it was converted. The",
        "# settings not written here have Albumen's defaults: 'albumen init' lists them all, with their",
        "# meaning, and so does docs/SIGAL.md. What was not carried over is listed at the end.",
        "",
    ]
    if not any(line.table == "" and line.key == "url" for line in result.lines):
        out += _wrap("Set url to where the site will live: feeds, the sitemap and share previews need it "
                     "(Sigal had no such setting).") + ['# url = "https://photos.example.org/"', ""]
    order = [""] + list(SECTIONS) + [f"{PLUGIN_TABLE}.{name}" for name in result.plugins]
    tables: dict[str, list[Line]] = {}
    for line in result.lines:
        tables.setdefault(line.table, []).append(line)
    top = tables.get("", [])
    tables[""] = [line for line in top if line.key != PLUGINS_KEY] + [line for line in top if line.key == PLUGINS_KEY]
    for table in order:
        lines = tables.get(table)
        if not lines:
            continue
        if table:
            out.append(f"[{table}]")
        said: set[str] = set()  # what a line of the table above already says (the options of one dict)
        for line in lines:
            comments = _wrap(line.origin) if line.origin not in said else []
            notes = [note[0].upper() + note[1:] for note in line.notes if note and note not in said]
            said |= {line.origin, *line.notes}
            if line.approximate:
                notes = ["Approximate: " + (notes[0] if notes else "not quite what Sigal did.")] + notes[1:]
            for note in notes:
                comments += _wrap(note)
            if comments and out[-1] != "" and not out[-1].startswith("["):
                out.append("")  # a line with comments of its own stands apart
            out += comments
            out.append(f"{toml_key(line.key)} = {toml_value(line.value)}")
        out.append("")
    lost = [left for left in result.left if left.lost]
    same = [left for left in result.left if not left.lost]
    for title, items in ((f"Not carried over from {conf}:", lost), ("Needing no setting in Albumen:", same)):
        if items:
            out += ["# " + "-" * 94, f"# {title}", "#"]
            for left in items:
                out += _wrap(_left_text(left))
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def _left_text(left: Left) -> str:
    return f"{left.name}{f' ({left.where})' if left.where else ''}: {left.reason}"


def _wrap(text: str) -> list[str]:
    """Comment lines; control characters (which a TOML comment cannot hold) shown as \\xNN."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)
    return ["# " + part for part in textwrap.wrap(text, 96, break_on_hyphens=False, break_long_words=False)] or ["#"]


_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f]")


def toml_data(result: SigalImport) -> dict:
    """What render_toml's file must read back as."""
    data: dict = {}
    for line in result.lines:
        target = data
        for part in line.table.split(".") if line.table else []:
            target = target.setdefault(part, {})
        target[line.key] = line.value
    return data


def check_toml(text: str, result: SigalImport) -> None:
    """The file reads back as the values meant, and Albumen's loader accepts it (its plugin settings too,
    once this Albumen has plugins). Raises BuildError when not: a fault of the importer's, which writes
    nothing then."""
    from ..config.load import validate_config
    from ..errors import ConfigError

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BuildError(f"the albumen.toml made from it is not valid TOML ({exc}); nothing was written") from None
    if data != _plain(toml_data(result)):
        raise BuildError("the albumen.toml made from it does not read back as meant; nothing was written")
    if not _albumen_has_plugins():
        data = {k: v for k, v in data.items() if k not in (PLUGINS_KEY, PLUGIN_TABLE)}
    else:  # the plugins this Albumen bundles are checked; the others are not written yet (issue 21)
        from ..plugins.manager import BUNDLED

        names = [name for name in data.pop(PLUGINS_KEY, []) if name in BUNDLED]
        tables = {name: table for name, table in data.pop(PLUGIN_TABLE, {}).items() if name in BUNDLED}
        data |= ({PLUGINS_KEY: names} if names else {}) | ({PLUGIN_TABLE: tables} if tables else {})
    try:
        validate_config(data, path=str(result.toml_path))
    except ConfigError as exc:
        raise BuildError("Albumen's loader refuses the albumen.toml made from it; nothing was written:\n"
                         + "\n".join(f"  - {p}" for p in exc.problems)) from None


def _albumen_has_plugins() -> bool:
    """Whether this Albumen's settings have the plugins list (the plugin system): until then its loader
    would refuse the plugin lines, and the check leaves them out."""
    return PLUGINS_KEY in {f.name for f in fields(Config)}


def _plain(value: Any) -> Any:
    """Tuples as lists, as TOML reads them back."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


# --------------------------------------------------------------------------------------------- reading
def import_sigal(conf_path: Path, toml_path: Path) -> tuple[SigalImport, str]:
    """Read sigal.conf.py (never run it) and make albumen.toml's text: (what was mapped, the text).
    Raises PyConfSyntaxError (exit 2) when the file is not valid Python, UsageError when it cannot be read."""
    from ..errors import UsageError
    from ..fsutil import open_regular
    from .pyconf import read_pyconf

    try:
        with open_regular(str(conf_path)) as f:  # a FIFO would make the command wait forever
            raw = f.read(_MAX_CONF_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"{conf_path}: no such file", hint="give the path of your sigal.conf.py") from None
    except OSError as exc:
        raise UsageError(f"{conf_path}: cannot read it ({exc.strerror or exc})") from None
    if len(raw) > _MAX_CONF_BYTES:
        raise UsageError(f"{conf_path}: larger than {_MAX_CONF_BYTES >> 20} MiB; not a Sigal configuration")
    conf = read_pyconf(raw, str(conf_path))
    result = map_sigal(conf, conf_path, toml_path)
    text = render_toml(result)
    check_toml(text, result)
    return result, text


_MAX_CONF_BYTES = 1 << 20


# --------------------------------------------------------------------------------------------- helpers
def _pair(value: Any) -> bool:
    return isinstance(value, (tuple, list)) and len(value) == 2 and all(_whole(v) and v > 0 for v in value)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _corner(x: float, y: float, width: int, height: int) -> str:
    return f"{'top' if y < height / 2 else 'bottom'}-{'left' if x < width / 2 else 'right'}"


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _default(key: str) -> Any:
    return next(f.default for k, f in iter_settings() if k == key)


def _choices(key: str) -> tuple[str, ...]:
    f = next(f for k, f in iter_settings() if k == key)
    return tuple(f.metadata.get("choices") or f.metadata.get("item_choices") or ())


def _or(items: tuple[str, ...]) -> str:
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else "".join(items)


def _image_width(path: Path) -> int | None:
    """The watermark's width in pixels, from its header (None when it cannot be read)."""
    try:
        from PIL import Image

        with Image.open(path) as image:
            return int(image.size[0])
    except Exception:  # missing, not an image: the scale is then left to the plugin
        return None
