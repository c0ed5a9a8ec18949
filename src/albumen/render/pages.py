"""Gallery + plan -> views -> rendered pages (bytes and their output paths). No writing here."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from .. import __version__
from ..config import Config
from ..errors import BuildError
from ..model import Gallery
from ..process.names import STATIC_DIR
from ..process.plan import SitePlan
from ..process.specs import Placeholder
from ..scan.arrange import published_albums, stream_order
from .builder import ViewBuilder
from .colours import accent_style
from .env import absolute_url, make_environment, theme_dirs
from .feeds import feed_tasks
from .hooks import extra_page_tasks, page_context, site_context, template_dirs
from .i18n import format_counts
from .keys import Fingerprinter, digest
from .sitemap import ListedSitemap, SitemapRows, album_lines, sitemap_line, sitemap_tasks
from .views import Link, MediaView, PageView, Pagination, SiteView, plain_text


@dataclass(frozen=True)
class Page:
    dest_uri: str  # e.g. 'trip/index.html'
    content: bytes
    template: str = ""


class Placeholders(Protocol):
    """Each media's placeholder, by media src_uri."""

    def get(self, uri: str, default: Placeholder) -> Placeholder: ...

    def prefetch(self, uris: Iterable[str]) -> None:
        """The placeholders about to be asked for, for one page: to look them up at once."""


class ViewDigests(Protocol):
    """Where the digests of media views built for album pages are kept for the stream to reuse."""

    def put(self, rows: list[tuple[str, str]]) -> None:
        """(media src_uri, digest) pairs."""

    def get(self, uris: Iterable[str]) -> dict[str, str]: ...

    def page_keys(self, dest_uris: Iterable[str]) -> dict[str, str]:
        """The keys these pages were last written with (those that have one: see stream_tasks)."""


@dataclass
class RenderContext:
    """Everything page rendering needs, gathered once per build."""

    gallery: Gallery
    plan: SitePlan
    placeholders: Placeholders
    config: Config
    theme: Path | None
    # with a store, a stream page whose items' views were all fingerprinted with their albums has
    # its key worked out without building those views again (only a page to render builds them)
    digests: ViewDigests | None = None
    compiled: Path | None = None  # a folder to keep compiled templates in between builds
    plugins: Any = None  # the build's plugins (plugins.manager.Plugins): their renderer hooks (render.hooks)
    output: str | None = None  # the output folder (plugins ask the size of a file made: PluginGallery.file_size)
    # each listed folder's digest (lastbuild.fingerprint) and the albums' records in the cache: an album
    # whose input fingerprint is unchanged is listed from its record, without its views (render.albumkeys)
    folders: dict[str, str] | None = None
    albums: Any = None  # render.albumkeys.AlbumRecords
    sitemap: SitemapRows | None = None  # where the sitemap's rows wait (by default, in a list)


def static_files(theme: Path | None) -> dict[str, Path]:
    """Static file name (POSIX, relative to static/) -> source file; the user's theme wins."""
    files: dict[str, Path] = {}
    for folder in reversed(theme_dirs(theme)):
        root = folder / "static"
        if not root.is_dir():
            continue
        for dirpath, _, names in os.walk(root):
            for name in names:
                if name.startswith("."):
                    continue
                path = Path(dirpath) / name
                files[path.relative_to(root).as_posix()] = path
    return files


def _static_urls(files: dict[str, Path]) -> dict[str, str]:
    out = {}
    for name, path in files.items():
        version = hashlib.sha256(path.read_bytes()).hexdigest()[:10]
        out[name] = f"{STATIC_DIR}/{name}?v={version}"
    return out


@dataclass
class PageTask:
    """A page to render: where it goes, with what, and the fingerprint of what it shows."""

    dest_uri: str
    template: str
    page: PageView
    context: dict
    key: str
    album_uri: str | None = None  # the album whose page or photo this is
    lastmod: str = ""  # for the sitemap
    views: int = 0  # media views this page holds that no other page shares (a stream page's): memory to render it
    late: Callable[[], dict] | None = None  # more of the context, made only if the page is rendered
    origin: str = ""  # who lists it, when not the theme's templates ('plugin NAME'): named in a conflict
    kept: bool = False  # listed from its album's record (render.albumkeys): as written, never rendered


