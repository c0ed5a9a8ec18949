"""Source tree -> model. Reads, never writes.

`scan_source` walks the photo folder, recognises media by content, pairs RAW and
Live Photo companions with their stills, reads metadata and sidecars, applies the
metadata precedence (sidecar > XMP > IPTC > embedded > file name; the file's mtime if asked) and
arranges the albums. Its parts: what is private, known before anything is read (scan.private);
reading files in the pool's workers (scan.read); one folder's files made into media (scan.folder).
"""

from __future__ import annotations

import os
from collections.abc import Container, Iterable
from datetime import tzinfo
from functools import partial
from operator import attrgetter

from ..config import Config
from ..model import Album, Gallery
from ..pool import WorkerPool
from ..report import QuietReporter, Reporter
from . import snapshots
from .arrange import arrange_gallery, natural_key
from .dates import get_timezone, localize, parse_date_value
from .folder import _load_sidecar, _scan_folder
from .kinds import expected_recipe
from .links import drop_private_links
from .private import check_private, password_albums
from .read import VIDEO_READER, FileRecord, _read_all, _share_equal_values, read_media_file
from .sidecar import marks_private, meta_bool, meta_text
from .titles import rewrite_titles
from .walk import DirListing, FileEntry, WalkReport, walk_source

__all__ = [
    "DirListing", "FileRecord", "ScanCache", "WalkReport", "arrange_gallery", "check_private", "natural_key",
    "read_media_file", "scan_source", "walk_source",
]


_SRC = attrgetter("src_uri")

class ScanCache:
    """Interface of a per-file cache keyed by (src_uri, size, mtime). The default remembers nothing."""

    def get_file(self, src_uri: str, size: int, mtime_ns: int) -> FileRecord | None:
        return None

    def put_file(self, src_uri: str, size: int, mtime_ns: int, record: FileRecord) -> None:
        return None

    def flush(self) -> None:
        return None

    def forget_missing(self, seen: set[str], folders: Container[str] = (), listed: Iterable[str] | None = None) -> None:
        return None

    def get_folder(self, folder: str, key: str) -> bytes | None:
        """A folder's snapshot (see scan.snapshots) under this key, or None."""
        return None

    def put_folders(self, rows: list[tuple[str, str, bytes]], keep: set[str] | None = None) -> None:
        """Store these (folder, key, snapshot) and drop those of folders not in keep (None: drop none)."""
        return None


