"""The site's feeds: feed.xml (Atom) and rss.xml of the newest photos and videos, and with
feeds.per_album each album's feed.xml. Written when the config has the site's url."""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime as format_datetime_rfc822
from typing import TYPE_CHECKING

from ..scan.arrange import is_published, newest_first
from .env import absolute_url
from .i18n import format_iso
from .keys import digest

if TYPE_CHECKING:
    from .pages import PageTask, SiteRenderer


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


def _feed(renderer: SiteRenderer, title: str, uris: list[str], html_url: str, self_path: str) -> FeedView:
    config = renderer.ctx.config
    base = config.url
    entries = []
    newest = datetime(1970, 1, 1, tzinfo=UTC)
    for uri in uris:
        view = renderer.builder.standalone(uri)
        if view is None:
            continue
        # a photo that says nothing of when it was taken has no published date; Atom needs an updated
        # one, and the file's time is honest there: the last time the file changed
        media = renderer.ctx.gallery.media[uri]
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


def feed_tasks(renderer: SiteRenderer, order: list[str]) -> Iterator[PageTask]:
    """The site's feeds of the newest of `order` (the stream's order), then each album's."""
    from .pages import PageTask

    config = renderer.ctx.config
    gallery = renderer.ctx.gallery
    latest = order[: config.feeds.items]
    html_url = f"{config.stream.path}/" if config.stream.enabled else ""
    for template in ("feed.xml", "rss.xml"):
        feed = _feed(renderer, renderer.site.title, latest, html_url, template)
        key = digest(renderer.global_key, template, repr(feed))
        yield PageTask(template, template, renderer._page(dir="", title=feed.title, kind="feed"), {"feed": feed}, key)
    if config.feeds.per_album:
        for album in gallery.walk_albums(hidden=False):
            if not album.src_uri or not is_published(album):
                continue
            uris = [m.src_uri for m in sorted(gallery.flatten(album.src_uri), key=newest_first, reverse=True)]
            url = renderer.builder.album_url(album.src_uri)
            feed = _feed(renderer, f"{album.title} · {renderer.site.title}", uris[: config.feeds.items], url, f"{url}feed.xml")
            key = digest(renderer.global_key, "album-feed", repr(feed))
            page = renderer._page(dir=url.rstrip("/"), title=feed.title, kind="feed")
            yield PageTask(f"{url}feed.xml", "feed.xml", page, {"feed": feed}, key)
