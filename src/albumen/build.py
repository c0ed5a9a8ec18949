"""The one place that runs the stages in order.

load_config -> scan_source -> plan_site -> run_jobs -> render_pages -> write (sink)

Each stage's bookkeeping lives with it: the work still to do and the results' tally in process/
(remaining, results), the page writer and the pages written while images are made in
render/writer, stale files, relocated files and leftovers in write/ (stale, relocate, leftovers),
and what one build leaves for the next in lastbuild.

Incremental by construction: unchanged files are not re-read (stat fingerprint in
the cache), derivatives whose content+recipe-named file exists are not re-made,
pages whose fingerprint is unchanged are not re-rendered, and files are written
only when their bytes change. Stale outputs (and only files Albumen wrote) are
removed at the end, so an interrupted build still leaves every page's references
in place.
"""

from __future__ import annotations

import gc
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .cache import BuildCache
from .config import LoadedConfig
from .errors import AlbumenError, UsageError
from .fsutil import forget_resolved
from .lastbuild import fingerprint, restore_summary, save_summary, with_secret
from .locks import hold_output
from .model import Gallery, forget_facts_read
from .options import BuildOptions, album_forced, unmatched_force
from .paths import cache_location, check_home, check_paths
from .pool import WorkerPool
from .process.cluster import DaskCluster, cluster_for
from .process.executor import run_jobs
from .process.names import public_dir
from .process.plan import media_job, plan_jobs, plan_site
from .process.remaining import placeholder_key, remaining_jobs
from .process.results import Tally
from .render.hooks import PluginGallery, template_dirs
from .render.writer import EarlyPages, PageWriter, make_renderer, render_pages
from .report import BuildReport, QuietReporter, Reporter, plural, some
from .scan import WalkReport, check_private, password_albums, scan_source, walk_source
from .scan.arrange import is_published
from .scan.walk import DirListing, listing_digest, listing_text
from .seal.keys import load_units
from .tokens import marked_private, private_links
from .write import DiskSink, outputs_not_as_written, outputs_not_as_written_by
from .write.extra import write_extra_outputs
from .write.leftovers import albumen_was_here, public_leftovers, unlisted_pages
from .write.stale import damaged_note, remove_all_temp_files, remove_stale_outputs

__all__ = ["BuildOptions", "BuildReport", "Reporter", "build"]

# Placeholders of photos no longer in the site stay in the cache until they are more than a tenth of
# those in use and this many: forgetting them meant sending every thumbnail's name to SQLite in each
# build (0.45 s of a one-photo rebuild of 100,000 photos), and a photo edited back finds its own again.
PLACEHOLDERS_SPARE = 100


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
    theme = loaded.resolve(config.theme.path)
    # the folders and programs the config names, checked together: every problem is told at once
    problems: list[AlbumenError] = []

    def checked(check):
        try:
            return check()
        except AlbumenError as exc:
            problems.append(exc)
            return None

    if theme is not None and not theme.is_dir():
        problems.append(UsageError(f"theme folder not found: {theme}", hint="check the 'theme.path' setting"))
    elif theme is not None and not (theme / "templates").is_dir() and not (theme / "static").is_dir():
        problems.append(UsageError(f"theme folder {theme} has neither templates/ nor static/", hint="check the 'theme.path' setting"))
    cache_dir = checked(lambda: cache_location(loaded, source, output))
    checked(lambda: check_home(source, output))
    ffmpeg = checked(lambda: _ffmpeg(loaded))  # a wrong videos.ffmpeg stops here, before anything is written
    cluster = checked(lambda: cluster_for(options.scheduler if options.scheduler is not None else config.scheduler))
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
            report = BuildReport(source=source, output=output, cache=cache_dir, output_was_ours=albumen_was_here(output))
            report.warnings.extend(unlocked)
            cache = BuildCache(cache_dir)
            report.warnings.extend(cache.warnings)
            workers = pool if pool is not None else WorkerPool(options.jobs)
            frozen = gc.get_freeze_count()  # (objects someone else froze stay frozen)
            try:
                _run(loaded, options, reporter, cache, workers, report, theme, ffmpeg, cluster)
            except BaseException:
                # interrupted (Ctrl-C, SIGTERM) or failed: the workers are stopped, and the ffmpeg each
                # ran with them, before the temporary files they were writing are removed (none is
                # another build's: this one holds the output)
                workers.stop()
                if cluster is not None:
                    cluster.stop()
                remove_all_temp_files(output)
                raise
            finally:
                forget_facts_read()  # (a serving process keeps none of this build's)
                if not frozen:
                    gc.unfreeze()  # what the scan and the plan made can be collected again (a serving process)
                if pool is None:
                    workers.close()
                if cluster is not None:
                    cluster.close()
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