def scan_source(
    source_root: str,
    config: Config,
    cache: ScanCache | None = None,
    reporter: Reporter | None = None,
    pool: WorkerPool | None = None,
    walked: tuple[list[DirListing], WalkReport] | None = None,
    config_path: str | None = None,
    private: set[str] | None = None,
    plugins=None,
    folders: dict[str, str] | None = None,
    reread: bool = False,
) -> Gallery:
    """Build the gallery model from the folder tree.

    Files whose size and mtime match the cache are not opened at all; the others are read by
    the pool's worker processes (pool=None: workers of its own). A `private` entry of the config
    (config_path: its file, for the error) that names no album folder stops the scan before any
    file is read (see check_private); private: what check_private gave the caller, who ran it already.
    plugins: the build's (plugins.manager.Plugins): the media kinds they read (documents) are asked for here.
    folders: each folder's digest (see walk.listing_digest) when the caller has made them already.
    reread: the cache stays open as long as the gallery is used (a build's): the media taken from folder
    snapshots do not hold their facts but read them from it again when asked for (see snapshots.load).
    """
    cache = cache or ScanCache()
    reporter = reporter or QuietReporter()
    tz = get_timezone(config.timezone)
    gallery = Gallery()
    root_name = os.path.basename(os.path.abspath(source_root).rstrip(os.sep)) or "Photos"
    if walked is None:
        report = WalkReport()
        listings = list(walk_source(source_root, config.ignore, report))
    else:
        listings, report = walked
    if private is None:
        private = check_private(listings, source_root, config.private, config_path)
        private |= password_albums(listings, config, gallery.warnings)
    albums = {listing.src_uri: _read_album(listing, gallery, tz) for listing in listings}
    for uri in private:
        albums[uri].marked_private = True
    shown = drop_private_links(listings, albums, report, gallery.warnings)
    if shown is not listings:  # links left out: those folders' listings changed since their digests were made
        listings, folders = shown, None

    readers = plugins.kind_readers() if plugins else ()
    # folders unchanged since the last build: taken from their snapshots (see scan.snapshots)
    settings = None if readers else snapshots.scan_key(config.timezone, config.file_dates, VIDEO_READER)
    keys: dict[str, str] = {}
    kept: dict[str, snapshots.FolderScan] = {}
    records: dict[str, FileRecord] = {}
    todo: list[tuple[str, FileEntry]] = []
    shared: dict = {}
    unsettled: set[str] = set()  # folders with a file to read again next time: no snapshot
    kinds = {reader.name for reader in readers}
    made: list[tuple[str, str, bytes]] = []
    seen = _Seen(records)

    def made_now(listing: DirListing, own: dict[str, FileRecord]) -> None:
        """Make a folder whose every file's record is at hand (own), and its snapshot; its media are then
        those of the snapshot, as a folder taken from one (a build's media read their facts again)."""
        nonlocal made
        found = _scan_folder(listing, own, tz, config.file_dates, kinds)
        key = keys[listing.src_uri]
        seen.add(listing.src_uri, (entry.name for entry in listing.files))
        made.append((listing.src_uri, key, snapshots.dump(found)))
        fetch = partial(cache.get_folder, listing.src_uri, key) if reread else None
        kept[listing.src_uri] = snapshots.load(made[-1][2], fetch) if reread else found
        listing.drop_files()
        if len(made) >= _SNAPSHOTS_AT_ONCE:
            cache.put_folders(made)
            made = []

    reading = False  # (the phase shown)
    chunk: dict[str, DirListing] = {}  # the folders of the files in todo

    def read(todo: list[tuple[str, FileEntry]], folders: dict[str, DirListing], more: int) -> None:
        """Read these files (of these folders); more: how many files may be read after them."""
        nonlocal reading
        if not reading:
            reporter.phase("Reading metadata", total=len(todo) + more)
            reading = True
        # a folder is made as its last file is read (see made_now), and its records let go: a first
        # build does not hold every photo's record till the last is read
        left: dict[str, int] = {}
        for src_uri, _ in todo:
            folder = src_uri.rpartition("/")[0]
            left[folder] = left.get(folder, 0) + 1
        for (src_uri, entry), record, lasting in _read_all(todo, config.images.max_pixels, pool, readers):
            records[src_uri] = _share_equal_values(record, shared)
            folder = src_uri.rpartition("/")[0]
            if lasting:
                cache.put_file(src_uri, entry.size, entry.mtime_ns, record)
            else:  # a failure the next build may not meet: the file is read again then
                gallery.unsettled += 1
                unsettled.add(folder)
            reporter.advance(src_uri)
            left[folder] -= 1
            if not left[folder] and settings is not None and folder not in unsettled:
                listing = folders[folder]
                prefix = f"{folder}/" if folder else ""
                made_now(listing, {uri: records.pop(uri) for uri in (prefix + e.name for e in listing.all_files())
                                   if uri in records})

    for n, listing in enumerate(listings):
        if settings is not None:
            key = keys[listing.src_uri] = snapshots.listing_key(listing, settings, (folders or {}).get(listing.src_uri))
            blob = cache.get_folder(listing.src_uri, key)
            fetch = partial(cache.get_folder, listing.src_uri, key) if reread else None
            found = snapshots.load(blob, fetch) if blob is not None else None
            if found is not None:
                kept[listing.src_uri] = found
                # its files' entries go as its media come (a million photos' entries were ~300 MB held
                # beside every snapshot's media); their records stay (see forget_missing)
                listing.drop_files()
                continue
        prefix = f"{listing.src_uri}/" if listing.src_uri else ""
        waiting = len(todo)
        own: dict[str, FileRecord] = {}
        for entry in listing.all_files():
            if entry.name.lower().endswith(".md"):
                continue
            src_uri = prefix + entry.name
            record = cache.get_file(src_uri, entry.size, entry.mtime_ns)
            if record is not None and record.kind == "video" and getattr(record, "reader", 0) < VIDEO_READER:
                record = None  # read by an older reader of videos
            if record is not None and record.kind not in ("image", "video") and (
                getattr(record, "kind_recipe", "") != expected_recipe(readers, entry.name)
            ):
                record = None  # a plugin's media kind claims it now, or no longer, or another version does
            if record is None:
                todo.append((src_uri, entry))
            else:
                own[src_uri] = _share_equal_values(record, shared)
        if settings is None or len(todo) > waiting:
            records.update(own)
            chunk[listing.src_uri] = listing
            if settings is not None and len(todo) >= _READ_AT_ONCE:
                # read now, these folders made as they are read: a first build of a million photos does
                # not make every file's entry before it reads one (~370 bytes a file)
                read(todo, chunk, sum(other.file_count() for other in listings[n + 1 :]))
                todo, chunk = [], {}
            continue
        # every file's record is in the cache (a folder whose listing changed, or every folder when the
        # scan's settings or code did): made now, and its snapshot, whose media hold what a folder taken
        # from one holds (a million photos' records and media, all held till the end, peaked at 1.5 GiB)
        made_now(listing, own)
    if todo:
        read(todo, chunk, 0)
    cache.flush()
    # (the folders made above are among those kept, but their files are looked at: see _Seen)
    cache.forget_missing(seen, kept.keys() - seen.names.keys(), (listing.src_uri for listing in listings))

    for listing in listings:
        found = kept.pop(listing.src_uri, None)
        if found is None:
            found = _scan_folder(listing, records, tz, config.file_dates, kinds)
            if settings is not None and listing.src_uri not in unsettled:
                made.append((listing.src_uri, keys[listing.src_uri], snapshots.dump(found)))
        gallery.media.update(zip(map(_SRC, found.media), found.media, strict=True))  # (no loop of Python's: a million photos)
        gallery.ignored += found.ignored
        gallery.skipped += found.skipped
        gallery.warnings += found.warnings
    if settings is not None:
        cache.put_folders(made, set(keys))
    made.clear()
    keys.clear()
    if "" in albums:
        album = albums[""]
        album.title = config.title or (album.sidecar and meta_text(album.sidecar.meta, "title")) or root_name
    gallery.albums.update(albums)
    gallery.warnings.extend(report.warnings)
    if "" not in gallery.albums:  # the root itself is ignored (.nomedia): an empty gallery
        gallery.albums[""] = Album(src_uri="", name="", title=config.title or root_name)
    rewrite_titles(gallery, plugins, keep_root=bool(config.title))  # before the sort by title
    arrange_gallery(gallery, config.sort.albums, config.sort.media)
    return gallery




