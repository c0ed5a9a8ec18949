"""The one place that runs the stages in order.

load_config -> scan_source -> plan_site -> run_jobs -> SiteRenderer (pages) -> write (sink)

Incremental by construction: unchanged files are not re-read (stat fingerprint in
the cache), derivatives whose content+recipe-named file exists are not re-made,
pages whose fingerprint is unchanged are not re-rendered, and files are written
only when their bytes change. Stale outputs (and only files Albumen wrote) are
removed at the end, so an interrupted build still leaves every page's references
in place.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import posixpath
import shutil
import stat
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from .cache import BuildCache, default_cache_dir
from .config import LoadedConfig, album_path
from .errors import AlbumenError, BuildError, SourceError, UsageError
from .fsutil import TMP_PREFIX, OutsideRoot, check_inside, forget_resolved, remove_temp_files
from .locks import hold_output
from .model import Gallery, Skipped
from .pool import WorkerPool
from .process.executor import run_jobs
from .process.plan import STATIC_DIR, SitePlan, plan_jobs, plan_site
from .process.specs import ImageJob, Placeholder, VideoJob
from .render.themes import theme_dirs
from .report import QuietReporter, Reporter, media_count, plural, some
from .scan import WalkReport, arrange_gallery, check_private, scan_source, walk_source
from .scan.arrange import covers_shown, is_published, published_albums
from .tokens import albumen_home, current_rotations, load_secret, private_dirs
from .write import DiskSink, outputs_not_as_written

__all__ = ["BuildOptions", "BuildReport", "Reporter", "build", "check_paths"]


@dataclass
class BuildOptions:
    source: Path
    output: Path
    jobs: int = 0  # 0: all cores
    strict: bool = False
    force: bool = False
    force_albums: tuple[str, ...] = ()  # glob patterns of album paths to redo
    wait: bool = False  # another process building into the output: wait for it instead of refusing


@dataclass
class BuildReport:
    source: Path
    output: Path
    cache: Path | None = None
    albums: int = 0
    photos: int = 0
    videos: int = 0
    ignored: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # worth saying once, not problems (--strict ignores them)
    derivatives_made: int = 0
    derivatives_moved: int = 0  # made before under another folder: linked into place, not re-made
    photos_processed: int = 0  # photos whose derivatives this build made (successfully)
    videos_processed: int = 0  # and videos
    pages_rendered: int = 0
    pages_written: int = 0
    stale_removed: int = 0
    replaced: list[str] = field(default_factory=list)  # pages written over files Albumen had not made
    output_was_ours: bool = False  # the output held Albumen's static files when the build started
    unchanged: bool = False  # nothing read, made or written: the sources were as the last build left them
    seconds: float = 0.0

    @property
    def processed(self) -> str:
        """'3 photos and 2 videos' processed by this build."""
        return media_count(self.photos_processed, self.videos_processed)

    @property
    def problems(self) -> bool:
        return bool(self.skipped or self.warnings)


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def check_paths(source: Path, output: Path) -> tuple[Path, Path]:
    """Refuse impossible or dangerous source/output pairs before anything is written."""
    if not source.exists():
        raise SourceError(f"photo folder not found: {source}", hint="check the path, or set 'source' in albumen.toml")
    if not source.is_dir():
        raise SourceError(f"not a folder: {source}", hint="SOURCE must be the folder that holds your photos")
    src = source.resolve()
    out = output.resolve()
    if _inside(out, src):
        raise UsageError(
            f"the output folder {out} is inside the photo folder {src}; Albumen never writes into the photo folder",
            hint=f"build somewhere else, e.g. -o ../site from inside the photo folder, or -o {src.parent / 'site'}",
        )
    if _inside(src, out):
        raise UsageError(
            f"the photo folder {src} is inside the output folder {out}",
            hint="choose an output folder outside the photos, e.g. -o ../site",
        )
    if out.exists() and not out.is_dir():
        raise UsageError(f"the output path exists and is not a folder: {out}")
    return src, out


def cache_location(loaded: LoadedConfig, source: Path, output: Path) -> Path:
    """The build cache folder of this source and output; never inside either."""
    cache_dir = default_cache_dir(source, output, loaded.resolve(loaded.config.cache_dir)).resolve()
    if _inside(cache_dir, source) or _inside(cache_dir, output):
        raise UsageError(
            f"the cache folder {cache_dir} is inside the photo folder or the output",
            hint="the cache holds private metadata: keep it out of both (cache_dir setting, ALBUMEN_CACHE_DIR)",
        )
    return cache_dir


def check_home(source: Path, output: Path) -> None:
    """Albumen's own folder (the secret behind private links, their rotations) is never inside the
    photo folder (never written) or the output (it would be published with the site)."""
    home = albumen_home().resolve()
    if _inside(home, source) or _inside(home, output):
        raise UsageError(
            f"Albumen's own folder {home} (it holds the secret of private links) is inside the "
            f"{'photo folder' if _inside(home, source) else 'output folder'}",
            hint="set ALBUMEN_HOME to a folder outside both, or unset it to use the default",
        )


def build(
    loaded: LoadedConfig, options: BuildOptions, reporter: Reporter | None = None, pool: WorkerPool | None = None
) -> BuildReport:
    """Build the whole site. Raises AlbumenError subclasses for usage, config and build failures.

    pool: workers already started by the caller (who closes them); by default the build starts
    its own when it has work for them. A build that fails or is interrupted stops them, then removes
    the temporary files they and it were writing.
    """
    reporter = reporter or QuietReporter()
    started = time.perf_counter()
    config = loaded.config
    source, output = check_paths(options.source, options.output)
    theme = loaded.resolve(config.theme)
    # the folders and programs the config names, checked together: every problem is told at once
    problems: list[AlbumenError] = []

    def checked(check):
        try:
            return check()
        except AlbumenError as exc:
            problems.append(exc)
            return None

    if theme is not None and not theme.is_dir():
        problems.append(UsageError(f"theme folder not found: {theme}", hint="check the 'theme' setting"))
    elif theme is not None and not (theme / "templates").is_dir() and not (theme / "static").is_dir():
        problems.append(UsageError(f"theme folder {theme} has neither templates/ nor static/", hint="check the 'theme' setting"))
    cache_dir = checked(lambda: cache_location(loaded, source, output))
    checked(lambda: check_home(source, output))
    ffmpeg = checked(lambda: _ffmpeg(loaded))  # a wrong videos.ffmpeg stops here, before anything is written
    if len(problems) == 1:
        raise problems[0]
    if problems:
        raise UsageError(
            f"{len(problems)} problems:" + "".join(f"\n  - {p.message}" + (f" ({p.hint})" if p.hint else "") for p in problems),
            hint="fix these and run again; nothing was built",
        )
    created = _make_folders(output)  # the lock is taken on the output folder itself
    try:
        # one build at a time per output and per cache, from before either is read to the end (see locks)
        with hold_output(output, cache_dir, options.wait, reporter.waiting) as unlocked:
            report = BuildReport(source=source, output=output, cache=cache_dir, output_was_ours=_albumen_was_here(output))
            report.warnings.extend(unlocked)
            cache = BuildCache(cache_dir)
            report.warnings.extend(cache.warnings)
            workers = pool if pool is not None else WorkerPool(options.jobs)
            try:
                _run(loaded, options, reporter, cache, workers, report, theme, ffmpeg)
            except BaseException:
                # interrupted (Ctrl-C, SIGTERM) or failed: the workers are stopped, and the ffmpeg each
                # ran with them, before the temporary files they were writing are removed (none is
                # another build's: this one holds the output)
                workers.stop()
                _remove_temp_files(output)
                raise
            finally:
                if pool is None:
                    workers.close()
                cache.close()
    except BaseException:
        for folder in reversed(created):  # a build that stopped before writing anything leaves no folder
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    report.seconds = time.perf_counter() - started
    return report


def _make_folders(folder: Path) -> list[Path]:
    """Make a folder and those missing above it; returns those made, outermost first."""
    missing = []
    while not folder.is_dir() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(exist_ok=True)
    return missing[::-1]


def _run(
    loaded, options, reporter, cache: BuildCache, pool: WorkerPool, report: BuildReport, theme, ffmpeg: str | None
) -> None:
    config = loaded.config
    source, output = report.source, report.output
    reporter.phase("Scanning")
    walk_report = WalkReport()
    listings = list(walk_source(str(source), config.ignore, walk_report))
    config_path = str(loaded.path) if loaded.path else None
    private = check_private(listings, str(source), config.private, config_path)  # before anything is read or written
    forget_resolved()  # see fsutil.check_inside: the output's folders as they are now
    fingerprint = _fingerprint(listings, walk_report, loaded, theme, source, output)
    damaged: dict[str, int | None] = {}  # the last build's files missing or changed since -> the size written
    if (
        not options.force
        and not options.force_albums
        and cache.get_meta("building") != "1"
        and cache.get_meta("fingerprint") == fingerprint
    ):
        # nothing in the photo folder, the config or the theme changed: the site is as the last build
        # left it when every file it wrote is there as it wrote it (one stat each, nothing read)
        damaged = outputs_not_as_written(str(output), cache.output_stamps())
        if not damaged and (output / "index.html").is_file() and _restore_summary(cache.get_meta("summary"), report):
            report.unchanged = True
            _warn_unlisted_pages(output, cache, report, walk=False, current=lambda uri: False)  # as the last build found
            return
    if cache.get_meta("building") == "1":
        _remove_temp_files(output)  # the last build was interrupted
    cache.set_meta("building", "1")
    cache.set_meta("fingerprint", None)
    gallery = scan_source(
        str(source), config, cache, reporter, pool, walked=(listings, walk_report), config_path=config_path,
        private=private,
    )
    del listings, walk_report  # every file's entry: the gallery holds what is still needed
    plan = plan_site(gallery, config, str(output), str(source), private_links(gallery, config, report), _video_encoder(gallery, ffmpeg))
    reported = _warn_public_leftovers(gallery, config, output, cache, report)
    _warn_unmatched_force(gallery, options, report)
    if not gallery.media and not gallery.skipped:
        report.warnings.append(f"no photos or videos in {source}: the site has no pictures (is it the right folder?)")

    # -- images ----------------------------------------------------------------
    # Memory stays flat as the library grows: sets of every output path live in SQLite (the cache's
    # temporary tables), not in this process, and no worker result is kept once counted.
    def forced(uri: str) -> bool:
        return options.force or _album_forced(gallery.media[uri].album_uri, options)

    known = cache.placeholder_keys()
    reuse = _Relocator(cache, output)
    jobs = plan_jobs(gallery, plan, config, str(output), str(source), ffmpeg)  # made one at a time, as asked for
    leads_out = _LinksOut(output)
    touched: list[tuple[str, int, int]] = []
    todo = [
        job for job in (
            _remaining(job, plan, known, output, forced(job.job_id), reuse, leads_out, damaged, touched) for job in jobs
        ) if job
    ]
    del known, leads_out
    report.derivatives_moved = len(reuse.moved)
    cache.stamp_outputs(reuse.moved + touched)
    del reuse
    cache.reserve_outputs(spec.dest_uri for job in todo for spec in job.outputs)
    if todo:  # (a phase with nothing to do would show as an empty bar)
        videos = sum(isinstance(job, VideoJob) for job in todo)
        kinds = "photos and videos" if 0 < videos < len(todo) else "videos" if videos else "photos"
        reporter.phase(f"Processing {kinds}", total=len(todo))
    fresh: list[tuple[str, str, str]] = []
    made: list[tuple[str, int, int]] = []  # stamps of derivatives made, for the cache's manifest
    failed: list[tuple[str, str]] = []
    sink = DiskSink(str(output))
    writer: _PageWriter | None = None
    early = _EarlyPages(gallery, todo, paced=pool.parallel)
    results = run_jobs(todo, pool)
    del todo  # each job is let go once made (see run_jobs): a big library's jobs do not all stay
    for result in results:
        if writer is None:  # the workers have their first tasks: get the pages ready meanwhile
            writer = early.writer = _PageWriter(
                _renderer(gallery, plan, cache, config, theme), sink, cache, options, report, damaged
            )
        kind = gallery.media[result.job_id].kind
        reporter.advance(result.job_id, kind)
        if not result.ok:
            reporter.note(f"skipped {result.job_id}: {result.error}")
            failed.append((result.job_id, result.error or "processing failed"))
            early.stop()
            continue
        if kind == "video":
            report.videos_processed += 1
        else:
            report.photos_processed += 1
        report.derivatives_made += len(result.written)
        made.extend(result.written)
        if result.placeholder:
            thumb = _placeholder_key(plan.media[result.job_id].thumb_uri)
            fresh.append((thumb, result.placeholder.colour, result.placeholder.data_uri))
        early.made(result.job_id)
        if len(fresh) >= 200 or (fresh and early.ready):
            cache.put_placeholders(fresh)  # the pages about to be written show them
            fresh.clear()
        if len(made) >= 1000:
            cache.stamp_outputs(made)
            made.clear()
        early.work(seconds=0.025)
    del results
    pool.release()  # pages are rendered in this process: the workers exit meanwhile
    cache.put_placeholders(fresh)
    cache.stamp_outputs(made)
    del made
    listed = early.finish()  # albums whose pages are all written and listed
    _drop_failed(gallery, failed, config)

    # -- pages ------------------------------------------------------------------
    # views read the gallery as it is now
    writer = writer or _PageWriter(_renderer(gallery, plan, cache, config, theme), sink, cache, options, report, damaged)
    renderer = writer.renderer
    statics = {f"{STATIC_DIR}/{name}": path for name, path in renderer.static.items()}
    cache.add_outputs(out for uri, mp in plan.media.items() if uri in gallery.media for out in mp.output_uris())
    cache.reserve_outputs(statics, current=True)  # copied at the end (stamped then)
    reporter.phase("Writing pages")
    writer.attach(reporter)
    for task in renderer.tasks(listed):  # album by album: views never all in memory at once
        writer.offer(task)
    writer.flush()
    del writer, listed
    from .render.pages import folder_index_pages

    indexes = folder_index_pages(cache.folders_without_index(), config.pages.links)
    cache.reserve_outputs((p.dest_uri for p in indexes), current=True)
    for page in indexes:
        sink.write(page.dest_uri, page.content)
    for dest_uri, path in statics.items():
        sink.copy(dest_uri, str(path))
    cache.stamp_outputs(sink.take_stamps())

    # -- stale outputs: only files this tool recorded, and never outside the output ----------
    stale = cache.stale_outputs()
    report.stale_removed, kept, linked = _remove_stale(output, stale)
    cache.remove_outputs(uri for uri, _, _ in stale)  # a kept file is the user's from now on
    cache.forget_other_pages()
    cache.keep_placeholders(_placeholder_key(mp.thumb_uri) for mp in plan.media.values())
    report.albums = sum(1 for a in gallery.albums.values() if is_published(a))
    report.photos = sum(1 for m in gallery.media.values() if m.kind == "image")
    report.videos = sum(1 for m in gallery.media.values() if m.kind == "video")
    report.ignored = gallery.ignored
    report.skipped = sorted(gallery.skipped, key=lambda s: s.src_uri)
    report.warnings += gallery.warnings + plan.warnings + renderer.warnings
    report.notes += renderer.notes
    cache.set_meta("summary", json.dumps({
        "albums": report.albums, "photos": report.photos, "videos": report.videos, "ignored": report.ignored,
        "skipped": [[s.src_uri, s.reason] for s in report.skipped],
        "warnings": [w for w in report.warnings if w not in cache.warnings],  # the cache's are about this run
        "notes": [n for n in report.notes if not n.startswith("created the secret")],
    }))
    if not gallery.unsettled:  # else the next build reads those files again, even with nothing changed
        cache.set_meta("fingerprint", fingerprint)
    cache.set_meta("building", None)
    report.pages_written = sink.written
    if report.replaced:  # said once, not with the summary a build with nothing to do repeats
        report.warnings.append(
            f"replaced {plural(len(report.replaced), 'file')} in {output} that Albumen had not made: {some(report.replaced)} "
            "(build into an empty folder to keep such files apart)"
        )
    # a lost cache: pages of an earlier build that this one did not write cannot be told from the user's
    # files by the manifest, so they are named (never removed), and named again while they stay
    _warn_unlisted_pages(output, cache, report, walk=report.output_was_ours and cache.started_empty,
                         current=cache.is_current, skip=reported)
    if damaged:  # said once too
        n = len(damaged)
        report.notes.append(
            f"{plural(n, 'file')} of the last build {'was' if n == 1 else 'were'} missing or changed in {output} "
            f"({some(sorted(damaged))}): written again where {'it' if n == 1 else 'they'} differed"
        )
    if kept:  # said once, not with the summary a build with nothing to do repeats
        report.notes.append(
            f"kept {plural(len(kept), 'file')} no longer part of the site, changed since"
            f" Albumen wrote {'them' if len(kept) > 1 else 'it'} (remove by hand if not wanted): "
            + some(kept)
        )
    if linked:
        report.warnings.append(
            f"left {plural(len(linked), 'file')} no longer part of the site where"
            " a symbolic link in the output leads out of it (nothing is removed through such a link): "
            + some(linked)
        )


class _PageWriter:
    """Renders and writes, in batches, the pages it is offered whose key changed (or that are missing,
    or forced), and counts every offered page among this build's outputs.

    Pages are checked a batch at a time against the keys they were last written with (one query per
    batch, never a map of every page's key: 100,000 photos would keep ~20 MB of them)."""

    def __init__(self, renderer, sink: DiskSink, cache: BuildCache, options: BuildOptions, report: BuildReport,
                 damaged: dict[str, int | None]):
        self.renderer = renderer
        self.damaged = damaged  # pages of the last build missing or changed since: written again if they differ
        self.sink = sink
        self.cache = cache
        self.options = options
        self.report = report
        self.leads_out = _LinksOut(report.output)  # a page behind such a link is written, so the sink refuses it
        self.reporter: Reporter | None = None  # pages count on the progress display once images are done
        self.early: list[str] = []  # pages written before that (see _EarlyPages), counted then
        self.offered: list = []
        self.held = 0  # media views held by the offered pages alone

    def attach(self, reporter: Reporter) -> None:
        """Pages are shown from now on, those written early first: -v lists every page rendered."""
        self.reporter = reporter
        for dest_uri in self.early:
            reporter.advance(dest_uri)
        self.early = []

    def offer(self, task) -> None:
        self.offered.append(task)
        self.held += task.views
        if len(self.offered) >= 500 or self.held >= 500:
            self.flush()

    def forget_listed(self) -> None:
        """Every page is to be listed again (files failed and the albums were re-arranged)."""
        self.renderer.forget_listed()
        self.cache.forget_claims()

    def _changed(self, task, recorded: str | None) -> bool:
        if self.sink.has(task.dest_uri):  # written early in this build: again only if it changed since
            return recorded != task.key  # (the key it was written with)
        options = self.options
        path = os.path.join(self.report.output, *task.dest_uri.split("/"))
        return (
            options.force
            or recorded != task.key
            or (task.album_uri is not None and _album_forced(task.album_uri, options))
            or task.dest_uri in self.damaged
            or not os.path.exists(path)
            or self.leads_out(os.path.dirname(path))
        )

    def flush(self) -> None:
        cache, offered = self.cache, self.offered
        self.offered, self.held = [], 0
        if not offered:
            return
        conflict = cache.claim_pages([(t.dest_uri, t.template) for t in offered])
        if conflict is not None:
            uri, before, now = conflict
            raise BuildError(
                f"two pages claim one output path: {uri} ({before or 'generated'} and {now or 'generated'})",
                hint="rename one of the folders or files involved",
            )
        recorded = cache.page_keys(t.dest_uri for t in offered)
        pending = [t for t in offered if self._changed(t, recorded.get(t.dest_uri))]
        unknown = {t.dest_uri for t in pending if t.dest_uri not in recorded}  # never written by a build here
        cache.mark_current(t.dest_uri for t in offered)
        del offered, recorded
        if not pending:
            return
        cache.reserve_outputs(t.dest_uri for t in pending)  # recorded before written: an interrupted build can clean up
        for task in pending:
            again = self.sink.has(task.dest_uri)
            if (task.dest_uri in unknown and not again and not self.report.output_was_ours
                    and _foreign(self.report.output, task.dest_uri)):
                self.report.replaced.append(task.dest_uri)
            self.sink.write(task.dest_uri, self.renderer.render(task).content, again=again)
            if self.reporter is not None:
                self.reporter.advance(task.dest_uri)
            else:
                self.early.append(task.dest_uri)
        cache.stamp_outputs(self.sink.take_stamps())
        cache.set_page_keys([(t.dest_uri, t.key) for t in pending])  # after the page is written
        self.report.pages_rendered += len(pending)


def _albumen_was_here(output: Path) -> bool:
    """Whether an earlier build wrote this output (its theme's albumen.css or albumen.js are there):
    then files its cache has no record of (the cache was lost) are its own, not someone else's."""
    return any((output / "static" / name).is_file() for name in ("albumen.css", "albumen.js"))


def _foreign(output: Path, dest_uri: str) -> bool:
    """Whether a file is there that Albumen did not make (its pages and feeds name it as generator)."""
    try:
        with open(os.path.join(output, *dest_uri.split("/")), "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return b"Albumen" not in head


class _EarlyPages:
    """The pages of every album whose images are all made, written while the workers make the rest.

    The last image then leaves only a few albums' pages (and the stream, feeds and sitemap) to write,
    instead of every page. This holds while no file fails: a failure drops that file and
    re-arranges the albums (counts, covers), so from the first one nothing more is written early,
    and every page is listed again after the images (a page written early that did not change is
    not written twice: its key is recorded). Pages written early stay part of the site whatever
    fails later: their album has media that were made, and its page count depends only on those.
    """

    def __init__(self, gallery: Gallery, todo: list, paced: bool = True) -> None:
        """todo: the jobs not made yet. paced: leave gaps between slices of work (see work), in which
        several workers get their next tasks (one worker has enough queued ahead). Pages are written
        once `writer` is set."""
        self.writer: _PageWriter | None = None
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
        for job in todo:
            owner = gallery.media[job.job_id].album_uri
            if owner in self.waits:
                self.waits[owner] += 1
            for album in covers.get(job.job_id, ()):
                self.waits[album] += 1
                self.covers.setdefault(job.job_id, []).append(album)
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


def _renderer(gallery: Gallery, plan: SitePlan, cache: BuildCache, config, theme):
    """The page renderer, its templates compiled. Views are built from the gallery when pages are listed.

    Jinja and the page code are imported here, while the workers make images, not at start-up."""
    from .render.pages import RenderContext, SiteRenderer

    renderer = SiteRenderer(
        RenderContext(
            gallery, plan, _CachedPlaceholders(plan, cache), config, theme, digests=_ViewDigests(cache),
            compiled=cache.folder,
        )
    )
    renderer.compile_templates()
    return renderer


def private_links(gallery: Gallery, config, report: BuildReport | None = None) -> dict[str, str]:
    """Folder (p/<token>) of every album that has its own private link; the secret is made on first use."""
    marked = marked_private(gallery)
    if report is not None:
        report.warnings.extend(rotation_warnings(marked, config))
    if not marked:
        return {}
    secret = load_secret()
    if secret.created and report is not None:
        report.notes.append(
            f"created the secret for private links in {secret.origin}: private URLs depend on it, keep a copy "
            "(or set ALBUMEN_SECRET)"
        )
    return private_dirs(marked, secret.key, current_rotations(config.private_rotations))


def marked_private(gallery: Gallery) -> list[str]:
    """The albums that have a private link of their own, sorted."""
    return sorted(uri for uri, album in gallery.albums.items() if uri and album.marked_private)


def rotation_warnings(marked: list[str], config) -> list[str]:
    """A private_rotations entry that names no private album rotates nothing: the link it was meant
    to revoke stays published, so it is a warning (--strict fails), with the album meant when it
    differs only in capitals or Unicode form."""
    import unicodedata

    def loose(uri: str) -> str:
        return unicodedata.normalize("NFC", uri).casefold()

    out = []
    for uri, _count in config.private_rotations:
        if uri in marked:
            continue
        near = next((m for m in marked if loose(m) == loose(uri)), None)
        hint = f"did you mean {near!r}?" if near else "album paths are relative to the photo folder, as 'albumen links' lists them"
        out.append(f"private_rotations: {uri!r} is not a private album, so it rotates no link ({hint})")
    return out


def _warn_public_leftovers(gallery: Gallery, config, output: Path, cache: BuildCache, report: BuildReport) -> set[str]:
    """A private album's old public folder that this cache did not record (another machine, a lost cache)
    cannot be removed safely: say so loudly. Returns the folders named."""
    from .process.plan import safe_segment, slugify

    make = slugify if config.pages.slugs == "ascii" else safe_segment
    named: set[str] = set()
    for uri, album in gallery.albums.items():
        if not uri or not album.marked_private:
            continue
        public = "/".join(make(part) for part in uri.split("/"))
        index = f"{public}/index.html"
        if (output / public / "index.html").is_file() and not cache.has_output(index):
            report.warnings.append(
                f"{uri} is private, but {output / public} holds a public copy this build did not record "
                "(an earlier build with another cache?): delete that folder"
            )
            named.add(public)
    return named


_UNLISTED_KEY = "unlisted_pages"


def _warn_unlisted_pages(
    output: Path, cache: BuildCache, report: BuildReport, walk: bool, current, skip: set[str] = frozenset()
) -> None:
    """Name the folders of Albumen pages in the output that this build did not write.

    Albumen removes only files its cache records, so after the cache was lost (new or unreadable, on
    an output an earlier build wrote: walk=True) the pages of an album made private since, or
    removed, would stay published at their old address without a word. The output is walked then
    (once: folders only, pruned at each folder found, and one index.html head read per folder not
    among this build's pages), and the folders found are recorded in the cache, so that later builds
    name them again while they are there. current(dest_uri): whether this build wrote that page.
    skip: folders already named (see _warn_public_leftovers).
    """
    try:
        stored = json.loads(cache.get_meta(_UNLISTED_KEY) or "[]")
    except ValueError:
        stored = []
    found: dict[str, None] = {}  # ordered set
    for folder in stored if isinstance(stored, list) else ():
        if isinstance(folder, str) and folder not in skip and _unlisted_page(output, folder, current):
            found[folder] = None
    if walk:
        for dirpath, dirnames, filenames in os.walk(output):  # never through a symbolic link
            dirnames.sort()
            folder = Path(dirpath).relative_to(output).as_posix()
            folder = "" if folder == "." else folder
            if folder in skip or folder in found:
                dirnames[:] = []
            elif "index.html" in filenames and folder and _unlisted_page(output, folder, current):
                found[folder] = None
                dirnames[:] = []  # the pages under it are named through it
    cache.set_meta(_UNLISTED_KEY, json.dumps(list(found)[:1000]) if found else None)
    if found:
        report.warnings.append(
            f"{output} holds pages of an earlier build that this one did not write, in "
            f"{plural(len(found), 'folder')}: {some([f + '/' for f in found])}. They may be pages of albums "
            "that are private or gone now, still published at their old address; nothing was removed, because "
            "the build cache that lists the files Albumen wrote here was lost (it was new or unreadable when "
            "they were found). Build into an empty folder, or delete them"
        )


def _unlisted_page(output: Path, folder: str, current) -> bool:
    """Whether folder/index.html is a page Albumen made (its generator tag) that this build did not write."""
    uri = f"{folder}/index.html"
    if current(uri):
        return False
    try:
        with open(os.path.join(output, *uri.split("/")), "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    return b'<meta name="generator" content="Albumen' in head


def _fingerprint(
    listings, walk_report: WalkReport, loaded: LoadedConfig, theme: Path | None, source: Path, output: Path
) -> str:
    """Everything a build reads, by name, size and modification time: when it is unchanged, so is the site.

    The photo folder's listing (every file it holds, sidecars and captions included, and where each
    symbolic link leads, with the index.md files above a link's target that the walk does not list),
    the config, the theme's files, the time zone, the private-link secret and rotations, and Albumen's
    version.
    """
    from . import __version__
    from .process.specs import PROCESSING_VERSION, STILLS_VERSION, VIDEOS_VERSION
    from .scan.dates import local_zone_name
    from .tokens import albumen_home

    h = hashlib.sha256()
    h.update(f"{__version__}\0{PROCESSING_VERSION}\0{STILLS_VERSION}\0{VIDEOS_VERSION}\0{source}\0{output}\0{loaded.config!r}\0".encode())
    h.update(f"{local_zone_name()}\0{os.environ.get('ALBUMEN_SECRET', '')}\0".encode("utf-8", "surrogateescape"))
    for extra in (albumen_home() / "secret", albumen_home() / "rotations.json"):
        try:
            h.update(extra.read_bytes())
        except OSError:
            h.update(b"-")
    for folder in theme_dirs(theme):
        for path in sorted(folder.rglob("*")):
            st = path.stat()
            h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0".encode("utf-8", "surrogateescape"))
    for listing in listings:
        h.update(f"D{listing.src_uri}\0".encode("utf-8", "surrogateescape"))
        for entry in listing.files:
            h.update(f"{entry.name}\0{entry.size}\0{entry.mtime_ns}\0".encode("utf-8", "surrogateescape"))
    for link in walk_report.links:
        h.update(f"L{link.src_uri}\0{link.real_uri}\0{link.walked_as}\0".encode("utf-8", "surrogateescape"))
    for folder, entries in walk_report.marks.items():
        h.update(f"M{folder}\0".encode("utf-8", "surrogateescape"))
        for entry in entries or ():
            h.update(f"{entry.name}\0{entry.size}\0{entry.mtime_ns}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def _restore_summary(text: str | None, report: BuildReport) -> bool:
    """The last build's counts and messages, for a build that had nothing to do."""
    if not text:
        return False
    try:
        data = json.loads(text)
        report.albums, report.photos, report.videos = data["albums"], data["photos"], data["videos"]
        report.ignored = data["ignored"]
        report.skipped = [Skipped(uri, reason) for uri, reason in data["skipped"]]
        report.warnings += data["warnings"]
        report.notes += data["notes"]
    except (ValueError, KeyError, TypeError):
        return False
    return True


def _warn_unmatched_force(gallery: Gallery, options: BuildOptions, report: BuildReport) -> None:
    """A --force-album pattern that matches no album is a mistake worth naming (it redoes nothing)."""
    for pattern in options.force_albums:
        glob = album_path(pattern)  # 'Trip/', './Trip' or 'Trip\\' is the album Trip
        if any(fnmatch.fnmatchcase(uri, glob) for uri in gallery.albums):
            continue
        near = [uri for uri in gallery.albums if uri and fnmatch.fnmatchcase(uri.casefold(), glob.casefold())]
        hint = f" (did you mean {near[0]!r}? album paths are case-sensitive)" if near else (
            " (give an album's folder path relative to the photo folder, e.g. 'Trips/2024*')")
        report.warnings.append(f"--force-album {pattern!r} matches no album: nothing was redone for it{hint}")


def _album_forced(album_uri: str, options: BuildOptions) -> bool:
    """--force-album GLOB matches album paths relative to the source ('' is the top album)."""
    return any(fnmatch.fnmatchcase(album_uri, album_path(g)) for g in options.force_albums)


class _Relocator:
    """Finds a derivative this tool already made under another folder (an album renamed, made private
    or public again): same content, same recipe, same file name. It is linked into place instead of
    being made again."""

    def __init__(self, cache: BuildCache, output: Path) -> None:
        self.cache = cache  # its manifest of outputs, as it was before this build recorded any
        self.output = output
        self.moved: list[tuple[str, int, int]] = []  # (dest_uri, size, mtime_ns) of each file put in place

    def __call__(self, dest_uri: str) -> bool:
        old = self.cache.output_named(posixpath.basename(dest_uri), other_than=dest_uri)
        if old is None:
            return False
        old_uri, size, mtime_ns = old
        src = os.path.join(self.output, *old_uri.split("/"))
        dst = os.path.join(self.output, *dest_uri.split("/"))
        try:
            check_inside(os.path.dirname(src), str(self.output))
            check_inside(os.path.dirname(dst), str(self.output))
            st = os.stat(src, follow_symlinks=False)
        except OSError:  # (OutsideRoot too: the worker that makes it anew says why)
            return False
        if not stat.S_ISREG(st.st_mode) or (size is not None and (st.st_size, st.st_mtime_ns) != (size, mtime_ns)):
            return False  # not the file this tool made there any more
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        # under a name of our own first, then renamed over whatever is at dst (a link there is
        # replaced, never written through)
        tmp = os.path.join(os.path.dirname(dst), f"{TMP_PREFIX}{os.getpid()}-relocated-{os.path.basename(dst)[:40]}")
        try:
            try:
                os.link(src, tmp)
            except OSError:
                shutil.copy2(src, tmp, follow_symlinks=False)
            os.replace(tmp, dst)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return False
        st = os.stat(dst, follow_symlinks=False)
        self.moved.append((dest_uri, st.st_size, st.st_mtime_ns))
        return True


class _LinksOut:
    """Whether a media's folder leads out of the output through a symbolic link: one listing of each
    album folder (its entries say which are links) rather than one lstat per media folder."""

    def __init__(self, output: Path) -> None:
        self.root = str(output)
        self.links: dict[str, frozenset[str] | None] = {}  # album folder -> its entries that are links;
        # None: the album folder itself leads out

    def __call__(self, folder: str) -> bool:
        if folder == self.root:
            return False
        parent, name = os.path.split(folder)
        if parent not in self.links:
            try:
                check_inside(parent, self.root)
                with os.scandir(parent) as entries:
                    self.links[parent] = frozenset(e.name for e in entries if e.is_symlink())
            except OutsideRoot:
                self.links[parent] = None
            except OSError:  # not made yet
                self.links[parent] = frozenset()
        links = self.links[parent]
        if links is None:
            return True
        if name not in links:
            return False
        try:
            check_inside(folder, self.root)
        except OutsideRoot:
            return True
        return False


def _remaining(
    job: ImageJob | VideoJob, plan: SitePlan, known: set[str], output: Path, forced: bool, relocate: _Relocator,
    leads_out: _LinksOut, damaged: dict[str, int | None], touched: list[tuple[str, int, int]],
) -> ImageJob | VideoJob | None:
    """The part of a job still to do: its missing outputs, and its placeholder when the cache lacks it.

    damaged: outputs the last build wrote that were missing or changed at the start of this one,
    with the size written: one there with another size is made again; one that kept its size (a
    copy or a touch changed its time) is still the file made, and is added to `touched` (stamps)."""
    if forced:
        return job

    def absent(dest_uri: str) -> bool:
        path = os.path.join(output, *dest_uri.split("/"))
        if dest_uri in damaged:
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError:
                st = None
            if st is not None and stat.S_ISREG(st.st_mode) and st.st_size == damaged[dest_uri]:
                touched.append((dest_uri, st.st_size, st.st_mtime_ns))
                return False
            if st is not None:
                return True
        return not os.path.exists(path) and not relocate(dest_uri)

    if leads_out(os.path.join(output, *plan.media[job.job_id].dest_dir.split("/"))):
        return job  # outputs behind a link leading out are not this site's: the job (which refuses
        # to write there) fails, and the media is skipped with the reason
    missing = tuple(s for s in job.outputs if absent(s.dest_uri))
    captions = tuple(dest for _, dest in getattr(job, "tracks", ()) if absent(dest))
    thumb = plan.media[job.job_id].thumb
    need_placeholder = _placeholder_key(thumb.dest_uri) not in known
    if not (missing or captions or need_placeholder):
        return None
    source = os.path.join(output, *thumb.dest_uri.split("/")) if need_placeholder and thumb not in missing else None
    if isinstance(job, VideoJob):
        return replace(job, todo=tuple(s.dest_uri for s in missing) + captions, placeholder_source=source)
    if len(missing) == len(job.outputs) and source == job.placeholder_source:
        return job  # all of it: the planned job itself, not a copy
    return replace(job, outputs=missing, placeholder_source=source)


def _video_encoder(gallery: Gallery, ffmpeg: str | None) -> str:
    """What encodes this build's videos, with its version (part of their recipe); asked only when there are videos."""
    if not any(m.kind == "video" for m in gallery.media.values()):
        return ""
    from .process.video import encoder_identity

    return encoder_identity(ffmpeg)


def _ffmpeg(loaded: LoadedConfig) -> str | None:
    """The system ffmpeg named by videos.ffmpeg: a path (relative to the config) or a command on PATH."""
    value = loaded.config.videos.ffmpeg
    if not value:
        return None
    if "/" not in value and os.sep not in value:
        found = shutil.which(value)
        if found is None:
            raise UsageError(
                f"videos.ffmpeg: {value!r} is not on the PATH (for a file beside the config, write './{value}')"
            )
        return found
    path = loaded.resolve(value)
    if path is None or not os.access(path, os.X_OK):
        raise UsageError(f"videos.ffmpeg: {path} is not an executable file")
    return str(path)


def _placeholder_key(thumb_uri: str) -> str:
    """Placeholders are keyed by the thumbnail's file name (content + recipe hash), not its folder,
    so a photo whose album moves keeps its placeholder."""
    return posixpath.basename(thumb_uri)


class _CachedPlaceholders:
    """Each media's placeholder, read from the cache when a page needs it (keyed by thumbnail name):
    a 100,000-photo build holds only those of the page being made."""

    def __init__(self, plan: SitePlan, cache: BuildCache) -> None:
        self.plan = plan
        self.cache = cache
        self.batch: dict[str, tuple[str, str]] = {}  # thumbnail name -> row, for the page being made

    def _key(self, uri: str) -> str | None:
        media_plan = self.plan.media.get(uri)
        return _placeholder_key(media_plan.thumb_uri) if media_plan else None

    def prefetch(self, uris: Iterable[str]) -> None:
        self.batch = self.cache.get_placeholders(key for key in map(self._key, uris) if key)

    def get(self, uri: str, default: Placeholder) -> Placeholder:
        key = self._key(uri)
        if key is None:
            return default
        # a placeholder never changes under its name (content + recipe): one missing from the batch
        # may have been made since
        row = self.batch.get(key) or self.cache.get_placeholder(key)
        return Placeholder(*row) if row else default


class _ViewDigests:
    """Digests of the media views this build fingerprinted, in a temporary table of the cache (not
    in memory: one per photo of the library)."""

    def __init__(self, cache: BuildCache) -> None:
        self.cache = cache

    def put(self, rows: list[tuple[str, str]]) -> None:
        self.cache.put_view_digests(rows)

    def get(self, uris: Iterable[str]) -> dict[str, str]:
        return self.cache.view_digests(uris)


def _drop_failed(gallery: Gallery, failed: list[tuple[str, str]], config) -> None:
    if not failed:
        return
    for job_id, error in failed:
        gallery.media.pop(job_id, None)
        gallery.skipped.append(Skipped(job_id, error))
    arrange_gallery(gallery, config.sort.albums, config.sort.media)


def _remove_stale(
    output: Path, stale: Iterable[tuple[str, int | None, int | None]]
) -> tuple[int, list[str], list[str]]:
    """Remove stale outputs: each only while it is still the file this tool wrote there (same size
    and modification time as recorded; an output recorded without them is this tool's path all the
    same), and never through a symbolic link leading out of the output. Returns how many were
    removed, the paths kept because someone changed them since, and those left behind such a link."""
    removed = 0
    kept: list[str] = []
    linked: list[str] = []
    root = str(output)
    folders: set[str] = set()
    for dest_uri, size, mtime_ns in stale:
        path = os.path.normpath(os.path.join(root, *dest_uri.split("/")))
        if not path.startswith(root.rstrip(os.sep) + os.sep):
            continue
        try:
            check_inside(os.path.dirname(path), root)  # never through a link leading out of the output
        except OutsideRoot:
            linked.append(dest_uri)
            continue
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            st = None
        if st is not None and stat.S_ISREG(st.st_mode):
            if size is not None and (st.st_size, st.st_mtime_ns) != (size, mtime_ns):
                kept.append(dest_uri)
                continue
            try:
                os.unlink(path)
                removed += 1
            except OSError:
                continue
        folders.add(os.path.dirname(path))
    for folder in sorted(folders, key=len, reverse=True):  # deepest first; only folders left empty
        while folder.startswith(root.rstrip(os.sep) + os.sep):
            try:
                os.rmdir(folder)
            except OSError:
                break
            folder = os.path.dirname(folder)
    return removed, kept, linked


def _remove_temp_files(output: Path) -> None:
    for dirpath, _, names in os.walk(output):
        remove_temp_files(dirpath, names)
