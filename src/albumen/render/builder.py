"""The views of albums and media that templates see, built from the gallery and the plan."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from ..model import Media
from ..process.plan import download_name
from ..process.specs import VIDEO_MIME, OutputSpec, Placeholder
from ..scan.arrange import is_published
from .hooks import document_view
from .i18n import format_date, format_iso, gettext_for
from .richtext import Picture, RichText, relative_path, resolve_description
from .views import (
    AlbumView,
    ImageRef,
    Link,
    MediaView,
    SourceSet,
    camera_facts,
    format_date_range,
    format_datetime,
    plain_text,
    tile_id,
)

if TYPE_CHECKING:
    from .pages import RenderContext

DEFAULT_PLACEHOLDER = Placeholder(colour="#888888", data_uri="")


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
