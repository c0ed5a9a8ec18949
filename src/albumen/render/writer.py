"""Pages written as the build goes: the page writer (only pages whose key changed, in batches), the
pages of albums whose images are all made written while the workers make the rest (EarlyPages), and
the render stage that writes every other page once the images are done (render_pages)."""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Container, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..errors import BuildError, PluginError
from ..model import Gallery
from ..process.names import STATIC_DIR
from ..process.plan import SitePlan
from ..report import BuildReport, Reporter
from ..scan.arrange import covers_shown, published_albums
from ..write import DiskSink
from ..write.leftovers import foreign
from ..write.relocate import LinksOut
from .stores import CachedPlaceholders, CachedSitemap, ViewDigests

if TYPE_CHECKING:  # Jinja and the page code are imported when the renderer is made (see make_renderer)
    from ..cache import BuildCache
    from .pages import PageTask, SiteRenderer


class _Names:
    """Names in the order added, all but the last few thousand in a temporary file: a first build writes
    nearly every page early, and a million pages' names held were ~130 MB (see PageWriter.attach)."""

    HELD = 10_000

    def __init__(self) -> None:
        self.names: list[str] = []
        self.file = None

    def append(self, name: str) -> None:
        self.names.append(name)
        if len(self.names) >= self.HELD:
            if self.file is None:
                import tempfile

                self.file = tempfile.TemporaryFile()
            self.file.write("".join(f"{n}\0" for n in self.names).encode("utf-8", "surrogateescape"))
            self.names.clear()

    def __iter__(self) -> Iterator[str]:
        if self.file is not None:
            self.file.seek(0)
            tail = b""
            while chunk := self.file.read(1 << 20):
                *whole, tail = (tail + chunk).split(b"\0")
                yield from (name.decode("utf-8", "surrogateescape") for name in whole)
            self.file.close()
            self.file = None
        yield from self.names


