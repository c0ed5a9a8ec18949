"""Symbolic links and privacy: a link never takes a private album's photos out of it.

Privacy belongs to the folder (and the file) where it really is: a link inside the photo folder
is shown only where that place's privacy allows, that is, when what it leads to is public, or in
the private album the link itself is in. A link to a folder the gallery shows under another name
is not shown twice; a link into another private album (marked by its index.md or the config, or
below one so marked, which may be a folder the walk does not list) is left out, with a warning
that names the link and not the album.
"""

from __future__ import annotations

from ..model import Album
from .sidecar import marks_private, read_sidecar
from .walk import DirListing, FileEntry, WalkReport


def _parent(uri: str) -> str:
    return uri.rpartition("/")[0]


def _marks_private(folder: str, entries: list[FileEntry] | None, warnings: list[str]) -> bool:
    """Whether index.md files the walk found above a link's target mark their folder private; one that
    cannot be read, or a folder that could not be listed, counts as a mark (fail closed)."""
    if entries is None:
        warnings.append(f"{folder}: cannot list it, so whether it is private is unknown; links below it are left out")
        return True
    for entry in entries:
        try:
            sidecar, notes = read_sidecar(entry.abs_path, f"{folder}/{entry.name}")
        except OSError as exc:
            warnings.append(f"{folder}/{entry.name}: cannot read it ({exc.strerror}); links below it are left out")
            return True
        warnings.extend(notes)
        if marks_private(sidecar.meta):
            return True
    return False


def drop_private_links(
    listings: list[DirListing], albums: dict[str, Album], report: WalkReport, warnings: list[str]
) -> list[DirListing]:
    """The listings without the links that would show a private album's folders or files elsewhere.

    albums: every listing's album, read from its index.md and marked private by it or by the config
    (its photos not read yet, so nothing left out here is read). A folder walked through a link that is
    left out goes with everything below it. Each link not shown says why in a warning (a file shown both
    where it is and through a link is fine, and says nothing).
    """
    if not report.links:
        return listings
    real_of = {listing.src_uri: listing.real_uri for listing in listings}
    private = {real_of[uri] for uri, album in albums.items() if uri and album.marked_private}
    private |= {folder for folder, entries in report.marks.items() if _marks_private(folder, entries, warnings)}

    def zone_of_real(folder: str) -> str | None:
        """The private folder (where it is) that covers this one, if any."""
        while folder:
            if folder in private:
                return folder
            folder = _parent(folder)
        return None

    def zone_of(src_uri: str) -> str | None:
        """The same for a folder of the gallery, by its name there: the private album whose link shows it."""
        while src_uri:
            if albums[src_uri].marked_private:
                return real_of[src_uri]
            src_uri = _parent(src_uri)
        return None

    dropped: set[str] = set()  # folders walked through a link that is left out
    files: dict[str, set[str]] = {}  # folder -> names of the file links left out of it

    def left_out(uri: str) -> bool:
        return any(folder in dropped for folder in _ancestors(uri))

    for link in report.links:  # first, as they change what is private
        where, _, name = link.src_uri.rpartition("/")
        if not link.folder and name.lower() == "index.md" and where and not albums[where].marked_private:
            there = zone_of_real(_parent(link.real_uri))
            if there is not None and there != zone_of(where):
                warnings.append(
                    f"{link.src_uri}: symbolic link to the index.md of a private album; this album is kept private "
                    "(its title and description are that album's: give it an index.md of its own)"
                )
                albums[where].marked_private = True
                private.add(real_of[where])
    aliases = []
    for link in report.links:  # in the order met: a link inside a folder walked through a link comes after it
        where = _parent(link.src_uri)
        if left_out(where):
            continue
        if link.folder and link.walked_as != link.src_uri:
            aliases.append(link)  # walked under another name: said below, once what is left out is known
            continue
        # a folder walked under the link's name (no other way leads to it), or a file: the privacy above it
        name = link.src_uri.rpartition("/")[2]
        there = zone_of_real(_parent(link.real_uri))
        if there is None or there == zone_of(where) or (not link.folder and name.lower() == "index.md"):
            continue  # an index.md is read as the album's own (above): never left out
        if link.folder:
            warnings.append(f"{link.src_uri}: symbolic link into a private album; not published here")
            dropped.add(link.src_uri)
        else:
            warnings.append(f"{link.src_uri}: symbolic link to a file of a private album; not published here")
            files.setdefault(where, set()).add(name)
    for link in aliases:
        if link.walked_as is None:
            continue  # it could not be read: the walk said so
        there = zone_of_real(link.real_uri)
        if (there is not None and there != zone_of(_parent(link.src_uri))) or left_out(link.walked_as):
            warnings.append(f"{link.src_uri}: symbolic link into a private album; not published here")
        elif link.walked_as not in real_of:
            warnings.append(
                f"{link.src_uri}: symbolic link to a folder left out of the gallery (a .nomedia, or unreadable); ignored"
            )
        else:
            shown = link.walked_as or "its top folder"
            warnings.append(f"{link.src_uri}: symbolic link to a folder the gallery shows as {shown}; not shown twice")
    if not dropped and not files:
        return listings
    kept = []
    for listing in listings:
        if left_out(listing.src_uri):
            albums.pop(listing.src_uri, None)
            continue
        names = files.get(listing.src_uri)
        if names:
            listing.files = [entry for entry in listing.all_files() if entry.name not in names]
        kept.append(listing)
    return kept


def _ancestors(uri: str):
    """The folder and the folders above it, up to (not including) the top."""
    while uri:
        yield uri
        uri = _parent(uri)
