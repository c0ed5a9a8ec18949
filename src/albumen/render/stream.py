"""The stream's pages: every public photo and video, newest first, cut into pages whose boundaries
and addresses come from the items themselves, so that one photo added, edited or removed changes
one page or two, not every page after it.

Numbered pages of a fixed size (stream/page/2/, 3/, …) shift every item after a change by one, and
each page said how many items the whole stream holds and which page of how many it was: one photo
added or removed re-rendered every stream page (167 at 10,000 photos, 1,667 at 100,000). Here
(content-defined chunking, as rsync and backup tools cut files):

- a page ends at an item whose name's hash is the smallest among its page_size nearest items (see
  stream_chunks): pages hold about page_size items, and an insertion or removal moves the ends of
  its own page only (or splits it, or merges it with a neighbour).
- a page's address is named after its last item (stream/page/<hash>/), the newest page is stream/;
  pages link to the newer and the older page only (no page numbers, no count of pages).
- the stream's totals are shown on its first page only; other pages show their own dates, and the
  viewer numbers the items of the page.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter, methodcaller
from typing import TYPE_CHECKING

import xxhash

from .i18n import format_counts, format_date_range
from .keys import Fingerprinter, digest, media_key, short_names

if TYPE_CHECKING:
    from .pages import PageTask, SiteRenderer


@dataclass(slots=True)
class StreamView:
    title: str
    url: str  # the stream's first page
    total: int  # photos and videos on this page (the viewer counts them)
    offset: int  # items before this page that the viewer counts: 0 (it numbers the page's own)
    photo_count: int = 0  # of the whole stream, shown on its first page (0 on the others)
    video_count: int = 0
    first: bool = True
    date_range: str = ""  # when this page's photos were taken (pages after the first)


@dataclass(frozen=True, slots=True)
class StreamNav:
    """The links of a stream page to its neighbours (the theme's pagination partial: no numbers)."""

    prev_url: str | None  # the newer page
    next_url: str | None  # the older page
    number: int = 0  # (no page knows its place: its key would change with every page added before it)

    def window(self) -> list[int | None]:
        return []


_ENCODE = methodcaller("encode", "utf-8", "surrogateescape")
# what a stream page's views are made of (see stream_tasks)
_STREAM_FIELDS = attrgetter(*(f.name for f in fields(StreamView)))
_NAV_FIELDS = attrgetter(*(f.name for f in fields(StreamNav)))


def stream_chunks(uris: list[str], size: int) -> list[list[str]]:
    """The newest-first items cut into pages of about `size` items (at least size/2 + 1, at most
    3 * size): a page ends at an item whose name's hash is the smallest of the size + 1 items around
    it (size/2 on each side). Whether an item ends a page depends on its neighbours alone, so an
    item added or removed moves the ends of its own page at most (and makes or merges one page)."""
    # (unsigned 64-bit machine words: a million photos' keys as Python ints were 44 MB, the build's peak)
    keys = array("Q", map(xxhash.xxh3_64_intdigest, map(_ENCODE, uris)))
    ends = chunk_ends(keys, size)
    pages, start = [], 0
    for end in ends:
        pages.append(uris[start : end + 1])
        start = end + 1
    if start < len(uris):
        pages.append(uris[start:])
    return pages or [[]]


def chunk_ends(keys: Sequence[int], size: int) -> list[int]:
    """Where stream_chunks ends its pages: at i when keys[i] is the smallest of keys[i - half : i + half + 1]
    (half: size // 2; a later one equal to it wins) and i is more than half past the last end, away
    from either edge; and wherever a run reaches 3 * size items without one.

    An item smallest of its window is smallest of its block of half + 1 items (all in its window):
    only the blocks' smallest are looked at (one in half + 1), each window checked by min(), not a
    window slid over every item by a loop of Python's (0.04 s a build at 100,000 photos)."""
    n = len(keys)
    half = max(0, size // 2)
    high = 3 * max(1, size)  # (a run with no such item is cut anyway: rare, ~1 page in 1,600 at 60)
    ends, last = [], -1
    for b in range(half, n - 1 - half, half + 1):  # blocks of the items that can end a page by their key
        block = keys[b : min(b + half + 1, n - 1 - half)]
        low = min(block)
        i = b + len(block) - 1 - block[::-1].index(low)  # (the last of equal ones)
        if min(keys[i - half : i + half + 1]) != low or low in keys[i + 1 : i + half + 1]:
            continue
        while last + high < i:  # (a long run without one: cut where it reaches its length)
            last += high
            ends.append(last)
        if i - last > half:
            ends.append(i)
            last = i
    while last + high <= n - 1:
        last += high
        ends.append(last)
    return ends


def page_names(pages: list[list[str]]) -> list[str]:
    """Each page's folder name under page/ (the first page has none): a hash of its last item."""
    return ["", *short_names(page[-1] for page in pages[1:])]


def stream_tasks(renderer: SiteRenderer, order: list[str]) -> Iterator[PageTask]:
    """The stream's pages, each with its key: from the digests of its items' views kept when their
    albums' pages were listed (see albumkeys), else from views built here."""
    from .pages import PageTask

    ctx = renderer.ctx
    config = ctx.config
    media = ctx.gallery.media
    uris = order[: config.stream.max_items] if config.stream.max_items else order
    total = len(uris)
    if len(uris) == len(order):  # the whole stream: the public albums' videos, as the top album counts them
        videos = ctx.gallery.albums[""].video_count
    else:
        videos = [media[uri].info.kind for uri in uris].count("video")
    counts = format_counts(total - videos, videos, config.language)
    pages = stream_chunks(uris, config.stream.page_size)
    base = f"{config.stream.path}/"
    urls = [f"{base}page/{name}/" if name else base for name in page_names(pages)]
    title = renderer.stream_title
    settled = renderer.settled
    recorded_keys: dict[str, str] = {}
    fresh: set[str] = set()  # the items of albums not settled
    if settled and ctx.digests is not None:
        recorded_keys = ctx.digests.page_keys(f"{url}index.html" for url in urls)
        albums = ctx.gallery.albums
        fresh = {uri for album in albums if album not in settled for uri in albums[album].media}
    for n, items in enumerate(pages):
        nav = StreamNav(urls[n - 1] if n else None, urls[n + 1] if n + 1 < len(pages) else None)
        if n == 0:
            stream = StreamView(title, base, len(items), 0, total - videos, videos)
            heading, description = title, config.description or counts
        else:
            newest = next((d for d in (media[u].date for u in items) if d is not None), None)
            oldest = next((d for d in (media[u].date for u in reversed(items)) if d is not None), None)
            when = format_date_range(oldest, newest, config.language) if newest else ""
            stream = StreamView(title, base, len(items), 0, first=False, date_range=when)
            heading = f"{title} ({when})" if when else title
            description = config.description or when or title
        page = renderer._page(
            dir=urls[n].rstrip("/"), title=heading, kind="stream", canonical=renderer._canonical(urls[n]),
            description=description, pagination=nav if len(pages) > 1 else None,
        )
        dest_uri = f"{urls[n]}index.html"
        # what the page is made of: with every item's album settled (its views as the last build made
        # them), a page made of the same is the page the last build wrote, under the key it recorded.
        # Its page and stream views are told by what they are made of (the site's part: the global
        # key), not by their repr (a million photos' 16,700 stream pages: ~0.2 s)
        made_of = ":" + digest(renderer.global_key, "stream.html", urls[n], heading, description,
                               repr((_NAV_FIELDS(nav), len(pages) > 1, _STREAM_FIELDS(stream))), *items)
        if settled and fresh.isdisjoint(items):
            recorded = recorded_keys.get(dest_uri)
            if recorded is not None and recorded.endswith(made_of):
                # kept as written, not looked for in the output, as a settled album's pages (a million
                # photos' 16,400 stream pages: ~0.15 s); the next build with nothing changed looks at it
                yield PageTask(dest_uri, "stream.html", page, {"stream": stream}, recorded,
                               late=lambda items=items: {"media": renderer._stream_views(items)}, kept=True)
                continue
        head = (renderer.global_key, "stream.html", repr(page), repr(stream))
        known = ctx.digests.get(items) if ctx.digests is not None else {}
        if known and ctx.albums is not None:  # (digests are kept between builds: only those of
            # albums this build listed hold; see albumkeys)
            listed = ctx.albums.listed
            known = {u: d for u, d in known.items() if media[u].album_uri in listed}
        if len(known) == len(items):  # every item was fingerprinted on its album's pages
            key = digest(*head, *(media_key(known[u]) for u in items)) + made_of  # as fp.media of a standalone view
            yield PageTask(dest_uri, "stream.html", page, {"stream": stream}, key,
                           late=lambda items=items: {"media": renderer._stream_views(items)})
            continue
        fp = Fingerprinter()  # one per page: the views of a page live as long as its task
        views = renderer._stream_views(items)
        key = digest(*head, *(fp.media(v) for v in views)) + made_of
        yield PageTask(dest_uri, "stream.html", page, {"stream": stream, "media": views}, key,
                       views=len(views))
