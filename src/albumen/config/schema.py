"""Every setting Albumen has, declared once: type, default, limits and meaning.

The loader validates against these declarations, `albumen init` writes them out
as an annotated file, and the README's settings table is generated from them, so
documentation and behaviour cannot drift apart.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any

# Pillow's own default: about 179 megapixels, 0.5 GiB as 8-bit RGB.
DEFAULT_MAX_PIXELS = 178_956_970


def setting(default: Any, doc: str, **rules: Any) -> Any:
    """A documented setting. Rules: choices, item_choices, min, max, kind ('path', 'url', 'timezone', 'sort').

    Plugins declare their options with it too (see plugins.hookspecs.albumen_options)."""
    if isinstance(default, list):
        default = tuple(default)
    return field(default=default, metadata={"doc": doc, **rules})


@dataclass(frozen=True)
class SortConfig:
    albums: str = setting(
        "-date",
        "Order of sub-albums: 'date', 'name', 'title' or any sidecar key; a leading '-' sorts descending. "
        "An album's date is its newest photo (file modification times, with file_dates, count only when no photo "
        "of the album has a better date). index.md can override it per album with 'album_sort'.",
        kind="sort",
    )
    media: str = setting(
        "date",
        "Order of photos and videos in an album: 'date', 'name', 'title' or any sidecar key; '-' for descending. "
        "index.md can override it per album with 'sort'.",
        kind="sort",
    )


@dataclass(frozen=True)
class ImagesConfig:
    sizes: tuple[int, ...] = setting(
        [640, 1024, 1600, 2048],
        "Long-edge sizes in pixels of the resized images offered to browsers (srcset). Never upscaled. Panoramas"
        " (wider or taller than 3:1) get as many pixels as a 3:1 image of each size, so that they keep their detail.",
        min=16,
        max=16384,
    )
    quality: int = setting(82, "JPEG quality, 1-100.", min=1, max=100)
    webp_quality: int = setting(80, "WebP quality, 1-100 (used when 'webp' is in formats).", min=1, max=100)
    avif_quality: int = setting(55, "AVIF quality, 1-100 (used when 'avif' is in formats).", min=1, max=100)
    formats: tuple[str, ...] = setting(
        ["jpeg"],
        "Output formats. JPEG is always made as the fallback; 'webp' and 'avif' add modern sources (photos, "
        "thumbnails and album covers).",
        item_choices=("jpeg", "webp", "avif"),
    )
    progressive: bool = setting(
        False,
        "Write progressive JPEGs for the resized images: a few percent smaller and a rough preview sooner on slow "
        "connections, but 3 to 6 times slower to encode. Pages already show a blurred placeholder while images load.",
    )
    max_pixels: int = setting(
        DEFAULT_MAX_PIXELS,
        "Largest image accepted, in pixels (width x height). Bigger files are skipped as possible decompression bombs.",
        min=1,
    )
    max_frames: int = setting(
        1000,
        "Most frames an animated GIF or WebP may have to be published animated; a longer one (or one whose frames "
        "hold more than 4 x max_pixels in all) is published as a still image, its first frame, with a warning.",
        min=1,
    )
    originals: str = setting(
        "none",
        "'none': originals are not published; 'copy': a download copy of each original is published "
        "(where it was taken removed: GPS, IPTC and XMP places; unless keep_metadata is true).",
        choices=("none", "copy"),
    )
    keep_metadata: bool = setting(
        False,
        "Keep all EXIF/XMP/IPTC metadata (including GPS and serial numbers) in published images. "
        "When false only Artist and Copyright are kept.",
    )


@dataclass(frozen=True)
class ThumbnailsConfig:
    height: int = setting(320, "Thumbnail height in pixels (the square side when style is 'square').", min=16, max=4096)
    style: str = setting(
        "justified",
        "'justified': rows of thumbnails that keep each photo's aspect (like Flickr); 'square': square crops.",
        choices=("justified", "square"),
    )


@dataclass(frozen=True)
class PagesConfig:
    page_size: int = setting(200, "Thumbnails per album page; larger albums get page/2/, page/3/, ...", min=1, max=100_000)
    links: str = setting(
        "directory",
        "'directory': links end in '/'; 'index.html': links end in 'index.html' so the site also works "
        "from file:// and plain object stores.",
        choices=("directory", "index.html"),
    )
    slugs: str = setting(
        "ascii",
        "'ascii': URL-safe names made from folder and file names; 'original': keep the names as they are "
        "(percent-encoded), e.g. to keep the URLs of a gallery moved from Sigal.",
        choices=("ascii", "original"),
    )
    exif: tuple[str, ...] = setting(
        ["camera", "lens", "exposure", "aperture", "iso", "focal_length"],
        "Camera details shown on photo pages. 'gps' also shows the location (off by default).",
        item_choices=("camera", "lens", "exposure", "aperture", "iso", "focal_length", "gps"),
    )


@dataclass(frozen=True)
class VideosConfig:
    max_size: int = setting(1280, "Long edge in pixels of published videos (and their posters). Never upscaled.", min=16, max=8192)
    crf: int = setting(23, "H.264 quality (CRF): lower is better and bigger; 18-28 is sensible.", min=0, max=51)
    preset: str = setting(
        "veryfast", "x264 speed preset: slower presets make smaller files for the same quality.",
        choices=("ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow", "slower"),
    )
    audio_bitrate: int = setting(128, "AAC audio bitrate in kbit/s.", min=16, max=512)
    formats: tuple[str, ...] = setting(
        ["mp4"],
        "Video formats: H.264/AAC MP4 is always made (it plays everywhere); 'webm' adds VP9/Opus, 'av1' adds "
        "AV1/Opus (WebM), offered first to browsers that play them.",
        item_choices=("mp4", "webm", "av1"),
    )
    remux: bool = setting(
        True,
        "Copy a video that is already H.264 (8-bit 4:2:0) with AAC or no sound, upright, no larger than max_size and "
        "under max_remux_bitrate, instead of re-encoding it.",
    )
    max_remux_bitrate: int = setting(8000, "Largest bitrate (kbit/s) of a video that is copied rather than re-encoded.", min=1)
    timeout: int = setting(1800, "Seconds one video may take before it is skipped.", min=10)
    ffmpeg: str = setting(
        "", "Path of a system ffmpeg to use instead of the FFmpeg bundled with PyAV (e.g. '/usr/bin/ffmpeg').",
        kind="path",
    )


@dataclass(frozen=True)
class StreamConfig:
    enabled: bool = setting(True, "Publish the stream: the latest photos and videos of all albums, newest first.")
    title: str = setting("", "Title of the stream pages. Default: 'Latest photos' in the site's language.")
    page_size: int = setting(
        60, "About how many items a stream page holds (from half as many to three times as many): where a page "
        "ends depends on the photos around it, not on a count, so one photo added or removed changes a page or two "
        "of the stream, not every page after it. Older pages continue at stream/page/<name>/.", min=1, max=100_000,
    )
    max_items: int = setting(0, "Most items in the stream (the newest ones); 0 means all.", min=0)
    path: str = setting(
        "stream", "Folder of the stream in the site (one URL segment). An album that would use it is renamed.",
        kind="segment",
    )


@dataclass(frozen=True)
class FeedsConfig:
    enabled: bool = setting(True, "Write Atom (feed.xml) and RSS 2.0 (rss.xml) feeds of the latest media. Needs 'url'.")
    items: int = setting(30, "Entries in each feed.", min=1, max=10_000)
    per_album: bool = setting(False, "Also write an Atom feed per album (ALBUM/feed.xml) of that album and its sub-albums.")
    sitemap: bool = setting(True, "Write sitemap.xml and robots.txt pointing to it. Needs 'url'.")


@dataclass(frozen=True)
class ThemeConfig:
    path: str = setting(
        "",
        "Folder of a theme whose templates/ and static/ files override the default theme file by file. "
        "(The short form theme = \"my-theme\" at the top of the file sets it too.)",
        kind="path",
    )
    scheme: str = setting(
        "auto",
        "Colours of the pages: 'auto' follows the visitor's system (light or dark), 'light' and 'dark' fix them. "
        "The photo viewer is always dark.",
        choices=("auto", "light", "dark"),
    )
    accent: str = setting(
        "",
        "Accent colour of links, focus rings and the current page, as '#rrggbb'. Default: the theme's blue. It is "
        "darkened on light pages and lightened on dark ones as far as needed to stay readable.",
        kind="colour",
    )


@dataclass(frozen=True)
class Config:
    title: str = setting("", "Site title. Default: the name of the photo folder.")
    description: str = setting("", "One line about the site, used in page metadata.")
    author: str = setting("", "Author or photographer, shown in the footer and page metadata.")
    url: str = setting(
        "",
        "Absolute address where the site will live, e.g. 'https://photos.example.org/'. "
        "Needed for feeds, the sitemap and share previews, and for the 404 page when the site is not at the root of its domain.",
        kind="url",
    )
    language: str = setting("en", "Language of the theme's text.", choices=("en", "fr"))
    source: str = setting("", "Photo folder, relative to this file. The command line's SOURCE overrides it.", kind="path")
    output: str = setting("_build", "Output folder, relative to this file. The command line's -o overrides it.", kind="path")
    timezone: str = setting(
        "",
        "Time zone for dates without one (plain EXIF), e.g. 'Europe/Paris'. Default: this computer's zone.",
        kind="timezone",
    )
    file_dates: bool = setting(
        False,
        "Date a photo or video that says nothing of when it was taken (no EXIF, XMP, IPTC, sidecar or file-name "
        "date) by its file's modification time. Off, such media show no date and come after the dated ones in the "
        "stream and in date orders: a file's time is when it was copied or edited, and a photo of 2005 copied "
        "today would read as today's and lead the stream.",
    )
    private: tuple[str, ...] = setting(
        [],
        "Albums published only under an unguessable link, as paths relative to the photo folder, e.g. "
        "['Holidays/Family']; an entry that names no album folder stops the build. (index.md can also say "
        "'private: true'.) See 'albumen links'.",
        kind="relpath",
    )
    private_rotations: tuple[tuple[str, int], ...] = setting(
        (),
        "How many times each private album's link was rotated, e.g. { \"Holidays/Family\" = 1 }, so that "
        "every machine building the site (CI with ALBUMEN_SECRET too) publishes the current link. "
        "'albumen links --rotate' prints the line to put here.",
        kind="rotations",
    )
    passwords: tuple[tuple[str, str], ...] = field(
        default=(),
        repr=False,  # never in the pages' keys or the build's fingerprint (see seal.keys.passwords_fingerprint)
        metadata={
            "doc": "Password albums, end-to-end encrypted: a table of album path -> password, e.g. "
            "[passwords] \"Holidays/Family\" = \"correct horse battery staple\". Such an album is private, and "
            "every file of it is encrypted; visitors type the password in the browser. An entry that names no album "
            "stops the build. ALBUMEN_PASSWORD_<ALBUM_PATH> variables and 'password:' in index.md work too. "
            "See docs/PASSWORDS.md.",
            "kind": "passwords",
        },
    )
    cache_dir: str = setting(
        "",
        "Folder for the build cache (it must be outside the photo folder and the output). Default: a folder "
        "per source and output in your user cache folder; the ALBUMEN_CACHE_DIR variable also sets it.",
        kind="path",
    )
    scheduler: str = field(
        default="",
        # not in the config's repr (the build's fingerprint, the pages' keys): whichever executor makes
        # them, the files are the same
        repr=False,
        metadata={
            "doc": "Where image and video jobs run: '' (this machine's worker processes), 'local:N' (a Dask "
            "LocalCluster of N worker processes) or a Dask scheduler's address, e.g. 'tcp://HOST:8786', whose "
            "workers share the photo folder and the output at the same paths. --scheduler overrides it. "
            "Needs albumen[dask]; see docs/CLUSTER.md.",
            "kind": "scheduler",
        },
    )
    ignore: tuple[str, ...] = setting(
        [],
        "Glob patterns of files and folders to leave out, matched against names and paths relative to the source. "
        "An album's index.md they match is still read for its private mark (only).",
    )
    plugins: tuple[str, ...] = setting(
        [],
        "Plugins to turn on, in the order they run (a filter of the first sees the pixels first): a bundled "
        "plugin's name (see below), the name an installed package gives its plugin (entry point group "
        "'albumen.plugins'), or a module's import path ('my_package.plugin'). Each takes its options from a table "
        "of its own, [plugin.NAME]. See docs/PLUGINS.md.",
    )
    sort: SortConfig = field(default_factory=SortConfig, metadata={"doc": "How albums and media are ordered."})
    theme: ThemeConfig = field(default_factory=ThemeConfig, metadata={"doc": "The look of the site."})
    images: ImagesConfig = field(default_factory=ImagesConfig, metadata={"doc": "Resized images."})
    thumbnails: ThumbnailsConfig = field(default_factory=ThumbnailsConfig, metadata={"doc": "Grid thumbnails."})
    videos: VideosConfig = field(default_factory=VideosConfig, metadata={"doc": "Published videos."})
    pages: PagesConfig = field(default_factory=PagesConfig, metadata={"doc": "Pages and URLs."})
    stream: StreamConfig = field(default_factory=StreamConfig, metadata={"doc": "The stream of latest media."})
    feeds: FeedsConfig = field(default_factory=FeedsConfig, metadata={"doc": "Feeds and sitemap."})
    # each plugin of `plugins`, loaded and its options validated (plugins.manager.PluginInfo), in that order:
    # its version and options are in the config's repr, so in the build's fingerprint and the pages' keys
    loaded_plugins: tuple = field(default=(), metadata={"internal": True})


SECTIONS: dict[str, type] = {
    f.name: f.default_factory  # type: ignore[misc]
    for f in fields(Config)
    if f.default is MISSING and f.default_factory is not MISSING
}


def iter_settings(cls: type = Config, prefix: str = ""):
    """Yield (dotted key, field) for every leaf setting, in declaration order."""
    for f in fields(cls):
        if f.metadata.get("internal"):
            continue
        if f.name in SECTIONS and cls is Config:
            yield from iter_settings(SECTIONS[f.name], prefix=f"{f.name}.")
        else:
            yield prefix + f.name, f
