"""Descriptions as pages show them: sanitized HTML whose links and images lead where they should.

A sidecar's body is sanitized when it is read (scan.sidecar.sanitize_html); what its relative links
and images name is known only now, with the plan: an image is shown only when it names a published
photo of its own album (it then shows that photo's published image, never the source file), and a
relative link only when it names a photo or an album a visitor of this page may see. Anything else
is dropped: an image entirely, a link down to its text. Links to other sites get
rel="noopener nofollow". Headings are renumbered for the page's outline: a description always
follows its page's own h1, so its first heading becomes an h2 and none skips a level (a sidecar's
### under the page's h1 was an h3 after an h1, which checkers report); the viewer, where the
description follows the photo's h2, shows them one level deeper (RichText.render's `depth`).

The site's own pages and images are kept apart from the HTML as site-root-relative targets, since
one description is shown on pages at several depths (a photo's page, its album's viewer, the
stream's viewer, the feeds).
"""

from __future__ import annotations

import html
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

from markupsafe import Markup


@dataclass(frozen=True, slots=True)
class RichText:
    """HTML with the site's own URLs kept apart: parts alternate HTML and a site-root-relative target
    (HTML, target, HTML, ..., HTML). Shown as is (`{{ media.description }}`) it links from `home`,
    the folder of the page that shows it (a photo's page, an album's first page); `render` links
    from elsewhere."""

    parts: tuple[str, ...]
    home: str = ""
    links: str = "directory"

    def render(self, link: Callable[[str], str], depth: int = 0) -> Markup:
        """The HTML with each target written by `link` (a page's `url` filter, or an absolute URL).
        depth: levels added to every heading (the first is an h2), for a place under an h2 (1)."""
        parts = self.parts if not depth else tuple(_deeper(part, depth) if i % 2 == 0 else part
                                                   for i, part in enumerate(self.parts))
        if len(parts) == 1:
            return Markup(parts[0])
        return Markup("".join(part if i % 2 == 0 else html.escape(link(part)) for i, part in enumerate(parts)))

    def __html__(self) -> str:
        from .env import relative_url

        return str(self.render(lambda target: relative_url(self.home, target, self.links)))

    def __str__(self) -> str:
        return self.__html__()

    def __bool__(self) -> bool:
        return any(self.parts)


@dataclass(frozen=True, slots=True)
class Picture:
    """What a sidecar's image shows: a published image of a photo (site-root-relative src)."""

    src: str
    width: int
    height: int
    alt: str


EXTERNAL_REL = "noopener nofollow"
_VOID = frozenset({"br", "hr", "img"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# a heading's tags as the rewriter writes them: every '<' of text and attribute values is escaped there
_HEADING_TAG = re.compile(r"<(/?)h([1-6])>")


def _deeper(markup: str, depth: int) -> str:
    return _HEADING_TAG.sub(lambda m: f"<{m[1]}h{min(6, int(m[2]) + depth)}>", markup)


def relative_path(base: str, ref: str) -> str | None:
    """A relative reference written in a sidecar of the album `base` as a src_uri of the gallery
    ('' for the top album), or None: a URL with a scheme or a host, a path from the server's root,
    a backslash (browsers read '/\\host' as '//host') or a path leaving the photo folder."""
    if not ref or "\\" in ref or ref.startswith("/"):
        return None
    parts = urlsplit(ref)
    if parts.scheme or parts.netloc:
        return None
    path = unquote(parts.path)
    if not path or "\x00" in path:
        return None
    joined = posixpath.normpath(posixpath.join(base, path) if base else path)
    if joined == ".":
        return ""
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None
    return joined


def resolve_description(
    markup: str,
    home: str,
    links: str,
    picture: Callable[[str], Picture | None],
    page: Callable[[str], str | None],
    dropped: Callable[[str, str], None] | None = None,
) -> RichText:
    """markup: sanitized HTML. picture(ref): what an image of that reference shows, or None to drop it;
    page(ref): the site-root-relative page a relative link leads to, or None to keep only its text.
    dropped(kind, ref) is told of each image ('image') or relative link ('link') dropped."""
    if "<a" not in markup and "<img" not in markup and "<h" not in markup:  # most, and all text from EXIF/IPTC/XMP
        return RichText((markup,), home, links)
    rewriter = _Rewriter(picture, page, dropped or (lambda kind, ref: None))
    rewriter.feed(markup)
    rewriter.close()
    return RichText(tuple(rewriter.parts), home, links)


def _attribute(name: str, value: str | None) -> str:
    return f" {name}" if value is None else f' {name}="{html.escape(value)}"'


class _Rewriter(HTMLParser):
    """Rebuilds sanitized HTML, resolving <a href> and <img src>. Text and attribute values are
    escaped again as they are written out."""

    def __init__(self, picture, page, dropped) -> None:
        super().__init__(convert_charrefs=True)
        self.picture, self.page, self.dropped = picture, page, dropped
        self.parts: list[str] = [""]
        self.anchors: list[bool] = []  # per open <a>: whether its tags are written
        self.outline: list[tuple[int, int]] = []  # (level written, level shown) of the headings above this point
        self.heading: list[str] = []  # the shown tag of each open heading

    def emit(self, text: str) -> None:
        self.parts[-1] += text

    def target(self, target: str) -> None:
        self.parts += [target, ""]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "img":
            self._image(values)
        elif tag == "a":
            self._anchor(values)
        elif tag in _HEADINGS:
            self.emit(f"<{self._heading(int(tag[1]))}>")
        else:
            self.emit(f"<{tag}" + "".join(_attribute(k, v) for k, v in attrs) + ">")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID:
            return
        if tag == "a":
            if not self.anchors or not self.anchors.pop():
                return
        elif tag in _HEADINGS:
            if not self.heading:
                return
            tag = self.heading.pop()
        self.emit(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        self.emit(html.escape(data, quote=False))

    def _heading(self, level: int) -> str:
        """The tag a heading of this level is shown as: under the page's h1, one level below the
        nearest heading before it of a higher level (written with fewer #), so none skips a level."""
        while self.outline and self.outline[-1][0] >= level:
            self.outline.pop()
        shown = min(6, self.outline[-1][1] + 1 if self.outline else 2)
        self.outline.append((level, shown))
        self.heading.append(f"h{shown}")
        return f"h{shown}"

    def _image(self, values: dict[str, str | None]) -> None:
        ref = values.get("src") or ""
        shown = self.picture(ref)
        if shown is None:
            self.dropped("image", ref)
            return
        self.emit('<img src="')
        self.target(shown.src)
        self.emit(f'" width="{shown.width}" height="{shown.height}"' + _attribute("alt", values.get("alt") or shown.alt))
        if values.get("title"):
            self.emit(_attribute("title", values["title"]))
        self.emit(' loading="lazy" decoding="async">')

    def _anchor(self, values: dict[str, str | None]) -> None:
        href = values.get("href") or ""
        title = _attribute("title", values["title"]) if values.get("title") else ""
        scheme = urlsplit(href).scheme.lower() if ":" in href.split("/", 1)[0] else ""
        if scheme in ("http", "https"):
            self.emit(f'<a href="{html.escape(href)}"{title} rel="{EXTERNAL_REL}">')
        elif scheme == "mailto" or (href.startswith("#") and len(href) > 1):
            self.emit(f'<a href="{html.escape(href)}"{title}>')
        else:
            target = self.page(href) if href and not scheme else None
            if target is None:
                if href:
                    self.dropped("link", href)
                self.anchors.append(False)
                return
            self.emit('<a href="')
            self.target(target)
            self.emit(f'"{title}>')
        self.anchors.append(True)
