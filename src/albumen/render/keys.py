"""Fingerprints of what a page shows, so an unchanged page is neither rendered nor written.

A page's key covers the theme files, the config, the Albumen version and the view
data the page's template receives. Each view is reduced to text once (its repr,
which dataclasses generate), and a photo's text holds its neighbours' URLs, not
the whole chain of its neighbours.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import fields

from .views import AlbumView, MediaView

_MEDIA_FIELDS = tuple(f.name for f in fields(MediaView) if f.name not in ("prev", "next"))
_ALBUM_FIELDS = tuple(f.name for f in fields(AlbumView) if f.name not in ("media", "children", "cover"))


class Fingerprinter:
    """Memoizes by object identity, and keeps each object alive while memoized: an id is only
    unique among living objects, so a memo keyed by the id of a dead view could answer for a new one.

    record: told (media src_uri, digest of the view without its neighbours) of every media view
    fingerprinted, so a page showing the same view elsewhere (a stream item) need not build it again
    to know whether it changed (see media_key)."""

    def __init__(self, record: Callable[[str, str], None] | None = None) -> None:
        self._media: dict[int, tuple[MediaView, str]] = {}
        self._cards: dict[int, tuple[AlbumView, str]] = {}
        self._record = record

    def media(self, view: MediaView) -> str:
        hit = self._media.get(id(view))
        if hit is None:  # only a digest is kept: 100,000 photos must not hold 100,000 long strings
            own = digest(repr(tuple(getattr(view, name) for name in _MEDIA_FIELDS)))
            if self._record is not None:
                self._record(view.src_uri, own)
            links = (view.prev.url if view.prev else "", view.next.url if view.next else "")
            hit = self._media[id(view)] = (view, media_key(own, *links))
        return hit[1]

    def album(self, view: AlbumView, card: bool = False) -> str:
        """An album as its page header shows it (card=True: as a sub-album card)."""
        if card and id(view) in self._cards:
            return self._cards[id(view)][1]
        key = digest(repr(tuple(getattr(view, name) for name in _ALBUM_FIELDS)), self.media(view.cover) if view.cover else "")
        if card:
            self._cards[id(view)] = (view, key)
        else:
            key = digest(key, *(self.album(child, card=True) for child in view.children))
        return key


def media_key(own: str, prev_url: str = "", next_url: str = "") -> str:
    """A media view's fingerprint from the digest of its own fields and its neighbours' URLs."""
    return digest(own, prev_url, next_url)


def digest(*parts: str) -> str:
    """The SHA-256 of the parts, each followed by a NUL byte (UTF-8, surrogates passed), in 32 hex digits:
    one string encoded and hashed at once (a stream page's key has one part per photo it shows)."""
    if not parts:
        return hashlib.sha256().hexdigest()[:32]
    return hashlib.sha256(("\0".join(parts) + "\0").encode("utf-8", "surrogatepass")).hexdigest()[:32]


def short_names(texts: Iterable[str]) -> list[str]:
    """A short name for each text (12 hex digits of its hash), told apart when two hash alike ('-2'
    added: never seen, but kept apart): the stream's pages and the sitemap's files are named so."""
    names, seen = [], set()
    for text in texts:
        name = hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=6).hexdigest()
        while name in seen:
            name += "-2"
        seen.add(name)
        names.append(name)
    return names
