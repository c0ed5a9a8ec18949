"""Folder snapshots: what the scan made of one folder, kept in the cache under the folder's listing.

A rebuild after one photo changed in a library of 100,000 read every file's record back from the
cache (one unpickled record a photo), shared equal values between them and made each photo's media
again: ~3 s, a third of that rebuild, for folders that had not changed. A folder whose listing (every
file's name, size, modification time and path, sidecars and captions included) and scan settings (time
zone, file dates, Albumen's version) are those of its snapshot makes the same media, warnings, ignored
and skipped files: they are taken from the snapshot in one read, and its files' records are not looked
at. A folder with a file whose reading failed for a reason the next build may not meet (unsettled)
gets no snapshot, so that file is read again next time.

Builds with plugins that read media kinds of their own (documents) do not use snapshots: what those
kinds make depends on the plugin's code as well.
"""

from __future__ import annotations

import functools
import os
import pickle
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import xxhash

from .. import __version__
from ..fsutil import files_digest
from ..model import MEDIA_FIELDS, REST_FIELDS, LazyFacts, Media, Skipped, media_from_snapshot
from .dates import local_zone_name
from .walk import DirListing, listing_digest, listing_text

# 1: media as rows of field values (see dump); 2: their embedded metadata in one piece a folder; 3: their
# names, sizes, times and hashes in that piece too; 4: the piece compressed; 5: every field that is not
# the media's own (model.REST_FIELDS) in it; 6: the piece first, apart from the pickle (see dump)
SNAPSHOT_VERSION = 6
_OWN_FIELDS = ("src_uri", "album_uri", "info", "title", "description_html", "date", "date_source")  # (see load)
_SHARED = {"info", "date_source"}  # hashable and often alike (see dump): "exif" once a folder, not a photo (53 MB a million)


@dataclass(slots=True)
class FolderScan:
    """What the scan made of one folder's files (its album's index.md is read apart: see _read_album)."""

    media: list[Media]
    ignored: list[str]
    skipped: list[Skipped]
    warnings: list[str]


def scan_key(timezone: str, file_dates: bool, video_reader: int) -> str:
    """What a folder's scan depends on besides its files: settings, and the code that makes media of
    the records (its source files' bytes: a change to them between releases makes new snapshots)."""
    return f"{SNAPSHOT_VERSION}\0{_code()}\0{timezone}\0{local_zone_name()}\0{file_dates}\0{video_reader}"


@functools.cache
def _code() -> str:
    from .. import model
    from . import dates, folder, private, read, sidecar

    here = os.path.dirname(__file__)
    return files_digest((os.path.join(here, "__init__.py"), folder.__file__, read.__file__, private.__file__, __file__,
                         sidecar.__file__, dates.__file__, model.__file__), f"{__version__}\0{MEDIA_FIELDS}\0{REST_FIELDS}")


def listing_key(listing: DirListing, settings: str, digest: str | None = None) -> str:
    """The snapshot key of a folder: its files (names, paths, sizes, times, and what the walk said of
    each: see walk.listing_text, whose digest the build may have made already) and the scan's settings."""
    if digest is None:
        digest = listing_digest(listing_text(listing))
    return xxhash.xxh3_128_hexdigest(f"{settings}\0{digest}".encode("utf-8", "surrogateescape"))


def dump(scan: FolderScan) -> bytes:
    """The folder's findings, pickled. Media alike share their facts (the photos of one camera and size
    have the same MediaInfo): each distinct one is pickled once, so that loading makes one object of it
    for the folder, not one a photo (~130 bytes each: 130 MB at a million photos). Their embedded
    metadata (different for each photo: its date), sizes, times and content hashes are pickled apart,
    one piece for the folder, read only when one of them is asked for, and their names are left out
    (see model.LazyFacts). The piece comes first, its length before it, and the rest pickled after it:
    a build reads it again from the cache when it needs it (see load)."""
    shared: dict = {}
    facts = zlib.compress(pickle.dumps(
        {m.name: tuple(shared.setdefault(m.embedded, m.embedded) if name == "embedded" else getattr(m, name)
                       for name in REST_FIELDS) for m in scan.media},
        protocol=pickle.HIGHEST_PROTOCOL,
    ), 1)
    rows = [
        tuple(shared.setdefault(value, value) if name in _SHARED else value
              for name, value in zip(_OWN_FIELDS, (getattr(m, name) for name in _OWN_FIELDS), strict=True))
        for m in scan.media
    ]
    return len(facts).to_bytes(4, "little") + facts + pickle.dumps(
        (SNAPSHOT_VERSION, rows, scan.ignored, [(s.src_uri, s.reason) for s in scan.skipped], scan.warnings),
        protocol=pickle.HIGHEST_PROTOCOL,
    )


def facts_piece(blob: bytes | None) -> bytes:
    """The piece of a snapshot (see dump) that model.LazyFacts reads."""
    if blob is None:
        raise LookupError("a folder's snapshot left the build cache while the build was using it")
    return blob[4 : 4 + int.from_bytes(blob[:4], "little")]


def load(blob: bytes, fetch: Callable[[], bytes | None] | None = None) -> FolderScan | None:
    """The snapshot, or None when it cannot be read (another version, a damaged row): the folder is scanned.
    fetch: gives the snapshot again (from the build cache): its media's piece of facts is not held, but
    read again when first asked for (~45 bytes a photo: 45 MB held at a million photos)."""
    try:
        length = int.from_bytes(blob[:4], "little")
        version, rows, ignored, skipped, warnings = pickle.loads(memoryview(blob)[4 + length :])
        if version != SNAPSHOT_VERSION:
            return None
        facts = LazyFacts(None, lambda: facts_piece(fetch())) if fetch is not None else LazyFacts(facts_piece(blob))
        # each media's own fields, no name (the end of its path), the folder's facts for the rest
        return FolderScan([media_from_snapshot(*row, facts) for row in rows], ignored, [Skipped(*s) for s in skipped],
                          warnings)
    except Exception:  # noqa: BLE001 - anything wrong with a row: scan the folder as if it had none
        return None
