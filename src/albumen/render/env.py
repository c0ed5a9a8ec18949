"""One Jinja environment per build: theme lookup, escaping, translations and link writing."""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import jinja2
from jinja2 import (
    ChoiceLoader,
    Environment,
    FileSystemBytecodeCache,
    FileSystemLoader,
    StrictUndefined,
    pass_context,
    select_autoescape,
)
from jinja2.utils import htmlsafe_json_dumps
from markupsafe import Markup

from ..fsutil import make_private_dirs
from .i18n import format_date, format_date_range, format_datetime, template_gettext
from .themes import DEFAULT_THEME, theme_dirs  # noqa: F401 - re-exported
from .views import tile_id

_SAFE = re.compile(r"^[A-Za-z0-9/._~-]*$")


_EXTERNAL = ("http://", "https://", "data:", "mailto:")


def relative_url(from_dir: str, target: str, links: str = "directory") -> str:
    """A site-root-relative target ('trip/', 'trip/img/x.jpg', '' for home) as a link from `from_dir`.

    Pure string work (no os.path.relpath, which asks the file system for the current folder): it
    runs for every link of every page (~27 on a photo's page). The way up from a page's folder to
    each of its ancestors is worked out once per folder (_ancestors); a link is then the way up to the
    longest of them that starts the target, and the rest of the target. What that cannot say as
    _relative_url_parts would (a target that is not a clean path: '/x', 'a//b'; a file named like the
    next folder down: 'a/b' from 'a/b/c') goes to _relative_url_parts, the rule itself.
    """
    if target.startswith(_EXTERNAL):
        return target  # ('#x' is the home page's anchor x, like any target: site-root-relative)
    ancestors = _ANCESTORS.get(from_dir) or _ancestors(from_dir)
    path = target
    if "#" in target or "?" in target:
        path, hash_, fragment = target.partition("#")
        path, qmark, query = path.partition("?")
        tail = ("?" + quote(query, safe="=&") if qmark else "") + (hash_ + quote(fragment, safe="-_.") if hash_ else "")
    else:
        tail = ""
    if not ancestors or path.startswith("/") or "//" in path:
        return _relative_url_parts(from_dir, target, links)
    for prefix, up, below in ancestors:  # (the last, the site's root '', starts every target)
        if path.startswith(prefix):
            rest = path[len(prefix):]
            if rest == below:  # a file named as the folder below that ancestor: the rule shares the segment
                return _relative_url_parts(from_dir, target, links)
            rel = up + rest
            break
    if not path or path[-1] == "/":
        if not rel:
            rel = "./"
        if links == "index.html":
            rel = "index.html" if rel == "./" else rel + "index.html"
    out = rel if _SAFE.match(rel) else quote(rel, safe="/._-~")
    return out + tail if tail else out


# a page's folder -> its ancestors, itself first: (that folder and '/', or '' for the site's root; the
# way up to it from the page's folder, '../' per level; the name of the next folder down toward the
# page, or None for the page's own). () for a folder that is not a clean path ('/x', 'a//b', 'a/').
_ANCESTORS: dict[str, tuple[tuple[str, str, str | None], ...]] = {}


def _ancestors(from_dir: str) -> tuple[tuple[str, str, str | None], ...]:
    names = from_dir.split("/") if from_dir else []
    if "" in names:
        found: tuple[tuple[str, str, str | None], ...] = ()
    else:
        found = tuple(
            ("/".join(names[:k]) + "/" if k else "", "../" * (len(names) - k), names[k] if k < len(names) else None)
            for k in range(len(names), -1, -1)
        )
    if len(_ANCESTORS) >= 4096:  # pages are rendered folder after folder: the current few are what counts
        _ANCESTORS.clear()
    _ANCESTORS[from_dir] = found
    return found


def _relative_url_parts(from_dir: str, target: str, links: str = "directory") -> str:
    """relative_url for any target, segment by segment: the rule relative_url's faster way follows
    (tests/test_render_env.py holds them to the same answers)."""
    if target.startswith(_EXTERNAL):
        return target
    target, hash_, fragment = target.partition("#")
    target, qmark, query = target.partition("?")
    is_dir = target == "" or target.endswith("/")
    parts = [p for p in target.split("/") if p]
    base = [p for p in from_dir.split("/") if p]
    common = 0
    for a, b in zip(base, parts, strict=False):
        if a != b:
            break
        common += 1
    rel = "/".join([".."] * (len(base) - common) + parts[common:])
    if is_dir:
        rel = "./" if not rel else rel + "/"
        if links == "index.html":
            rel = "index.html" if rel == "./" else rel + "index.html"
    elif not rel:
        rel = parts[-1] if parts else "./"
    out = rel if _SAFE.match(rel) else quote(rel, safe="/._-~")
    if qmark:
        out += "?" + quote(query, safe="=&")
    return out + (hash_ + quote(fragment, safe="-_.") if hash_ else "")


