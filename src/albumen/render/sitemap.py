"""The sitemap: the <url> line of every public page listed (in a list, or in the cache's table:
render.stores.CachedSitemap), and its files, sitemap.xml (an index of sitemap-N.xml files past
SITEMAP_LIMIT urls) and robots.txt, made from those lines once every page is listed (see
SiteRenderer.tasks).

The lines go album by album. A settled album's (see render.albumkeys) are its record's, kept with
it as one piece of text: a rebuild after one change joins the pieces of the albums it did not list,
instead of reading back and writing out every page's url again (~0.35 s at 100,000 photos)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Protocol

from .env import absolute_url
from .keys import digest

if TYPE_CHECKING:
    from .pages import PageTask, SiteRenderer

_MARKUP = re.compile(r"[&<>\"']").search  # what html.escape changes (a quoted URL has none of it)

_HEAVY = 500  # a task's weight (as media views: see PageWriter.offer) that has it written at once

SITEMAP_LIMIT = 50_000


def sitemap_line(base: str, links: str, url: str, lastmod: str) -> str:
    """A page's <url> line (url: site-relative; links: the config's pages.links)."""
    u = absolute_url(base, url, links)
    return f"<url><loc>{html.escape(u) if _MARKUP(u) else u}</loc>" + (f"<lastmod>{lastmod}</lastmod>" if lastmod else "") + "</url>\n"


def sort_key(album: str | None, url: str) -> str:
    """Where a page's line goes: album by album (pages of no album, the stream's and plugins', last),
    in url order within each. A settled album's lines (url: '') are its record's, in that order."""
    return f"{'1' if album is None else '0' + album}\x01{url}"


class SitemapRows(Protocol):
    """The sitemap's lines of the pages listed so far, and of the settled albums' records."""

    def add(self, album: str | None, rows: Iterable[tuple[str, str]]) -> None:
        """(site-relative url, its line: see sitemap_line) of pages of this album (None: of none)."""

    def clear(self) -> None: ...

    def pieces(self) -> Iterator[str]:
        """Every line, in sort_key order: a settled album's lines together, as one piece."""


class ListedSitemap:
    """Sitemap lines in a list (stores.CachedSitemap keeps a library's: a million pages' rows are ~400 MB)."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[str, str]] = {}  # url -> (sort key, line)

    def add(self, album: str | None, rows: Iterable[tuple[str, str]]) -> None:
        self.rows.update((url, (sort_key(album, url), line)) for url, line in rows)

    def clear(self) -> None:
        self.rows.clear()

    def pieces(self) -> Iterator[str]:
        return (line for _, line in sorted(self.rows.values()))


def album_lines(rows: Iterable[tuple[str, str]]) -> str:
    """An album's lines as its record keeps them (see AlbumRecords): in url order, as pieces() gives them."""
    return "".join(line for _, line in sorted(rows))


def sitemap_tasks(renderer: SiteRenderer, rows: SitemapRows) -> Iterator[PageTask]:
    """sitemap.xml (an index of sitemap-N.xml files of SITEMAP_LIMIT urls each, past that many) and
    robots.txt. Each file is made from its lines alone and written before the next is made (a
    million pages' sitemap is ~100 MB of text)."""
    from .pages import PageTask

    config = renderer.ctx.config
    base = config.url
    page = renderer._page(dir="", title="sitemap", kind="sitemap")

    def urlset(lines: str) -> str:
        return ('<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{lines}</urlset>\n')

    def task(name: str, text: str) -> PageTask:  # (heavy: the writer writes it before taking more)
        return PageTask(name, "", page, {"text": text}, digest(renderer.global_key, name, text), views=_HEAVY)

    files = _files(rows.pieces(), SITEMAP_LIMIT)
    first = next(files)
    second = next(files, None)
    if second is None:
        yield task("sitemap.xml", urlset(first))
    else:
        names = ["sitemap-1.xml", "sitemap-2.xml"]
        yield task(names[0], urlset(first))
        del first
        yield task(names[1], urlset(second))
        del second
        for i, lines in enumerate(files, 3):
            names.append(f"sitemap-{i}.xml")
            yield task(names[-1], urlset(lines))
        listed = "".join(f"<sitemap><loc>{html.escape(absolute_url(base, name))}</loc></sitemap>\n" for name in names)
        yield task("sitemap.xml", '<?xml version="1.0" encoding="UTF-8"?>\n'
                   f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{listed}</sitemapindex>\n')
    yield task("robots.txt", f"User-agent: *\nAllow: /\n\nSitemap: {absolute_url(base, 'sitemap.xml')}\n")


def _files(pieces: Iterator[str], limit: int) -> Iterator[str]:
    """The lines of each sitemap file, `limit` lines a file (at least one file, maybe empty)."""
    parts: list[str] = []
    count = 0
    made = False
    for piece in pieces:
        lines = piece.count("\n")
        while count + lines > limit:  # the file is full: what does not fit starts the next
            room = limit - count
            cut = 0
            for _ in range(room):
                cut = piece.index("\n", cut) + 1
            parts.append(piece[:cut])
            yield "".join(parts)
            made = True
            parts, count = [], 0
            piece, lines = piece[cut:], lines - room
        if lines:
            parts.append(piece)
            count += lines
    if parts or not made:
        yield "".join(parts)
