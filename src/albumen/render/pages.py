"""Gallery + plan -> views -> rendered pages (bytes and their output paths). No writing here."""

from __future__ import annotations

import hashlib
import html
import os
import posixpath
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime as format_datetime_rfc822
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from .. import __version__
from ..config import Config
from ..errors import BuildError
from ..model import Gallery, Media
from ..process.names import STATIC_DIR
from ..process.plan import SitePlan, download_name
from ..process.specs import VIDEO_MIME, OutputSpec, Placeholder
from ..scan.arrange import is_published, newest_first, published_albums, stream_order
from .colours import accent_style
from .env import absolute_url, make_environment, theme_dirs
from .hooks import document_view, extra_page_tasks, page_context, site_context, template_dirs
from .i18n import format_counts, format_date, format_iso, gettext_for
from .keys import Fingerprinter, digest
from .richtext import Picture, RichText, relative_path, resolve_description
from .sitemap import ListedSitemap, SitemapRows, album_lines, sitemap_line, sitemap_tasks
from .views import (
    AlbumView,
    ImageRef,
    Link,
    MediaView,
    PageView,
    Pagination,
    SiteView,
    SourceSet,
    camera_facts,
    format_date_range,
    format_datetime,
    plain_text,
    tile_id,
)

DEFAULT_PLACEHOLDER = Placeholder(colour="#888888", data_uri="")


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


def _image_ref(spec: OutputSpec) -> ImageRef:
    return ImageRef(spec.dest_uri, spec.width, spec.height, spec.format)


