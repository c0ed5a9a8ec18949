"""Plan the site before any pixel moves: every page's URL, every derivative's name and size.

Slugs are assigned in natural name order (sub-albums first, then media), so the
same tree always gives the same URLs. Derivative names carry a hash of the
source content and the recipe, so they can be cached forever and a changed
setting re-makes exactly the derivatives it affects.
"""

from __future__ import annotations

import math
import os
import posixpath
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from hashlib import sha256
from itertools import compress, islice
from operator import attrgetter
from types import MappingProxyType
from typing import Any

from ..config import Config
from ..fsutil import files_digest
from ..model import Gallery, Media
from .names import assign_dirs
from .specs import (
    EXTENSIONS,
    VIDEOS_VERSION,
    FilterCall,
    ImageJob,
    Look,
    MediaFacts,
    OutputSpec,
    SealSpec,
    VideoJob,
    derivative_hash,
    filter_recipe,
    recipe_text,
    still_recipes,
)

MAX_THUMB_ASPECT = 3.0
# An album cover's card images: the shape of the default theme's cards (3:2, filled with object-fit:
# cover), in widths that fit a card (about 250 to 500 CSS px) at 1x, 2x and 3x. Without them a phone
# fetched a 1024 px display image for a 400 px card, and a portrait cover's whole height.
COVER_ASPECT = 1.5
COVER_WIDTHS = (400, 800, 1200)
PANORAMA_ASPECT = MAX_THUMB_ASPECT  # wider or taller than this: published sizes go by area (see display_geometry)
MAX_SIDE = 16383  # the longest side any published image may have (WebP's limit)
ANIMATION_PIXELS = 4  # an animation's frames may hold this many times images.max_pixels in all (see animation_too_big)


_LOOKS: dict = {}  # interned looks and tuples of them: a library has few distinct sizes and settings
# (size, format, orientation, colour, frames, credits, place, cover, filters) -> (filters, looks, recipe texts):
# photos alike share them (see _plan_image), within one plan and one config
_RECIPES: dict = {}
_RECIPES_OF: list = [None]  # the config _RECIPES were planned with
DIGEST_LENGTH = 10  # of the content+recipe hash in a derivative's name (derivative_hash's default)
SEALED_LENGTH = 24  # a password album's file names: keyed hashes (see albumen.seal.plan)
# A copied original's extension, from its format as recognised by content (scan.sniff), never from its
# name: a JPEG named poly.html would be served as a page (and poly.php run on a PHP host). An MPO is
# published as a plain JPEG: worker.strip_jpeg_location keeps its first image only.
ORIGINAL_EXTENSIONS = {
    "jpeg": "jpg", "mpo": "jpg", "png": "png", "gif": "gif", "webp": "webp", "tiff": "tif", "bmp": "bmp",
    "heif": "heic", "avif": "avif",
}
# Other spellings of those extensions, which a download name may keep.
_SAME_EXTENSIONS = {"jpg": {"jpg", "jpeg", "jpe", "jfif"}, "tif": {"tif", "tiff"}, "heic": {"heic", "heif", "hif"},
                    "bmp": {"bmp", "dib"}}


