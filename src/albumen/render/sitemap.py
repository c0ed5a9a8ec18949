"""The sitemap: its rows, the site-relative url and lastmod of every public page listed (in a list,
or in the cache's table: render.stores.CachedSitemap), and its files, sitemap.xml (an index of
sitemap-N.xml files past SITEMAP_LIMIT urls) and robots.txt, made from those rows once every page is
listed (see SiteRenderer.tasks)."""

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


class SitemapRows(Protocol):
    """The sitemap's (site-relative url, lastmod) rows of the pages listed so far."""

    def add(self, rows: Iterable[tuple[str, str]]) -> None: ...

    def clear(self) -> None: ...

    def count(self) -> int: ...

    def in_order(self, size: int) -> Iterator[list[tuple[str, str]]]:
        """Every row in url order, `size` rows at a time."""


class ListedSitemap:
    """Sitemap rows in a list (stores.CachedSitemap keeps a library's: a million pages' rows are ~400 MB)."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str]] = []

    def add(self, rows: Iterable[tuple[str, str]]) -> None:
        self.rows += rows

    def clear(self) -> None:
        self.rows.clear()

    def count(self) -> int:
        return len(self.rows)

    def in_order(self, size: int) -> Iterator[list[tuple[str, str]]]:
        self.rows.sort()
        for i in range(0, len(self.rows), size):
            yield self.rows[i : i + size]


def sitemap_tasks(renderer: SiteRenderer, rows: SitemapRows) -> Iterator[PageTask]:
    """sitemap.xml (an index of sitemap-N.xml files of SITEMAP_LIMIT urls each, past that many) and
    robots.txt. Each file is made from its rows alone and written before the next is made (a
    million pages' sitemap is ~100 MB of text)."""
    from .pages import PageTask

    config = renderer.ctx.config
    base = config.url
    page = renderer._page(dir="", title="sitemap", kind="sitemap")

    def urlset(chunk: list[tuple[str, str]]) -> str:
        rows = "".join(
            f"<url><loc>{html.escape(u) if _MARKUP(u) else u}</loc>" + (f"<lastmod>{m}</lastmod>" if m else "") + "</url>\n"
            for u, m in ((absolute_url(base, url, config.pages.links), lastmod) for url, lastmod in chunk)
        )
        return ('<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{rows}</urlset>\n')

    def task(name: str, text: str) -> PageTask:  # (heavy: the writer writes it before taking more)
        return PageTask(name, "", page, {"text": text}, digest(renderer.global_key, name, text), views=_HEAVY)

    chunks = rows.in_order(SITEMAP_LIMIT)
    if rows.count() <= SITEMAP_LIMIT:
        yield task("sitemap.xml", urlset(next(chunks, [])))
    else:
        names = []
        for i, chunk in enumerate(chunks, 1):
            names.append(f"sitemap-{i}.xml")
            yield task(names[-1], urlset(chunk))
        listed = "".join(f"<sitemap><loc>{html.escape(absolute_url(base, name))}</loc></sitemap>\n" for name in names)
        yield task("sitemap.xml", '<?xml version="1.0" encoding="UTF-8"?>\n'
                   f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{listed}</sitemapindex>\n')
    yield task("robots.txt", f"User-agent: *\nAllow: /\n\nSitemap: {absolute_url(base, 'sitemap.xml')}\n")
