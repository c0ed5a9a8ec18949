"""What is private before anything is read: the albums the config's `private` entries and its
passwords name (check_private, password_albums), each checked against the folders the walk found."""

from __future__ import annotations

import os

from ..config import Config
from ..errors import ConfigError
from ..report import some
from .arrange import natural_key
from .walk import DirListing


def password_albums(listings: list[DirListing], config: Config, warnings: list[str]) -> set[str]:
    """The albums the config's [passwords] and ALBUMEN_PASSWORD_* variables protect: private ones
    (see albumen.seal.keys.configured_albums; an entry naming no album raises ConfigError)."""
    if not config.passwords and not any(k.startswith("ALBUMEN_PASSWORD_") for k in os.environ):
        return set()
    from ..seal.keys import configured_albums

    found, more = configured_albums((listing.src_uri for listing in listings), config)
    warnings.extend(more)
    return found


def check_private(
    listings: list[DirListing], source_root: str, entries: tuple[str, ...], config_path: str | None = None
) -> set[str]:
    """The albums (src_uri) the config's `private` entries name; raises ConfigError when one names none.

    An entry names the folder of that path (the config spells it as the model does, see
    config.album_path), or, when the walk reached that folder under another name (through a symbolic
    link inside the photo folder, when no path without one leads to it: see walk_source), the album of
    that other name, which is then the private one. An entry that names no album at all fails the build
    before anything is read or written: a privacy setting that cannot be applied must not leave the
    album it meant public.
    """
    albums = {listing.src_uri: listing for listing in listings}
    found: set[str] = set()
    by_identity: dict[tuple[int, int], str] | None = None
    problems: list[str] = []
    for entry in entries:
        if entry in albums:
            found.add(entry)
            continue
        path = os.path.join(source_root, *entry.split("/"))
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is not None:
            if by_identity is None:  # only when an entry is not an album's own path
                by_identity = {}
                for listing in listings:
                    try:
                        seen = os.stat(listing.abs_path)
                    except OSError:
                        continue
                    by_identity.setdefault((seen.st_dev, seen.st_ino), listing.src_uri)
            uri = by_identity.get((st.st_dev, st.st_ino))
            if uri:  # never the top album: the home page cannot be private
                found.add(uri)
                continue
        problems.append(_unmatched_private(entry, st is not None and os.path.isdir(path), source_root, albums))
    if problems:
        raise ConfigError(problems, path=config_path)
    return found


def _unmatched_private(entry: str, is_folder: bool, source_root: str, albums: dict) -> str:
    import difflib
    import unicodedata

    def loose(uri: str) -> str:
        return unicodedata.normalize("NFC", uri).casefold()

    names = sorted((uri for uri in albums if uri), key=natural_key)
    near = [uri for uri in names if loose(uri) == loose(entry)] or difflib.get_close_matches(entry, names, n=1)
    why = "that folder is not part of the gallery: hidden, ignored, .nomedia, or the top folder; " if is_folder else ""
    guess = f"did you mean {near[0]!r}? " if near else ""
    listed = f"albums: {some(names)}" if names else "the photo folder has no album folders"
    return (
        f"private: {entry!r} names no album folder of {source_root}, so it cannot be kept private "
        f"({why}{guess}{listed}; paths are relative to the photo folder and case-sensitive, as 'albumen links' "
        "lists them)"
    )
