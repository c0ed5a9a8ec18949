"""Order albums and media, drop empty albums, and derive counts, date ranges and covers.

Pure functions over the model: run after the scan, and again after processing
drops media that turned out to be undecodable.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from functools import lru_cache
from itertools import compress, count, groupby, islice
from operator import attrgetter, eq, itemgetter
from typing import Any

from ..model import Album, Gallery, Media
from .sidecar import meta_text

_DIGITS = re.compile(r"(\d+)")
_EPOCH = datetime(1, 1, 1, tzinfo=UTC)
_NAME = attrgetter("name")
_DATE = attrgetter("date")
_SRC = attrgetter("src_uri")
_ALBUM = attrgetter("album_uri")
_KIND = attrgetter("info.kind")
_DATE_SOURCE = attrgetter("date_source")
_SHOWN = ("image", "video")  # (an album's media: documents are apart)


@lru_cache(maxsize=1 << 16)
def natural_key(text: str) -> tuple:
    """'IMG_2' before 'IMG_10'; case-insensitive. (Memoized: a build sorts every photo by its name
    three times, and a camera's names, IMG_0001 to IMG_9999, come back in every folder.)"""
    parts = _DIGITS.split(text.casefold())
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts if p != "")


def parse_sort(spec: str) -> tuple[str, bool]:
    """'-date' -> ('date', True)."""
    return (spec[1:], True) if spec.startswith("-") else (spec, False)


def _media_sort_key(field: str, media: Media) -> tuple:
    """(missing, value, name): items without the value sort last in either direction."""
    name = natural_key(media.name)
    if field == "date":
        return (media.date is None, media.date or _EPOCH, name)
    if field == "name":
        return (False, name, ())
    if field == "title":
        return (False, natural_key(media.title or media.name), name)
    value = meta_text(media.sidecar.meta, field) if media.sidecar else None
    return (value is None, natural_key(value or ""), name)


def _album_sort_key(field: str, album: Album) -> tuple:
    name = natural_key(album.name)
    if field == "date":
        date = album.sort_date or album.date_end
        return (date is None, date or _EPOCH, name)
    if field == "name":
        return (False, name, ())
    if field == "title":
        return (False, natural_key(album.title), name)
    value = meta_text(album.sidecar.meta, field) if album.sidecar else None
    return (value is None, natural_key(value or ""), name)


def sort_items(items: list, spec: str, key_fn) -> list:
    """Sort by `spec` ('-' prefix: descending); items lacking the key always come last."""
    field, reverse = parse_sort(spec)
    present: list[tuple[tuple, Any]] = []
    missing: list[tuple[tuple, Any]] = []
    for x in items:
        key = key_fn(field, x)
        (missing if key[0] else present).append((key[1:], x))
    present.sort(key=itemgetter(0), reverse=reverse)  # (stable, also reversed: equal keys keep their order)
    missing.sort(key=itemgetter(0), reverse=reverse)
    return [x for _, x in present] + [x for _, x in missing]


def sort_media(items: list[Media], spec: str) -> list[Media]:
    """sort_items(items, spec, _media_sort_key), by date without a key made for each item by a function
    of Python's (every photo of a library is sorted in every build): their dates' order, then their
    names', the undated after in their names' order."""
    field, reverse = parse_sort(spec)
    if field != "date":
        return sort_items(items, spec, _media_sort_key)
    by_name = lambda m: natural_key(m.name)  # noqa: E731
    dated, undated = _by_date(items)
    dated.sort(key=_DATE, reverse=reverse)
    # names only among media of one date (a burst), as stream_order: not a key made for every photo
    for first, last in _equal_runs(list(map(_DATE, dated))):
        dated[first:last] = sorted(dated[first:last], key=by_name, reverse=reverse)
    return dated + sorted(undated, key=by_name, reverse=reverse)


def _by_date(items: Iterable[Media]) -> tuple[list[Media], list[Media]]:
    """(the dated, the undated) media, each in the order given (a date is never false: no loop of Python's)."""
    items = list(items)
    dates = list(map(_DATE, items))
    if None not in dates:
        return items, []
    return list(compress(items, dates)), [m for m, date in zip(items, dates, strict=True) if date is None]


def _equal_runs(values: list) -> Iterator[tuple[int, int]]:
    """(first, one past the last) of each run of two or more equal values side by side."""
    ties = list(compress(count(), map(eq, values, islice(values, 1, None))))  # i: values[i] == values[i + 1]
    start = 0
    while start < len(ties):  # each run: from ties[start] to one past the run's last tie
        end = start + 1
        while end < len(ties) and ties[end] == ties[end - 1] + 1:
            end += 1
        yield ties[start], ties[end - 1] + 2
        start = end


