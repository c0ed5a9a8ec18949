"""What the command line asks of one build (see build.build), and what --force-album matches."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .config import album_path


@dataclass
class BuildOptions:
    source: Path
    output: Path
    jobs: int = 0  # 0: all cores
    strict: bool = False
    force: bool = False
    force_albums: tuple[str, ...] = ()  # glob patterns of album paths to redo
    wait: bool = False  # another process building into the output: wait for it instead of refusing
    scheduler: str | None = None  # where images are made (see config's scheduler); None: the config's


def unmatched_force(albums: Iterable[str], options: BuildOptions) -> list[str]:
    """A --force-album pattern that matches no album is a mistake worth naming (it redoes nothing)."""
    albums = list(albums)
    warnings = []
    for pattern in options.force_albums:
        glob = album_path(pattern)  # 'Trip/', './Trip' or 'Trip\\' is the album Trip
        if any(fnmatch.fnmatchcase(uri, glob) for uri in albums):
            continue
        near = [uri for uri in albums if uri and fnmatch.fnmatchcase(uri.casefold(), glob.casefold())]
        hint = f" (did you mean {near[0]!r}? album paths are case-sensitive)" if near else (
            " (give an album's folder path relative to the photo folder, e.g. 'Trips/2024*')")
        warnings.append(f"--force-album {pattern!r} matches no album: nothing was redone for it{hint}")
    return warnings


def album_forced(album_uri: str, options: BuildOptions) -> bool:
    """--force-album GLOB matches album paths relative to the source ('' is the top album)."""
    return any(fnmatch.fnmatchcase(album_uri, album_path(g)) for g in options.force_albums)
