"""What templates see. Views hold site-root-relative paths; the `url` filter makes them page-relative.

These classes are the documented template context of a theme (see docs/THEMES.md).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from datetime import datetime

from .i18n import format_date, format_date_range, format_datetime
from .richtext import RichText


@dataclass(slots=True)
class ImageRef:
    """One published image file. `src` is relative to the site root."""

    src: str
    width: int
    height: int
    format: str = "jpeg"

    @property
    def mime(self) -> str:
        return {"jpeg": "image/jpeg", "webp": "image/webp", "avif": "image/avif", "gif": "image/gif"}.get(
            self.format, "application/octet-stream"
        )


@dataclass(slots=True)
class SourceSet:
    """All sizes of one image in one format, smallest first."""

    format: str
    images: tuple[ImageRef, ...]

    @property
    def mime(self) -> str:
        return self.images[0].mime


@dataclass(slots=True)
class Link:
    title: str
    url: str  # site-root-relative; '' is the home page


@dataclass(slots=True)
class MediaView:
    src_uri: str
    kind: str  # 'image' | 'video'
    url: str  # its own page, e.g. 'trip/img-1/'
    slug: str
    name: str  # original file name (shown only where the theme wants it)
    title: str | None
    alt: str
    description: RichText  # sanitized HTML (see render.richtext); shown as is, it links from its own page
    date: datetime | None
    date_iso: str
    date_text: str
    datetime_text: str
    tags: tuple[str, ...]
    author: str | None
    location: str | None
    camera: list[tuple[str, str]]  # (label, value) pairs, already filtered by pages.exif
    camera_text: str  # the same facts on one line, each readable without its label ('… · f/2.8 · ISO 1600')
    gps: tuple[float, float] | None
    thumb: ImageRef
    sources: list[SourceSet]  # fallback (JPEG/GIF) first, then modern formats
    placeholder_colour: str
    placeholder_uri: str
    index: int  # 1-based position in its album
    count: int  # media in its album
    album: Link
    album_page_url: str  # the album page that shows it (with pagination)
    original: ImageRef | None = None
    original_name: str | None = None
    prev: MediaView | None = None
    next: MediaView | None = None
    video: dict | None = None
    thumbs: tuple[ImageRef, ...] = ()  # the thumbnail in every published format, JPEG (thumb) first
    # an album cover's card images (3:2 crops, a few widths, then its display images wider than them,
    # for a card wider than 1200 px), a SourceSet per format, JPEG first; () for a video or a photo
    # that is no album's cover
    cards: tuple[SourceSet, ...] = ()

    @property
    def fallback(self) -> SourceSet:
        return self.sources[0]

    @property
    def anchor(self) -> str:
        """The id of its tile on its album's page (the fragment of album_page_url): its slug, made a
        valid id that no id of the theme's own starts like ('m-'), whatever the file's name."""
        return tile_id(self.slug)

    @property
    def largest(self) -> ImageRef:
        return self.sources[0].images[-1]

    @property
    def share_image(self) -> ImageRef:
        """The size link previews want: the first at least 1200 px wide, else the largest."""
        return next((img for img in self.sources[0].images if img.width >= 1200), self.largest)

    @property
    def modern_sources(self) -> list[SourceSet]:
        """AVIF then WebP: the order browsers should consider them in <picture>."""
        order = {"avif": 0, "webp": 1}
        return sorted((s for s in self.sources[1:]), key=lambda s: order.get(s.format, 2))

    @property
    def tile_sources(self) -> list[SourceSet]:
        """For a tile's <picture> (a grid's, an album card's), AVIF then WebP: the thumbnail first, then
        the display images of its format (what a template keeps of them: see the fill_tile filter)."""
        order = {"avif": 0, "webp": 1}
        shown = {s.format: s.images for s in self.sources}
        modern = sorted((t for t in self.thumbs if t.format in order), key=lambda t: order[t.format])
        return [SourceSet(t.format, (t, *shown.get(t.format, ()))) for t in modern]

    @property
    def modern_cards(self) -> list[SourceSet]:
        """The card images in AVIF then WebP, for a card's <picture>."""
        order = {"avif": 0, "webp": 1}
        return sorted((s for s in self.cards[1:] if s.format in order), key=lambda s: order[s.format])

    @property
    def aspect(self) -> float:
        return self.thumb.width / self.thumb.height

    @property
    def likely_image(self) -> ImageRef:
        """The file its page most likely shows, for the page before it to prefetch.

        A prefetch has no srcset, so this guesses what <picture> picks (media.html): the first
        modern format, the first size that fills min(100vw, (100vh - 9rem) * aspect) on a
        1920x1080 screen (the common desktop one), else the largest. A video page shows its poster.
        """
        if self.video:
            return self.video["poster"]
        best = (self.modern_sources or [self.fallback])[0].images
        largest = best[-1]
        wanted = min(1920, (1080 - 9 * 16) * largest.width / largest.height)
        return next((img for img in best if img.width >= wanted), largest)



