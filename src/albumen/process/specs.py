"""Recipes as values: what a worker is asked to make, and what it reports back.

Workers import only this module and errors: they receive a Job (plain data),
never the gallery or the config.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

# Bump when a change to the pipeline changes output pixels or bytes: every
# derivative name (and so every cache key) changes with it.
PROCESSING_VERSION = "3"
# Bump when a change changes only how still images are made (decode scale, resizing): their names
# change, and those of videos and animations do not (re-encoding a library's videos takes hours).
STILLS_VERSION = "1"
# Bump when a change changes only how videos are encoded: their streams' and posters' names change.
# 2: x264 runs a fixed number of threads (its bytes depended on the machine's core count), Matroska
# (WebM) files are written bit-exact (they carried random identifiers), and the encoder (PyAV's
# FFmpeg or a system ffmpeg, with its version) is part of the recipe.
VIDEOS_VERSION = "2"
X264_THREADS = 4  # x264's output depends on its thread count: the same on every machine

SHRINK_FORMATS = ("jpeg", "mpo")  # decoded smaller in the DCT domain when the outputs allow it
# A still output is resized from a larger one of the same media when that one has at least this many
# times its pixels per side: cheaper than from the decoded image, and as sharp.
ADEQUATE_FACTOR = 1.5

EXTENSIONS = {
    "jpeg": "jpg", "webp": "webp", "avif": "avif", "gif": "gif", "png": "png",
    "mp4": "mp4", "remux": "mp4", "webm": "webm", "av1": "webm", "vtt": "vtt",
}
VIDEO_MIME = {"mp4": "video/mp4", "remux": "video/mp4", "webm": 'video/webm; codecs="vp9, opus"',
              "av1": 'video/webm; codecs="av01.0.08M.08, opus"'}


@dataclass(frozen=True, slots=True)
class MediaFacts:
    """What a plugin's image filter may know of the media it works on (see plugins.hookspecs). The
    planner's hook sees every fact; a filter's function sees only those it asked for (the others are
    None), and those are part of its outputs' names."""

    src_uri: str | None = None  # the file's path relative to the photo folder
    name: str | None = None  # its file name
    kind: str | None = None  # 'image', 'video' or a plugin's media kind
    album: str | None = None  # the album's path relative to the photo folder ('' for the top)
    album_title: str | None = None
    title: str | None = None
    author: str | None = None  # the sidecar's author, else the photo's Artist
    copyright: str | None = None  # the photo's Copyright
    date: str | None = None  # when it was taken, ISO 8601 (None: nothing says)
    private: bool | None = None  # published only behind a private link
    width: int | None = None  # the source's size as displayed
    height: int | None = None
    # the header of the album's index.md (lower-case keys, read-only), for the planner's hook only: a
    # filter's function never gets it (a per-album setting reaches it through the filter's options)
    album_meta: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class FilterCall:
    """One plugin function a worker runs on the decoded pixels of some of a media's outputs (a filter),
    or that draws the picture of a media that is not a photo (a plugin media kind's thumbnail maker).
    Plain data: the worker imports the function by its path, under fork, forkserver or spawn alike."""

    plugin: str  # the name the config gives the plugin, named in a failure's reason
    function: str  # 'package.module:function'
    roles: tuple[str, ...] = ()  # 'thumb' | 'display' | 'original' | 'poster'
    # the options the function gets: not compared (the recipe, which holds them, is), so a filter's may be a dict
    options: Any = field(default=None, compare=False)
    media: MediaFacts | None = None  # the facts the function asked for
    recipe: str = ""  # plugin, version, options, function and facts, as text for the outputs' names
    error: str | None = None  # the planner's hook failed for this media: its job fails with this


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """One derivative: where it goes and exactly what it looks like."""

    # where it goes: folder/name, the folder one string shared by all of a photo's outputs (a plan
    # holds every output of the library: a full path in each would be ~40 bytes more per output)
    folder: str  # POSIX path relative to the output root ('' for the top)
    name: str
    role: str  # 'thumb' | 'display' | 'original'
    width: int
    height: int
    format: str  # 'jpeg' | 'webp' | 'avif' | 'gif' | 'copy'
    quality: int = 0
    crop: str | None = None  # None | 'centre' | 'attention': fill width x height, cropping the excess
    animated: bool = False

    @property
    def dest_uri(self) -> str:
        """POSIX path relative to the output root."""
        return f"{self.folder}/{self.name}" if self.folder else self.name


