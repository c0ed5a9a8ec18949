"""Recipes as values: what a worker is asked to make, and what it reports back.

Workers import only this module and errors: they receive a Job (plain data),
never the gallery or the config.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

# Bump when a change to the pipeline changes output pixels or bytes: every
# derivative name (and so every cache key) changes with it.
PROCESSING_VERSION = "3"

EXTENSIONS = {
    "jpeg": "jpg", "webp": "webp", "avif": "avif", "gif": "gif", "png": "png",
    "mp4": "mp4", "remux": "mp4", "webm": "webm", "av1": "webm", "vtt": "vtt",
}
VIDEO_MIME = {"mp4": "video/mp4", "remux": "video/mp4", "webm": 'video/webm; codecs="vp9, opus"',
              "av1": 'video/webm; codecs="av01.0.08M.08, opus"'}


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
    outputs: tuple[OutputSpec, ...]
    progressive: bool = True
    keep_metadata: bool = False
    artist: str | None = None
    copyright: str | None = None
    max_pixels: int = 178_956_970
    placeholder: bool = True
    placeholder_source: str | None = None  # an existing thumbnail to take the placeholder from


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
    thumb: OutputSpec
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

    @property
    def outputs(self) -> tuple[OutputSpec, ...]:
        return (self.poster, self.thumb, *self.videos)


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


def derivative_hash(content_hash: str, recipe: str, length: int = 10) -> str:
    return hashlib.sha256(f"{content_hash}:{recipe}".encode()).hexdigest()[:length]