@dataclass(slots=True)
class DocumentView:
    """An item of a plugin's media kind (a document): a tile of its album, linking to the file."""

    src_uri: str
    name: str  # its file name
    title: str | None
    label: str  # its type, as the tile shows it ('PDF')
    mime: str
    alt: str
    thumb: ImageRef
    href: str  # the published file, relative to the site root
    download_name: str  # the name a visitor saves it under
    size: int  # bytes
    date_text: str
    date_iso: str
    placeholder_colour: str
    placeholder_uri: str


@dataclass(slots=True)
class AlbumView:
    src_uri: str
    url: str  # 'trip/' ('' for the home page)
    title: str
    description: RichText  # shown as is, it links from the album's first page
    date_start: datetime | None
    date_end: datetime | None
    date_range: str
    date_iso: str
    photo_count: int
    video_count: int
    cover: MediaView | None
    breadcrumbs: list[Link] = field(default_factory=list)  # ancestors, home first, not including itself
    children: list[AlbumView] = field(default_factory=list)
    media: list[MediaView] = field(default_factory=list)  # every media item, in order
    page_size: int = 200
    depth: int = 0
    documents: list[DocumentView] = field(default_factory=list)  # items of plugins' media kinds

    @property
    def page_count(self) -> int:
        return max(1, -(-len(self.media) // self.page_size))

    def page_url(self, n: int) -> str:
        return self.url if n <= 1 else f"{self.url}page/{n}/"


@dataclass(slots=True)
class Pagination:
    number: int
    count: int
    urls: list[str]  # site-root-relative url of every page

    @property
    def prev_url(self) -> str | None:
        return self.urls[self.number - 2] if self.number > 1 else None

    @property
    def next_url(self) -> str | None:
        return self.urls[self.number] if self.number < self.count else None

    def window(self, size: int = 2) -> list[int | None]:
        """Page numbers to show, with None for a gap: 1 … 4 5 [6] 7 8 … 20."""
        pages = sorted({1, self.count, *range(max(1, self.number - size), min(self.count, self.number + size) + 1)})
        out: list[int | None] = []
        for p in pages:
            if out and p - (out[-1] or 0) > 1:
                out.append(None)
            out.append(p)
        return out


@dataclass(slots=True)
class PageView:
    """The page being rendered: its folder decides how every link is written."""

    dir: str  # site-root-relative folder of this page ('' for home)
    title: str
    kind: str  # 'album' | 'media' | 'stream' | '404' | 'feed' | 'sitemap' | 'plugin'
    canonical: str | None = None  # absolute URL when the site url is known
    description: str = ""
    image: str | None = None  # absolute URL for share previews
    robots: str | None = None
    private: bool = False  # behind a private link: not indexed, no Referer sent from it
    pagination: Pagination | None = None
    feeds: list[tuple[str, str, str]] = field(default_factory=list)  # (mime, title, site-relative url)


@dataclass(slots=True)
class SiteView:
    title: str
    description: str
    author: str
    language: str
    url: str  # absolute base URL or ''
    grid: str  # 'justified' | 'square'
    thumb_height: int
    static: dict[str, str]  # static file name -> site-relative url with a cache-busting version
    generator: str
    nav: list[Link] = field(default_factory=list)
    scheme: str = "auto"  # 'auto' (the visitor's system) | 'light' | 'dark'
    accent_style: str = ""  # CSS custom properties of the accent colour, for the <html> element ('' : the theme's)


def tile_id(name: str, prefix: str = "m-") -> str:
    """prefix + name, with what an id or a URL fragment cannot hold written as '_hex' (never two names alike)."""
    return prefix + re.sub(r"[^A-Za-z0-9.-]", lambda m: "".join(f"_{b:02x}" for b in m.group().encode()), name)


_TAGS = re.compile(r"<\s*/?\s*([a-zA-Z][a-zA-Z0-9]*)?[^>]*>")
_INLINE = {"a", "abbr", "b", "bdi", "bdo", "cite", "code", "data", "del", "dfn", "em", "i", "ins", "kbd", "mark", "q",
           "s", "samp", "small", "span", "strong", "sub", "sup", "time", "u", "var"}


def plain_text(markup: str, limit: int = 300) -> str:
    """Text of an HTML fragment, for alt text and meta descriptions."""
    # a tag inside a line ("by <code>albumen demo</code>: every") leaves no space; a block or a break does
    text = html.unescape(_TAGS.sub(lambda m: "" if (m.group(1) or "").lower() in _INLINE else " ", markup))
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def format_exposure(seconds: float) -> str:
    """As cameras show it: '30 s', '2.5 s', '1/1.3 s', '1/2.5 s', '1/250 s'."""
    if seconds >= 1:
        return f"{round(seconds, 1):g} s"
    inverse = 1 / seconds
    if inverse < 10 and abs(inverse - round(inverse)) > 0.05:  # a third or half stop near a second
        return f"1/{round(inverse, 1):g} s"
    return f"1/{round(inverse)} s"


def camera_facts(camera, fields: tuple[str, ...], gettext) -> list[tuple[str, str, str]]:
    """(label, value, the value read without its label) for the configured camera fields. The value
    goes beside its label ('ISO' and '1600', never 'ISO 1600' under 'ISO'); alone, as in the viewer's
    one line of facts, a bare number needs its unit ('ISO 1600')."""
    out: list[tuple[str, str, str]] = []

    def add(label: str, value: str, alone: str | None = None) -> None:
        out.append((label, value, alone or value))

    if "camera" in fields and (camera.make or camera.model):
        add(gettext("Camera"), camera_name(camera.make, camera.model))
    if "lens" in fields and camera.lens:
        add(gettext("Lens"), camera.lens)
    if "exposure" in fields and camera.exposure_time:
        add(gettext("Exposure"), format_exposure(camera.exposure_time))
    if "aperture" in fields and camera.f_number:
        add(gettext("Aperture"), f"f/{round(camera.f_number, 1):g}")
    if "iso" in fields and camera.iso:
        add(gettext("ISO"), str(camera.iso), f"{gettext('ISO')} {camera.iso}")
    if "focal_length" in fields and camera.focal_length:
        text = f"{round(camera.focal_length, 1):g} mm"
        if camera.focal_length_35mm and round(camera.focal_length_35mm) != round(camera.focal_length):
            text += f" ({round(camera.focal_length_35mm):g} mm {gettext('equiv.')})"
        add(gettext("Focal length"), text)
    return out


def camera_summary(camera, fields: tuple[str, ...], gettext) -> list[tuple[str, str]]:
    """Human labels and values for the configured camera fields."""
    return [(label, value) for label, value, _ in camera_facts(camera, fields, gettext)]


def camera_name(make: str | None, model: str | None) -> str:
    """'NIKON CORPORATION' + 'NIKON D70' -> 'NIKON D70'; 'Apple' + 'iPhone 6' -> 'Apple iPhone 6'."""
    make = (make or "").strip()
    model = (model or "").strip()
    if not make:
        return model
    if not model:
        return make
    brand = make.split()[0].casefold()
    if model.casefold().startswith(brand):
        return model
    return f"{make} {model}"


__all__ = [
    "AlbumView",
    "DocumentView",
    "ImageRef",
    "Link",
    "MediaView",
    "PageView",
    "Pagination",
    "SiteView",
    "SourceSet",
    "camera_facts",
    "camera_summary",
    "format_date",
    "format_date_range",
    "format_datetime",
    "plain_text",
    "tile_id",
]
