"""Source tree -> model. Reads, never writes.

`scan_source` walks the photo folder, recognises media by content, pairs RAW and
Live Photo companions with their stills, reads metadata and sidecars, applies the
metadata precedence (sidecar > XMP > IPTC > embedded > file name; the file's mtime if asked) and
arranges the albums.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Container, Iterable
from datetime import datetime, tzinfo

from ..config import Config
from ..model import Album, EmbeddedMetadata, Gallery, Media, Sidecar, Skipped
from ..pool import WorkerPool
from ..report import QuietReporter, Reporter
from . import snapshots
from .arrange import arrange_gallery, natural_key
from .dates import date_from_filename, get_timezone, localize, parse_date_value
from .kinds import expected_recipe
from .links import drop_private_links
from .private import check_private, password_albums
from .read import VIDEO_READER, FileRecord, _read_all, _share_equal_values, read_media_file
from .sidecar import marks_private, meta_bool, meta_list, meta_text, read_sidecar
from .sniff import RAW_EXTS, STILL_EXTS
from .titles import rewrite_titles
from .walk import DirListing, FileEntry, WalkReport, walk_source

__all__ = [
    "DirListing", "FileRecord", "ScanCache", "WalkReport", "arrange_gallery", "check_private", "natural_key",
    "read_media_file", "scan_source", "walk_source",
]

LIVE_PHOTO_EXTS = {".mov", ".mp4"}
LIVE_PHOTO_STILLS = {".heic", ".heif", ".hif", ".jpg", ".jpeg"}
# what follows the last dot of a name that may be a companion's (RAW_EXTS or LIVE_PHOTO_EXTS): a name
# whose last dot is followed by none of these has neither extension (see _pair_companions)
_COMPANION_EXTS = frozenset(ext[1:] for ext in (*RAW_EXTS, *LIVE_PHOTO_EXTS))


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

    def folder_keys(self) -> dict[str, str]:
        """The key of every folder's snapshot."""
        return {}

    def put_folders(self, rows: list[tuple[str, str, bytes]], keep: set[str]) -> None:
        """Store these (folder, key, snapshot) and drop those of folders not in keep."""
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
) -> Gallery:
    """Build the gallery model from the folder tree.

    Files whose size and mtime match the cache are not opened at all; the others are read by
    the pool's worker processes (pool=None: workers of its own). A `private` entry of the config
    (config_path: its file, for the error) that names no album folder stops the scan before any
    file is read (see check_private); private: what check_private gave the caller, who ran it already.
    plugins: the build's (plugins.manager.Plugins): the media kinds they read (documents) are asked for here.
    folders: each folder's digest (see snapshots.listing_digest) when the caller has made them already.
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
    unchanged: set[str] = set()  # folders whose snapshot has their key (read once the files to read are known)
    if settings is not None:
        recorded = cache.folder_keys()
        for listing in listings:
            key = keys[listing.src_uri] = snapshots.listing_key(listing, settings, (folders or {}).get(listing.src_uri))
            if recorded.get(listing.src_uri) == key:
                unchanged.add(listing.src_uri)
        del recorded
    records: dict[str, FileRecord] = {}
    todo: list[tuple[str, FileEntry]] = []
    shared: dict = {}
    unsettled: set[str] = set()  # folders with a file to read again next time: no snapshot

    def to_read(listing: DirListing) -> None:  # a folder's files: their records, or to be read
        prefix = f"{listing.src_uri}/" if listing.src_uri else ""
        for entry in listing.files:
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
                records[src_uri] = _share_equal_values(record, shared)

    for listing in listings:
        if listing.src_uri not in unchanged:
            to_read(listing)
    if todo and pool is not None and not pool.started:
        pool.start()  # the workers get ready while the snapshots are read (a tenth of a second: fork, imports)
    for listing in listings:
        if listing.src_uri in unchanged:
            blob = cache.get_folder(listing.src_uri, keys[listing.src_uri])
            found = snapshots.load(blob) if blob is not None else None
            if found is None:  # damaged: the folder is scanned
                to_read(listing)
            else:
                kept[listing.src_uri] = found
                # its files' entries go as its media come (a million photos' entries were ~300 MB held
                # beside every snapshot's media); their records stay (see forget_missing)
                listing.files = []
    if todo:
        reporter.phase("Reading metadata", total=len(todo))
        max_pixels = config.images.max_pixels
        for (src_uri, entry), record, lasting in _read_all(todo, max_pixels, pool, readers):
            records[src_uri] = _share_equal_values(record, shared)
            if lasting:
                cache.put_file(src_uri, entry.size, entry.mtime_ns, record)
            else:  # a failure the next build may not meet: the file is read again then
                gallery.unsettled += 1
                unsettled.add(src_uri.rpartition("/")[0])
            reporter.advance(src_uri)
    cache.flush()
    cache.forget_missing(set(records), kept, (listing.src_uri for listing in listings))  # (see forget_missing)

    kinds = {reader.name for reader in readers}
    made: list[tuple[str, str, bytes]] = []
    for listing in listings:
        found = kept.pop(listing.src_uri, None)
        if found is None:
            found = _scan_folder(listing, records, tz, config.file_dates, kinds)
            if settings is not None and listing.src_uri not in unsettled:
                made.append((listing.src_uri, keys[listing.src_uri], snapshots.dump(found)))
        gallery.media.update((m.src_uri, m) for m in found.media)
        gallery.ignored += found.ignored
        gallery.skipped += found.skipped
        gallery.warnings += found.warnings
    if settings is not None:
        cache.put_folders(made, set(keys))
    del made, keys
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




def _read_album(listing: DirListing, gallery: Gallery, tz: tzinfo) -> Album:
    """A folder's album as its index.md describes it (title, description, date, private mark). Every
    folder's is read before any photo, so that what is private is known first (scan.links)."""
    prefix = f"{listing.src_uri}/" if listing.src_uri else ""
    sidecars = {entry.name: entry for entry in listing.files if entry.name.lower() == "index.md"}
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