class ViewBuilder:
    """Builds views one album at a time, so memory stays flat however large the gallery."""

    def __init__(self, ctx: RenderContext) -> None:
        self.ctx = ctx
        self.config = ctx.config
        self.gettext, self.ngettext = gettext_for(ctx.config.language)
        self._crumbs: dict[str, list[Link]] = {}
        self._positions: dict[str, dict[str, int]] = {}  # a few big albums: media uri -> place
        self.warnings: dict[str, None] = {}  # images and links of descriptions left out (once each)

    def album_url(self, uri: str) -> str:
        folder = self.ctx.plan.album_dirs[uri]
        return f"{folder}/" if folder else ""

    def crumbs(self, uri: str) -> list[Link]:
        """Links to the ancestors of an album, home first: only those a visitor of it may see.

        Public ancestors and ancestors inside the album's own private zone; never an album with
        another private link, nor a folder that has no page.
        """
        if uri not in self._crumbs:
            albums = self.ctx.gallery.albums
            album = albums[uri]
            links: list[Link] = []
            parent = album.parent_uri
            while parent is not None:
                above = albums[parent]
                if is_published(above) and (above.zone is None or above.zone == album.zone):
                    links.insert(0, Link(above.title, self.album_url(parent)))
                parent = above.parent_uri
            self._crumbs[uri] = links
        return self._crumbs[uri]

    def album(self, uri: str, full: bool = True) -> AlbumView:
        """An album's view. full=False: a sub-album card (no media, no children)."""
        gallery = self.ctx.gallery
        album = gallery.albums[uri]
        lang = self.config.language
        url = self.album_url(album.src_uri)
        view = AlbumView(
            src_uri=album.src_uri,
            url=url,
            title=album.title,
            description=self.description(album.description_html, album.src_uri, url.rstrip("/"),
                                         album.sidecar.src_uri if album.sidecar else album.src_uri),
            date_start=album.date_start,
            date_end=album.date_end,
            date_range=format_date_range(album.date_start, album.date_end, lang),
            date_iso=format_iso(album.date_end),
            photo_count=album.photo_count,
            video_count=album.video_count,
            cover=None,
            breadcrumbs=self.crumbs(uri),
            page_size=self.config.pages.page_size,
            depth=album.depth,
        )
        if full:
            link = Link(album.title, view.url)
            self.ctx.placeholders.prefetch(album.media)
            media = [gallery.media[m] for m in album.media]
            views = [self.media_view(m, i + 1, len(media), link) for i, m in enumerate(media)]
            for prev, nxt in zip(views, views[1:], strict=False):
                prev.next, nxt.prev = nxt, prev
            view.media = views
            view.children = [self.album(c, full=False) for c in album.children]
            if album.documents:
                self.ctx.placeholders.prefetch(album.documents)
                labels = self.ctx.plugins.kind_labels()
                view.documents = [document_view(self, u, *labels[gallery.media[u].kind]) for u in album.documents]
            if album.cover:
                view.cover = next((v for v in views if v.src_uri == album.cover), None)
        if album.cover and view.cover is None:
            view.cover = self.standalone(album.cover)
        return view

    def standalone(self, uri: str) -> MediaView | None:
        """A photo's view outside its album page (a cover, later a stream item): no neighbours."""
        media = self.ctx.gallery.media.get(uri)
        if media is None:
            return None
        album = self.ctx.gallery.albums[media.album_uri]
        position = self._position(album, uri)
        return self.media_view(media, position, len(album.media), Link(album.title, self.album_url(album.src_uri)))

    def forget_positions(self) -> None:
        """Albums changed (files failed and left them): places are looked up again."""
        self._positions.clear()

    def _position(self, album, uri: str) -> int:
        """1-based place of a media in its album (1 if not listed there)."""
        if len(album.media) < 64:
            return album.media.index(uri) + 1 if uri in album.media else 1
        # a big album (all of a library in one folder): its stream items would each search the list
        places = self._positions.get(album.src_uri)
        if places is None or len(places) != len(album.media):  # (an album loses the files that failed)
            if len(self._positions) >= 8:
                self._positions.clear()
            places = self._positions[album.src_uri] = {u: i for i, u in enumerate(album.media, 1)}
        return places.get(uri, 1)

    def media_view(self, media: Media, index: int, count: int, album: Link) -> MediaView:
        plan = self.ctx.plan.media[media.src_uri]
        lang = self.config.language
        gettext = self.gettext
        placeholder = self.ctx.placeholders.get(media.src_uri, DEFAULT_PLACEHOLDER)
        thumbs, original, by_format, cards = [], None, {}, {}
        for uri, look in plan.named():
            ref = ImageRef(uri, look.width, look.height, look.format)
            if look.role == "display":
                by_format.setdefault(look.format, []).append(ref)
            elif look.role == "thumb":
                thumbs.append(ref)
            elif look.role == "cover":
                cards.setdefault(look.format, []).append(ref)
            else:
                original = ref
        sources = [SourceSet(fmt, tuple(refs)) for fmt, refs in by_format.items()]
        date_text = format_date(media.date, lang)
        alt = media.alt or media.title or plain_text(media.description_html, 200)
        if not alt:
            kind = "Photo %(n)s of %(total)s, %(album)s" if media.kind == "image" else "Video %(n)s of %(total)s"
            if date_text and media.kind == "image":
                alt = gettext("Photo %(n)s of %(total)s, %(album)s, %(date)s") % {
                    "n": index, "total": count, "album": album.title, "date": date_text,
                }
            else:
                alt = gettext(kind) % {"n": index, "total": count, "album": album.title}
        gps = None
        if media.embedded.gps and "gps" in self.config.pages.exif:
            gps = (media.embedded.gps.latitude, media.embedded.gps.longitude)
        page_number = (index - 1) // self.config.pages.page_size + 1
        album_page = album.url if page_number == 1 else f"{album.url}page/{page_number}/"
        slug = posixpath.basename(plan.dest_dir)
        facts = camera_facts(media.embedded.camera, self.config.pages.exif, gettext)
        view = MediaView(
            src_uri=media.src_uri,
            kind=media.kind,
            url=f"{plan.dest_dir}/",
            slug=slug,
            name=media.name,
            title=media.title,
            alt=alt,
            description=self.description(media.description_html, media.album_uri, plan.dest_dir,
                                         media.sidecar.src_uri if media.sidecar else media.src_uri),
            date=media.date,
            date_iso=format_iso(media.date) if media.date is None or _time_known(media) else media.date.date().isoformat(),
            date_text=date_text,
            datetime_text=format_datetime(media.date, lang) if _time_known(media) else date_text,
            tags=media.tags,
            author=media.author,
            location=media.location,
            camera=[(label, value) for label, value, _ in facts],
            camera_text=" · ".join(alone for _, _, alone in facts),
            gps=gps,
            thumb=thumbs[0],
            sources=sources,
            placeholder_colour=placeholder.colour,
            placeholder_uri=placeholder.data_uri,
            index=index,
            count=count,
            album=album,
            album_page_url=f"{album_page}#{tile_id(slug)}",
            original=original,
            original_name=download_name(media.name, original.src) if original else None,
            video=self._video(media, plan) if media.kind == "video" else None,
            thumbs=tuple(thumbs),
            cards=tuple(SourceSet(fmt, (*refs, *(ref for ref in by_format.get(fmt, ()) if ref.width > refs[-1].width)))
                        for fmt, refs in cards.items()),
        )
        return view

    def description(self, markup: str, album_uri: str, home: str, told_by: str) -> RichText:
        """A description as its pages show it (see render.richtext): its images and relative links
        resolved from the album's folder. told_by: the file it comes from, named in warnings."""
        gallery, plan = self.ctx.gallery, self.ctx.plan
        albums = gallery.albums
        zone = albums[album_uri].zone

        def picture(ref: str) -> Picture | None:
            """A published photo of this very album, shown by one of its published images."""
            uri = relative_path(album_uri, ref)
            media = gallery.media.get(uri) if uri else None
            if media is None or media.kind != "image" or media.album_uri != album_uri or uri not in plan.media:
                return None
            shown = [(src, look) for src, look in plan.media[uri].named() if look.role == "display"]
            fallback = [(src, look) for src, look in shown if look.format == shown[0][1].format]  # JPEG or GIF
            src, look = next((item for item in fallback if item[1].width >= 1024), fallback[-1])
            return Picture(src, look.width, look.height, media.alt or media.title or "")

        def page(ref: str) -> str | None:
            """The page of a photo or an album that a visitor of this page may see."""
            uri = relative_path(album_uri, ref)
            if uri is None:
                return None
            media = gallery.media.get(uri)
            if media is not None and uri in plan.media and albums[media.album_uri].zone in (None, zone):
                return f"{plan.media[uri].dest_dir}/"
            album = albums.get(uri)
            if album is not None and album.zone in (None, zone) and is_published(album) and uri in plan.album_dirs:
                return self.album_url(uri)
            return None

        def dropped(kind: str, ref: str) -> None:
            shown = ref if len(ref) <= 80 else ref[:79] + "…"
            if kind == "image":
                why = "is not a published photo of this album (only the album's own photos are shown); left out"
            else:
                why = "leads to no photo or album of the gallery that this page may link to; shown as text"
            self.warnings[f"{told_by}: {kind} {shown!r} {why}"] = None

        return resolve_description(markup, home, self.config.pages.links, picture, page, dropped)

    def _video(self, media: Media, plan) -> dict:
        duration = media.info.duration
        poster = plan.images[0]  # a video has one display image: its poster
        return {
            "sources": [{"src": s.dest_uri, "mime": VIDEO_MIME[s.format]} for s in plan.videos],
            "poster": _image_ref(poster),
            "width": poster.width,
            "height": poster.height,
            "duration": duration,
            "duration_text": _duration_text(duration),
            "duration_iso": f"PT{duration:.0f}S" if duration else "",
            "tracks": [
                {"src": spec.dest_uri, "srclang": lang, "label": _language_name(lang)} for spec, lang in plan.tracks
            ],
        }


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