def site_path(base_url: str) -> str:
    """The path of the site on its server, percent-encoded, with a final '/': '/' without a url."""
    path = (urlsplit(base_url).path or "/") if base_url else "/"
    path = quote(unquote(path), safe="/._-~")
    return path if path.endswith("/") else path + "/"


def rooted_url(site_path: str, target: str, links: str = "directory") -> str:
    """A site-root-relative target as a path from the server's root ('/gallery/trip/'): for the 404
    page, which a web server shows at any missing address. site_path: where the site is ('/' unless
    the configured url says otherwise)."""
    if target.startswith(("http://", "https://", "data:", "mailto:")):
        return target
    relative = relative_url("", target, links)
    return site_path + ("" if relative == "./" else relative.removeprefix("./"))


def absolute_url(base: str, target: str, links: str = "directory") -> str:
    if not base:
        return ""
    if links == "index.html" and (target == "" or target.endswith("/")):
        target += "index.html"
    if _PLAIN_URL(target):  # nothing to quote (a sitemap asks this of every page)
        return base + target
    # the folder above quoted once for all the pages in it (quoting goes character by character, and
    # '/' is one: the parts quoted apart are the whole quoted)
    cut = target.rfind("/", 0, len(target) - 1) + 1
    last = target[cut:]
    return base + _quoted_folder(target[:cut]) + (last if _PLAIN_URL(last) else quote(last, safe="/._-~"))


_PLAIN_URL = re.compile(r"[A-Za-z0-9/._~-]*").fullmatch  # what quote(target, safe="/._-~") leaves as it is


@lru_cache(maxsize=4096)
def _quoted_folder(folder: str) -> str:
    return quote(folder, safe="/._-~")


def _bytecode_cache(folder: Path | None) -> FileSystemBytecodeCache | None:
    """Compiled templates kept between builds (~50 ms of compiling saved per build, which a small
    site's rebuild in `albumen serve` feels). Jinja checks each template's source and the Python
    version; what else shapes the compiled code (the environment's options, set up in this module,
    and Jinja itself) is not part of its key, so it names the folder."""
    if folder is None:
        return None
    shaped_by = hashlib.sha256(jinja2.__version__.encode() + Path(__file__).read_bytes()).hexdigest()[:12]
    path = folder / f"templates-{shaped_by}"
    try:
        make_private_dirs(path)  # (Jinja writes its files 0600)
    except OSError:
        return None
    return FileSystemBytecodeCache(str(path))


