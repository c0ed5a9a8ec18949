"""The render stage's stores kept in the cache's tables rather than in memory: each media's
placeholder (CachedPlaceholders), the sitemap's rows (CachedSitemap) and the digests of the media
views this build fingerprinted (ViewDigests). A 100,000-photo build holds none of them whole."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from operator import itemgetter
from typing import TYPE_CHECKING

from ..process.plan import SitePlan
from ..process.remaining import placeholder_key
from ..process.specs import Placeholder
from .sitemap import Piece, digest_with_count, pieces_of, sort_key

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
        self.settled_added = False

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
        self.settled_added = False
        self.cache.sitemap_clear()

    def outline(self) -> list[Piece]:
        """The settled albums' pieces from their records (their count and digest: see lines_digest), the
        listed albums' and the pages of no album's from their lines (see SitemapRows.outline)."""
        self._send()
        pieces = [(sort_key(album, ""), (album, *_counted(digest_with_count(digest, count))))
                  for album, digest, count in self.cache.sitemap_settled_digests()]
        pieces += ((sort_key(piece[0], ""), piece) for piece in pieces_of(self._listed()))
        pieces.sort(key=itemgetter(0))
        return [piece for _, piece in pieces]

    def _listed(self) -> Iterator[tuple[str | None, str]]:
        """(album, line) of the listed albums and the pages of no album, in key order, read a few at a time
        (a first build lists every album: a million pages' lines held were ~200 MB)."""
        after = ""
        while rows := self.cache.sitemap_lines(after, 2000):
            yield from ((album, line) for _, url, album, line in rows if url is not None)  # (not a settled album's)
            after = rows[-1][0]

    def lines(self, first: str | None, last: str | None) -> Iterator[str]:
        self._send()
        if not self.settled_added:  # the settled albums' lines, one row each (see sitemap_settled)
            self.cache.sitemap_settled()
            self.settled_added = True
        low, high = sort_key(first, ""), sort_key(last, "")[:-1] + "\x02"  # (every key of `last` is below)
        after = None
        while rows := self.cache.sitemap_lines(after, 2000, low, high):
            yield from (line for *_, line in rows)
            after = rows[-1][0]


def _counted(digest: str) -> tuple[int, str]:
    """(the count of lines, the digest) of a record's digest of its lines (see lines_digest)."""
    return int(digest.partition(":")[0]), digest


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