@dataclass(slots=True)
class FeedEntry:
    title: str
    id: str
    url: str
    date: str  # when it was taken (RFC 3339), '' when nothing says: Atom's <published>
    date_rfc822: str  # the same for RSS's <pubDate>, or ''
    author: str | None
    content: str  # HTML, escaped by the XML template
    updated: str = ""  # Atom's <updated>: when taken, else the file's time (when it was last changed)


@dataclass(slots=True)
class FeedView:
    title: str
    subtitle: str
    id: str
    self_url: str
    html_url: str
    updated: str
    updated_rfc822: str
    entries: list[FeedEntry]


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
        key = self.inputs.key(uri) if records is not None else None
        if uri in self.settled:  # its pages are claimed, counted and in the sitemap already (see PageWriter.settle)
            records.kept(uri)
            return
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
            yield from self._feed_tasks(order)
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

    def _feed(self, title: str, uris: list[str], html_url: str, self_path: str) -> FeedView:
        config = self.ctx.config
        base = config.url
        entries = []
        newest = datetime(1970, 1, 1, tzinfo=UTC)
        for uri in uris:
            view = self.builder.standalone(uri)
            if view is None:
                continue
            # a photo that says nothing of when it was taken has no published date; Atom needs an updated
            # one, and the file's time is honest there: the last time the file changed
            media = self.ctx.gallery.media[uri]
            updated = media.date or datetime.fromtimestamp(media.mtime_ns / 1e9, UTC)
            newest = max(newest, updated)
            url = absolute_url(base, view.url, config.pages.links)
            thumb = view.thumb
            description = view.description.render(lambda target: absolute_url(base, target, config.pages.links))
            content = (
                f'<p><a href="{html.escape(url)}"><img src="{html.escape(absolute_url(base, thumb.src))}" '
                f'width="{thumb.width}" height="{thumb.height}" alt="{html.escape(view.alt)}"></a></p>'
                f"{description}"
            )
            entries.append(FeedEntry(
                title=view.title or view.alt, id=url, url=url, date=format_iso(media.date),
                date_rfc822=format_datetime_rfc822(media.date) if media.date else "", author=view.author,
                content=content, updated=format_iso(updated),
            ))
        return FeedView(
            title=title, subtitle=config.description, id=absolute_url(base, self_path),
            self_url=absolute_url(base, self_path), html_url=absolute_url(base, html_url, config.pages.links),
            updated=format_iso(newest), updated_rfc822=format_datetime_rfc822(newest), entries=entries,
        )

    def _feed_tasks(self, order: list[str]) -> Iterator[PageTask]:
        config = self.ctx.config
        gallery = self.ctx.gallery
        latest = order[: config.feeds.items]
        html_url = f"{config.stream.path}/" if config.stream.enabled else ""
        for template in ("feed.xml", "rss.xml"):
            feed = self._feed(self.site.title, latest, html_url, template)
            key = digest(self.global_key, template, repr(feed))
            yield PageTask(template, template, self._page(dir="", title=feed.title, kind="feed"), {"feed": feed}, key)
        if config.feeds.per_album:
            for album in gallery.walk_albums(hidden=False):
                if not album.src_uri or not is_published(album):
                    continue
                uris = [m.src_uri for m in sorted(gallery.flatten(album.src_uri), key=newest_first, reverse=True)]
                url = self.builder.album_url(album.src_uri)
                feed = self._feed(f"{album.title} · {self.site.title}", uris[: config.feeds.items], url, f"{url}feed.xml")
                key = digest(self.global_key, "album-feed", repr(feed))
                page = self._page(dir=url.rstrip("/"), title=feed.title, kind="feed")
                yield PageTask(f"{url}feed.xml", "feed.xml", page, {"feed": feed}, key)

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


def _duration_text(seconds: float | None) -> str:
    if not seconds:
        return ""
    total = round(seconds)
    h, rest = divmod(total, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


_LANGUAGES = {"en": "English", "fr": "Français", "de": "Deutsch", "es": "Español", "it": "Italiano", "nl": "Nederlands",
              "pt": "Português", "ja": "日本語", "zh": "中文"}


def _language_name(code: str) -> str:
    return _LANGUAGES.get(code.split("-")[0].lower(), code) if code else "Captions"


def _time_known(media) -> bool:
    """Whether the media's date has a time of day: a day alone (a sidecar's `date: 2024-03-01`, an IPTC
    or XMP date without a time, a date in the file name) reads as midnight, which is not when it was
    taken. The camera's own clock (EXIF, a video's creation time) is always shown."""
    date = media.date
    if date is None:
        return False
    return media.date_source in ("exif", "video", "mtime") or (date.hour, date.minute, date.second, date.microsecond) != (0, 0, 0, 0)


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