def arrange_gallery(gallery: Gallery, album_sort: str, media_sort: str) -> None:
    """Sort every album's media and children, work out private zones, prune empty albums,
    and compute counts, date ranges and covers.

    An album marked private starts a zone of its own: it is never linked from its parent (it goes
    in the parent's `hidden` list), and counts, dates and covers never look into it from outside.
    An album left with nothing public to show is not linked either, but is still walked, so the
    private albums below it are still published.
    """
    albums = gallery.albums
    kids: dict[str, list[str]] = {uri: [] for uri in albums}
    for album in albums.values():
        album.children, album.hidden, album.media, album.documents = [], [], [], []
    for uri, album in albums.items():
        if uri and album.parent_uri in kids:
            kids[album.parent_uri].append(uri)
    shown: dict[str, list[Media]] = {uri: [] for uri in albums}  # each album's photos and videos
    for uri, together in groupby(gallery.media.values(), key=_ALBUM):  # (a folder's media come together)
        group = list(together)
        kinds = list(map(_KIND, group))
        if kinds.count("image") + kinds.count("video") == len(group):  # (no document: no loop of Python's)
            shown[uri] += group
            continue
        for media, kind in zip(group, kinds, strict=True):
            if kind in _SHOWN:
                shown[uri].append(media)
            else:
                albums[uri].documents.append(media.src_uri)

    by_depth = sorted(albums, key=lambda u: u.count("/") + 1 if u else 0)
    for uri in by_depth:  # parents first: zones are inherited
        album = albums[uri]
        if uri == "":
            album.zone = None  # the whole site cannot be private
        elif album.marked_private:
            album.zone = uri
        else:
            album.zone = albums[album.parent_uri or ""].zone

    anything: dict[str, int] = {}  # media anywhere below, linked or not: decides pruning
    for uri in reversed(by_depth):  # deepest first
        album = albums[uri]
        spec = _override(album, "sort", media_sort, gallery)
        own = sort_media(shown.pop(uri), spec)
        album.media = list(map(_SRC, own))
        if album.documents:
            album.documents = [m.src_uri for m in sort_media([gallery.media[m] for m in album.documents], spec)]
        children = [albums[c] for c in kids[uri] if c in albums]
        anything[uri] = len(album.media) + len(album.documents) + sum(anything[c.src_uri] for c in children)
        if uri and anything[uri] == 0:
            del albums[uri]
            continue
        linked = [c for c in children if not c.marked_private and is_published(c)]
        kinds = list(map(_KIND, own))
        album.photo_count = kinds.count("image") + sum(k.photo_count for k in linked)
        album.video_count = kinds.count("video") + sum(k.video_count for k in linked)
        album.document_count = len(album.documents) + sum(k.document_count for k in linked)
        _date_range(album, own, linked)
        spec = _override(album, "album_sort", album_sort, gallery)
        album.children = [a.src_uri for a in sort_items(linked, spec, _album_sort_key)]
        linked_uris = {k.src_uri for k in linked}  # (not `c in linked`: Album == compares every field, ~5 s for
        # the year folders of a million photos)
        album.hidden = sorted((c.src_uri for c in children if c.src_uri not in linked_uris), key=natural_key)
        album.cover = _cover(gallery, album)


def _date_range(album: Album, own: list[Media], linked: list[Album]) -> None:
    """The album's first and last dates, from its media and the sub-albums it links to.

    A file's modification time (a date only with the file_dates setting) is a guess (the day it was
    copied or edited): it sorts its photo, but widens the range only of an album that has nothing better.
    """
    when, said = list(map(_DATE, own)), list(map(_DATE_SOURCE, own))

    def dates(guessed: bool) -> list[datetime]:
        if "mtime" in said:
            own_dates = [d for d, source in zip(when, said, strict=True) if d and (source == "mtime") == guessed]
        else:  # (as most albums: none guessed, no loop of Python's)
            own_dates = [] if guessed else list(filter(None, when))
        return own_dates + [d for k in linked if k.dates_guessed == guessed for d in (k.date_start, k.date_end) if d]

    found = dates(guessed=False)
    guesses = [] if found else dates(guessed=True)
    album.dates_guessed = bool(guesses)
    found = found or guesses
    album.date_start = min(found) if found else None
    album.date_end = max(found) if found else None


