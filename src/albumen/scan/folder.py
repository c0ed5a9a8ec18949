"""One folder's files -> its media: photos and videos with their sidecars, RAW and Live Photo
companions and captions, their metadata resolved by precedence (resolve_media), and the folder's
ignored and skipped files and warnings (what a folder snapshot keeps: see scan.snapshots)."""

from __future__ import annotations

import html
import os
import re
from datetime import datetime, tzinfo

from ..model import EmbeddedMetadata, Gallery, Media, Sidecar, Skipped
from . import snapshots
from .dates import date_from_filename, localize, parse_date_value
from .read import FileRecord
from .sidecar import marks_private, meta_list, meta_text, read_sidecar
from .sniff import RAW_EXTS, STILL_EXTS
from .walk import DirListing, FileEntry

LIVE_PHOTO_EXTS = {".mov", ".mp4"}
LIVE_PHOTO_STILLS = {".heic", ".heif", ".hif", ".jpg", ".jpeg"}
# what follows the last dot of a name that may be a companion's (RAW_EXTS or LIVE_PHOTO_EXTS): a name
# whose last dot is followed by none of these has neither extension (see _pair_companions)
_COMPANION_EXTS = frozenset(ext[1:] for ext in (*RAW_EXTS, *LIVE_PHOTO_EXTS))


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
    for entry in listing.all_files():
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
