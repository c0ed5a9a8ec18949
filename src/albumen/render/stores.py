"""The render stage's stores kept in the cache's tables rather than in memory: each media's
placeholder (CachedPlaceholders), the sitemap's rows (CachedSitemap) and the digests of the media
views this build fingerprinted (ViewDigests). A 100,000-photo build holds none of them whole."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import xxhash

from ..process.plan import SitePlan
from ..process.remaining import placeholder_key
from ..process.specs import Placeholder
from .sitemap import lines_digest, sort_key

if TYPE_CHECKING:
    from ..cache import BuildCache


class CachedPlaceholders:
    """Each media's placeholder, read from the cache when a page needs it (keyed by thumbnail name):
    a 100,000-photo build holds only those of the page being made."""

    def __init__(self, plan: SitePlan, cache: BuildCache) -> None:
        self.plan = plan
        self.cache = cache
        self.batch: dict[str, tuple[str, str]] = {}  # thumbnail name -> row, for the page being made

    def _key(self, uri: str) -> str | None:
        media_plan = self.plan.media.get(uri)
        return placeholder_key(media_plan.thumb_uri) if media_plan else None

    def prefetch(self, uris: Iterable[str]) -> None:
        self.batch = self.cache.get_placeholders(key for key in map(self._key, uris) if key)

    def get(self, uri: str, default: Placeholder) -> Placeholder:
        key = self._key(uri)
        if key is None:
            return default
        # a placeholder never changes under its name (content + recipe): one missing from the batch
        # may have been made since
        row = self.batch.get(key) or self.cache.get_placeholder(key)
        return Placeholder(*row) if row else default


class CachedSitemap:
    """The sitemap's lines in a temporary table of the cache, with the settled albums' records' lines
    (see sitemap.SitemapRows), read back in order a few thousand at a time (see sitemap.sitemap_tasks):
    not every page's line in this process."""

    def __init__(self, cache: BuildCache) -> None:
        self.cache = cache
        self.waiting: list[tuple[str, str, str | None, str]] = []  # (sort key, url, album, line)

    def add(self, album: str | None, rows: Iterable[tuple[str, str]]) -> None:
        self.waiting += ((sort_key(album, url), url, album, line) for url, line in rows)
        if len(self.waiting) >= 2000:
            self._send()

    def _send(self) -> None:
        if self.waiting:
            self.cache.sitemap_add(self.waiting)
            self.waiting = []

    def clear(self) -> None:
        self.waiting = []
        self.cache.sitemap_clear()

    def pieces(self) -> Iterator[str]:
        self._send()
        self.cache.sitemap_settled()
        after = ""
        while rows := self.cache.sitemap_lines(after, 2000):
            yield from (line for *_, line in rows)
            after = rows[-1][0]

    def fingerprint(self) -> str | None:
        """The digest of each album's lines (a settled album's from its record; a listed album's made of
        the lines listed, in the same order), and the lines of the pages of no album, in order."""
        self._send()
        digests = dict(self.cache.sitemap_settled_digests())
        loose = xxhash.xxh3_128()  # (the pages of no album)
        album, lines = None, []
        after = ""
        while rows := self.cache.sitemap_lines(after, 2000):
            for _, url, of, line in rows:  # (an album's lines come together, in url order: see sort_key)
                if url is None:  # (a settled album's, told by its digest above)
                    continue
                if of != album:
                    if album is not None:
                        digests[album] = lines_digest("".join(lines))
                    album, lines = of, []
                if of is None:
                    loose.update(line.encode("utf-8", "surrogatepass"))
                else:
                    lines.append(line)
            after = rows[-1][0]
        if album is not None:
            digests[album] = lines_digest("".join(lines))
        h = xxhash.xxh3_128("".join(f"{uri}\0{digests[uri]}\0" for uri in sorted(digests)).encode("utf-8", "surrogatepass"))
        h.update(loose.digest())
        return h.hexdigest()

    def files_made(self, fingerprint: str) -> int | None:
        made, _, files = (self.cache.get_meta("sitemap") or "").partition(" ")
        return int(files) if made == fingerprint and files.isdigit() else None

    def record(self, fingerprint: str | None, files: int) -> None:
        self.cache.set_meta("sitemap", f"{fingerprint} {files}" if fingerprint else None)


class ViewDigests:
    """Digests of the media views this build fingerprinted, in a temporary table of the cache (not
    in memory: one per photo of the library)."""

    def __init__(self, cache: BuildCache) -> None:
        self.cache = cache

    def put(self, rows: list[tuple[str, str]]) -> None:
        self.cache.put_view_digests(rows)

    def get(self, uris: Iterable[str]) -> dict[str, str]:
        return self.cache.view_digests(uris)

    def page_keys(self, dest_uris: Iterable[str]) -> dict[str, str]:
        return self.cache.page_keys(dest_uris)