class PageWriter:
    """Renders and writes, in batches, the pages it is offered whose key changed (or that are missing,
    or forced), and counts every offered page among this build's outputs.

    Pages are checked a batch at a time against the keys they were last written with (one query per
    batch, never a map of every page's key: 100,000 photos would keep ~20 MB of them)."""

    def __init__(self, renderer: SiteRenderer, sink: DiskSink, cache: BuildCache, report: BuildReport,
                 forced: Callable[[str | None], bool], damaged: dict[str, int | None], settled: set[str] = frozenset()):
        """forced(album): whether the pages of that album (None: pages of no album) are to be written
        whatever their key says. settled: albums whose pages are kept as recorded (see settle)."""
        self.renderer = renderer
        self.damaged = damaged  # pages of the last build missing or changed since: written again if they differ
        self.sink = sink
        self.cache = cache
        self.forced = forced
        self.report = report  # counts pages rendered, names the files replaced
        self.leads_out = LinksOut(report.output)  # a page behind such a link is written, so the sink refuses it
        self.reporter: Reporter | None = None  # pages count on the progress display once images are done
        self.early = _Names()  # pages written before that (see EarlyPages), counted then
        self.offered: list = []
        self.held = 0  # media views held by the offered pages alone
        self.deferred_keys: dict[str, str] = {}  # pages waiting in the sink to replace the last build's
        renderer.page_ok = self.as_written
        self.settle(settled)

    def as_written(self, album_uri: str | None, dest_uris: Iterable[str]) -> bool:
        """Whether these pages of an album can be kept without rendering them: not forced, each in the
        output as the last build left it (there, not changed since, not behind a link leading out)."""
        if self.forced(album_uri):
            return False
        root, damaged, written = str(self.report.output), self.damaged, self.sink.has
        for dest_uri in dest_uris:
            if (damaged and dest_uri in damaged) or written(dest_uri):
                return False
            if os.sep == "/":
                folder = f"{root}/{dest_uri.rpartition('/')[0]}" if "/" in dest_uri else root
                path = f"{root}/{dest_uri}"
            else:
                path = os.path.join(root, *dest_uri.split("/"))
                folder = os.path.dirname(path)
            if not os.path.exists(path) or self.leads_out(folder):
                return False
        return True

    def attach(self, reporter: Reporter) -> None:
        """Pages are shown from now on, those written early first: -v lists every page rendered."""
        self.reporter = reporter
        for dest_uri in self.early:
            reporter.advance(dest_uri)
        self.early = _Names()

    def offer(self, task: PageTask) -> None:
        self.offered.append(task)
        self.held += task.views
        if len(self.offered) >= 500 or self.held >= 500:
            self.flush()

    def settle(self, albums: set[str]) -> None:
        """The pages of these albums (settled: see SiteRenderer.settled_albums) are kept as recorded:
        claimed and counted among this build's outputs at once, in SQLite, and not offered one by one
        (neither looked at in the output: the next build with nothing changed looks at every file)."""
        if albums and self.cache.claim_recorded(albums):
            self.renderer.settled = albums  # (their sitemap lines are their records': see CachedSitemap.lines)

    def forget_listed(self) -> None:
        """Every page is to be listed again (files failed and the albums were re-arranged)."""
        if self.renderer.settled:
            self.cache.unclaim_recorded()
        self.renderer.forget_listed()
        self.cache.forget_claims()

    def _changed(self, task, recorded: str | None) -> bool:
        if task.kept:  # listed from its album's record, checked then (see as_written), or a stream page made of the last build's
            return False
        if self.sink.has(task.dest_uri):  # written early in this build: again only if it changed since
            return self.deferred_keys.get(task.dest_uri, recorded) != task.key  # (the key it was written with)
        path = os.path.join(self.report.output, *task.dest_uri.split("/"))
        return (
            self.forced(task.album_uri)
            or recorded != task.key
            or task.dest_uri in self.damaged
            or not os.path.exists(path)
            or self.leads_out(os.path.dirname(path))
        )

    def flush(self) -> None:
        cache, offered = self.cache, self.offered
        self.offered, self.held = [], 0
        albums = self.renderer.ctx.albums
        if not offered:
            if albums is not None:
                albums.commit(deferred=self.sink.is_deferred)
            return
        conflict = cache.claim_pages([(t.dest_uri, t.origin or t.template) for t in offered])
        if conflict is not None:
            uri, before, now = conflict
            raise BuildError(
                f"two pages claim one output path: {uri} ({before or 'generated'} and {now or 'generated'})",
                hint="rename one of the folders or files involved",
            )
        recorded = cache.page_keys(t.dest_uri for t in offered if not t.kept)  # (a kept page is not compared)
        pending = [t for t in offered if self._changed(t, recorded.get(t.dest_uri))]
        unknown = {t.dest_uri for t in pending if t.dest_uri not in recorded}  # never written by a build here
        cache.mark_current(t.dest_uri for t in offered)
        del offered, recorded
        if not pending:
            if albums is not None:
                albums.commit(deferred=self.sink.is_deferred)
            return
        cache.reserve_outputs(t.dest_uri for t in pending)  # recorded before written: an interrupted build can clean up
        failed: set[str] = set()  # pages a plugin failed: not written (the last build's file stays), tried again next time
        for task in pending:
            again = self.sink.has(task.dest_uri)
            try:
                page = self.renderer.render(task)
            except PluginError as failure:
                self.renderer.ctx.plugins.warn(failure, f"{task.dest_uri} is not written")
                failed.add(task.dest_uri)
                continue
            if (task.dest_uri in unknown and not again and not self.report.output_was_ours
                    and foreign(self.report.output, task.dest_uri)):
                self.report.replaced.append(task.dest_uri)
            self.sink.write(task.dest_uri, page.content, again=again)
            if self.reporter is not None:
                self.reporter.advance(task.dest_uri)
            else:
                self.early.append(task.dest_uri)
        cache.stamp_outputs(self.sink.take_stamps())
        # after the page is written (in place: one that replaces the last build's, at commit())
        keys = []
        for task in pending:
            if task.dest_uri in failed:
                continue
            if self.sink.is_deferred(task.dest_uri):
                self.deferred_keys[task.dest_uri] = task.key
            else:
                self.deferred_keys.pop(task.dest_uri, None)
                keys.append((task.dest_uri, task.key))
        cache.set_page_keys(keys)
        self.report.pages_rendered += len(pending) - len(failed)
        if albums is not None:  # the albums whose pages were all offered are now as listed (those
            # whose new pages wait to replace the last build's, once they are in place: see commit)
            albums.commit(failed, self.sink.is_deferred)

    def commit(self) -> None:
        """Put the pages that replace the last build's in place, now that every new page is written
        (see DiskSink.defer_replacements), and record what they are."""
        self.flush()
        self.sink.commit()
        self.cache.stamp_outputs(self.sink.take_stamps())
        self.cache.set_page_keys(list(self.deferred_keys.items()))
        self.deferred_keys = {}
        if self.renderer.ctx.albums is not None:
            self.renderer.ctx.albums.settle()