@dataclass(frozen=True, slots=True)
class SealSpec:
    """A password album's outputs are sealed (see albumen.seal.format): the worker encrypts each
    file it makes with the album's content key, bound to the album and to the file's role and name."""

    key: bytes = field(repr=False)
    album_id: str


@dataclass(frozen=True, slots=True)
class ImageJob:
    """Everything needed to make all derivatives of one image from a single decode."""

    job_id: str  # the media's src_uri
    abs_src_path: str
    abs_dest_root: str
    format: str  # sniffed source format
    orientation: int
    colour: str  # 'srgb' | 'p3' | 'convert' | 'adobergb' (untagged, EXIF says Adobe RGB: converted)
    src_width: int  # as displayed
    src_height: int
    frames: int
    outputs: tuple[OutputSpec, ...]  # what this job makes: all of planned, or those missing
    # every output planned for the media: they fix how each is made (see still_derivation), so an
    # output made alone has the bytes it has when made with all the others
    planned: tuple[OutputSpec, ...]
    progressive: bool = True
    keep_metadata: bool = False
    artist: str | None = None
    copyright: str | None = None
    max_pixels: int = 178_956_970
    placeholder: bool = True
    placeholder_source: str | None = None  # an existing thumbnail to take the placeholder from
    filters: tuple[FilterCall, ...] = ()  # plugins' image filters, in the order they run
    maker: FilterCall | None = None  # a plugin media kind's: draws the picture (not decoded from the file)
    seal: SealSpec | None = None  # a password album's: every output is encrypted


@dataclass(frozen=True, slots=True)
class VideoJob:
    """Everything needed to publish one video: poster, thumbnail, transcoded or copied streams, captions."""

    job_id: str
    abs_src_path: str
    abs_dest_root: str
    src_width: int  # as displayed
    src_height: int
    rotation: int  # clockwise degrees to apply
    duration: float | None
    poster: OutputSpec  # full-size JPEG poster frame
    thumb: OutputSpec  # JPEG
    videos: tuple[OutputSpec, ...]  # format 'mp4' | 'webm' | 'av1' | 'remux'
    tracks: tuple[tuple[str, str], ...] = ()  # (abs path of a .vtt, dest_uri)
    todo: tuple[str, ...] | None = None  # dest_uris still to make; None: all
    crf: int = 23
    preset: str = "veryfast"
    audio_bitrate: int = 128
    keep_metadata: bool = False
    ffmpeg: str | None = None
    timeout: float = 1800.0
    quality: int = 82
    placeholder: bool = True
    placeholder_source: str | None = None
    progressive: bool = False  # posters and thumbnails are JPEGs like any other
    artist: str | None = None
    copyright: str | None = None
    filters: tuple[FilterCall, ...] = ()  # plugins' image filters (roles 'poster' and 'thumb')
    more_thumbs: tuple[OutputSpec, ...] = ()  # the thumbnail in the other formats of images.formats
    seal: SealSpec | None = None  # a password album's: every output is encrypted

    @property
    def outputs(self) -> tuple[OutputSpec, ...]:
        return (self.poster, self.thumb, *self.more_thumbs, *self.videos)


@dataclass(frozen=True, slots=True)
class Placeholder:
    colour: str  # '#rrggbb', the image's average
    data_uri: str  # a tiny blurred preview, inlined in pages


@dataclass(frozen=True, slots=True)
class JobResult:
    job_id: str
    ok: bool
    error: str | None = None
    written: tuple[tuple[str, int, int], ...] = ()  # (dest_uri, size, mtime_ns) of each file made by this run
    placeholder: Placeholder | None = None
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Look:
    """One output apart from its folder and its name's hash (slug.TAG.HASH.EXT): what a thumbnail or a
    display image of a photo of this size looks like. The plan shares one object (and one tuple of
    them) among all such photos."""

    role: str
    tag: str
    ext: str
    width: int
    height: int
    format: str
    quality: int
    crop: str | None
    animated: bool


def progressive_for(spec: OutputSpec | Look, progressive: bool) -> bool:
    """Progressive JPEG only where it helps a visitor: a thumbnail is too small to benefit."""
    return progressive and spec.format == "jpeg" and spec.role != "thumb"


def recipe_text(spec: OutputSpec | Look, job_text: str, progressive: bool) -> str:
    """Everything that shapes one derivative's bytes, as stable text (never Python's hash())."""
    return (
        f"v{PROCESSING_VERSION}|{spec.role}|{spec.width}x{spec.height}|{spec.format}|q{spec.quality}|"
        f"{spec.crop}|{spec.animated}|{progressive_for(spec, progressive)}|{job_text}"
    )


