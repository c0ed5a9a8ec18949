"""Fingerprints of what a page shows, so an unchanged page is neither rendered nor written.

A page's key covers the theme files, the config, the Albumen version and the view
data the page's template receives. Views are reduced to plain text once each:
a photo's own data, not the whole chain of its neighbours.
"""

from __future__ import annotations

import hashlib
from dataclasses import fields, is_dataclass
from datetime import datetime

from .views import AlbumView, MediaView

# Fields that point to other views: written as a reference (url), never expanded.
_REFERENCES = {"prev", "next"}


class Fingerprinter:
    def __init__(self) -> None:
        self._media: dict[int, str] = {}
        self._cards: dict[int, str] = {}

    def media(self, view: MediaView) -> str:
        key = self._media.get(id(view))
        if key is None:
            parts = []
            for f in fields(view):
                value = getattr(view, f.name)
                parts.append(value.url if f.name in _REFERENCES and value is not None else self.data(value))
            key = "M(" + "|".join(parts) + ")"
            self._media[id(view)] = key
        return key

    def album(self, view: AlbumView, card: bool = False) -> str:
        """An album as its page header shows it (card=True: as a sub-album card)."""
        if card and id(view) in self._cards:
            return self._cards[id(view)]
        parts = []
        for f in fields(view):
            if f.name == "media":
                continue
            value = getattr(view, f.name)
            if f.name == "children":
                parts.append("" if card else "[" + ",".join(self.album(c, card=True) for c in value) + "]")
            else:
                parts.append(self.data(value))
        key = "A(" + "|".join(parts) + ")"
        if card:
            self._cards[id(view)] = key
        return key

    def data(self, value) -> str:
        if isinstance(value, MediaView):
            return self.media(value)
        if isinstance(value, AlbumView):
            return self.album(value, card=True)
        if isinstance(value, (list, tuple)):
            return "[" + ",".join(self.data(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{" + ",".join(f"{k!r}:{self.data(v)}" for k, v in sorted(value.items())) + "}"
        if isinstance(value, datetime):
            return value.isoformat()
        if is_dataclass(value) and not isinstance(value, type):
            return type(value).__name__ + "(" + "|".join(self.data(getattr(value, f.name)) for f in fields(value)) + ")"
        return repr(value)


def digest(*parts: str) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()[:32]