class EarlyPages:
    """The pages of every album whose images are all made, written while the workers make the rest.

    The last image then leaves only a few albums' pages (and the stream, feeds and sitemap) to write,
    instead of every page. This holds while no file fails: a failure drops that file and
    re-arranges the albums (counts, covers), so from the first one nothing more is written early,
    and every page is listed again after the images (a page written early that did not change is
    not written twice: its key is recorded). Pages written early stay part of the site whatever
    fails later: their album has media that were made, and its page count depends only on those.
    """

    def __init__(self, gallery: Gallery, todo: Iterable[str], paced: bool = True, later: Container[str] = ()) -> None:
        """todo: the media whose jobs are not made yet. paced: leave gaps between slices of work (see work), in which
        several workers get their next tasks (one worker has enough queued ahead). Pages are written
        once `writer` is set. later: albums whose pages wait for every image (a password album's
        manifest lists its sub-albums' photos too)."""
        self.writer: PageWriter | None = None
        self.paced = paced
        self.gallery = gallery
        # Kept small for 100,000 photos: a count per album, and the albums that show a cover that is
        # not made yet (no map of every media). The same albums, in the same order, as the renderer's.
        albums = list(published_albums(gallery))
        covers: dict[str, list[str]] = {}  # cover media -> albums whose pages show it as a cover
        for uri in albums:
            for cover in covers_shown(gallery, uri):
                covers.setdefault(cover, []).append(uri)
        self.waits: dict[str, int] = dict.fromkeys(albums, 0)  # album -> media it shows not made yet
        self.covers: dict[str, list[str]] = {}
        for uri in todo:
            owner = gallery.media[uri].album_uri
            if owner in self.waits:
                self.waits[owner] += 1
            for album in covers.get(uri, ()):
                self.waits[album] += 1
                self.covers.setdefault(uri, []).append(album)
        for uri in albums:
            if uri in later:
                self.waits[uri] += 1 << 40  # never ready
        self.ready: deque[str] = deque(uri for uri in albums if not self.waits[uri])
        self.listed: set[str] = set()
        self.current: Iterator | None = None  # the pages of the album being written
        self.current_uri = ""
        self.stopped = False
        self.next_slice = 0.0

    def made(self, media_uri: str) -> None:
        media = self.gallery.media.get(media_uri)
        albums = self.covers.pop(media_uri, [])
        if media is not None and media.album_uri in self.waits:
            albums.append(media.album_uri)
        for album in albums:
            self.waits[album] -= 1
            if not self.waits[album]:
                self.ready.append(album)

    def stop(self) -> None:
        self.stopped = True
        self.ready.clear()

    def work(self, seconds: float) -> None:
        """Write early pages for about this long, then return (the workers want their next tasks).

        After a slice, the next waits half as long again: results come in bursts (a batch of small
        images), and the workers are only given new tasks between results."""
        start = time.perf_counter()
        if self.writer is None or self.stopped or not (self.ready or self.current) or start < self.next_slice:
            return
        end = start + seconds
        while time.perf_counter() < end:
            if self.current is None:
                if not self.ready:
                    break
                self.current_uri = self.ready.popleft()
                self.current = self.writer.renderer.album_pages(self.current_uri)
            task = next(self.current, None)
            if task is None:
                self.listed.add(self.current_uri)
                self.current = None
                continue
            self.writer.offer(task)
        self.writer.flush()
        if self.paced:
            self.next_slice = time.perf_counter() + seconds / 2

    def finish(self) -> set[str]:
        """The albums whose pages are all written and listed (none if a file failed)."""
        if self.writer is None:
            return set()
        if self.stopped:
            self.writer.flush()
            self.writer.forget_listed()
            return set()
        if self.current is not None:
            for task in self.current:
                self.writer.offer(task)
            self.listed.add(self.current_uri)
            self.current = None
        self.writer.flush()
        return self.listed


def make_renderer(
    gallery: Gallery, plan: SitePlan, cache: BuildCache, config: Config, theme: Path | None, plugins: Any = None,
    output: str | None = None, folders: dict[str, str] | None = None,
) -> SiteRenderer:
    """The page renderer, its templates compiled. Views are built from the gallery when pages are listed.

    folders: each listed folder's digest (see lastbuild.fingerprint); without them every album's
    views are built to compare its pages' keys. Jinja and the page code are imported here, while the
    workers make images, not at start-up."""
    from .albumkeys import AlbumRecords
    from .pages import RenderContext, SiteRenderer

    renderer = SiteRenderer(
        RenderContext(
            gallery, plan, CachedPlaceholders(plan, cache), config, theme, digests=ViewDigests(cache),
            compiled=cache.folder, plugins=plugins, output=output, folders=folders,
            albums=AlbumRecords(cache) if folders is not None else None, sitemap=CachedSitemap(cache),
        )
    )
    renderer.compile_templates()
    return renderer


def render_pages(writer: PageWriter, listed: Container[str], reporter: Reporter, config: Config) -> None:
    """The render stage: every page not written early (listed: the albums whose pages were), then an
    index.html in each output folder that has none, then the theme's static files."""
    from .pages import folder_index_pages

    renderer, cache, sink = writer.renderer, writer.cache, writer.sink
    statics = {f"{STATIC_DIR}/{name}": path for name, path in renderer.static.items()}
    cache.reserve_outputs(statics, current=True)  # copied at the end (stamped then)
    reporter.phase("Writing pages")
    writer.attach(reporter)
    for task in renderer.tasks(listed):  # album by album: views never all in memory at once
        writer.offer(task)
    writer.flush()
    if renderer.ctx.albums is not None:
        renderer.ctx.albums.finish(sink.is_deferred)
    indexes = folder_index_pages(cache.folders_without_index(), config.pages.links)
    cache.reserve_outputs((p.dest_uri for p in indexes), current=True)
    for page in indexes:
        sink.write(page.dest_uri, page.content)
    for dest_uri, path in statics.items():
        sink.copy(dest_uri, str(path))
    cache.stamp_outputs(sink.take_stamps())