def _scan_folder(
    listing: DirListing, all_records: dict[str, FileRecord], tz: tzinfo, file_dates: bool = False,
    kinds: set[str] = frozenset(),
) -> snapshots.FolderScan:
    """The folder's photos and videos, with their sidecars, companions and captions, and the items of
    plugins' media kinds (kinds), with the folder's ignored and skipped files and warnings."""
    prefix = f"{listing.src_uri}/" if listing.src_uri else ""
    gallery = Gallery()  # this folder's findings (see scan.snapshots)
    sidecars: dict[str, FileEntry] = {}
    records: list[tuple[FileEntry, FileRecord]] = []
    captions: list[str] = []
    for entry in listing.files:
        lower = entry.name.lower()
        if lower.endswith(".md"):
            if lower != "index.md":  # (the album's: _read_album)
                sidecars[entry.name] = entry
            continue
        record = all_records.pop(prefix + entry.name)  # let go once made into media
        if record.kind is None:
            if lower.endswith(".vtt"):
                captions.append(entry.name)
            else:
                gallery.ignored.append(prefix + entry.name)
            continue
        if lower.endswith(".vtt"):  # (a caption file is not media: not expected)
            captions.append(entry.name)
        records.append((entry, record))
    captions.sort()
    used_captions: set[str] = set()

    paired = _pair_companions(records)
    companions = {name for names in paired.values() for name in names} if paired else ()
    used_sidecars: set[str] = set()
    for entry, record in records:
        src_uri = prefix + entry.name
        if entry.name in companions:
            continue
        if record.kind != "image" and record.kind != "video" and record.kind not in kinds:
            gallery.skipped.append(Skipped(src_uri, record.reason or "unsupported file"))
            continue
        for note in record.notes:
            gallery.warnings.append(f"{src_uri}: {note}")
        # a folder without sidecars (most of a library) is not searched for each photo's
        sidecar_entry = _sidecar_for(entry.name, sidecars) if sidecars else None
        sidecar = None
        if sidecar_entry is not None:
            used_sidecars.add(sidecar_entry.name)
            sidecar = _load_sidecar(sidecar_entry, prefix + sidecar_entry.name, gallery)
            if marks_private(sidecar.meta):
                gallery.warnings.append(
                    f"{sidecar.src_uri}: 'private' in a photo's sidecar hides nothing: {src_uri} is published "
                    "with its album (privacy is per album: mark the folder's index.md, or move the photo "
                    "into a private album)"
                )
        media = Media(
            src_uri=src_uri,
            album_uri=listing.src_uri,
            name=entry.name,
            size=entry.size,
            mtime_ns=entry.mtime_ns,
            content_hash=record.content_hash,
            info=record.info,  # type: ignore[arg-type]
            embedded=record.embedded or EmbeddedMetadata(),
            sidecar=sidecar,
            paired=tuple(prefix + n for n in paired[entry.name]) if entry.name in paired else (),
            tracks=_tracks_for(entry.name, captions, prefix, used_captions) if record.kind == "video" else (),
        )
        resolve_media(media, tz, file_dates)
        gallery.media[src_uri] = media
    if sidecars or captions:
        unused = set(sidecars) - used_sidecars
        gallery.ignored += [prefix + name for name in sorted(unused | (set(captions) - used_captions))]
        if unused:
            _warn_unused_sidecars(unused, used_sidecars,
                                  [e.name for e, r in records if r.kind in ("image", "video", *kinds)], prefix, gallery)
    return snapshots.FolderScan(list(gallery.media.values()), gallery.ignored, gallery.skipped, gallery.warnings)


