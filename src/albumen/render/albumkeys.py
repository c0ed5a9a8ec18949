"""Album fingerprints: whether an album's pages can have changed, told without building its views.

Building every media view of a 100,000-photo library to compare page keys took most of a rebuild
after a one-photo change. An album's pages (its own and its photos') are a function of what the
album's input fingerprint covers:

- the album's folder as the walk listed it (every file's name, size and modification time: a file's
  record, its sidecar and captions, and index.md are read from these), the time zone and the build's
  global key (theme, config, site, Albumen's version);
- the album as arranged (title, description, dates, counts, cover, privacy, its media in order and
  their pages' folders, and which of them are covers): with the config and the planner's code, what
  their plans (output names, which carry content and recipe hashes) are made of, so that an album is
  told unchanged without making its media's plans (see process.plan.MediaPlans);
- its URL and breadcrumbs, and each sub-album card it shows (that album's own part, URL and
  breadcrumbs, and the album its cover comes from), and the album its own cover comes from.

When the fingerprint is the one recorded with the album's pages at the last build and those pages are
all still there as written, the pages are listed from the record (see AlbumRecords) and no view is
built. Albums whose descriptions link to other pages (a description link's target lives elsewhere),
and builds with plugins (a page context may read anything), always build their views, as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from ..process.names import MediaDirs
from ..process.plan import planner_code
from ..scan.dates import local_zone_name
from .keys import digest
from .sitemap import lines_digest

if TYPE_CHECKING:
    from ..cache import BuildCache
    from .pages import RenderContext


_DESCRIBED = attrgetter("description_html")  # (a media with a description: few)


def _links(markup: str) -> bool:
    """Whether a description may show another page's photo or link to it (resolved at render time)."""
    return "href=" in markup or "src=" in markup


class AlbumInputs:
    """Album fingerprints for one build, memoized per album (an album's own part is used by its page,
    its parent's card and the pages it gives a cover to)."""

    def __init__(self, ctx: RenderContext, global_key: str, crumbs: Callable[[str], list], album_url: Callable[[str], str]):
        self.ctx = ctx
        self.folders: dict[str, str] = ctx.folders or {}
        self.global_key = digest(global_key, local_zone_name())
        self.crumbs = crumbs
        self.album_url = album_url
        self._own: dict[str, str | None] = {}
        # the media whose descriptions may show or link to other pages (few: looked for once)
        self._linking = {m.src_uri for m in filter(_DESCRIBED, ctx.gallery.media.values()) if _links(m.description_html)}
        self.planned = digest(planner_code(), ctx.plan.video_encoder)  # (see own)

    def key(self, uri: str) -> str | None:
        """The album's input fingerprint, or None when its pages must be compared view by view."""
        if self.ctx.plugins:
            return None
        gallery = self.ctx.gallery
        album = gallery.albums[uri]
        parts = [self.global_key, self.album_url(uri), repr(self.crumbs(uri)), self.own(uri)]
        if album.cover:
            parts.append(self._cover(album.cover))
        for child in album.children:
            card = gallery.albums[child]
            parts += [self.album_url(child), repr(self.crumbs(child)), self.own(child)]
            if card.cover:
                parts.append(self._cover(card.cover))
        return None if None in parts else digest(*parts)

    def _cover(self, media_uri: str) -> str | None:
        media = self.ctx.gallery.media.get(media_uri)
        if media is None:
            return None
        return self.own(media.album_uri)

    def own(self, uri: str) -> str | None:
        """What an album shows of itself and of its media (its folder's listing, as arranged)."""
        if uri in self._own:
            return self._own[uri]
        gallery, plan = self.ctx.gallery, self.ctx.plan
        album = gallery.albums[uri]
        folder = self.folders.get(uri)
        result: str | None = None
        if folder is not None and not _links(album.description_html) and not album.documents:
            if self._linking.isdisjoint(album.media):
                facts = (
                    album.title, album.description_html, album.sidecar.src_uri if album.sidecar else None,
                    album.date_start, album.date_end, album.dates_guessed, album.photo_count,
                    album.video_count, album.cover, album.zone, album.marked_private, album.depth,
                )
                # its media's plans, told by what they are made of: the media (the folder's files and
                # the config, above), their pages' folders, which are covers, and the planner itself
                dirs, covers = plan.media_dirs, plan.covers
                if isinstance(dirs, MediaDirs) and uri not in dirs.clashing:
                    # (each page's folder: the album's and its file's name, as MediaDirs and the
                    # planner's code say; not put together for every photo of the library)
                    where = f"{dirs.mode}\0{dirs.album_dirs[uri]}"
                else:
                    where = "\0".join(dirs[m] for m in album.media)
                result = digest(
                    folder, repr(facts), "\0".join(album.media), self.planned, where,
                    "\0".join(m for m in album.media if m in covers),
                )
        self._own[uri] = result
        return result


