"""The gallery as inert data: flat maps keyed by `src_uri`, no I/O, no cycles, picklable.

`src_uri` is the POSIX path relative to the source root ('' is the root album).
Albums refer to their children and media by key, never by object.

One exception, on purpose and bounded: in a build, the media of a folder taken from its snapshot read
the fields few pages need (Media's REST_FIELDS) from the build cache the first time one is asked for
(LazyFacts with a fetch given by the scan: a million photos' pieces held were ~45 MB of a 500 MiB
budget). Only build() asks the scan for it, and lets go of what was read when it ends; a media pickled
takes its values with it.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
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


# A media's fields that the passes over every photo of a library do not read (see Media): kept apart,
# in the order LazyFacts.of gives them
REST_FIELDS = ("size", "mtime_ns", "content_hash", "embedded", "sidecar", "paired", "tracks", "alt", "tags", "author",
               "location")
# every field of a media, in the order Media() takes them
MEDIA_FIELDS = ("src_uri", "album_uri", "name", "size", "mtime_ns", "content_hash", "info", "embedded", "sidecar", "paired",
                "tracks", "title", "description_html", "alt", "date", "date_source", "tags", "author", "location")


class MediaRest:
    """A media's fields that few passes read (REST_FIELDS), in one object of their own."""

    __slots__ = REST_FIELDS

    def __init__(self, *values) -> None:
        for name, value in zip(REST_FIELDS, values, strict=True):
            setattr(self, name, value)

    def __reduce__(self):
        return MediaRest, tuple(getattr(self, name) for name in REST_FIELDS)


_UNSET = object()


@dataclass(slots=True, eq=False, repr=False)
class Media:
    """A photo or video. Its fields are MEDIA_FIELDS, given to Media() in that order; those that every
    photo of a library is looked at for in a build (where it is, its kind and size, its date, title and
    description) are its own, the others (REST_FIELDS) are in `rest`: a MediaRest, or the LazyFacts of the
    folder it was taken from the snapshot of, read when one of them is first asked for. (Each media an
    object of 19 fields was 184 bytes, ~180 MB at a million photos; with 9, 104.)

    size, mtime_ns, content_hash, embedded: the file's, and what it says of itself (EmbeddedMetadata).
    paired: RAW or Live Photo files published as part of this one; tracks: videos' (src_uri of a .vtt
    caption file, language or ''). title, description_html, alt, date, tags, author, location: resolved
    by precedence (sidecar > XMP > IPTC > embedded > file name > mtime with file_dates); date None:
    nothing says when it was taken; date_source: 'sidecar', an EmbeddedMetadata source, 'filename',
    'mtime' (a guess, with the file_dates setting), '' (undated)."""

    src_uri: str
    album_uri: str
    name: str  # file name (None in the slot: the end of its path, see _fields_apart)
    info: MediaInfo
    title: str | None
    description_html: str
    date: datetime | None
    date_source: str
    rest: MediaRest | LazyFacts

    def __eq__(self, other: object) -> bool:
        if type(other) is not Media:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in MEDIA_FIELDS)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Media({', '.join(f'{name}={getattr(self, name)!r}' for name in MEDIA_FIELDS)})"

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
    """What one folder's media hold each of their own, but few builds ask for (REST_FIELDS: their size,
    modification time, content hash, embedded metadata...), pickled and compressed (name -> values), read
    when one of them is first asked for. A folder taken from its snapshot (see scan.snapshots) gives each
    of its media this object as its `rest`, and no name (it is the end of its path): a rebuild after one
    change asks for few (the plans and pages it makes). Making them all was most of reading the snapshots
    back (one object a photo for its metadata: 0.2 of 0.26 s at 100,000 photos), and the objects a photo
    of its name, size, time and hash were ~210 bytes (~200 MB at a million photos). The piece is
    compressed (zlib, fastest: ~115 -> ~41 bytes a photo held, 1.2 us a photo to compress, 0.4 to read back)."""

    __slots__ = ("blob", "fetch")

    def __init__(self, blob: bytes | None, fetch: Callable[[], bytes] | None = None) -> None:
        """blob: the piece; or fetch, which gives it (read again from the build cache: see snapshots.load)."""
        self.blob, self.fetch = blob, fetch

    def piece(self) -> bytes:
        return self.blob if self.blob is not None else self.fetch()  # type: ignore[misc]

    def __reduce__(self):
        return LazyFacts, (self.piece(),)

    def of(self, name: str) -> tuple:
        """The media's REST_FIELDS values. The folders read last are kept read (_READ): a folder's media are
        mostly asked for together, and one whose piece stayed read once a cover of it was shown (a year's
        page shows ~700 of them at a million photos) held ~20 MB."""
        found = _READ.get(self)
        if found is None:
            import pickle

            found = _READ[self] = pickle.loads(zlib.decompress(self.piece()))  # noqa: S301 - the build cache's own snapshot
            if len(_READ) > _KEPT_READ:
                del _READ[next(iter(_READ))]
        return found[name]