def is_published(album) -> bool:
    """An album gets pages when it has something to show (the home page always does)."""
    return album.src_uri == "" or album.photo_count + album.video_count + album.document_count > 0


def published_albums(gallery: Gallery) -> Iterator[str]:
    """The albums that have pages, in display order."""
    return (album.src_uri for album in gallery.walk_albums() if is_published(album))


def covers_shown(gallery: Gallery, uri: str) -> set[str]:
    """The covers an album's pages show besides its own media: its own cover and its sub-albums'."""
    album = gallery.albums[uri]
    covers = {album.cover, *(gallery.albums[child].cover for child in album.children)}
    return {cover for cover in covers if cover and cover not in album.media}


def _override(album: Album, key: str, default: str, gallery: Gallery) -> str:
    if album.sidecar:
        value = meta_text(album.sidecar.meta, key)
        if value and re.match(r"^-?[A-Za-z_][A-Za-z0-9_-]*$", value):
            return value
        if value:
            _warn(gallery, f"{album.sidecar.src_uri}: '{key}: {value}' is not an order ('date', 'name', 'title' or a "
                           f"sidecar key, '-' first for descending); '{default}' is used")
    return default


def _warn(gallery: Gallery, text: str) -> None:
    """Once, though the albums are arranged again when a file fails."""
    if text not in gallery.warnings:
        gallery.warnings.append(text)


def _requested_cover(gallery: Gallery, album: Album) -> str | None:
    """The 'thumbnail' named in index.md, relative to the album; it must stay inside the album."""
    value = meta_text(album.sidecar.meta, "thumbnail") if album.sidecar else None
    if not value or value.startswith("/") or "\\" in value:
        return None
    joined = posixpath.normpath(posixpath.join(album.src_uri, value)) if album.src_uri else posixpath.normpath(value)
    if joined.startswith("../") or joined == ".." or (album.src_uri and not joined.startswith(album.src_uri + "/")):
        return None
    media = gallery.media.get(joined)
    if media is None or gallery.albums[media.album_uri].zone != album.zone:
        return None  # never a cover from behind another private link (or from the public side of one)
    return joined


def _cover(gallery: Gallery, album: Album) -> str | None:
    wanted = _requested_cover(gallery, album)
    if wanted:
        return wanted
    named = meta_text(album.sidecar.meta, "thumbnail") if album.sidecar else None
    if named:
        _warn(gallery, f"{album.sidecar.src_uri}: thumbnail '{named}' is not a photo or video of this album (a file "
                       "name relative to it, not behind another private link); the first photo is the cover")
    first_image = None
    for uri in album.media:  # the first photo known to be dated: one dated by a copy's mtime could be anything
        media = gallery.media[uri]
        if media.kind == "image":
            if media.date is not None and media.date_source != "mtime":
                return uri
            first_image = first_image or uri
    if first_image:
        return first_image
    if album.media:
        return album.media[0]
    for child in album.children:
        cover = gallery.albums[child].cover
        if cover:
            return cover
    return None


def newest_first(media: Media) -> tuple:
    """Sort key (with reverse=True) of media newest first, the undated ones after every dated one."""
    return (media.date is not None, media.date or _EPOCH)


def stream_order(gallery: Gallery, limit: int = 0) -> list[str]:
    """Every public media of the gallery (public_media's), newest first, the undated ones last; ties
    (and the undated among themselves) by album path, then file name (natural order, then as written).

    Sorted by date alone first; names are looked at only among media of one date (a burst, the
    undated), not made into keys for every media (100,000 photos). The media are taken as the gallery
    holds them, those of the albums public_media walks, not looked up album by album (0.3 s at a
    million photos): the order is total, whatever order they come in.
    """
    public = {album.src_uri for album in gallery.walk_albums(hidden=False)}
    # (the media passed as they come: a list of them all, copied by _by_date, was 8 MB at a million photos)
    dated, undated = _by_date(m for m in gallery.media.values() if m.album_uri in public and m.info.kind in _SHOWN)
    dated.sort(key=_DATE, reverse=True)
    uris = list(map(_SRC, dated))
    for first, last in _equal_runs(list(map(_DATE, dated))):  # (as sorted: side by side)
        uris[first:last] = [m.src_uri for m in sorted(dated[first:last], key=_by_place)]
    uris += (m.src_uri for m in sorted(undated, key=_by_place))
    return uris[:limit] if limit else uris


def _by_place(media: Media) -> tuple:
    return natural_key(media.album_uri), media.album_uri, natural_key(media.name), media.name