PENDING = "pending:"


class AlbumRecords:
    """The pages each album listed at the last build, under its input fingerprint, in the cache; and
    those this build lists, recorded once every page of the album is written (see PageWriter.flush)."""

    def __init__(self, cache: BuildCache) -> None:
        self.cache = cache
        # (album, fingerprint, pages, outputs, sitemap lines) listed, not written yet
        self.pending: list[tuple[str, str, list, list, str]] = []
        self.listed: set[str] = set()

    def recorded(self, uri: str, key: str) -> tuple[list, bool] | None:
        """The album's pages as recorded under this fingerprint, and whether the record holds its media's
        outputs too (one from before it did not), or None."""
        row = self.cache.get_album(uri)
        if row is None or row[0] != key:
            return None
        try:
            return json.loads(row[1]), bool(row[2])
        except ValueError:
            return None

    def add(self, uri: str, key: str, pages: list, outputs: list[str], sitemap: str) -> None:
        """outputs: the album's media's outputs (counted among a build's at once when it is settled);
        sitemap: its pages' lines (see render.sitemap.album_lines), part of the sitemap when it is settled."""
        self.pending.append((uri, key, pages, outputs, sitemap))
        self.listed.add(uri)

    def kept(self, uri: str) -> None:
        self.listed.add(uri)

    def commit(self, failed: Iterable[str] = (), deferred: Callable[[str], bool] | None = None) -> None:
        """Record the albums listed so far: every page offered has been written (a page that failed
        leaves its album without a record, so that it is built again next time). An album with a page
        still waiting to replace the last build's (deferred) is recorded as pending, which matches no
        fingerprint until settle(): a build stopped before then lists it from its views again."""
        failed = set(failed)
        rows, drop = [], []
        for uri, key, pages, outputs, sitemap in self.pending:
            if failed and any(page[0] in failed for page in pages):
                drop.append(uri)
                continue
            if deferred is not None and any(deferred(page[0]) for page in pages):
                key = PENDING + key
            rows.append((uri, key, json.dumps(pages, separators=(",", ":")), json.dumps(outputs, separators=(",", ":")),
                         json.dumps(unindexed([page[0] for page in pages], outputs), separators=(",", ":")), sitemap,
                         lines_digest(sitemap)))
        self.pending = []
        self.cache.set_albums(rows, drop)

    def settle(self) -> None:
        """Every page waiting to replace the last build's is in place: the pending records hold."""
        self.commit()
        self.cache.settle_albums(PENDING)

    def forget(self) -> None:
        """The albums are listed again (files failed and re-arranged them)."""
        self.pending = []
        self.listed.clear()

    def finish(self, deferred: Callable[[str], bool]) -> None:
        self.commit(deferred=deferred)
        self.cache.keep_albums(self.listed)


def unindexed(*lists: Iterable[str]) -> list[str]:
    """The folders of these output paths, and those above them (not the top), that have no index.html
    among them (see cache.folders_without_index): an album's are its parents' folders and few more."""
    folders: set[str] = set()
    indexed: set[str] = set()
    for paths in lists:
        for path in paths:
            folder, _, name = path.rpartition("/")
            if name == "index.html":
                indexed.add(folder)
            while folder and folder not in folders:
                folders.add(folder)
                folder = folder.rpartition("/")[0]
    return sorted(folders - indexed)


def kept_pages(pages: list, page_ok: Callable[[str | None, Iterable[str]], bool] | None, uri: str) -> Any:
    """The recorded pages when all are still there as written (page_ok), else None."""
    if pages is None or page_ok is None or not page_ok(uri, [page[0] for page in pages]):
        return None
    return pages