# files in the photo folder from which the workers list folders too (and look at the site when nothing
# changed): a rebuild with nothing changed, tiny photos, best of 8 alone / with them: 10,000 0.15 / 0.24 s,
# 30,000 0.43 / 0.34 s, 100,000 1.42 / 0.85 s (the pool's start, ~0.17 s, pays from ~20,000)
PARALLEL_WALK = 25_000


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while the walk, the scan and the plan make the listings,
    the gallery and its plan (~10 objects a photo, no cycles, kept until the build ends or let go by
    reference counts), then told to leave what they made alone (gc.freeze) until the build ends (see
    build): it walked every one of them again at each full collection, ~7% of the build process's CPU
    in a one-photo rebuild of 20,000 photos."""
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()
    if paused:
        gc.freeze()  # (never walked by the collector again; still freed when no longer used)


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
    loaded: LoadedConfig, options: BuildOptions, reporter: Reporter, cache: BuildCache, pool: WorkerPool,
    report: BuildReport, theme: Path | None, ffmpeg: str | None, cluster: DaskCluster | None = None,
) -> None:
    """The stages, in order: scan, plan, make the images (pages of finished albums written meanwhile),
    render the other pages, remove what is no longer part of the site. Files are read by the local
    pool's workers, images made by the cluster's when there is one."""
    config = loaded.config
    source, output = report.source, report.output
    reporter.phase("Scanning")
    walk_report = WalkReport()
    # a large photo folder (as the last walk found it) is listed, and its site looked at, with the workers' help
    walked = int(cache.get_meta("walked") or 0)
    helped = walked >= PARALLEL_WALK
    if helped:
        pool.start()
    listings: list[DirListing] = []
    # each folder's digest for the fingerprint, made while the walk waits for the workers (their texts,
    # ~45 bytes a file, are not held)
    digests: list[str] = []
    with _collector_paused():  # (a million files' entries: 11 full collections, 1.6 s)
        for listing in walk_source(str(source), config.ignore, walk_report, pool if helped else None):
            listings.append(listing)
            digests.append(listing_digest(listing_text(listing)))
    if (files := sum(listing.file_count() for listing in listings)) != walked:
        cache.set_meta("walked", str(files))
    config_path = str(loaded.path) if loaded.path else None
    private = check_private(listings, str(source), config.private, config_path)  # before anything is read or written
    private |= password_albums(listings, config, report.warnings)  # password albums are private (see seal)
    forget_resolved()  # see fsutil.check_inside: the output's folders as they are now
    plugins = _plugins(config)  # each stage calls the hooks of the work it owns
    folders: dict[str, str] = {}  # each folder's own digest: album fingerprints start from it (render.albumkeys)
    read = fingerprint(listings, walk_report, loaded, theme, source, output, template_dirs(plugins), folders, digests)
    del digests
    damaged: dict[str, int | None] = {}  # the last build's files missing or changed since -> the size written
    if (
        not options.force
        and not options.force_albums
        and cache.get_meta("building") != "1"
        and cache.get_meta("fingerprint") == with_secret(read)
    ):
        # nothing in the photo folder, the config or the theme changed: the site is as the last build
        # left it when every file it wrote is there as it wrote it (one stat each, nothing read)
        damaged = (
            outputs_not_as_written_by(pool, str(output), cache.output_spans(4 * pool.workers)) if helped
            else outputs_not_as_written(str(output), cache.output_stamps())
        )
        if not damaged and (output / "index.html").is_file() and restore_summary(cache.get_meta("summary"), report):
            report.unchanged = True
            # as the last build found
            report.warnings += unlisted_pages(output, cache, walk=False, current=lambda uri: False)
            return
    if cache.get_meta("building") == "1":
        remove_all_temp_files(output)  # the last build was interrupted
    cache.set_meta("building", "1")
    if not pool.started:
        # something changed: the workers start now (fork, imports: a tenth of a second on another core),
        # ready when the scan has a file to read or the plan an image to make (a photo added to 100,000:
        # 1.92 -> 1.68 s); a build that needs none lets them go unused
        pool.start()
    cache.set_meta("fingerprint", None)
    with _collector_paused():
        gallery = scan_source(
            str(source), config, cache, reporter, pool, walked=(listings, walk_report), config_path=config_path,
            private=private, plugins=plugins, folders=folders, reread=True,  # (the cache is open until the build ends)
        )
    del listings, walk_report  # every file's entry: the gallery holds what is still needed
    links = private_links(gallery, config, report)
    units = load_units(gallery, config, links, report.warnings)  # password albums' keys (see seal)
    if units and cluster is not None:
        report.notes.append("password albums' keys travel with their jobs to the Dask workers, which encrypt their "
                            "files: use a scheduler you trust, over TLS")
    with _collector_paused():
        plan = plan_site(gallery, config, str(output), str(source), links, _video_encoder(gallery, ffmpeg), plugins, units)
    leftovers, reported = public_leftovers(
        output, cache, ((uri, public_dir(uri, config.pages.slugs)) for uri in marked_private(gallery))
    )
    report.warnings += leftovers
    report.warnings += unmatched_force(gallery.albums, options)
    if not gallery.media and not gallery.skipped:
        report.warnings.append(f"no photos or videos in {source}: the site has no pictures (is it the right folder?)")

    def forced(album_uri: str | None) -> bool:
        return options.force or (album_uri is not None and album_forced(album_uri, options))

    # -- images ----------------------------------------------------------------
    # Memory stays flat as the library grows: sets of every output path live in SQLite (the cache's
    # temporary tables), not in this process, and no worker result is kept once counted.
    def jobs(unfinished):  # made one at a time, as asked for, and only for media with work left
        return plan_jobs(gallery, plan, config, str(output), str(source), ffmpeg, only=unfinished, settled=settled)

    # the renderer, made now: albums whose pages were recorded with the derivatives they show now are
    # settled, and their media's outputs are not looked for (a file deleted from the output since is put
    # back by the next build with nothing changed, which looks at every file the last one wrote)
    renderer = make_renderer(gallery, plan, cache, config, theme, plugins, str(output), folders)
    settled = set() if damaged or options.force else {u for u in renderer.settled_albums() if not forced(u)}

    def job(uri: str):  # one media's planned job, made again (see process.todo)
        return media_job(gallery, plan, config, str(output), str(source), ffmpeg, uri)

    todo, report.derivatives_moved = remaining_jobs(
        jobs, plan, cache, output, lambda uri: forced(gallery.media[uri].album_uri), damaged, make=job
    )
    if todo:  # (a phase with nothing to do would show as an empty bar)
        videos = todo.videos
        kinds = "photos and videos" if 0 < videos < len(todo) else "videos" if videos else "photos"
        reporter.phase(f"Processing {kinds}", total=len(todo))
    tally = Tally(gallery, plan, cache, report, reporter)
    sink = DiskSink(str(output))
    sink.defer_replacements = True  # a build stopped part-way leaves a site whose every link leads somewhere
    writer: PageWriter | None = None
    makers = pool if cluster is None else cluster
    if cluster is not None:
        pool.release()  # the files are read: the local workers exit, the cluster makes the images
    early = EarlyPages(gallery, todo.ids(), paced=makers.parallel, later=units)
    results = run_jobs(todo, makers)
    del todo  # each job is let go once made (see run_jobs): a big library's jobs do not all stay
    for result in results:
        if writer is None:  # the workers have their first tasks: get the page writer ready meanwhile
            writer = early.writer = PageWriter(renderer, sink, cache, report, forced, damaged, settled)
        if not tally.take(result):
            early.stop()
            continue
        early.made(result.job_id)
        tally.send(pages_waiting=early.ready)  # the pages about to be written show their placeholders
        early.work(seconds=0.025)
    del results
    makers.release()  # pages are rendered in this process: the workers exit meanwhile
    if cluster is not None and cluster.tasks:
        report.notes.append(cluster.summary())
    tally.finish()
    listed = early.finish()  # albums whose pages are all written and listed
    tally.drop_failed(config)

    # -- pages ------------------------------------------------------------------
    # views read the gallery as it is now
    writer = writer or PageWriter(renderer, sink, cache, report, forced, damaged, settled)
    kept = renderer.settled  # (their media's outputs are counted already: see PageWriter.settle)
    cache.add_outputs(
        out for uri, media in gallery.media.items() if media.album_uri not in kept for out in plan.media[uri].output_uris()
    )
    render_pages(writer, listed, reporter, config)
    writer.commit()  # the pages that replace the last build's, now that every new one is written
    del writer, listed
    write_extra_outputs(plugins, PluginGallery(renderer), sink, cache, output, damaged)  # the plugins' own files

    # -- stale outputs: only files this tool recorded, and never outside the output ----------
    stale = remove_stale_outputs(cache, output)
    report.stale_removed = stale.removed
    cache.forget_other_pages()
    if cache.placeholder_count() > len(gallery.media) * 1.1 + PLACEHOLDERS_SPARE:
        cache.keep_placeholders(placeholder_key(mp.thumb_uri) for mp in plan.media.values())
    report.albums = sum(1 for a in gallery.albums.values() if is_published(a))
    kinds = [m.info.kind for m in gallery.media.values()]
    report.photos, report.videos = kinds.count("image"), kinds.count("video")
    del kinds
    report.ignored = gallery.ignored
    report.skipped = sorted(gallery.skipped, key=lambda s: s.src_uri)
    report.warnings += gallery.warnings + plan.warnings + renderer.warnings
    report.warnings += list(dict.fromkeys(plugins.problems)) if plugins else []  # (a hook asked twice says it once)
    report.notes += renderer.notes
    save_summary(cache, report)
    # else the next build reads those files again (or runs the plugins that failed), even with nothing changed
    if not gallery.unsettled and not (plugins and plugins.problems):
        cache.set_meta("fingerprint", with_secret(read))
    cache.set_meta("building", None)
    report.pages_written = sink.written
    # said once, not with the summary a build with nothing to do repeats
    if report.replaced:
        report.warnings.append(
            f"replaced {plural(len(report.replaced), 'file')} in {output} that Albumen had not made: {some(report.replaced)} "
            "(build into an empty folder to keep such files apart)"
        )
    # a lost cache: pages of an earlier build that this one did not write cannot be told from the user's
    # files by the manifest, so they are named (never removed), and named again while they stay
    report.warnings += unlisted_pages(output, cache, walk=report.output_was_ours and cache.started_empty,
                                      current=cache.is_current, skip=reported)
    report.notes += damaged_note(output, damaged) + stale.notes()
    report.warnings += stale.warnings()


def _plugins(config):
    """The plugins the config turns on, for this build (None without any: nothing of them is imported)."""
    if not config.loaded_plugins:
        return None
    from .plugins.manager import Plugins

    return Plugins(config.loaded_plugins)


def _video_encoder(gallery: Gallery, ffmpeg: str | None) -> str:
    """What encodes this build's videos, with its version (part of their recipe); asked only when there are videos."""
    if not any(album.video_count for album in gallery.albums.values()):  # (each counts its own: see arrange_gallery)
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
