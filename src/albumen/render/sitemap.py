"""The sitemap: the <url> line of every public page listed (in a list, or in the cache's table:
render.stores.CachedSitemap), and its files, sitemap.xml (an index of sitemap-NAME.xml files past
SITEMAP_LIMIT urls) and robots.txt, made from those lines once every page is listed (see
SiteRenderer.tasks).

The lines go album by album. A settled album's (see render.albumkeys) are its record's, kept with
it as one piece of text, with their count and digest: a rebuild after one change joins the pieces of
the albums it did not list, instead of reading back and writing out every page's url again (~0.35 s
at 100,000 photos).

The files end where the albums say, not after a count of lines (as the stream's pages: see
plan_files), and are named after where they start: a photo added or removed changes the file that
holds its album's lines, not every file after it (a million photos' sitemap is ~100 MB in ~280 files:
of ~3,700 urls each, one made again after a photo added or removed at a million took ~0.1 s, one of
~15,000 ~0.4 s).
Each file's key is made of its albums' digests, so a file whose albums' lines did not change is kept
as written without its lines being read."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Protocol

import xxhash

from .env import absolute_url
from .keys import digest, short_names

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

    def outline(self) -> list[Piece]:
        """Every album's lines (and those of the pages of no album, last) as pieces, in sort_key order:
        each one's album, count of lines and digest (lines_digest), told without reading a settled
        album's lines (its record keeps their count and digest)."""

    def lines(self, first: str | None, last: str | None) -> Iterator[str]:
        """The lines of the pieces from album `first` to album `last` (None: the pages of no album), in order."""


# (album, lines, digest): one album's lines (None: the pages of no album), see SitemapRows.outline
Piece = tuple[str | None, int, str]


class ListedSitemap:
    """Sitemap lines in a list (stores.CachedSitemap keeps a library's: a million pages' rows are ~400 MB)."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple[str, str | None, str]] = {}  # url -> (sort key, album, line)

    def add(self, album: str | None, rows: Iterable[tuple[str, str]]) -> None:
        self.rows.update((url, (sort_key(album, url), album, line)) for url, line in rows)

    def clear(self) -> None:
        self.rows.clear()

    def outline(self) -> list[Piece]:
        return pieces_of((album, line) for _, album, line in sorted(self.rows.values()))

    def lines(self, first: str | None, last: str | None) -> Iterator[str]:
        rows = sorted(self.rows.values())
        albums = [album for _, album, _ in rows]
        return (line for _, _, line in rows[albums.index(first) : len(albums) - albums[::-1].index(last)])


def pieces_of(rows: Iterable[tuple[str | None, str]]) -> list[Piece]:
    """The pieces (see SitemapRows.outline) of (album, line) rows in sort_key order."""
    pieces: list[Piece] = []
    album: object = pieces  # (no album yet: None is the pages of no album, '' the home album)
    lines: list[str] = []
    for of, line in rows:
        if of != album and lines:
            pieces.append((album, len(lines), lines_digest("".join(lines))))  # type: ignore[arg-type]
            lines = []
        album = of
        lines.append(line)
    if lines:
        pieces.append((album, len(lines), lines_digest("".join(lines))))  # type: ignore[arg-type]
    return pieces


def album_lines(rows: Iterable[tuple[str, str]]) -> str:
    """An album's lines as its record keeps them (see AlbumRecords): in url order, as pieces() gives them."""
    return "".join(line for _, line in sorted(rows))


def lines_digest(lines: str) -> str:
    """The digest of an album's lines (album_lines), kept with its record: their count, ':' and a hash
    of them. The sitemap's files are told by these, settled albums' and listed ones' alike (see
    SitemapRows.outline). (A record from before kept the hash alone: see digest_with_count.)"""
    return f"{lines.count(chr(10))}:{xxhash.xxh3_128_hexdigest(lines.encode('utf-8', 'surrogatepass'))}"


def digest_with_count(digest: str, count: int | None) -> str:
    """A record's digest of its lines as lines_digest makes it now (count: its lines', for one from before)."""
    return digest if ":" in digest or count is None else f"{count}:{digest}"


