"""The renderer's plugin hooks (see plugins.hookspecs): template folders, template context, extra
pages, and what plugins see of the gallery (PluginGallery), all as views that respect privacy.

The build imports this module at start: the views and the page code are imported when a hook needs
them (a gallery without plugins never does)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..scan.arrange import is_published, stream_order

if TYPE_CHECKING:
    from .builder import ViewBuilder
    from .keys import Fingerprinter
    from .pages import PageTask, SiteRenderer
    from .views import AlbumView, DocumentView, MediaView

PLUGIN_KIND = "plugin"  # PageView.kind of a plugin's page


class PluginGallery:
    """The gallery as plugins see it in the renderer and the writer: views built one album at a
    time (never all at once). albums() and media() give public things only; private_albums() gives
    the albums behind a private link, each with its own folder (album.url, below 'p/'), for pages and
    files that go there."""

    def __init__(self, renderer: SiteRenderer) -> None:
        self._renderer = renderer
        self._builder: ViewBuilder = renderer.builder
        self.site = renderer.site  # the SiteView templates see
        self.config = renderer.ctx.config  # the core settings (its 'private' lists private albums' paths)

    def albums(self) -> Iterator[AlbumView]:
        """Every public album that has pages, with its media views, in display order (home first)."""
        gallery = self._renderer.ctx.gallery
        for album in gallery.walk_albums(hidden=False):
            if is_published(album) and album.zone is None:
                yield self._builder.album(album.src_uri)

    def private_albums(self) -> Iterator[AlbumView]:
        """Every album behind a private link that has pages: what goes with one goes below its url.
        Never a password album's: nothing of it may be written in the clear (see albumen.seal)."""
        gallery = self._renderer.ctx.gallery
        sealed = self._renderer.ctx.plan.units
        for album in gallery.walk_albums():
            if is_published(album) and album.zone is not None and album.zone not in sealed:
                yield self._builder.album(album.src_uri)

    def media(self) -> Iterator[MediaView]:
        """Every public photo and video, newest first (the undated last), as the stream orders them."""
        for uri in stream_order(self._renderer.ctx.gallery):
            view = self._builder.standalone(uri)
            if view is not None:
                yield view

    def album_meta(self, src_uri: str) -> Mapping[str, Any]:
        """The header of an album's index.md (keys in lower case; empty without one), read-only: for
        per-album choices of a plugin ('zip: false'). A page showing the album is rendered again
        when its sidecar changes."""
        album = self._renderer.ctx.gallery.albums.get(src_uri)
        return MappingProxyType(album.sidecar.meta if album is not None and album.sidecar else {})

    def abs_path(self, dest_uri: str) -> str:
        """Where a file of the site is in the output (to read it). Raises ValueError for a path that
        is not inside the site."""
        import os

        output = self._renderer.ctx.output or ""
        path = os.path.normpath(os.path.join(output, *dest_uri.split("/")))
        if not output or not path.startswith(output.rstrip(os.sep) + os.sep):
            raise ValueError(f"{dest_uri!r} is not a path inside the site")
        return path

    def file_size(self, dest_uri: str) -> int | None:
        """The size in bytes of a file of the site as it is in the output now (an image the workers made,
        say), or None when it is not there."""
        import os

        try:
            return os.stat(self.abs_path(dest_uri)).st_size
        except (OSError, ValueError):
            return None

    def absolute_url(self, path: str) -> str:
        """A site-relative path as an absolute URL ('' when the config has no url)."""
        from .env import absolute_url  # (Jinja: imported once pages are rendered, not with the build)

        config = self.config
        return absolute_url(config.url, path, config.pages.links) if config.url else ""


def template_dirs(plugins: Any) -> list[Path]:
    """The plugins' template folders, searched after the theme's."""
    dirs: list[Path] = []
    if not plugins:
        return dirs
    for info, result in plugins.each("albumen_template_dirs", "its templates are not used"):
        for item in result if isinstance(result, (list, tuple)) else ([result] if result else []):
            folder = Path(item)
            if folder.is_dir():
                dirs.append(folder)
            else:
                plugins.problems.append(f"plugin {info.name}: template folder {folder} not found")
    return dirs


def site_context(plugins: Any, site: Any) -> dict[str, dict]:
    """plugin name -> the variables it gives every page (templates: plugins.NAME.KEY)."""
    out: dict[str, dict] = {name: {} for name in (plugins.infos if plugins else ())}
    if not plugins:
        return out
    for info, result in plugins.each("albumen_site_context", "no site context", site=site):
        if isinstance(result, Mapping):
            out[info.name] = dict(result)
        elif result is not None:
            plugins.problems.append(f"plugin {info.name}: albumen_site_context returned {result!r}, not a dict")
    return out