_KEPT_READ = 16
_READ: dict[LazyFacts, dict[str, tuple]] = {}  # (in the order read)


def forget_facts_read() -> None:
    """Let go of the folders' facts kept read (a build's end: they may read from its cache, now closed)."""
    _READ.clear()


_FAST_INIT = Media.__init__  # (the dataclass's: its own slots, in order; see media_from_snapshot)
_put_rest = Media.__dict__["rest"].__set__


def _media_init(
    self: Media, src_uri: str, album_uri: str, name: str | None, size=_UNSET, mtime_ns=_UNSET, content_hash=_UNSET,
    info: MediaInfo | None = None, embedded=_UNSET, sidecar=_UNSET, paired=_UNSET, tracks=_UNSET,
    title: str | None = None, description_html: str = "", alt=_UNSET, date: datetime | None = None,
    date_source: str = "", tags=_UNSET, author=_UNSET, location=_UNSET, rest: MediaRest | LazyFacts | None = None,
) -> None:
    """Media(MEDIA_FIELDS...); rest: another media's (dataclasses.replace gives it), under those given here."""
    _FAST_INIT(self, src_uri, album_uri, name, info, title, description_html, date, date_source, None)
    given = (size, mtime_ns, content_hash, embedded, sidecar, paired, tracks, alt, tags, author, location)
    if rest is None:
        # (required, as they were when every field was the dataclass's own)
        missing = [n for n, g in zip(("size", "mtime_ns", "content_hash"), given, strict=False) if g is _UNSET]
        missing += ["info"] if info is None else []
        missing += ["embedded"] if embedded is _UNSET else []
        if missing:
            raise TypeError(f"Media() missing required arguments: {', '.join(missing)}")
        base = (None, None, None, None, None, (), (), None, (), None, None)
    else:
        base = rest.of(self.name) if type(rest) is LazyFacts else tuple(getattr(rest, n) for n in REST_FIELDS)
    _put_rest(self, MediaRest(*(b if g is _UNSET else g for g, b in zip(given, base, strict=True))))


Media.__init__ = _media_init  # type: ignore[method-assign]


def media_from_snapshot(
    src_uri: str, album_uri: str, info: MediaInfo, title: str | None, description_html: str, date: datetime | None,
    date_source: str, facts: LazyFacts,
) -> Media:
    """A media as a snapshot keeps it (see scan.snapshots): its own fields, no name, its folder's facts."""
    media = object.__new__(Media)
    _FAST_INIT(media, src_uri, album_uri, None, info, title, description_html, date, date_source, facts)
    return media


def _fields_apart() -> None:
    """Media's REST_FIELDS read and set through its `rest`, and Media.name is the end of the media's path
    when its slot holds none (made when asked, not kept); each is set, read, compared and shown as the
    field it is. A media whose rest is its folder's LazyFacts reads them from there (the folders read
    last stay read) and is made a MediaRest of its own only when one of them is set: a first build,
    which plans every photo (the plan asks for each one's hash), held each photo's facts made again,
    ~450 bytes a photo."""
    rest_slot = Media.__dict__["rest"]
    get_rest = rest_slot.__get__

    def rest(self: Media) -> MediaRest:
        value = get_rest(self, Media)
        if type(value) is LazyFacts:
            value = MediaRest(*value.of(self.name))
            _put_rest(self, value)
        return value

    def field_of(index: int, name: str) -> property:
        get, put = MediaRest.__dict__[name].__get__, MediaRest.__dict__[name].__set__

        def read(self: Media):
            value = get_rest(self, Media)
            return value.of(self.name)[index] if type(value) is LazyFacts else get(value, MediaRest)

        return property(read, lambda self, value: put(rest(self), value))

    for index, name in enumerate(REST_FIELDS):
        setattr(Media, name, field_of(index, name))
    name_slot = Media.__dict__["name"]
    get_name, put_name = name_slot.__get__, name_slot.__set__

    def name(self: Media) -> str:
        value = get_name(self, Media)
        if value is None:  # (made again each time, not kept: a first build asks every photo's, ~60 MB at a million)
            album = self.album_uri
            return self.src_uri[len(album) + 1 :] if album else self.src_uri
        return value

    Media.name = property(name, put_name)  # type: ignore[assignment, method-assign]


_fields_apart()