def sitemap_tasks(renderer: SiteRenderer, rows: SitemapRows) -> Iterator[PageTask]:
    """sitemap.xml (an index of sitemap-NAME.xml files of at most SITEMAP_LIMIT urls each, past that
    many: see plan_files) and robots.txt. Each file is made from its lines alone and written before the
    next is made (a million pages' sitemap is ~100 MB of text).

    A file's key is made of its pieces' digests and where it cuts them: one written under that key,
    and there as written, is listed as it is and not made again (its lines are not even read)."""
    from .pages import PageTask

    config = renderer.ctx.config
    base = config.url
    page = renderer._page(dir="", title="sitemap", kind="sitemap")
    robots = f"User-agent: *\nAllow: /\n\nSitemap: {absolute_url(base, 'sitemap.xml')}\n"
    pieces = rows.outline()
    files = plan_files([count for _, count, _ in pieces], [album for album, _, _ in pieces], SITEMAP_LIMIT)
    names = ["sitemap.xml"] if len(files) == 1 else file_names(files, pieces)
    keys = [digest(renderer.global_key, name, *(f"{pieces[i][2]}:{start}:{end}" for i, start, end in file))
            for name, file in zip(names, files, strict=True)]
    digests, page_ok = renderer.ctx.digests, renderer.page_ok
    written = digests.page_keys(names) if digests is not None and page_ok is not None else {}

    def urlset(lines: str) -> str:
        return ('<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{lines}</urlset>\n')

    for name, file, key in zip(names, files, keys, strict=True):
        if written.get(name) == key and page_ok(None, [name]):
            yield PageTask(name, "", page, {}, key, kept=True)
            continue
        text = urlset(_file_lines(rows, pieces, file))  # (heavy: the writer writes it before taking more)
        yield PageTask(name, "", page, {"text": text}, key, views=_HEAVY)
        del text
    if len(names) > 1:
        listed = "".join(f"<sitemap><loc>{html.escape(absolute_url(base, name))}</loc></sitemap>\n" for name in names)
        text = ('<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{listed}</sitemapindex>\n')
        yield PageTask("sitemap.xml", "", page, {"text": text}, digest(renderer.global_key, "sitemap.xml", text))
    yield PageTask("robots.txt", "", page, {"text": robots}, digest(renderer.global_key, "robots.txt", robots))


def plan_files(counts: list[int], albums: list[str | None], limit: int) -> list[list[tuple[int, int, int]]]:
    """Where the sitemap's files end, in pieces of albums' lines (counts: each piece's lines): each file
    as (piece, first line, one past the last line) slices, at most `limit` lines a file (at least one
    file, maybe empty).

    A file ends after an album whose name's hash is below its share of a file's target size (limit / 16
    lines: a longer album ends one more often), once the file holds limit / 80 lines; or before an album
    that would take it past the limit; an album longer than the limit is cut where it reaches it. Where
    an album ends a file depends on the album alone, so lines added or removed move the end of their own
    file at most, and the files after it keep their lines (but after an end the limit forced, until
    the next end an album chose)."""
    target, least = max(1, limit // 16), limit // 80
    files: list[list[tuple[int, int, int]]] = []
    file: list[tuple[int, int, int]] = []
    held = 0
    for i, (count, album) in enumerate(zip(counts, albums, strict=True)):
        start = 0
        while count - start > limit - held:  # does not fit: a new file, or the rest of the limit's worth
            if held:
                files.append(file)
                file, held = [], 0
                continue
            file.append((i, start, start + limit))
            files.append(file)
            file, start = [], start + limit
        if count > start:
            file.append((i, start, count))
            held += count - start
        if held >= max(1, least) and _ends_file(album, count, target):
            files.append(file)
            file, held = [], 0
    if file or not files:
        files.append(file)
    return files


def _ends_file(album: str | None, count: int, target: int) -> bool:
    """Whether the album's lines end a file (see plan_files): its name's hash against its share of the target."""
    return xxhash.xxh3_64_intdigest((album if album is not None else "\0").encode("utf-8", "surrogatepass")) < (
        min(1.0, count / target) * 2**64)


def file_names(files: list[list[tuple[int, int, int]]], pieces: list[Piece]) -> list[str]:
    """Each file's name: after the album and line it starts with (a file named as another gets '-2')."""
    starts = ((pieces[file[0][0]][0], file[0][1]) if file else (None, 0) for file in files)
    return [f"sitemap-{name}.xml" for name in short_names(f"{album}\0{start}" for album, start in starts)]


def _file_lines(rows: SitemapRows, pieces: list[Piece], file: list[tuple[int, int, int]]) -> str:
    """The lines of one file (see plan_files), read from its first piece to its last."""
    if not file:
        return ""
    wanted = {i: (start, end) for i, start, end in file}
    out: list[str] = []
    index, seen = file[0][0], 0  # (the piece the lines read belong to, and its lines read so far)
    for line in rows.lines(pieces[file[0][0]][0], pieces[file[-1][0]][0]):
        for one in (line,) if line.count("\n") == 1 else [part + "\n" for part in line.split("\n")[:-1]]:
            while seen >= pieces[index][1]:  # (the next piece: an album with no line has no piece)
                index, seen = index + 1, 0
            start, end = wanted[index]
            if start <= seen < end:
                out.append(one)
            seen += 1
    return "".join(out)
