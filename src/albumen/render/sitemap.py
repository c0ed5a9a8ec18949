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

import xxhash

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

    def fingerprint(self) -> str | None:
        """A digest of every line, told without reading the settled albums' (the digest of an album's
        lines is kept with its record: see lines_digest), or None when it cannot be told so."""

    def files_made(self, fingerprint: str) -> int | None:
        """How many sitemap-N.xml files the sitemap made of these lines was cut into, when recorded."""

    def record(self, fingerprint: str | None, files: int) -> None: ...


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

    def fingerprint(self) -> str | None:
        return None

    def files_made(self, fingerprint: str) -> int | None:
        return None

    def record(self, fingerprint: str | None, files: int) -> None:
        return None


def album_lines(rows: Iterable[tuple[str, str]]) -> str:
    """An album's lines as its record keeps them (see AlbumRecords): in url order, as pieces() gives them."""
    return "".join(line for _, line in sorted(rows))


def lines_digest(lines: str) -> str:
    """The digest of an album's lines (album_lines), kept with its record: the sitemap's fingerprint
    is made of these, settled albums' and listed ones' alike (see SitemapRows.fingerprint)."""
    return xxhash.xxh3_128_hexdigest(lines.encode("utf-8", "surrogatepass"))


def sitemap_tasks(renderer: SiteRenderer, rows: SitemapRows) -> Iterator[PageTask]:
    """sitemap.xml (an index of sitemap-N.xml files of SITEMAP_LIMIT urls each, past that many) and
    robots.txt. Each file is made from its lines alone and written before the next is made (a
    million pages' sitemap is ~100 MB of text).

    Each file's key ends with what it is made of (the fingerprint of every line: see
    SitemapRows.fingerprint). When the files were last written made of the same, and are there as
    written, they are listed under the keys they were written with and not made again (a rebuild after
    a caption changed: 0.07 s at 100,000 photos)."""
    from .pages import PageTask

    config = renderer.ctx.config
    base = config.url
    page = renderer._page(dir="", title="sitemap", kind="sitemap")
    robots = f"User-agent: *\nAllow: /\n\nSitemap: {absolute_url(base, 'sitemap.xml')}\n"
    fingerprint = rows.fingerprint()

    def made_of(name: str) -> str:
        return ":" + digest(renderer.global_key, name, fingerprint) if fingerprint else ""

    count = rows.files_made(fingerprint) if fingerprint else None
    if count is not None and renderer.ctx.digests is not None and renderer.page_ok is not None:
        names = ["sitemap.xml", *(f"sitemap-{i}.xml" for i in range(1, count + 1))]
        written = renderer.ctx.digests.page_keys(names)
        if all(written.get(name, "").endswith(made_of(name)) for name in names) and renderer.page_ok(None, names):
            for name in names:
                yield PageTask(name, "", page, {}, written[name], kept=True)
            yield PageTask("robots.txt", "", page, {"text": robots}, digest(renderer.global_key, "robots.txt", robots))
            return
    rows.record(None, 0)  # (made again below: recorded once they are)

    def urlset(lines: str) -> str:
        return ('<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{lines}</urlset>\n')

    def task(name: str, text: str) -> PageTask:  # (heavy: the writer writes it before taking more)
        made = xxhash.xxh3_128_hexdigest(text.encode("utf-8", "surrogatepass"))
        return PageTask(name, "", page, {"text": text}, digest(renderer.global_key, name, made) + made_of(name), views=_HEAVY)

    files = _files(rows.pieces(), SITEMAP_LIMIT)
    first = next(files)
    second = next(files, None)
    names = []
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
    rows.record(fingerprint, len(names))
    yield PageTask("robots.txt", "", page, {"text": robots}, digest(renderer.global_key, "robots.txt", robots))


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