@dataclass(slots=True)
class MediaPlan:
    """Where a photo's page and outputs go. Kept for every photo of the library during a build, so it
    is compact: the outputs' specs are made when asked for, from looks shared by all photos of one size
    and this photo's name hashes (~200 bytes a photo instead of ~1 KB with five outputs: 100,000
    photos would otherwise keep ~100 MB of specs)."""

    src_uri: str
    dest_dir: str  # the photo page lives at dest_dir/index.html
    # the thumbnails (JPEG first, then one in each other format of images.formats), an album cover's
    # card images (grouped by format as the thumbnails, smallest first), the display images (grouped
    # by format, JPEG first, smallest first within a format) and the original when one is published
    looks: tuple[Look, ...]
    digests: str  # the hash in each of their names, DIGEST_LENGTH characters each, in the same order
    # tuples, and () for a photo: one shared empty value instead of two lists per photo
    videos: tuple[OutputSpec, ...] = ()  # best first; MP4 (or the copied file) last
    tracks: tuple[tuple[OutputSpec, str], ...] = ()  # caption files and their language
    filters: tuple[FilterCall, ...] = ()  # plugins' image filters (one tuple shared by media that get the same)
    sealed: bool = False  # a password album's: digests holds each output's whole keyed name (see albumen.seal.plan)

    @classmethod
    def of(cls, src_uri: str, dest_dir: str, named: list[tuple[Look, str]], **more) -> MediaPlan:
        """named: (look, name hash) of the thumbnails, each display image and the original, in that order."""
        looks = tuple(look for look, _ in named)
        return cls(src_uri, dest_dir, _LOOKS.setdefault(looks, looks), "".join(d for _, d in named), **more)

    def _name(self, i: int) -> str:
        if self.sealed:
            return self.digests[i * SEALED_LENGTH:(i + 1) * SEALED_LENGTH]
        return _file_name(self.dest_dir, self.looks[i], self.digests[i * DIGEST_LENGTH:(i + 1) * DIGEST_LENGTH])

    def _spec(self, i: int) -> OutputSpec:
        return _spec_of(self.dest_dir, self._name(i), self.looks[i])

    def _uris(self) -> list[str]:
        """dest_uri of the thumbnails, each display image and the original, in that order."""
        folder = self.dest_dir
        if self.sealed:
            return [f"{folder}/{self._name(i)}" for i in range(len(self.looks))]
        stem, digests = f"{folder}/{folder.rpartition('/')[2]}.", self.digests  # (as _file_name names them)
        return [f"{stem}{look.tag}.{digests[i * DIGEST_LENGTH:(i + 1) * DIGEST_LENGTH]}.{look.ext}"
                for i, look in enumerate(self.looks)]

    def named(self) -> Iterator[tuple[str, Look]]:
        """(dest_uri, look) of the thumbnails, each display image and the original, in that order: what
        pages need, without making a spec of each (a build asks this of every photo)."""
        return zip(self._uris(), self.looks, strict=True)

    def output_uris(self) -> Iterator[str]:
        """dest_uri of every output (see outputs), without making their specs."""
        uris = self._uris()
        if self.videos or self.tracks:
            uris += [spec.dest_uri for spec in (*self.videos, *(spec for spec, _ in self.tracks))]
        return iter(uris)

    @property
    def thumb_uri(self) -> str:
        return f"{self.dest_dir}/{self._name(0)}"

    @property
    def thumb(self) -> OutputSpec:
        """The JPEG thumbnail (its placeholder's source, and every page's fallback)."""
        return self._spec(0)

    @property
    def thumbs(self) -> tuple[OutputSpec, ...]:
        """The thumbnail in each format: JPEG first."""
        return tuple(self._spec(i) for i, look in enumerate(self.looks) if look.role == "thumb")

    @property
    def cards(self) -> tuple[OutputSpec, ...]:
        """An album cover's images for its card (see cover_geometry), grouped by format, JPEG first."""
        return tuple(self._spec(i) for i, look in enumerate(self.looks) if look.role == "cover")

    @property
    def images(self) -> tuple[OutputSpec, ...]:
        """The display images, grouped by format (JPEG first), smallest first within a format."""
        return tuple(self._spec(i) for i, look in enumerate(self.looks) if look.role == "display")

    @property
    def original(self) -> OutputSpec | None:
        last = len(self.looks) - 1
        return self._spec(last) if self.looks[last].role == "original" else None

    @property
    def display(self) -> dict[str, list[OutputSpec]]:
        """format -> its display images, smallest first (JPEG first)."""
        out: dict[str, list[OutputSpec]] = {}
        for spec in self.images:
            out.setdefault(spec.format, []).append(spec)
        return out

    @property
    def outputs(self) -> list[OutputSpec]:
        original = self.original
        out = [*self.thumbs, *self.cards, *self.images, *self.videos, *(spec for spec, _ in self.tracks)]
        return out + ([original] if original else [])

    @property
    def largest(self) -> OutputSpec:
        """The biggest JPEG display image (or of the first format when there is no JPEG)."""
        display = self.display
        return display["jpeg"][-1] if "jpeg" in display else next(iter(display.values()))[-1]