class SiteRenderer:
    """Lists every page with its key, album by album, and renders pages on demand."""

    def __init__(self, ctx: RenderContext) -> None:
        self.ctx = ctx
        config = ctx.config
        dirs = theme_dirs(ctx.theme)
        self.env = make_environment(dirs, config.language, config.pages.links, config.url, ctx.compiled)
        more = template_dirs(ctx.plugins)
        if more:  # plugins' templates, searched after the theme's: a theme can restyle a plugin's page
            from jinja2 import ChoiceLoader, FileSystemLoader

            self.env.loader = ChoiceLoader([self.env.loader, *(FileSystemLoader(str(d)) for d in more)])
        self.static = static_files(ctx.theme)
        self.builder = ViewBuilder(ctx)
        gettext = self.builder.gettext
        self.stream_title = config.stream.title or gettext("Latest photos")
        nav = [Link(gettext("Home"), "")]
        if config.stream.enabled:
            nav.append(Link(self.stream_title, f"{config.stream.path}/"))
        self.site = SiteView(
            title=ctx.gallery.root.title,
            description=config.description,
            author=config.author,
            language=config.language,
            url=config.url,
            grid=config.thumbnails.style,
            thumb_height=config.thumbnails.height,
            static=_static_urls(self.static),
            generator=f"Albumen {__version__}",
            nav=nav,
            scheme=config.theme.scheme,
            accent_style=accent_style(config.theme.accent),
        )
        self.feeds_on = bool(config.feeds.enabled and config.url)
        self.sitemap_on = bool(config.feeds.sitemap and config.url)
        self.sitemap_line = partial(sitemap_line, config.url, config.pages.links)  # (url, lastmod) -> its <url> line
        self.plugin_globals = site_context(ctx.plugins, self.site)  # templates: plugins.NAME.KEY
        self.env.globals["plugins"] = self.plugin_globals
        self._plugin_gallery: Any = None
        self.global_key = digest(__version__, _theme_fingerprint(dirs + more), repr(config), repr(self.site),
                                 *([repr(self.plugin_globals)] if ctx.plugins else []))
        # the <url> line of every public page listed
        self.sitemap_rows: SitemapRows = ctx.sitemap if ctx.sitemap is not None else ListedSitemap()
        self._digest_rows: list[tuple[str, str]] = []  # for ctx.digests, sent in batches
        from .albumkeys import AlbumInputs

        self.inputs = AlbumInputs(ctx, self.global_key, self.builder.crumbs, self.builder.album_url)
        self.settled: set[str] = set()  # albums listed from their records without a task (see settled_albums)
        # (album, its pages' paths) -> whether they are all in the output as written (set by the page writer)
        self.page_ok: Callable[[str | None, Iterable[str]], bool] | None = None
        self.notes: list[str] = []
        if not config.url and (config.feeds.enabled or config.feeds.sitemap):
            self.notes.append(
                "feeds and sitemap need the site's address: set url = \"https://…/\" in albumen.toml; not written"
            )

    @property
    def warnings(self) -> list[str]:
        """Problems worth a warning found while making views (a description's image left out)."""
        return list(self.builder.warnings)

    def compile_templates(self) -> None:
        """Compile every template of the theme now (Jinja keeps them): a few hundredths of a second
        spent while the workers make images, instead of at the first page of each kind."""
        for name in self.env.list_templates(filter_func=lambda n: n.endswith((".html", ".xml"))):
            try:
                self.env.get_template(name)
            except Exception:  # noqa: BLE001 - a broken template fails when a page uses it, with its line
                continue

    def _canonical(self, url: str) -> str | None:
        config = self.ctx.config
        return absolute_url(config.url, url, config.pages.links) or None

    def _page(self, **fields) -> PageView:
        page = PageView(**fields)
        if self.feeds_on:
            page.feeds = [("application/atom+xml", self.site.title, "feed.xml"),
                          ("application/rss+xml", self.site.title, "rss.xml")]
        return page

    def _remember(self, uri: str, own: str) -> None:
        self._digest_rows.append((uri, own))
        if len(self._digest_rows) >= 2000:
            self._send_digests()

    def _send_digests(self) -> None:
        if self._digest_rows and self.ctx.digests is not None:
            self.ctx.digests.put(self._digest_rows)
        self._digest_rows = []

    def album_pages(self, uri: str) -> Iterator[PageTask]:
        """The pages of one published album (its pages and its media's), listed as the site's: from the
        album's record when its input fingerprint is the recorded one (see render.albumkeys)."""
        units = self.ctx.plan.units
        if units and self.ctx.gallery.albums[uri].zone in units:  # a password album's (see albumen.seal)
            from ..seal.pages import sealed_tasks

            yield from sealed_tasks(self, uri)
            return
        records = self.ctx.albums
        if uri in self.settled:  # its pages are claimed, counted and in the sitemap already (see PageWriter.settle)
            records.kept(uri)
            return
        key = self.inputs.key(uri) if records is not None else None  # (a settled album's was made to settle it)
        if key is not None:
            pages, complete = records.recorded(uri, key) or (None, False)
            if pages is not None and self.page_ok is not None and self.page_ok(uri, [p[0] for p in pages]):
                records.kept(uri)
                lines = [(url, self.sitemap_line(url, lastmod)) for _, _, url, lastmod in pages
                         if url is not None and self.sitemap_on]
                if not complete:  # a record from before records were whole (see cache.get_album): recorded again
                    records.add(uri, key, pages, self._album_outputs(uri), album_lines(lines))
                if lines:
                    self.sitemap_rows.add(uri, lines)
                for dest_uri, template, _, lastmod in pages:
                    yield PageTask(dest_uri, template, None, {}, "", uri, lastmod, kept=True)  # type: ignore[arg-type]
                return
        listed, lines = [], []
        for task in self._album_tasks(uri):
            url = None if task.page.private else (task.page.dir + "/" if task.page.dir else "")
            if self.sitemap_on and url is not None:
                lines.append((url, self.sitemap_line(url, task.lastmod)))
                self.sitemap_rows.add(uri, lines[-1:])
            listed.append((task.dest_uri, task.template, url, task.lastmod))
            yield task
        if key is not None:
            records.add(uri, key, listed, self._album_outputs(uri), album_lines(lines))

    def _album_outputs(self, uri: str) -> list[str]:
        """The outputs of an album's media (see settled_albums)."""
        album, plans = self.ctx.gallery.albums[uri], self.ctx.plan.media
        return [out for m in (*album.media, *album.documents) if m in plans for out in plans[m].output_uris()]

    def settled_albums(self) -> set[str]:
        """The published albums whose input fingerprint is the one recorded with their pages at the
        last build (see render.albumkeys): their media's derivatives are named as the last build named
        them, and were made before those pages were written and recorded."""
        records, units = self.ctx.albums, self.ctx.plan.units
        if records is None:
            return set()
        recorded = self.ctx.albums.cache.album_keys()
        albums = self.ctx.gallery.albums
        return {
            uri for uri in published_albums(self.ctx.gallery)
            if uri in recorded and not (units and albums[uri].zone in units) and self.inputs.key(uri) == recorded[uri]
        }

    def forget_listed(self) -> None:
        """The gallery changed after some albums' pages were listed (files failed): list them all again."""
        self.sitemap_rows.clear()
        self.settled = set()
        self.builder.forget_positions()
        from .albumkeys import AlbumInputs

        self.inputs = AlbumInputs(self.ctx, self.global_key, self.builder.crumbs, self.builder.album_url)
        if self.ctx.albums is not None:
            self.ctx.albums.forget()

    def tasks(self, listed: Container[str] = ()) -> Iterator[PageTask]:
        """Every page of the site, but those of the albums in `listed` (see album_pages).

        Views live only while their album's pages are listed.
        """
        # The newest-first order, sorted before any page is listed: sorting every media of a large
        # gallery takes memory for a moment, best spent while little else is held.
        order = stream_order(self.ctx.gallery) if self.ctx.config.stream.enabled or self.feeds_on else []
        for uri in published_albums(self.ctx.gallery):
            if uri not in listed:
                yield from self.album_pages(uri)
        self._send_digests()
        if self.ctx.config.stream.enabled:
            for task in self._stream_tasks(order):
                if self.sitemap_on:
                    url = task.page.dir + "/"
                    self.sitemap_rows.add(None, [(url, self.sitemap_line(url, ""))])
                yield task
        if self.feeds_on:
            yield from feed_tasks(self, order)
        yield from extra_page_tasks(self)  # the plugins' own pages
        page = self._page(dir="", title=self.builder.gettext("Page not found"), kind="404", robots="noindex")
        yield PageTask("404.html", "404.html", page, {}, digest(self.global_key, "404.html"))
        if self.sitemap_on:
            yield from sitemap_tasks(self, self.sitemap_rows)  # in a set order: the files are stable

    def _stream_tasks(self, order: list[str]) -> Iterator[PageTask]:
        from .stream import stream_tasks

        return stream_tasks(self, order)

    def _stream_views(self, uris: list[str]) -> list[MediaView]:
        self.ctx.placeholders.prefetch(uris)
        return [v for v in (self.builder.standalone(u) for u in uris) if v]

    def _album_tasks(self, uri: str) -> Iterator[PageTask]:
        config = self.ctx.config
        fp = Fingerprinter(self._remember if self.ctx.digests is not None else None)
        album = self.builder.album(uri)
        private = self.ctx.gallery.albums[uri].private
        hidden = {"private": True, "robots": "noindex,nofollow"} if private else {}
        count = album.page_count
        urls = [album.page_url(n) for n in range(1, count + 1)]
        header = fp.album(album)
        # without a description of its own, an album is summed up by what it holds (the home page by the site's line)
        summary = ", ".join(filter(None, [format_counts(album.photo_count, album.video_count, config.language),
                                          album.date_range]))
        if not album.url and config.description:
            summary = config.description
        shown_to_plugins: list[str] = []
        if self.ctx.plugins and self.ctx.plugins.has("albumen_page_context"):
            # a plugin's context may show anything of the album on any of its pages (a link to an archive of
            # all its media, with its size) and read its index.md (gallery.album_meta)
            sidecar = self.ctx.gallery.albums[uri].sidecar
            shown_to_plugins = [digest(*(fp.media(m) for m in album.media)), repr(sorted(sidecar.meta.items()) if sidecar else "")]
        for n in range(1, count + 1):
            url = urls[n - 1]
            cover = album.cover
            page = self._page(
                dir=url.rstrip("/"),
                title=album.title if n == 1 else f"{album.title} ({n}/{count})",
                kind="album",
                canonical=self._canonical(url),
                description=plain_text(str(album.description), 200) or summary,
                image=absolute_url(config.url, cover.share_image.src) if cover and config.url else None,
                pagination=Pagination(n, count, urls) if count > 1 else None,
                **hidden,
            )
            start = (n - 1) * album.page_size
            media = album.media[start : start + album.page_size]
            key = digest(self.global_key, "album.html", repr(page), header, *(fp.media(m) for m in media),
                         *([repr(album.documents)] if album.documents else []), *shown_to_plugins)
            context = {"album": album, "media": media}
            yield PageTask(f"{url}index.html", "album.html", page, context, key, album.src_uri, album.date_iso[:10])
        crumbs = repr(album.breadcrumbs) + album.title + album.url
        for media in album.media:
            page = self._page(
                dir=media.url.rstrip("/"),
                title=f"{media.title} – {album.title}" if media.title else media.alt,
                kind="media",
                canonical=self._canonical(media.url),
                description=plain_text(str(media.description), 200) or media.alt,
                image=absolute_url(config.url, media.share_image.src) if config.url else None,
                **hidden,
            )
            neighbours = [fp.media(m) if m else "" for m in (media.prev, media.next)]
            key = digest(self.global_key, "media.html", repr(page), fp.media(media), *neighbours, crumbs)
            context = {"media": media, "album": album}
            yield PageTask(f"{media.url}index.html", "media.html", page, context, key, album.src_uri, media.date_iso[:10])

    @property
    def plugin_gallery(self) -> Any:
        """The gallery as plugins' page contexts see it (render.hooks.PluginGallery), made when first asked."""
        if self._plugin_gallery is None and self.ctx.plugins:
            from .hooks import PluginGallery

            self._plugin_gallery = PluginGallery(self)
        return self._plugin_gallery

    def render(self, task: PageTask) -> Page:
        """The page's bytes. A plugin's page context that raises: PluginFailed (the page fails)."""
        if not task.template:  # generated text (sitemaps, robots.txt, a plugin's page given whole)
            text = task.context["text"]
            return Page(task.dest_uri, text if isinstance(text, bytes) else text.encode("utf-8"), "")
        context = task.context if task.late is None else {**task.context, **task.late()}
        shown = page_context(self.ctx.plugins, self.plugin_globals, task.page, context, self.site, self.plugin_gallery)
        try:
            variables = {**context, "site": self.site, "page": task.page, "plugins": shown}
            text = self.env.get_template(task.template).render(**variables)
        except Exception as exc:
            where = getattr(exc, "filename", None) or task.template
            line = getattr(exc, "lineno", None)
            location = f"{where}, line {line}" if line else where
            raise BuildError(f"template error in {location}: {exc}", hint="fix the theme template and build again") from exc
        return Page(task.dest_uri, text.encode("utf-8"), task.template)


def _theme_fingerprint(dirs: list[Path]) -> str:
    h = hashlib.sha256()
    for folder in dirs:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def folder_index_pages(folders: Iterable[tuple[str, str]], links: str = "directory") -> list[Page]:
    """An index.html for every output folder that has none, so a server never lists a folder.

    folders: (folder, the nearest folder above it with a real page); each page sends the visitor there.
    """
    from .env import relative_url

    pages = []
    for folder, target in folders:
        href = relative_url(folder, f"{target}/" if target else "", links)
        body = (
            '<!doctype html><html><head><meta charset="utf-8"><meta name="robots" content="noindex">'
            f'<meta http-equiv="refresh" content="0; url={href}"><title>…</title></head>'
            f'<body><a href="{href}">…</a></body></html>\n'
        )
        pages.append(Page(f"{folder}/index.html", body.encode("utf-8"), "folder-index"))
    return pages
