"""The gallery as inert data: flat maps keyed by `src_uri`, no I/O, no cycles, picklable.

`src_uri` is the POSIX path relative to the source root ('' is the root album).
Albums refer to their children and media by key, never by object.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field, fields
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Camera:
    make: str | None = None
    model: str | None = None
    lens: str | None = None
    exposure_time: float | None = None  # seconds
    f_number: float | None = None
    iso: int | None = None
    focal_length: float | None = None  # mm
    focal_length_35mm: float | None = None


@dataclass(frozen=True, slots=True)
class GPS:
    latitude: float
    longitude: float
    altitude: float | None = None


@dataclass(frozen=True, slots=True)
class EmbeddedMetadata:
    """What the file itself says, merged across EXIF, IPTC and XMP by precedence (XMP > IPTC > EXIF)."""

    title: str | None = None
    description: str | None = None
    alt: str | None = None
    keywords: tuple[str, ...] = ()
    rating: int | None = None
    date: datetime | None = None  # aware
    date_source: str | None = None  # 'xmp' | 'iptc' | 'exif' | 'video'
    artist: str | None = None
    copyright: str | None = None
    camera: Camera = field(default_factory=Camera)
    gps: GPS | None = None
    names_place: bool = False  # IPTC or XMP names where it was taken (city, region, country, location, GPS)


@dataclass(frozen=True, slots=True)
class MediaInfo:
    """How to decode the file and what it looks like, learnt from its header only."""

    kind: str  # 'image' | 'video'
    format: str  # 'jpeg', 'png', 'gif', 'webp', 'tiff', 'bmp', 'heif', 'avif', 'mpo', ...
    width: int  # as displayed, after orientation
    height: int
    orientation: int = 1  # EXIF orientation still to apply to the decoded pixels
    colour: str = "srgb"  # 'srgb' (or untagged), 'p3' (kept with its profile), 'convert' (to sRGB),
    # 'adobergb' (untagged, but EXIF says Adobe RGB: converted to sRGB as if it had that profile)
    frames: int = 1
    duration: float | None = None  # seconds, videos
    rotation: int = 0  # videos: clockwise turn (0, 90, 180, 270) that shows the picture upright
    video_codec: str | None = None
    audio_codec: str | None = None
    pix_fmt: str | None = None
    bitrate: int | None = None  # bits per second, the whole file
    fps: float | None = None


@dataclass(frozen=True, slots=True)
class Sidecar:
    """A Markdown sidecar: header keys (lower-case) and the body rendered to HTML."""

    src_uri: str
    meta: dict
    body_html: str = ""


@dataclass(slots=True)
class Media:
    src_uri: str
    album_uri: str
    name: str  # file name
    size: int
    mtime_ns: int
    content_hash: str
    info: MediaInfo
    embedded: EmbeddedMetadata
    sidecar: Sidecar | None = None
    paired: tuple[str, ...] = ()  # RAW or Live Photo files published as part of this one
    tracks: tuple[tuple[str, str], ...] = ()  # videos: (src_uri of a .vtt caption file, language or '')
    # Resolved by precedence: sidecar > XMP > IPTC > embedded > file name (> mtime with file_dates)
    title: str | None = None
    description_html: str = ""
    alt: str | None = None
    date: datetime | None = None  # None: nothing says when it was taken
    # 'sidecar', an EmbeddedMetadata source, 'filename', 'mtime' (a guess, with the file_dates setting), '' (undated)
    date_source: str = ""
    tags: tuple[str, ...] = ()
    author: str | None = None
    location: str | None = None

    @property
    def kind(self) -> str:
        return self.info.kind

    @property
    def stem(self) -> str:
        return self.name.rsplit(".", 1)[0] if "." in self.name[1:] else self.name


@dataclass(slots=True)
class Album:
    src_uri: str
    name: str  # folder name ('' for the root)
    title: str
    description_html: str = ""
    sidecar: Sidecar | None = None
    children: list[str] = field(default_factory=list)  # linked sub-album src_uris, sorted
    hidden: list[str] = field(default_factory=list)  # sub-albums with their own private link: never linked
    media: list[str] = field(default_factory=list)  # media src_uris, sorted (photos and videos)
    documents: list[str] = field(default_factory=list)  # items of plugins' media kinds, sorted likewise
    cover: str | None = None  # media src_uri
    date_start: datetime | None = None
    date_end: datetime | None = None
    dates_guessed: bool = False  # the range comes only from file modification times (nothing said when taken)
    sort_date: datetime | None = None  # 'date' from index.md, for ordering albums
    photo_count: int = 0  # everything at and below this album that its page links to
    video_count: int = 0
    document_count: int = 0
    marked_private: bool = False  # index.md or the config says private: it gets its own token
    zone: str | None = None  # src_uri of the private album whose link covers this one; None: public

    @property
    def private(self) -> bool:
        return self.zone is not None

    @property
    def parent_uri(self) -> str | None:
        if self.src_uri == "":
            return None
        return self.src_uri.rpartition("/")[0]

    @property
    def depth(self) -> int:
        return 0 if not self.src_uri else self.src_uri.count("/") + 1


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file that looked like media but could not be used, and why."""

    src_uri: str
    reason: str