def is_still(spec: OutputSpec | Look) -> bool:
    """Made from one decoded image (a display image, a thumbnail, a re-encoded original)."""
    return spec.format != "copy" and not spec.animated


def shrink_factor(src_width: int, src_height: int, outputs: Sequence[OutputSpec | Look]) -> int:
    """Largest JPEG shrink-on-load factor (1, 2, 4, 8) that still leaves enough pixels for every output."""
    need = 0.0
    for out in outputs:
        if out.format != "copy":
            need = max(need, out.width / src_width, out.height / src_height)
    for factor in (8, 4, 2):
        if 1.0 / factor >= need:
            return factor
    return 1


def still_derivation(
    src_width: int, src_height: int, fmt: str, stills: Sequence[OutputSpec | Look]
) -> tuple[int, tuple[int, ...]]:
    """How each still output of a media is made: the scale its source is decoded at (1/factor), and
    for each output the index of the larger, uncropped one it is resized from (-1: the decoded image).

    A function of the source's size and of every still output planned for the media, never of which
    of them a job is left to make: a thumbnail made alone (its file deleted, a build killed) is decoded
    at the same scale and resized from the same intermediate as in a whole build, so it has the same
    bytes (decoded at 1/8 and resized from there it differed by ~1.2 on average per pixel). The chain
    is what a whole build always made: each output from the smallest larger one with ADEQUATE_FACTOR
    times its pixels per side, and the decode as small as the largest output allows."""
    factor = shrink_factor(src_width, src_height, stills) if fmt in SHRINK_FORMATS else 1
    order = sorted(range(len(stills)), key=lambda i: geometry_order(stills[i]))
    sources = [-1] * len(stills)
    made: list[int] = []  # uncropped outputs smaller than the source, one per size: the intermediates
    for i in order:
        spec = stills[i]
        scale = max(spec.width / src_width, spec.height / src_height) if spec.crop else 0.0
        need_w = (src_width * scale if spec.crop else spec.width) * ADEQUATE_FACTOR
        need_h = (src_height * scale if spec.crop else spec.height) * ADEQUATE_FACTOR
        for j in made:  # largest first: the last adequate one is the smallest
            if stills[j].width >= need_w and stills[j].height >= need_h:
                sources[i] = j
        size = (spec.width, spec.height)
        if spec.crop is None and size != (src_width, src_height) and all(
            (stills[j].width, stills[j].height) != size for j in made
        ):
            made.append(i)
    return factor, tuple(sources)


def geometry_order(spec: OutputSpec | Look) -> tuple:
    """Larger outputs first (what a smaller one is resized from is made before it), one size's together."""
    return (-spec.width * spec.height, spec.width, spec.height, spec.crop or "")


def still_recipes(src_width: int, src_height: int, fmt: str, looks: Sequence[OutputSpec | Look]) -> tuple[str, ...]:
    """For each of a media's outputs, how its pixels are made when it is a still, as text for its name
    ('' when it is not): the decode scale and the sizes it is resized through ('|s1|1/2>1600x1067>1024x683'
    for a thumbnail made from the 1024 px image made from the 1600 px one). Its name changes when
    another setting changes how it is made (a largest size that allows a smaller decode)."""
    stills = [look for look in looks if is_still(look)]
    factor, sources = still_derivation(src_width, src_height, fmt, stills)
    texts = []
    for i in range(len(stills)):
        chain, j = [], sources[i]
        while j >= 0:
            chain.append(f">{stills[j].width}x{stills[j].height}")
            j = sources[j]
        texts.append(f"|s{STILLS_VERSION}|1/{factor}" + "".join(reversed(chain)))
    of_stills = iter(texts)
    return tuple(next(of_stills) if is_still(look) else "" for look in looks)


def filter_recipe(filters: Sequence[FilterCall], role: str) -> str:
    """The part of an output's recipe that the filters applying to its role make: '' when none does, so
    that a build without plugins names every output as before."""
    applied = [f.recipe for f in filters if role in f.roles]
    return "|f:" + ";".join(applied) if applied else ""


def derivative_hash(content_hash: str, recipe: str, length: int = 10) -> str:
    return hashlib.sha256(f"{content_hash}:{recipe}".encode()).hexdigest()[:length]