def make_environment(
    dirs: list[Path], language: str, links: str, base_url: str, compiled: Path | None = None
) -> Environment:
    """compiled: a folder (the build cache's) where templates stay compiled between builds."""
    loader = ChoiceLoader([FileSystemLoader(str(d / "templates")) for d in dirs])
    env = Environment(
        loader=loader,
        autoescape=select_autoescape(["html", "xml", "svg"], default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
        auto_reload=False,  # one environment per build: no need to stat a template file on every page
        bytecode_cache=_bytecode_cache(compiled),
        # every template kept in a plain dict (a theme has a few dozen): each include asks for its template
        # again, and the default LRU cache takes a lock and reorders itself on every such lookup
        cache_size=-1,
    )
    # Jinja's i18n extension (new style) as one call each: its `_` looked `gettext` up in the page's
    # context and called it through the context, which called the catalogue's function through the
    # context again (and copied the context when called in a block that sets a variable). The same
    # strings come out (see i18n.template_gettext); `_` is `gettext` itself, so a template variable
    # named gettext no longer changes what `_` says. The extension stays for {% trans %} blocks.
    gettext, ngettext = template_gettext(language)
    env.newstyle_gettext = True  # type: ignore[attr-defined]
    env.globals.update(_=gettext, gettext=gettext, ngettext=ngettext, pgettext=None, npgettext=None)

    root = site_path(base_url)

    # the links of the page being rendered, kept while it is: a photo's page names its neighbours, its
    # album and its largest image two or three times each (a third of its ~27 links). One tuple holds
    # them with the folder and kind they are for, replaced whole when the page changes.
    current: list[tuple[str, str, dict[str, str]]] = [("", "", {})]

    @pass_context
    def url(ctx, target: str) -> str:
        page = ctx["page"]
        folder, kind = page.dir, page.kind
        kept = current[0]
        if kept[0] != folder or kept[1] != kind:
            kept = current[0] = (folder, kind, {})
        done = kept[2]
        if type(target) is str and target in done:
            return done[target]
        if kind == "404":  # served at whatever address was missing: links from the site's root
            link = rooted_url(root, target, links)
        else:
            link = relative_url(folder, target, links)
        if type(target) is str and len(done) < 256:
            done[target] = link
        return link

    env.filters["url"] = url
    env.filters["absolute"] = lambda target: absolute_url(base_url, target, links)
    env.filters["date"] = lambda value: format_date(value, language)
    env.filters["datetime"] = lambda value: format_datetime(value, language)
    env.globals["date_range"] = lambda a, b: format_date_range(a, b, language)
    env.filters["srcset"] = srcset_filter
    env.filters["fill_tile"] = fill_tile
    env.globals["viewer_items"] = viewer_items
    env.filters["tile_id"] = tile_id
    return env


def fill_tile(images, tile) -> list:
    """The images other than `tile` that can fill a tile of its shape (object-fit: cover) without being
    stretched much: none more than 1.5 times wider in proportion. A panorama's 24:1 display image in
    its 3:1 tile was scaled up three times (blurred); a 3:2 photo may still fill a square tile."""
    ratio = tile.width / tile.height
    return [i for i in images if i.width != tile.width and i.width / i.height <= 1.52 * ratio]  # 1.5, rounding


@pass_context
def srcset_filter(ctx, images) -> str:
    """'a.jpg 640w, b.jpg 1024w' with page-relative URLs."""
    url = ctx.environment.filters["url"]
    return ", ".join(f"{url(ctx, img.src)} {img.width}w" for img in images)


def _description(ctx, description, depth: int = 0) -> str:
    """A description's HTML as this page links it (see render.richtext.RichText), its headings
    `depth` levels deeper than on a page of its own."""
    render = getattr(description, "render", None)
    if render is None:
        return str(description)
    url = ctx.environment.filters["url"]
    return str(render(lambda target: url(ctx, target), depth))


@pass_context
def viewer_items(ctx, items, offset: int | None = None, total: int | None = None) -> Markup:
    """The lightbox's data for the photos of one page, as JSON that is safe inside <script>.

    offset/total number the items along a stream instead of within their albums.
    """
    url = ctx.environment.filters["url"]
    out = []
    last = len(items) - 1
    # at either end of the page, the viewer goes on at the neighbouring page of the album or stream,
    # which opens its viewer at its last (#lb-last) or first (#lb-first) item
    pagination = getattr(ctx.get("page"), "pagination", None)
    prev_page = pagination.prev_url if pagination else None
    next_page = pagination.next_url if pagination else None
    for i, m in enumerate(items):
        largest = m.fallback.images[-1]
        # The link, alt text, srcset and placeholder are read from the page's own tile (data-index i),
        # so they are not repeated here: a 200-photo page stays small. The description's headings
        # go under the viewer's h2 (the photo's title).
        entry = {
            "t": m.title or "", "d": _description(ctx, m.description, 1), "dt": m.datetime_text, "di": m.date_iso,
            "c": m.camera_text, "w": largest.width, "h": largest.height,
            "src": url(ctx, largest.src), "k": m.kind,
            "n": m.index if offset is None else offset + i + 1, "of": m.count if total is None else total,
        }
        if m.modern_sources:
            entry["s"] = [[s.mime, ", ".join(f"{url(ctx, img.src)} {img.width}w" for img in s.images)]
                          for s in m.modern_sources]
        if m.video:
            entry["src"] = url(ctx, m.video["poster"].src)
            entry["v"] = [[v["mime"], url(ctx, v["src"])] for v in m.video["sources"]]
            entry["tr"] = [[url(ctx, t["src"]), t["srclang"], t["label"]] for t in m.video["tracks"]]
        if i == 0 and prev_page is not None:
            entry["pv"] = url(ctx, prev_page) + "#lb-last"
        if i == last and next_page is not None:
            entry["nx"] = url(ctx, next_page) + "#lb-first"
        out.append(entry)
    return Markup(htmlsafe_json_dumps(out, separators=(",", ":")))
