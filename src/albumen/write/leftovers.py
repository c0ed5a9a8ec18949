"""Files in the output that the build cache cannot vouch for: an earlier build's pages after the cache
was lost, a private album's old public copy, a file someone else put where a page goes.

Albumen removes only files its cache records, so these are named, never removed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..report import plural, some

if TYPE_CHECKING:
    from ..cache import BuildCache

_UNLISTED_KEY = "unlisted_pages"


def albumen_was_here(output: Path) -> bool:
    """Whether an earlier build wrote this output (its theme's albumen.css or albumen.js are there):
    then files its cache has no record of (the cache was lost) are its own, not someone else's."""
    return any((output / "static" / name).is_file() for name in ("albumen.css", "albumen.js"))


def foreign(output: Path, dest_uri: str) -> bool:
    """Whether a file is there that Albumen did not make (its pages and feeds name it as generator)."""
    try:
        with open(os.path.join(output, *dest_uri.split("/")), "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return b"Albumen" not in head


def public_leftovers(
    output: Path, cache: BuildCache, private: Iterable[tuple[str, str]]
) -> tuple[list[str], set[str]]:
    """A private album's old public folder that this cache did not record (another machine, a lost cache)
    cannot be removed safely: say so loudly. private: (album, the folder its pages had when public).
    Returns the warnings and the folders named."""
    warnings: list[str] = []
    named: set[str] = set()
    for uri, public in private:
        index = f"{public}/index.html"
        if (output / public / "index.html").is_file() and not cache.has_output(index):
            warnings.append(
                f"{uri} is private, but {output / public} holds a public copy this build did not record "
                "(an earlier build with another cache?): delete that folder"
            )
            named.add(public)
    return warnings, named


def unlisted_pages(
    output: Path, cache: BuildCache, walk: bool, current: Callable[[str], bool], skip: set[str] = frozenset()
) -> list[str]:
    """Name the folders of Albumen pages in the output that this build did not write.

    Albumen removes only files its cache records, so after the cache was lost (new or unreadable, on
    an output an earlier build wrote: walk=True) the pages of an album made private since, or
    removed, would stay published at their old address without a word. The output is walked then
    (once: folders only, pruned at each folder found, and one index.html head read per folder not
    among this build's pages), and the folders found are recorded in the cache, so that later builds
    name them again while they are there. current(dest_uri): whether this build wrote that page.
    skip: folders already named (see public_leftovers). Returns the warning, if any.
    """
    try:
        stored = json.loads(cache.get_meta(_UNLISTED_KEY) or "[]")
    except ValueError:
        stored = []
    found: dict[str, None] = {}  # ordered set
    for folder in stored if isinstance(stored, list) else ():
        if isinstance(folder, str) and folder not in skip and _unlisted_page(output, folder, current):
            found[folder] = None
    if walk:
        for dirpath, dirnames, filenames in os.walk(output):  # never through a symbolic link
            dirnames.sort()
            folder = Path(dirpath).relative_to(output).as_posix()
            folder = "" if folder == "." else folder
            if folder in skip or folder in found:
                dirnames[:] = []
            elif "index.html" in filenames and folder and _unlisted_page(output, folder, current):
                found[folder] = None
                dirnames[:] = []  # the pages under it are named through it
    cache.set_meta(_UNLISTED_KEY, json.dumps(list(found)[:1000]) if found else None)
    if not found:
        return []
    return [
        f"{output} holds pages of an earlier build that this one did not write, in "
        f"{plural(len(found), 'folder')}: {some([f + '/' for f in found])}. They may be pages of albums "
        "that are private or gone now, still published at their old address; nothing was removed, because "
        "the build cache that lists the files Albumen wrote here was lost (it was new or unreadable when "
        "they were found). Build into an empty folder, or delete them"
    ]


def _unlisted_page(output: Path, folder: str, current: Callable[[str], bool]) -> bool:
    """Whether folder/index.html is a page Albumen made (its generator tag) that this build did not write."""
    uri = f"{folder}/index.html"
    if current(uri):
        return False
    try:
        with open(os.path.join(output, *uri.split("/")), "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return b'<meta name="generator" content="Albumen' in head