def page_context(plugins: Any, globals_: dict[str, dict], page: Any, context: Mapping, site: Any,
                 gallery: Any = None) -> dict[str, dict]:
    """The `plugins` variable of one page: each plugin's site context with its page context over it.
    A plugin that raises fails the page (PluginFailed goes up to the page writer)."""
    if not plugins or not plugins.has("albumen_page_context"):
        return globals_
    out = {name: dict(values) for name, values in globals_.items()}
    shown = MappingProxyType(context)  # read-only: the page's own context is not the plugin's to change
    for info, result in plugins.call("albumen_page_context", page=page, context=shown, site=site, gallery=gallery):
        if isinstance(result, Mapping):
            out[info.name].update(result)
    return out


def document_view(builder: ViewBuilder, uri: str, label: str, mime: str) -> DocumentView:
    """A plugin media kind's item, as its album's tile shows it."""
    from ..process.plan import download_name
    from .builder import DEFAULT_PLACEHOLDER
    from .i18n import format_date, format_iso
    from .views import DocumentView, ImageRef

    ctx = builder.ctx
    media = ctx.gallery.media[uri]
    plan = ctx.plan.media[uri]
    thumb = href = None
    for src, look in plan.named():
        ref = ImageRef(src, look.width, look.height, look.format)
        if look.role == "thumb":
            thumb = thumb or ref
        else:
            href = src
    placeholder = ctx.placeholders.get(uri, DEFAULT_PLACEHOLDER)
    return DocumentView(
        src_uri=uri, name=media.name, title=media.title, label=label, mime=mime,
        alt=media.alt or media.title or media.name, thumb=thumb, href=href,
        download_name=download_name(media.name, href), size=media.size,
        date_text=format_date(media.date, ctx.config.language), date_iso=format_iso(media.date),
        placeholder_colour=placeholder.colour, placeholder_uri=placeholder.data_uri,
    )


def extra_page_tasks(renderer: SiteRenderer) -> Iterator[PageTask]:
    """The plugins' own pages, as tasks like every page's (claimed, keyed, rendered when changed)."""
    from ..plugins.manager import PluginFailed
    from ..plugins.types import ExtraPage
    from .pages import PageTask

    plugins = renderer.ctx.plugins
    if not plugins or not plugins.has("albumen_extra_pages"):
        return
    gallery = PluginGallery(renderer)
    for info, result in plugins.each("albumen_extra_pages", "its pages are not written", gallery=gallery):
        try:
            for page in result or ():
                if not isinstance(page, ExtraPage):
                    raise PluginFailed(info.name, f"albumen_extra_pages gave {page!r}, not an ExtraPage")
                yield _task(renderer, info, page, PageTask)
        except PluginFailed as failure:
            plugins.warn(failure, "its pages are not written")
        except Exception as exc:  # noqa: BLE001 - raised while the plugin's iterable was read
            plugins.warn(PluginFailed(info.name, f"{type(exc).__name__}: {exc}"), "its pages are not written")


def _task(renderer: SiteRenderer, info: Any, page: Any, page_task: type) -> PageTask:
    from ..plugins.manager import PluginFailed
    from .keys import Fingerprinter, digest

    dest = page.dest_uri
    parts = dest.split("/")
    if (not dest or dest.startswith("/") or "\\" in dest or any(p in ("", ".", "..") for p in parts)
            or dest.endswith("/")):
        raise PluginFailed(info.name, f"{dest!r} is not a file path relative to the site")
    if (page.content is None) == (page.template is None):
        raise PluginFailed(info.name, f"the page {dest} needs either content or a template")
    private = parts[0] == "p"
    view = renderer._page(
        dir=posixpath.dirname(dest), title=page.title or renderer.site.title, kind=PLUGIN_KIND,
        canonical=renderer._canonical(dest) if not private and dest.endswith("index.html") else None,
        robots="noindex,nofollow" if private else None, private=private,
    )
    if page.content is not None:
        shown = page.content if isinstance(page.content, str) else page.content.hex()
        context: dict = {"text": page.content}
    else:
        context = dict(page.context)
        shown = page.key if page.key is not None else _value_key(context, Fingerprinter())
    key = digest(renderer.global_key, PLUGIN_KIND, info.recipe, dest, page.template or "", page.key or shown)
    if page.sitemap and not private and renderer.sitemap_on and dest.endswith(".html"):
        url = dest[: -len("index.html")] if dest.endswith("index.html") else dest
        renderer.sitemap_rows.add(None, [(url, renderer.sitemap_line(url, ""))])
    return page_task(dest, page.template or "", view, context, key, origin=f"plugin {info.name}")


def _value_key(value: Any, fp: Fingerprinter) -> str:
    """A template context as text for a page's key: views by their fingerprints (a view's repr would
    hold its neighbours' whole chain), other values by their repr."""
    from .keys import digest
    from .views import AlbumView, MediaView

    if isinstance(value, MediaView):
        return fp.media(value)
    if isinstance(value, AlbumView):
        return digest(fp.album(value), *(fp.media(m) for m in value.media))
    if isinstance(value, Mapping):
        return digest(*(f"{k!r}={_value_key(v, fp)}" for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))))
    if isinstance(value, (list, tuple)):
        return digest(*(_value_key(v, fp) for v in value))
    return repr(value)
