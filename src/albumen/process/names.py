"""Where each page goes: every album's and media page's folder, from the folders' and files' names
(see assign_dirs), and the URL-safe forms of those names."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping
from functools import lru_cache
from itertools import repeat

from anyascii import anyascii

from ..model import Gallery
from ..scan.arrange import natural_key

STATIC_DIR = "static"
# Names the site itself uses at the top level; an album or photo there gets another name.
RESERVED_TOP = {
    STATIC_DIR, "stream", "p", "page", "feed.xml", "rss.xml", "sitemap.xml", "robots.txt", "index.html",
    "404.html", "favicon.ico", "tags", "search",
}
# Inside every album: pagination.
RESERVED_ALBUM = {"page", "index.html", "feed.xml"}


@lru_cache(maxsize=1 << 16)
def slugify(name: str) -> str:
    """URL-safe ASCII name: transliterated, lower case, words joined by '-' (memoized: see natural_key)."""
    text = anyascii(name).lower()
    text = re.sub(r"[^a-z0-9]+", "-", text).strip("-")
    return text[:80].rstrip("-") or "untitled"


def safe_segment(name: str) -> str:
    """An original name kept as a path segment (percent-encoded in links).

    Only characters that cannot live in a URL path or a portable file name change ('#', '?', ':'
    and the like become '_'), as do names that would read as something else.
    """
    text = re.sub(r"[\x00-\x1f/\\#?:*\"<>|%]", "_", name).strip()
    return "_" if text.strip(".") == "" else text


def public_dir(album_uri: str, slugs: str) -> str:
    """The folder an album's pages have when it is public, from its folders' names (a clash with a
    sibling's name, which assign_dirs settles, aside): where a private album's old public copy is."""
    make = slugify if slugs == "ascii" else safe_segment
    return "/".join(make(part) for part in album_uri.split("/"))


def _stem(name: str) -> str:
    stem, ext = os.path.splitext(name)
    return stem if stem else name


@lru_cache(maxsize=1 << 16)
def _media_segment(name: str, mode: str) -> str:
    """A media page's folder name as wanted, from its file's name (memoized: IMG_0001.jpg comes back in
    every folder of a library)."""
    return slugify(_stem(name)) if mode == "ascii" else safe_segment(_stem(name))


def assign_dirs(
    gallery: Gallery,
    mode: str,
    reserved_top: set[str] | frozenset[str] = frozenset(),
    private: dict[str, str] | None = None,
) -> tuple[dict[str, str], MediaDirs, list[str]]:
    """Output folder of every album and media page, and the warnings about renamed ones.

    `private` maps albums that have their own private link to their folder (p/<token>); they
    start a fresh namespace there and take no name in their parent's.
    """
    make = slugify if mode == "ascii" else safe_segment
    private = private or {}
    album_dirs: dict[str, str] = {"": ""}
    media_dirs = MediaDirs(gallery, album_dirs, mode)
    warnings: list[str] = []
    for album in gallery.walk_albums():
        base = album_dirs[album.src_uri]
        reserved = (RESERVED_TOP | set(reserved_top)) if album.src_uri == "" else RESERVED_ALBUM
        children = [(make(gallery.albums[c].name), c) for c in album.children]
        # each media's name is its path's last part; its folder name made by C-level calls (the lookup of
        # every photo and a tuple each cost 0.8 s at a million photos)
        cut = len(album.src_uri) + 1 if album.src_uri else 0
        names = [uri[cut:] for uri in (album.media + album.documents if album.documents else album.media)]
        folded = set(map(str.casefold, map(_media_segment, names, repeat(mode, len(names)))))
        folded.update(segment.casefold() for segment, _ in children)
        if len(folded) == len(children) + len(names) and folded.isdisjoint(reserved):
            # no two names alike, none the site's own: each as wanted, in any order (the sort by name
            # below, for the first of two alike to keep its name, cost 0.15 s at 100,000 photos)
            for segment, uri in children:
                album_dirs[uri] = f"{base}/{segment}" if base else segment
        else:
            media_dirs.clashing.add(album.src_uri)
            _assign_clashing(gallery, album, base, reserved, make, mode, album_dirs, media_dirs.renamed, warnings)
        for uri in album.hidden:  # never linked from here: a private link, or nothing public to show
            if uri in private:
                album_dirs[uri] = private[uri]
            else:  # a folder whose photos are all private: it gets no pages, the name is only a path
                segment = make(gallery.albums[uri].name)
                album_dirs[uri] = posixpath.join(base, segment) if base else segment
    return album_dirs, media_dirs, warnings


class MediaDirs(Mapping[str, str]):
    """Each media page's folder: its album's and its own name's (see assign_dirs), put together when
    asked for, but in the few albums where names clash (a million photos' folders as strings took
    ~130 MB). Its keys are the gallery's media."""

    def __init__(self, gallery: Gallery, album_dirs: dict[str, str], mode: str) -> None:
        self.gallery, self.album_dirs, self.mode = gallery, album_dirs, mode
        self.renamed: dict[str, str] = {}  # the media of albums where names clash -> their folders
        self.clashing: set[str] = set()  # those albums

    def __getitem__(self, uri: str) -> str:
        found = self.renamed.get(uri)
        if found is not None:
            return found
        media = self.gallery.media.get(uri)
        if media is None:
            raise KeyError(uri)
        base = self.album_dirs[media.album_uri]
        segment = _media_segment(media.name, self.mode)
        return f"{base}/{segment}" if base else segment

    def __contains__(self, uri: object) -> bool:
        return uri in self.renamed or uri in self.gallery.media

    def __iter__(self) -> Iterator[str]:
        return iter(self.gallery.media)

    def __len__(self) -> int:
        return len(self.gallery.media)


def _assign_clashing(
    gallery: Gallery, album, base: str, reserved: set[str], make: Callable[[str], str], mode: str,
    album_dirs: dict[str, str], media_dirs: dict[str, str], warnings: list[str],
) -> None:
    """assign_dirs for an album where two names are alike, or one is the site's own: in name order
    (sub-albums first), the first keeps its name, the others get '-2', '-3'..., and each rename is said."""
    taken: dict[str, str] = {}
    entries = [(gallery.albums[c].name, c, "album") for c in album.children]
    entries.sort(key=lambda e: natural_key(e[0]))
    media_entries = [(gallery.media[m].name, m, "media") for m in album.media + album.documents]
    media_entries.sort(key=lambda e: natural_key(e[0]))
    for name, uri, kind in entries + media_entries:
        wanted = make(name) if kind == "album" else _media_segment(name, mode)
        segment = wanted
        n = 1
        while segment.casefold() in taken or segment.casefold() in reserved:
            n += 1
            segment = f"{wanted}-{n}"
        if segment != wanted:
            if wanted.casefold() in reserved:
                warnings.append(f"{uri}: '{wanted}' is a name the site itself uses; published as '{segment}'")
            else:
                other = taken[wanted.casefold()]
                warnings.append(f"{uri}: same URL name '{wanted}' as {other}; published as '{segment}'")
        taken[segment.casefold()] = uri
        target = f"{base}/{segment}" if base else segment  # (posixpath.join: a segment holds no '/')
        if kind == "album":
            album_dirs[uri] = target
        else:
            media_dirs[uri] = target
