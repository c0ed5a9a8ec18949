"""One ZIP archive per album, to download it whole: `album.zip` in the album's folder, linked from its
page with its size.

It holds the album's own photos and videos (not its sub-albums'), in the album's order, under their
file names: each photo's largest published image (or its published original, with `source =
"originals"` and images.originals = "copy"), each video's MP4, and the album's documents. Files are
stored, not deflated (photos and videos are compressed already). The bytes depend only on what is in
it: an album that did not change keeps its archive as it was (not written again); one whose photos
changed gets a new one. A private album's archive is in its private folder, and holds its photos only.
`zip: false` in an album's index.md leaves that album without one.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from functools import partial

from albumen.plugins import OutputFile, hookimpl, setting

__version__ = "1"

ARCHIVE = "album.zip"


@dataclass(frozen=True)
class Options:
    source: str = setting(
        "largest",
        "'largest': each photo's largest published image; 'originals': its published original (with "
        "images.originals = 'copy'; a photo without one gets its largest image). Videos: their MP4.",
        choices=("largest", "originals"),
    )
    documents: bool = setting(True, "Put the album's documents (files of a plugin's media kind: PDFs...) in it too.")
    min_files: int = setting(1, "Albums with fewer photos, videos and documents than this get no archive.", min=1)


@hookimpl
def albumen_options():
    return Options


@hookimpl
def albumen_page_context(options: Options, page, context, gallery):
    """The album page's link: plugins.zip.archive (href, name, size, size_text, count), or None."""
    if page.kind != "album" or "album" not in context:
        return None
    album = context["album"]
    last = _LAST.get("album")
    if last is not None and last[0] is album and last[1] is options:  # another page of the same album
        return {"archive": last[2]}
    members = album_members(options, album, gallery)
    archive = None
    if members is not None:
        from albumen.write.archive import archive_size

        size = archive_size(members)
        archive = {"href": f"{album.url}{ARCHIVE}", "name": _safe(album.title or "album") + ".zip", "size": size,
                   "size_text": size_text(size, gallery.site.language), "count": len(members)}
    _LAST["album"] = (album, options, archive)
    return {"archive": archive}


# the album view whose pages are being rendered, and its archive: an album of many pages has one view, and its
# members are looked at (a stat each) once
_LAST: dict[str, tuple] = {}


@hookimpl
def albumen_extra_outputs(options: Options, gallery):
    from albumen.write.archive import write_archive

    for album in (*gallery.albums(), *gallery.private_albums()):  # each private one in its own folder
        members = album_members(options, album, gallery)
        if members is None:
            continue
        # the published files' names hold a digest of their content: the same names, the same bytes
        key = "\n".join([__version__, *(f"{m.name}\t{os.path.basename(m.path)}\t{m.size}\t{m.date}" for m in members)])
        yield OutputFile(f"{album.url}{ARCHIVE}", write=partial(write_archive, members), key=key)


def album_members(options: Options, album, gallery) -> list | None:
    """The archive's members (write.archive.Member), or None when the album gets no archive."""
    from albumen.scan.sidecar import meta_bool
    from albumen.write.archive import Member

    if meta_bool(gallery.album_meta(album.src_uri), "zip") is False:
        return None
    items = []  # (the name it is saved under, the published file, its date)
    for media in album.media:
        if media.video:
            sources = media.video["sources"]  # the MP4 is always made (WebM and AV1 may be offered first)
            src = next((v["src"] for v in sources if v["mime"].startswith("video/mp4")), sources[0]["src"])
        elif options.source == "originals" and media.original is not None:
            src = media.original.src
        else:
            src = media.largest.src
        items.append((media.name, src, media.date))
    if options.documents:
        items += [(d.name, d.href, _date(d.date_iso)) for d in album.documents]
    members = []
    names = Names()
    from albumen.process.plan import download_name

    for name, src, date in items:
        size = gallery.file_size(src)
        if size is None:  # (a media that failed has no view: this is a file removed meanwhile)
            continue
        members.append(Member(names.unique(download_name(name, src)), gallery.abs_path(src), size,
                              date.replace(tzinfo=None) if date is not None else None))
    return members if len(members) >= options.min_files else None


class Names:
    """Entry names made safe (no folder, nothing a file system refuses) and unique whatever the case,
    as a Windows or macOS disk compares them: 'a.jpg', 'A.JPG' -> 'a.jpg', 'A (2).JPG'."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def unique(self, name: str) -> str:
        name = _safe(name)
        stem, dot, ext = name.rpartition(".")
        if not dot or not stem:
            stem, ext = name, ""
        candidate, n = name, 1
        while self._key(candidate) in self.taken:
            n += 1
            candidate = f"{stem} ({n}).{ext}" if ext else f"{stem} ({n})"
        self.taken.add(self._key(candidate))
        return candidate

    @staticmethod
    def _key(name: str) -> str:
        return unicodedata.normalize("NFC", name).casefold()


def _safe(name: str) -> str:
    text = re.sub(r'[\x00-\x1f\x7f/\\:*?"<>|]', "_", unicodedata.normalize("NFC", name)).strip().lstrip(".")
    return text[:200] or "file"


def _date(iso: str) -> datetime | None:
    try:
        return datetime.fromisoformat(iso) if iso else None
    except ValueError:
        return None


def size_text(size: int, language: str = "en") -> str:
    """'840 kB', '12.3 MB', '1.2 GB' (French: '12,3 Mo')."""
    units = ("o", "ko", "Mo", "Go", "To") if language == "fr" else ("B", "kB", "MB", "GB", "TB")
    value, unit = float(size), 0
    while value >= 1000 and unit < len(units) - 1:
        value /= 1000
        unit += 1
    text = f"{value:.0f}" if unit == 0 or value >= 100 else f"{value:.1f}"
    return f"{text.replace('.', ',') if language == 'fr' else text} {units[unit]}"