def _warn_unused_sidecars(unused: set[str], used: set[str], media: list[str], prefix: str, gallery: Gallery) -> None:
    """A sidecar that is not used although it looks meant for a photo: shadowed by name.jpg.md, or
    named with other capitals (a README.md or notes beside the photos are just ignored)."""
    by_stem = {os.path.splitext(name)[0].casefold(): name for name in media}
    by_name = {name.casefold(): name for name in media}
    for sidecar in sorted(unused):
        stem = sidecar[:-3].casefold()  # photo.jpg.md or photo.md, whatever the capitals
        target = by_name.get(stem) or by_stem.get(stem)
        if target is None:
            continue
        winner = next((u for u in used if u in (f"{target}.md", f"{os.path.splitext(target)[0]}.md")), None)
        if winner and winner != sidecar:
            why = f"{winner} is the sidecar of {target}"
        else:
            why = f"sidecar names must match the file's name exactly, capitals too: {target}.md or {os.path.splitext(target)[0]}.md"
        gallery.warnings.append(f"{prefix}{sidecar}: not used ({why}); ignored")


def _tracks_for(name: str, captions: list[str], prefix: str, used: set[str]) -> tuple[tuple[str, str], ...]:
    """Caption files of a video: clip.vtt (no language) and clip.en.vtt, clip.fr.vtt, ..."""
    stem = os.path.splitext(name)[0]
    out = []
    for caption in captions:
        base = caption[:-4]
        if base == stem:
            lang = ""
        elif base.startswith(stem + ".") and re.fullmatch(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?", base[len(stem) + 1 :]):
            lang = base[len(stem) + 1 :]
        else:
            continue
        used.add(caption)
        out.append((prefix + caption, lang))
    out.sort(key=lambda track: (track[1] != "", track[1]))  # the one without a language is the default
    return tuple(out)


def _pair_companions(records: list[tuple[FileEntry, FileRecord]]) -> dict[str, list[str]]:
    """RAW files and Live Photo movies beside a still of the same stem belong to it: still name -> names."""
    # a folder with neither RAW files nor movies (most of a library) has none: its names are not split
    if not any(entry.name.rpartition(".")[2].lower() in _COMPANION_EXTS for entry, _ in records):
        return {}
    stills: dict[str, str] = {}
    for entry, record in records:
        stem, ext = os.path.splitext(entry.name)
        if record.kind == "image" and ext.lower() in STILL_EXTS:
            stills.setdefault(stem.casefold(), entry.name)
    by_still: dict[str, list[str]] = {}
    for entry, record in records:
        stem, ext = os.path.splitext(entry.name)
        still = stills.get(stem.casefold())
        if not still or still == entry.name:
            continue
        is_raw = ext.lower() in RAW_EXTS
        is_live = (
            ext.lower() in LIVE_PHOTO_EXTS
            and os.path.splitext(still)[1].lower() in LIVE_PHOTO_STILLS
            and record.kind in ("video", "unsupported", "broken")
        )
        if is_raw or is_live:
            by_still.setdefault(still, []).append(entry.name)
    return by_still


def _sidecar_for(name: str, sidecars: dict[str, FileEntry]) -> FileEntry | None:
    exact = sidecars.get(f"{name}.md")
    if exact is not None:
        return exact
    stem = os.path.splitext(name)[0]
    if stem.lower() == "index":
        return None
    return sidecars.get(f"{stem}.md")


def _load_sidecar(entry: FileEntry, src_uri: str, gallery: Gallery, album: bool = False) -> Sidecar:
    """album: an album's index.md, which may mark it private: one that cannot be read keeps it private
    (fail closed) until it can; so does one the walk refused to read (entry.refused says why)."""
    why = entry.refused
    if not why:
        try:
            sidecar, notes = read_sidecar(entry.abs_path, src_uri)
        except OSError as exc:  # NotRegularFile and NotText too
            why = exc.strerror or str(exc)
        else:
            gallery.warnings.extend(notes)
            return sidecar
    if album:
        gallery.warnings.append(f"{src_uri}: cannot read it ({why}); its album is kept private until it can be read")
        return Sidecar(src_uri=src_uri, meta={"private": True})
    gallery.warnings.append(f"{src_uri}: cannot read sidecar ({why}); ignored")
    return Sidecar(src_uri=src_uri, meta={})


def text_to_html(text: str) -> str:
    """Plain metadata text as safe HTML paragraphs."""
    paragraphs = [p.strip() for p in text.replace("\r\n", "\n").split("\n\n") if p.strip()]
    return "".join(f"<p>{html.escape(p).replace(chr(10), '<br>')}</p>" for p in paragraphs)


def resolve_media(media: Media, tz: tzinfo, file_dates: bool = False) -> None:
    """Apply the precedence sidecar > XMP > IPTC > embedded > file name to every field.

    A file's modification time says when it was copied or edited, not when the photo was taken (a
    photo of 2005 copied today would read 'today' and lead the stream): a media with no date of its
    own is undated (date None), unless file_dates (the setting) asks for the file's time."""
    emb = media.embedded
    # what the file says, then what a sidecar says over it (most photos have none)
    media.title, media.alt, media.tags, media.author, media.location = emb.title, emb.alt, emb.keywords, emb.artist, None
    description, date = emb.description, None
    if media.sidecar is not None:
        meta = media.sidecar.meta
        media.title = meta_text(meta, "title") or media.title
        media.alt = meta_text(meta, "alt") or media.alt
        media.tags = meta_list(meta, "tags") or meta_list(meta, "keywords") or media.tags
        media.author = meta_text(meta, "author") or media.author
        media.location = meta_text(meta, "location")
        if media.sidecar.body_html:
            media.description_html, description = media.sidecar.body_html, None
        else:
            description = meta_text(meta, "description") or description
        date = parse_date_value(meta.get("date")) if meta.get("date") is not None else None
    if description:
        media.description_html = text_to_html(description)
    source = "sidecar"
    if date is None and emb.date is not None:
        date, source = emb.date, emb.date_source or "exif"
    if date is None:
        date, source = date_from_filename(media.stem), "filename"
    if date is None and file_dates:
        date, source = datetime.fromtimestamp(media.mtime_ns / 1e9, tz), "mtime"
    media.date = localize(date, tz) if date is not None else None
    media.date_source = source if date is not None else ""