class MediaPlans(MutableMapping[str, MediaPlan]):
    """Every media's plan, made the first time it is asked for (see plan_site): a rebuild after one change
    asks only for the plans of the albums that change reaches, and of the photos the stream pages and
    feeds it renders show. A million photos' plans took ~5 s and ~300 MB to make all at once.

    Its keys are the gallery's media (the mapping given, read as it is when asked).

    held: how many plans made are kept at most (None: all), the oldest let go first and made again when
    asked for again (the same plan): a first build asks for every plan, several times, and a million
    photos' plans held were ~300 MB. A plan set (not made here) is always kept."""

    def __init__(self, make: Callable[[str], MediaPlan], media: Mapping[str, Media], held: int | None = None) -> None:
        self._make = make
        self._media = media
        self._plans: dict[str, MediaPlan] = {}
        self._held = held

    def __getitem__(self, uri: str) -> MediaPlan:
        plan = self._plans.get(uri)
        if plan is None:
            if uri not in self._media:
                raise KeyError(uri)
            if self._held is not None and len(self._plans) >= self._held:
                for old in list(islice(self._plans, len(self._plans) // 2)):
                    del self._plans[old]
            plan = self._plans[uri] = self._make(uri)
        return plan

    def __setitem__(self, uri: str, plan: MediaPlan) -> None:
        self._held = None  # (one set would be let go as one made)
        self._plans[uri] = plan

    def __delitem__(self, uri: str) -> None:
        del self._plans[uri]

    def __contains__(self, uri: object) -> bool:
        return uri in self._plans or uri in self._media

    def __iter__(self) -> Iterator[str]:
        seen = set(self._plans)
        yield from self._plans
        yield from (uri for uri in self._media if uri not in seen)

    def __len__(self) -> int:
        return len(self._media) + sum(1 for uri in self._plans if uri not in self._media)


PLANS_HELD = 20_000  # media plans kept made at most (see MediaPlans; ~300 bytes each)


@lru_cache(maxsize=1)
def planner_code() -> str:
    """A digest of the code that plans outputs (this module, the recipes' and where pages go): part of
    the album fingerprints (see render.albumkeys), which tell an album's plans unchanged without making
    them, so that a change of how outputs are named or made is a change of every album."""
    from . import names, specs

    return files_digest((__file__, specs.__file__, names.__file__))


@dataclass
class SitePlan:
    album_dirs: dict[str, str] = field(default_factory=dict)  # album src_uri -> dest dir ('' is the root)
    media: MutableMapping[str, MediaPlan] = field(default_factory=dict)  # (see MediaPlans)
    media_dirs: Mapping[str, str] = field(default_factory=dict)  # media src_uri -> its page's dest dir (see MediaDirs)
    covers: Container[str] = frozenset()  # media that are an album card's cover (they get card images)
    video_encoder: str = ""  # what encodes the videos, with its version (part of their recipes)
    warnings: list[str] = field(default_factory=list)
    # a plugin media kind -> the plugin function that draws its items' pictures, and their extension
    makers: dict[str, tuple[FilterCall, str]] = field(default_factory=dict)
    # password albums (albumen.seal.keys.Unit), by album src_uri, and how their media's jobs seal their outputs
    units: dict = field(default_factory=dict)
    seals: dict[str, SealSpec] = field(default_factory=dict)  # zone (the unit's album) -> its seal


def thumb_geometry(width: int, height: int, size: int, style: str) -> tuple[int, int, str | None]:
    """Thumbnail size and crop mode: fixed height (aspect capped at 3:1 and 1:3) or a square."""
    if style == "square":
        side = max(1, min(size, width, height))
        return side, side, "attention" if width != height else None
    aspect = width / height
    capped = min(max(aspect, 1 / MAX_THUMB_ASPECT), MAX_THUMB_ASPECT)
    if capped != aspect:
        crop_w, crop_h = (height * MAX_THUMB_ASPECT, height) if aspect > 1 else (width, width * MAX_THUMB_ASPECT)
    else:
        crop_w, crop_h = width, height
    scale = min(1.0, size / crop_h)
    return max(1, round(crop_w * scale)), max(1, round(crop_h * scale)), "centre" if capped != aspect else None


def cover_geometry(width: int, height: int) -> list[tuple[int, int]]:
    """Pixel sizes of an album cover's card images: COVER_ASPECT crops (the centre, as the card's CSS
    shows it) COVER_WIDTHS wide, never larger than the photo allows (then one at the largest crop)."""
    largest = min(width, round(height * COVER_ASPECT))
    out: list[tuple[int, int]] = []
    for size in COVER_WIDTHS:
        w = min(size, largest)
        out.append((w, max(1, min(height, round(w / COVER_ASPECT)))))
        if w == largest:
            break
    return out


def display_geometry(width: int, height: int, sizes: tuple[int, ...]) -> list[tuple[int, int]]:
    """Pixel sizes for the srcset: each configured long edge below the source's, then the source size once.

    A panorama (wider or taller than 3:1) gets, for each size, the pixels of a 3:1 image with that long
    edge instead: sized by its long edge alone, a 7200x300 panorama would be 2048x85 at the largest
    size, too small to see anything in when zoomed, and smaller than its own thumbnail. No side
    exceeds MAX_SIDE (WebP's limit)."""
    long_edge, short_edge = max(width, height), min(width, height)
    panorama = long_edge > PANORAMA_ASPECT * short_edge
    out: list[tuple[int, int]] = []
    for size in sorted(set(sizes)):
        scale = size / long_edge
        if panorama:
            scale = max(scale, math.sqrt(size * size / PANORAMA_ASPECT / (width * height)))
        scale = min(scale, MAX_SIDE / long_edge)
        if scale >= 1:
            out.append((width, height))
            break
        out.append((max(1, round(width * scale)), max(1, round(height * scale))))
    return list(dict.fromkeys(out))


_FRAMES = attrgetter("info.frames")

def plan_site(
    gallery: Gallery, config: Config, abs_dest_root: str, abs_source_root: str, private: dict[str, str] | None = None,
    video_encoder: str | None = None, plugins=None, units: dict | None = None,
) -> SitePlan:
    """URLs for everything: every page's folder and every derivative's name and size (see plan_jobs).

    video_encoder: what encodes videos, with its version (see process.video.encoder_identity; PyAV's
    by default): part of every video stream's recipe, since another encoder makes other bytes.
    plugins: the build's (plugins.manager.Plugins): their image filters are asked for here, for each
    media, and are part of the names of the outputs they apply to."""
    if video_encoder is None and any(m.kind == "video" for m in gallery.media.values()):
        from .video import encoder_identity

        video_encoder = encoder_identity(None)
    plan = SitePlan(video_encoder=video_encoder or "")
    _LOOKS.clear()  # shared within this plan; a long-lived process (serve) keeps none of the last one's
    _RECIPES.clear()
    reserved = {config.stream.path} if config.stream.enabled else set()
    plan.album_dirs, plan.media_dirs, plan.warnings = assign_dirs(gallery, config.pages.slugs, reserved, private)
    filtering = plugins is not None and plugins.has("albumen_image_filters")
    # the covers of albums shown as cards: their parent's children (not the top album, nor one behind
    # a private link of its own, whose card is on no page); a password album's pages show its sealed
    # thumbnails instead (see albumen.seal)
    plan.covers = {gallery.albums[child].cover for album in gallery.albums.values()
                   if not (units and album.zone in units) for child in album.children}

    def make(uri: str) -> MediaPlan:
        media = gallery.media[uri]
        if media.kind not in ("image", "video"):  # a plugin's media kind
            if media.kind not in plan.makers:
                plan.makers[media.kind] = plugins.maker(media.kind)
            return _plan_kind(media, plan.media_dirs[uri], config, *plan.makers[media.kind])
        filters = plugins.image_filters(media_facts(media, gallery)) if filtering else ()
        if media.info.kind == "image":
            return _plan_image(media, plan.media_dirs[uri], config, filters, uri in plan.covers)
        return _plan_video(media, plan.media_dirs[uri], config, plan.video_encoder, filters)

    # plugins (their media kinds and filters are asked for in media order) and password albums (sealed
    # below) have every plan made now, and kept; else each is made when first asked for (see MediaPlans)
    every = plugins is not None or bool(units)
    plan.media = MediaPlans(make, gallery.media, None if every else PLANS_HELD)
    everything = gallery.media.values()
    # (else only the animations are looked at, told by their frames without a loop of Python's)
    for media in everything if every else compress(everything, map((1).__lt__, map(_FRAMES, everything))):
        if every:
            plan.media[media.src_uri]  # noqa: B018 (made now)
        info = media.info
        too_big = info.kind == "image" and info.frames > 1 and animation_too_big(info.frames, info.width, info.height, config)
        if too_big:
            plan.warnings.append(f"{media.src_uri}: {too_big}: published as a still image, its first frame")
    if units:  # password albums: their files under keyed names in their own folder, and sealed
        from ..seal.plan import seal_plan

        seal_plan(plan, gallery, units)
    return plan


def media_facts(media: Media, gallery: Gallery) -> MediaFacts:
    """Everything a plugin's image filter may know of a media (see plugins.hookspecs)."""
    album = gallery.albums.get(media.album_uri)
    return MediaFacts(
        src_uri=media.src_uri, name=media.name, kind=media.kind, album=media.album_uri,
        album_title=album.title if album else None, title=media.title, author=media.author,
        copyright=media.embedded.copyright, date=media.date.isoformat() if media.date else None,
        private=album.private if album else False, width=media.info.width, height=media.info.height,
        album_meta=_album_meta(album),
    )


def _album_meta(album) -> Mapping[str, Any]:
    """The album's index.md header, read-only: a plugin's hook may not change what the pages show."""
    return MappingProxyType(album.sidecar.meta if album is not None and album.sidecar is not None else {})


def animation_too_big(frames: int, width: int, height: int, config: Config) -> str | None:
    """Why an animation may not be resized frame by frame, None when it may: a 92 KB GIF of 4,000 frames
    on a 3000x3000 canvas would keep a worker busy for many minutes, and a 1.6 MB one of 71,000 frames of
    100x100 (within that pixel limit) ten minutes. A 1080p clip of 300 frames fits."""
    if frames > config.images.max_frames:
        return f"an animation of {frames:,} frames is longer than images.max_frames ({config.images.max_frames:,})"
    if frames * width * height > ANIMATION_PIXELS * config.images.max_pixels:
        return (f"an animation of {frames} frames of {width}x{height} is too big to resize"
                " (more pixels in all than 4 x images.max_pixels)")
    return None


def plan_jobs(
    gallery: Gallery, plan: SitePlan, config: Config, abs_dest_root: str, abs_source_root: str,
    ffmpeg: str | None = None, only: Callable[[str], bool] | None = None, settled: Container[str] = (),
) -> Iterator[ImageJob | VideoJob]:
    """The job that makes every derivative of each media, made as asked for: a build keeps only the
    jobs with work left, not one per photo of the library. only(uri): False for a photo that has
    nothing left to do (see process.remaining), whose job is then not made at all. settled: albums
    whose media have nothing left to do (see build), not even asked (a million photos, ~3 s)."""
    if settled:
        planned = plan.media
        items: Iterable[tuple[str, MediaPlan]] = (
            (uri, planned[uri]) for album in gallery.albums.values() if album.src_uri not in settled
            for uri in (*album.media, *album.documents) if uri in planned
        )
    else:
        items = plan.media.items()
    for uri, media_plan in items:
        media = gallery.media[uri]
        if only is not None and media.kind == "image" and not media_plan.sealed and not only(uri):
            continue
        yield media_job(gallery, plan, config, abs_dest_root, abs_source_root, ffmpeg, uri, media_plan)


def media_job(
    gallery: Gallery, plan: SitePlan, config: Config, abs_dest_root: str, abs_source_root: str,
    ffmpeg: str | None, uri: str, media_plan: MediaPlan | None = None,
) -> ImageJob | VideoJob:
    """The job that makes every derivative of one media (plan_jobs makes each so): made again from its
    uri alone, it is the same job (see process.todo)."""
    media = gallery.media[uri]
    media_plan = media_plan or plan.media[uri]
    if media.kind == "image" or media.kind in plan.makers:
        maker = plan.makers[media.kind][0] if media.kind in plan.makers else None
        job = _image_job(media, media_plan, config, abs_dest_root, abs_source_root, maker)
    else:
        job = _video_job(media, media_plan, config, abs_dest_root, abs_source_root, ffmpeg)
    if media_plan.sealed:
        job = replace(job, seal=plan.seals[gallery.albums[media.album_uri].zone])
    return job


def video_geometry(width: int, height: int, max_size: int) -> tuple[int, int]:
    """Fit the long edge to max_size (never up), with even sides as H.264 in 4:2:0 needs."""
    scale = min(1.0, max_size / max(width, height))
    w, h = max(2, round(width * scale)), max(2, round(height * scale))
    return w - w % 2, h - h % 2


def can_remux(media: Media, config: Config) -> bool:
    """Already playable everywhere and small enough: copy the streams instead of re-encoding."""
    info, videos = media.info, config.videos
    return bool(
        videos.remux
        and info.video_codec == "h264"
        and info.pix_fmt in ("yuv420p", "yuvj420p")
        and info.audio_codec in (None, "aac")
        and info.rotation == 0
        and max(info.width, info.height) <= videos.max_size
        and (info.bitrate or 0) <= videos.max_remux_bitrate * 1000
        and info.format in ("mp4", "m4v", "mov", "video")
    )


def _plan_video(
    media: Media, dest_dir: str, config: Config, encoder: str, filters: tuple[FilterCall, ...] = ()
) -> MediaPlan:
    info, videos = media.info, config.videos
    keep = config.images.keep_metadata
    slug = posixpath.basename(dest_dir)
    job_text = repr((VIDEOS_VERSION, encoder, info.rotation, keep, videos.crf, videos.preset, videos.audio_bitrate))
    named = _namer(media, job_text, False)

    w, h = video_geometry(info.width, info.height, videos.max_size)
    poster = _namer(media, job_text + filter_recipe(filters, "poster"), False)(
        "display", "poster", w, h, "jpeg", config.images.quality)
    tw, th, crop = thumb_geometry(w, h, config.thumbnails.height, config.thumbnails.style)
    thumb_named = _namer(media, job_text + filter_recipe(filters, "thumb"), False)
    thumbs = [thumb_named("thumb", "thumb", tw, th, fmt, quality, crop) for fmt, quality in _thumb_formats(config)]
    streams = []
    for fmt in ("av1", "webm"):
        if fmt in videos.formats:
            streams.append(named("video", f"{h}p-{'vp9' if fmt == 'webm' else fmt}", w, h, fmt, videos.crf))
    if can_remux(media, config):
        streams.append(named("video", f"{info.height}p", info.width, info.height, "remux"))
    else:
        streams.append(named("video", f"{h}p", w, h, "mp4", videos.crf))
    tracks = []
    for n, (track_uri, lang) in enumerate(media.tracks):
        draft = OutputSpec("", "", "track", 0, 0, "vtt", n)
        digest = derivative_hash(media.content_hash + track_uri, recipe_text(draft, job_text, False))
        tracks.append((OutputSpec(dest_dir, f"{slug}.{lang or 'captions'}.{digest}.vtt", "track", 0, 0, "vtt"), lang))
    return MediaPlan.of(
        media.src_uri, dest_dir, [*thumbs, poster],
        videos=tuple(_spec_of(dest_dir, _file_name(dest_dir, look, digest), look) for look, digest in streams),
        tracks=tuple(tracks), filters=filters,
    )


def _video_job(
    media: Media, media_plan: MediaPlan, config: Config, abs_dest_root: str, abs_source_root: str, ffmpeg: str | None
) -> VideoJob:
    info, videos = media.info, config.videos
    return VideoJob(
        job_id=media.src_uri,
        abs_src_path=os.path.join(abs_source_root, *media.src_uri.split("/")),
        abs_dest_root=abs_dest_root,
        src_width=info.width,
        src_height=info.height,
        rotation=info.rotation,
        duration=info.duration,
        poster=media_plan.images[0],
        thumb=media_plan.thumb,
        more_thumbs=media_plan.thumbs[1:],
        videos=media_plan.videos,
        tracks=tuple(
            (os.path.join(abs_source_root, *uri.split("/")), spec.dest_uri)
            for (uri, _), (spec, _) in zip(media.tracks, media_plan.tracks, strict=True)
        ),
        crf=videos.crf,
        preset=videos.preset,
        audio_bitrate=videos.audio_bitrate,
        keep_metadata=config.images.keep_metadata,
        ffmpeg=ffmpeg,
        timeout=float(videos.timeout),
        quality=config.images.quality,
        filters=media_plan.filters,
    )


def _looker(source_format: str | None):
    """Makes a derivative's look (shared by all derivatives that look alike, see _LOOKS); a copied
    original takes the extension of the source's format."""
    own_ext = ORIGINAL_EXTENSIONS.get(source_format or "")

    def look(role: str, tag: str, w: int, h: int, fmt: str, quality: int = 0, crop=None, anim=False) -> Look:
        ext = own_ext if fmt == "copy" else EXTENSIONS[fmt]
        if ext is None:  # not reached: only the formats above are images (see scan.sniff)
            raise ValueError(f"no published extension for a {source_format!r} original")
        made = Look(role, tag, ext, w, h, fmt, quality, crop, anim)
        return _LOOKS.setdefault(made, made)

    return look


def _namer(media: Media, job_text: str, progressive: bool):
    """Makes a derivative's (look, hash): it is named slug.TAG.HASH.EXT, the hash covering content and recipe."""
    look = _looker(media.info.format)

    def named(*args, **kwargs) -> tuple[Look, str]:
        made = look(*args, **kwargs)
        return made, derivative_hash(media.content_hash, recipe_text(made, job_text, progressive), DIGEST_LENGTH)

    return named


def download_name(name: str, published: str) -> str:
    """The name a visitor saves an original under: its own name, but with the extension of the file
    published (from its format) unless the name already has one for that format."""
    ext = published.rsplit(".", 1)[-1]
    stem, own = os.path.splitext(name)
    if own.lstrip(".").lower() in _SAME_EXTENSIONS.get(ext, {ext}):
        return name
    return f"{stem or name}.{ext}"


def _file_name(dest_dir: str, look: Look, digest: str) -> str:
    """A derivative's file name: slug.TAG.HASH.EXT, the slug being its media's folder name."""
    return f"{dest_dir.rpartition('/')[2]}.{look.tag}.{digest}.{look.ext}"  # (posixpath.basename, 3x faster)


def _spec_of(dest_dir: str, name: str, look: Look) -> OutputSpec:
    return OutputSpec(dest_dir, name, look.role, look.width, look.height, look.format, look.quality, look.crop,
                      look.animated)


def filter_role(role: str) -> str:
    """The role plugins' image filters know an output by: an album cover's card images are thumbnails."""
    return "thumb" if role == "cover" else role


def _thumb_formats(config: Config) -> list[tuple[str, int]]:
    """(format, quality) of each thumbnail: JPEG (every browser's, and the placeholder's source),
    then each other format of images.formats, so that grids and album cards offer WebP or AVIF as
    the photos' pages do. A setting without them plans the very outputs it did before."""
    images = config.images
    qualities = {"webp": images.webp_quality, "avif": images.avif_quality}
    return [("jpeg", images.quality)] + [(f, qualities[f]) for f in images.formats if f in qualities]


def _credits(media: Media, config: Config) -> tuple[str | None, str | None]:
    """Artist and copyright, which published images keep (unless all metadata is kept anyway)."""
    if config.images.keep_metadata:
        return None, None
    return media.embedded.artist, media.embedded.copyright


def _plan_image(
    media: Media, dest_dir: str, config: Config, filters: tuple[FilterCall, ...] = (), cover: bool = False
) -> MediaPlan:
    """cover: the photo is an album's cover: it gets card images too (see cover_geometry).

    Photos alike (one size, format, orientation, colour profile, frame count, credits and place, the
    same filters, cover or not) share their outputs' looks and recipe texts, planned once (see
    _image_recipes): what is left for each photo is its folder and one hash of its content with each
    recipe. Everything the recipes read of a photo is in the key, so a shared recipe is only ever
    another photo's when it is exactly what this photo's own would be."""
    info = media.info
    embedded = media.embedded
    artist, copyright_ = _credits(media, config)
    place = config.images.originals == "copy" and (embedded.gps is not None or embedded.names_place)
    if _RECIPES_OF[0] is not config:  # (the config held: its id cannot be another config's)
        _RECIPES.clear()
        _RECIPES_OF[0] = config
    key = (info.width, info.height, info.format, info.orientation, info.colour, info.frames, artist, copyright_,
           place, cover, id(filters))
    shared = _RECIPES.get(key)
    if shared is None or shared[0] is not filters:  # (the filters held too, for the same reason)
        shared = _RECIPES[key] = (filters, *_image_recipes(info, config, (artist, copyright_), place, filters, cover))
    prefix = f"{media.content_hash}:".encode()
    # derivative_hash(content_hash, recipe) of each output, with the recipes' text encoded once
    digests = "".join([sha256(prefix + text).hexdigest()[:DIGEST_LENGTH] for text in shared[2]])
    return MediaPlan(media.src_uri, dest_dir, shared[1], digests, filters=filters)


def _image_recipes(
    info, config: Config, credits: tuple[str | None, ...], names_place: bool, filters: tuple[FilterCall, ...],
    cover: bool,
) -> tuple[tuple[Look, ...], tuple[bytes, ...]]:
    """The looks of a photo's outputs and the recipe text of each (UTF-8), from what _plan_image's key holds."""
    images = config.images
    keep = images.keep_metadata
    if not all(c is None or c.isascii() for c in credits):
        credits += ("utf-8",)  # written as UTF-8 since: such images made before (a '?' for each letter) are made again
    job_text = repr((info.orientation, info.colour, keep, *credits))
    animated = info.frames > 1 and not animation_too_big(info.frames, info.width, info.height, config)
    look = _looker(info.format)

    tw, th, crop = thumb_geometry(info.width, info.height, config.thumbnails.height, config.thumbnails.style)
    looks = [look("thumb", "thumb", tw, th, fmt, quality, crop) for fmt, quality in _thumb_formats(config)]
    if cover:
        looks += [look("cover", f"cover{w}", w, h, fmt, quality, "centre")
                  for fmt, quality in _thumb_formats(config) for w, h in cover_geometry(info.width, info.height)]
    sizes = display_geometry(info.width, info.height, images.sizes)
    qualities = {"jpeg": images.quality, "webp": images.webp_quality, "avif": images.avif_quality}
    if animated:
        w, h = sizes[-1]
        base_fmt = "gif" if info.format == "gif" else "webp"
        looks.append(look("display", f"{w}w", w, h, base_fmt, qualities.get(base_fmt, 80), anim=True))
        if "webp" in images.formats and base_fmt != "webp":
            looks.append(look("display", f"{w}w", w, h, "webp", images.webp_quality, anim=True))
    else:
        formats = ["jpeg"] + [f for f in images.formats if f != "jpeg"]
        for fmt in formats:
            looks += [look("display", f"{w}w", w, h, fmt, qualities[fmt]) for w, h in sizes]
    if images.originals == "copy":
        # a JPEG loses its location losslessly (see worker.strip_jpeg_location); another format
        # that names a place is published as a JPEG without it
        filtered = any("original" in f.roles for f in filters)  # a filter needs the pixels: not a copy
        if filtered or (names_place and not keep and info.format not in ("jpeg", "mpo")):
            looks.append(look("original", "original", info.width, info.height, "jpeg", 95))
        else:
            looks.append(look("original", "original", info.width, info.height, "copy", 0))
    shared = _LOOKS.setdefault(tuple(looks), tuple(looks))
    # a still's recipe says how its pixels are made: in a whole build or alone, the same bytes
    recipes = still_recipes(info.width, info.height, info.format, shared)
    texts = tuple(
        recipe_text(lk, job_text + recipe + filter_recipe(filters, filter_role(lk.role)), images.progressive).encode()
        for lk, recipe in zip(shared, recipes, strict=True)
    )
    return shared, texts


def _plan_kind(media: Media, dest_dir: str, config: Config, maker: FilterCall, ext: str) -> MediaPlan:
    """A plugin media kind's item: a thumbnail of the picture the plugin draws, and the file itself,
    published as it is under the kind's extension (never its own name's)."""
    info = media.info
    tw, th, crop = thumb_geometry(info.width, info.height, config.thumbnails.height, config.thumbnails.style)
    thumb = Look("thumb", "thumb", "jpg", tw, th, "jpeg", config.images.quality, crop, False)
    original = Look("original", "original", ext, info.width, info.height, "copy", 0, None, False)
    looks = tuple(_LOOKS.setdefault(lk, lk) for lk in (thumb, original))
    recipes = still_recipes(info.width, info.height, info.format, looks)
    return MediaPlan.of(media.src_uri, dest_dir, [
        (lk, derivative_hash(media.content_hash, recipe_text(lk, maker.recipe + recipe, False), DIGEST_LENGTH))
        for lk, recipe in zip(looks, recipes, strict=True)
    ])


def _image_job(
    media: Media, media_plan: MediaPlan, config: Config, abs_dest_root: str, abs_source_root: str,
    maker: FilterCall | None = None,
) -> ImageJob:
    info, images = media.info, config.images
    artist, copyright_ = _credits(media, config)
    outputs = tuple(media_plan.outputs)
    return ImageJob(
        job_id=media.src_uri,
        abs_src_path=os.path.join(abs_source_root, *media.src_uri.split("/")),
        abs_dest_root=abs_dest_root,
        format=info.format,
        orientation=info.orientation,
        colour=info.colour,
        src_width=info.width,
        src_height=info.height,
        frames=info.frames,
        outputs=outputs,
        planned=outputs,
        progressive=images.progressive,
        keep_metadata=images.keep_metadata,
        artist=artist,
        copyright=copyright_,
        max_pixels=images.max_pixels,
        filters=media_plan.filters,
        maker=maker,
    )