@dataclass(slots=True)
class Gallery:
    albums: dict[str, Album] = field(default_factory=dict)
    media: dict[str, Media] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # files that are not media at all (.txt, .xmp, ...)
    warnings: list[str] = field(default_factory=list)
    unsettled: int = 0  # files skipped for a reason the next build may not meet (not kept in the cache)

    @property
    def root(self) -> Album:
        return self.albums[""]

    def walk_albums(self, start: str = "", hidden: bool = True):
        """Albums depth-first in display order, starting with `start` itself.

        hidden=False stays within what `start` links to: it does not enter separately private albums.
        """
        stack = [start]
        while stack:
            uri = stack.pop()
            album = self.albums[uri]
            yield album
            stack.extend(reversed(album.children + (album.hidden if hidden else [])))

    def flatten(self, album_uri: str = "") -> list[Media]:
        """All media of an album and every album below it that it links to, in display order.

        Nothing is copied or changed; from the root this is every public media item.
        """
        return [self.media[m] for album in self.walk_albums(album_uri, hidden=False) for m in album.media]

    def public_media(self) -> list[Media]:
        return self.flatten("")


def _quick_setstate(cls: type) -> None:
    """Unpickle a frozen slots dataclass without looking its fields up for every object.

    The build cache keeps each file's record pickled; a rebuild of 100,000 photos unpickles them
    all, and Python's own __setstate__ for these classes calls dataclasses.fields() each time
    (17 -> 10 us a record). Each value is set by its slot's own descriptor, which a frozen class's
    __setattr__ does not stand in the way of (object.__setattr__ by name took ~30% longer: 0.1 s a
    100,000 folder-snapshot photos). The pickled form is unchanged: values in field order."""
    setters = tuple(cls.__dict__[f.name].__set__ for f in fields(cls))

    def __setstate__(self, state) -> None:
        for setter, value in zip(setters, state, strict=True):
            setter(self, value)

    cls.__setstate__ = __setstate__  # type: ignore[attr-defined]


for _cls in (Camera, GPS, EmbeddedMetadata, MediaInfo, Sidecar, Skipped):
    _quick_setstate(_cls)
del _cls


class LazyFacts:
    """What one folder's media hold each of their own, but few builds ask for, pickled (name -> their
    embedded metadata, size, modification time and content hash), read when one of them is first asked
    for. A folder taken from its snapshot (see scan.snapshots) gives each of its media this object in
    place of those four, and no name (it is the end of its path): a rebuild after one change asks for few
    (the plans and pages it makes). Making them all was most of reading the snapshots back (one object
    a photo for its metadata: 0.2 of 0.26 s at 100,000 photos), and the four objects a photo its name,
    size, time and hash were ~210 bytes (~200 MB at a million photos). The piece is compressed (zlib,
    fastest: ~115 -> ~40 bytes a photo held, 1.2 us a photo to compress, 0.4 to read back)."""

    __slots__ = ("blob", "by_name")

    def __init__(self, blob: bytes) -> None:
        self.blob = blob
        self.by_name: dict[str, tuple[EmbeddedMetadata, int, int, str]] | None = None

    def __reduce__(self):
        return LazyFacts, (self.blob,)

    def of(self, name: str) -> tuple[EmbeddedMetadata, int, int, str]:
        if self.by_name is None:
            import pickle

            self.by_name = pickle.loads(zlib.decompress(self.blob))  # noqa: S301 - the build cache's own snapshot
        return self.by_name[name]


LAZY_FIELDS = ("embedded", "size", "mtime_ns", "content_hash")  # (in the order LazyFacts.of gives them)


def _lazy_facts() -> None:
    """Media.embedded, size, mtime_ns and content_hash read a LazyFacts in their place the first time one
    of them is asked for (and keep what it read), and Media.name is the end of the media's path when it
    holds none; each is set, read, compared and shown as the field it is."""
    slots = [Media.__dict__[name] for name in LAZY_FIELDS]
    puts = [slot.__set__ for slot in slots]

    def lazy(get):
        def read(self: Media):
            value = get(self, Media)
            if type(value) is LazyFacts:
                facts = value.of(self.name)
                for put, fact in zip(puts, facts, strict=True):
                    put(self, fact)
                value = get(self, Media)
            return value

        return read

    for name, slot, put in zip(LAZY_FIELDS, slots, puts, strict=True):
        setattr(Media, name, property(lazy(slot.__get__), put))
    name_slot = Media.__dict__["name"]
    get_name, put_name = name_slot.__get__, name_slot.__set__

    def name(self: Media) -> str:
        value = get_name(self, Media)
        if value is None:
            album = self.album_uri
            value = self.src_uri[len(album) + 1 :] if album else self.src_uri
            put_name(self, value)
        return value

    Media.name = property(name, put_name)  # type: ignore[assignment, method-assign]


_lazy_facts()