_SNAPSHOTS_AT_ONCE = 1000  # folder snapshots made by the scan are written to the cache so many at a time
_READ_AT_ONCE = 50_000  # files to read gathered before they are read (whole folders: see scan_source)


class _Seen:
    """The files the scan saw (see ScanCache.forget_missing): those whose records it holds, and those of
    the folders it made as it went, by their names (one text a folder, "\0name\0name\0": the walk's
    entries are let go as the folders are made, and a million names in sets were ~90 MB)."""

    def __init__(self, records: dict[str, FileRecord]) -> None:
        self.records = records
        self.names: dict[str, str] = {}

    def add(self, folder: str, names: Iterable[str]) -> None:
        self.names[folder] = "\0" + "".join(f"{name}\0" for name in names)

    def __contains__(self, uri: object) -> bool:
        if uri in self.records:
            return True
        folder, _, name = str(uri).rpartition("/")
        return folder in self.names and f"\0{name}\0" in self.names[folder]


def _read_album(listing: DirListing, gallery: Gallery, tz: tzinfo) -> Album:
    """A folder's album as its index.md describes it (title, description, date, private mark). Every
    folder's is read before any photo, so that what is private is known first (scan.links)."""
    prefix = f"{listing.src_uri}/" if listing.src_uri else ""
    # (the length first: a million files, ~0.2 s of lower() calls; an index.md is never a plain file, which
    # a listing may hold as text: see DirListing)
    sidecars = {e.name: e for e in listing.files if len(e.name) == 8 and e.name.lower() == "index.md"}
    folder_name = listing.src_uri.rpartition("/")[2]
    album = Album(src_uri=listing.src_uri, name=folder_name, title=folder_name)
    indexes = [sidecars[n] for n in sorted(sidecars)]
    shown = [e for e in indexes if not e.hidden]
    index = shown[0] if shown else None
    # read for their private mark only: Index.md beside INDEX.md (one is read), and one that .nomedia or
    # `ignore` hide (fail closed: hiding the file does not make the album public)
    marks_only = shown[1:] + [e for e in indexes if e.hidden]
    if len(shown) > 1:
        gallery.warnings.append(
            f"{prefix}{shown[0].name} is read, and {', '.join(prefix + e.name for e in shown[1:])} beside it is not"
            " (one index.md per folder); an album that either marks private is kept private"
        )
    private: bool | None = False
    if index is not None:
        album.sidecar = _load_sidecar(index, prefix + index.name, gallery, album=True)
        meta = album.sidecar.meta
        album.title = meta_text(meta, "title") or album.title
        album.description_html = album.sidecar.body_html
        date = parse_date_value(meta.get("date"))
        album.sort_date = localize(date, tz) if date else None
        private = meta_bool(meta, "private")
        if private is None and "private" in meta:  # fail closed: an unclear private mark hides the album
            gallery.warnings.append(
                f"{album.sidecar.src_uri}: 'private: {meta.get('private')}' is not true or false; the album is kept private"
            )
            private = True
        if not private and meta_text(meta, "password"):  # a password album is private (albumen.seal)
            private = True
    for other in marks_only:
        meta = _load_sidecar(other, prefix + other.name, gallery, album=True).meta
        if marks_private(meta) or meta_text(meta, "password"):
            private = True
    album.marked_private = bool(private)
    if private and not listing.src_uri:
        gallery.warnings.append(
            f"{prefix}{(index or marks_only[0]).name}: the home page cannot be private; mark the albums inside it instead"
        )
    return album
