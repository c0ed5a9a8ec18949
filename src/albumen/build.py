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
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from .cache import BuildCache, default_cache_dir
from .config import LoadedConfig
from .errors import SourceError, UsageError
from .fsutil import TMP_PREFIX
from .model import Gallery, Skipped
from .pool import WorkerPool
from .process.executor import run_jobs
from .process.plan import STATIC_DIR, SitePlan, plan_site
from .process.specs import ImageJob, JobResult, Placeholder, VideoJob
from .render.env import theme_dirs
from .render.pages import RenderContext, SiteRenderer, folder_index_pages
from .report import QuietReporter, Reporter
from .scan import WalkReport, arrange_gallery, scan_source, walk_source
from .scan.arrange import is_published
from .tokens import load_rotations, load_secret, private_dirs
from .write import DiskSink

__all__ = ["BuildOptions", "BuildReport", "Reporter", "build", "check_paths"]


@dataclass
class BuildOptions:
    source: Path
    output: Path
    jobs: int = 0  # 0: all cores
    strict: bool = False
    force: bool = False
    force_albums: tuple[str, ...] = ()  # glob patterns of album paths to redo


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
    images_processed: int = 0
    pages_rendered: int = 0
    pages_written: int = 0
    stale_removed: int = 0
    unchanged: bool = False  # nothing read, made or written: the sources were as the last build left them
    seconds: float = 0.0

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


def build(
    loaded: LoadedConfig, options: BuildOptions, reporter: Reporter | None = None, pool: WorkerPool | None = None
) -> BuildReport:
    """Build the whole site. Raises AlbumenError subclasses for usage, config and build failures.

    pool: workers already started by the caller (who closes them); by default the build starts
    its own when it has work for them.
    """
    reporter = reporter or QuietReporter()
    started = time.perf_counter()
    config = loaded.config
    source, output = check_paths(options.source, options.output)
    theme = loaded.resolve(config.theme)
    if theme is not None and not (theme / "templates").is_dir() and not (theme / "static").is_dir():
        raise UsageError(f"theme folder {theme} has neither templates/ nor static/", hint="check the 'theme' setting")
    cache_dir = cache_location(loaded, source, output)
    ffmpeg = _ffmpeg(loaded)  # a wrong videos.ffmpeg stops here, before anything is written
    report = BuildReport(source=source, output=output, cache=cache_dir)
    cache = BuildCache(cache_dir)
    report.warnings.extend(cache.warnings)
    try:
        if pool is not None:
            _run(loaded, options, reporter, cache, pool, report, theme, ffmpeg)
        else:
            with WorkerPool(options.jobs) as own:
                _run(loaded, options, reporter, cache, own, report, theme, ffmpeg)
    finally:
        cache.close()
    report.seconds = time.perf_counter() - started
    return report


def _run(
    loaded, options, reporter, cache: BuildCache, pool: WorkerPool, report: BuildReport, theme, ffmpeg: str | None
) -> None:
    config = loaded.config
    source, output = report.source, report.output
    output.mkdir(parents=True, exist_ok=True)
    reporter.phase("Scanning")
    walk_report = WalkReport()
    listings = list(walk_source(str(source), config.ignore, walk_report))
    fingerprint = _fingerprint(listings, loaded, theme, source, output)
    if (
        not options.force
        and not options.force_albums
        and cache.get_meta("building") != "1"
        and cache.get_meta("fingerprint") == fingerprint
        and (output / "index.html").is_file()
        and _restore_summary(cache.get_meta("summary"), report)
    ):
        report.unchanged = True  # nothing in the photo folder, the config or the theme changed
        return
    if cache.get_meta("building") == "1":
        _remove_temp_files(output)  # the last build was interrupted
    cache.set_meta("building", "1")
    cache.set_meta("fingerprint", None)
    gallery = scan_source(str(source), config, cache, reporter, pool, walked=(listings, walk_report))
    plan = plan_site(gallery, config, str(output), str(source), private_links(gallery, report))
    _warn_public_leftovers(gallery, config, output, cache.get_outputs(), report)

    # -- images ----------------------------------------------------------------
    known = cache.get_placeholders()

    def forced(uri: str) -> bool:
        return options.force or _album_forced(gallery.media[uri].album_uri, options)

    if ffmpeg:
        plan.jobs = {uri: replace(j, ffmpeg=ffmpeg) if isinstance(j, VideoJob) else j for uri, j in plan.jobs.items()}
    reuse = _Relocator(cache.get_outputs(), output)
    todo = [
        job
        for job in (_remaining(job, plan, known, output, forced(uri), reuse) for uri, job in plan.jobs.items())
        if job
    ]
    report.derivatives_moved = len(reuse.moved)
    cache.add_outputs(reuse.moved)
    cache.add_outputs(spec.dest_uri for job in todo for spec in job.outputs)
    reporter.phase("Processing images", total=len(todo))
    fresh: list[tuple[str, str, str]] = []

    def on_result(result: JobResult) -> None:
        reporter.advance(result.job_id)
        if not result.ok:
            reporter.note(f"skipped {result.job_id}: {result.error}")
        elif result.placeholder:
            thumb = _placeholder_key(plan.media[result.job_id].thumb.dest_uri)
            fresh.append((thumb, result.placeholder.colour, result.placeholder.data_uri))
            if len(fresh) >= 200:
                cache.put_placeholders(fresh)
                fresh.clear()

    results = run_jobs(todo, pool, on_result=on_result)
    cache.put_placeholders(fresh)
    report.images_processed = sum(1 for r in results.values() if r.ok)
    report.derivatives_made = sum(len(r.written) for r in results.values())
    placeholders = _placeholders(plan, results, cache.get_placeholders())
    _drop_failed(gallery, results, config)

    # -- pages ------------------------------------------------------------------
    renderer = SiteRenderer(RenderContext(gallery, plan, placeholders, config, theme))
    statics = {f"{STATIC_DIR}/{name}": path for name, path in renderer.static.items()}
    derivatives = [spec.dest_uri for uri, mp in plan.media.items() if uri in gallery.media for spec in mp.outputs]
    cache.add_outputs([*derivatives, *statics])
    old_keys = cache.get_page_keys()
    reporter.phase("Writing pages")
    sink = DiskSink(str(output))
    new_keys: dict[str, str] = {}
    pages: list[str] = []
    pending: list = []

    def flush() -> None:
        cache.add_outputs(t.dest_uri for t in pending)  # recorded before written: an interrupted build can clean up
        for task in pending:
            sink.write(task.dest_uri, renderer.render(task).content)
            new_keys[task.dest_uri] = task.key
            reporter.advance(task.dest_uri)
        pending.clear()

    for task in renderer.tasks():  # album by album: views never all in memory at once
        pages.append(task.dest_uri)
        if (
            options.force
            or old_keys.get(task.dest_uri) != task.key
            or (task.album_uri is not None and _album_forced(task.album_uri, options))
            or not os.path.exists(os.path.join(output, *task.dest_uri.split("/")))
        ):
            pending.append(task)
            if len(pending) >= 500:
                flush()
    flush()
    indexes = folder_index_pages(pages + derivatives + list(statics), config.pages.links)
    cache.add_outputs(p.dest_uri for p in indexes)
    for page in indexes:
        sink.write(page.dest_uri, page.content)
    for dest_uri, path in statics.items():
        sink.copy(dest_uri, str(path))
    current = {*pages, *derivatives, *statics, *(p.dest_uri for p in indexes)}

    # -- stale outputs: only files this tool recorded, and never outside the output ----------
    stale = cache.get_outputs() - current
    report.stale_removed = _remove_stale(output, stale)
    cache.remove_outputs(stale)
    cache.set_page_keys(new_keys, remove=[uri for uri in old_keys if uri not in current])
    cache.keep_placeholders({_placeholder_key(mp.thumb.dest_uri) for mp in plan.media.values()})
    report.albums = sum(1 for a in gallery.albums.values() if is_published(a))
    report.photos = sum(1 for m in gallery.media.values() if m.kind == "image")
    report.videos = sum(1 for m in gallery.media.values() if m.kind == "video")
    report.ignored = gallery.ignored
    report.skipped = sorted(gallery.skipped, key=lambda s: s.src_uri)
    report.warnings += gallery.warnings + plan.warnings
    report.notes += renderer.notes
    cache.set_meta("summary", json.dumps({
        "albums": report.albums, "photos": report.photos, "videos": report.videos, "ignored": report.ignored,
        "skipped": [[s.src_uri, s.reason] for s in report.skipped], "warnings": report.warnings,
        "notes": [n for n in report.notes if not n.startswith("created the secret")],
    }))
    cache.set_meta("fingerprint", fingerprint)
    cache.set_meta("building", None)
    report.pages_rendered = len(new_keys)
    report.pages_written = len(sink.written)


def private_links(gallery: Gallery, report: BuildReport | None = None) -> dict[str, str]:
    """Folder (p/<token>) of every album that has its own private link; the secret is made on first use."""
    marked = sorted(uri for uri, album in gallery.albums.items() if uri and album.marked_private)
    if not marked:
        return {}
    secret = load_secret()
    if secret.created and report is not None:
        report.notes.append(
            f"created the secret for private links in {secret.origin}: private URLs depend on it, keep a copy "
            "(or set ALBUMEN_SECRET)"
        )
    return private_dirs(marked, secret.key, load_rotations())


def _warn_public_leftovers(gallery: Gallery, config, output: Path, manifest: set[str], report: BuildReport) -> None:
    """A private album's old public folder that this cache did not record (another machine, a lost cache)
    cannot be removed safely: say so loudly."""
    from .process.plan import safe_segment, slugify

    make = slugify if config.pages.slugs == "ascii" else safe_segment
    for uri, album in gallery.albums.items():
        if not uri or not album.marked_private:
            continue
        public = "/".join(make(part) for part in uri.split("/"))
        index = f"{public}/index.html"
        if index not in manifest and (output / public / "index.html").is_file():
            report.warnings.append(
                f"{uri} is private, but {output / public} holds a public copy this build did not record "
                "(an earlier build with another cache?): delete that folder"
            )


def _fingerprint(listings, loaded: LoadedConfig, theme: Path | None, source: Path, output: Path) -> str:
    """Everything a build reads, by name, size and modification time: when it is unchanged, so is the site.

    The photo folder's listing (every file it holds, sidecars and captions included), the config,
    the theme's files, the time zone, the private-link secret and rotations, and Albumen's version.
    """
    from . import __version__
    from .process.specs import PROCESSING_VERSION
    from .scan.dates import local_zone_name
    from .tokens import albumen_home

    h = hashlib.sha256()
    h.update(f"{__version__}\0{PROCESSING_VERSION}\0{source}\0{output}\0{loaded.config!r}\0".encode())
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


def _album_forced(album_uri: str, options: BuildOptions) -> bool:
    """--force-album GLOB matches album paths relative to the source ('' is the top album)."""
    return any(fnmatch.fnmatchcase(album_uri, g) for g in options.force_albums)


class _Relocator:
    """Finds a derivative this tool already made under another folder (an album renamed, made private
    or public again): same content, same recipe, same file name. It is linked into place instead of
    being made again."""

    def __init__(self, manifest: set[str], output: Path) -> None:
        self.manifest = manifest
        self.output = output
        self._by_name: dict[str, str] | None = None
        self.moved: list[str] = []

    def __call__(self, dest_uri: str) -> bool:
        if self._by_name is None:
            self._by_name = {posixpath.basename(u): u for u in self.manifest if "." in posixpath.basename(u)}
        old = self._by_name.get(posixpath.basename(dest_uri))
        if old is None or old == dest_uri:
            return False
        src = os.path.join(self.output, *old.split("/"))
        dst = os.path.join(self.output, *dest_uri.split("/"))
        if not os.path.isfile(src):
            return False
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        try:
            os.link(src, dst)
        except OSError:
            try:
                shutil.copy2(src, dst)
            except OSError:
                return False
        self.moved.append(dest_uri)
        return True


def _remaining(
    job: ImageJob | VideoJob, plan: SitePlan, known: dict, output: Path, forced: bool, relocate: _Relocator
) -> ImageJob | VideoJob | None:
    """The part of a job still to do: its missing outputs, and its placeholder when the cache lacks it."""
    if forced:
        return job

    def absent(dest_uri: str) -> bool:
        return not os.path.exists(os.path.join(output, *dest_uri.split("/"))) and not relocate(dest_uri)

    missing = tuple(s for s in job.outputs if absent(s.dest_uri))
    captions = tuple(dest for _, dest in getattr(job, "tracks", ()) if absent(dest))
    thumb = plan.media[job.job_id].thumb
    need_placeholder = _placeholder_key(thumb.dest_uri) not in known
    if not (missing or captions or need_placeholder):
        return None
    source = os.path.join(output, *thumb.dest_uri.split("/")) if need_placeholder and thumb not in missing else None
    if isinstance(job, VideoJob):
        return replace(job, todo=tuple(s.dest_uri for s in missing) + captions, placeholder_source=source)
    return replace(job, outputs=missing, placeholder_source=source)


def _ffmpeg(loaded: LoadedConfig) -> str | None:
    """The system ffmpeg named by videos.ffmpeg: a path (relative to the config) or a command on PATH."""
    value = loaded.config.videos.ffmpeg
    if not value:
        return None
    if "/" not in value and os.sep not in value:
        found = shutil.which(value)
        if found is None:
            raise UsageError(f"videos.ffmpeg: {value!r} is not on the PATH")
        return found
    path = loaded.resolve(value)
    if path is None or not os.access(path, os.X_OK):
        raise UsageError(f"videos.ffmpeg: {path} is not an executable file")
    return str(path)


def _placeholder_key(thumb_uri: str) -> str:
    """Placeholders are keyed by the thumbnail's file name (content + recipe hash), not its folder,
    so a photo whose album moves keeps its placeholder."""
    return posixpath.basename(thumb_uri)


def _placeholders(plan: SitePlan, results: dict[str, JobResult], cached: dict[str, tuple[str, str]]):
    """Placeholders from this run's results, else from the cache (keyed by thumbnail name)."""
    out: dict[str, Placeholder] = {}
    for uri, media_plan in plan.media.items():
        result = results.get(uri)
        if result is not None and result.ok and result.placeholder:
            out[uri] = result.placeholder
        elif _placeholder_key(media_plan.thumb.dest_uri) in cached:
            colour, data_uri = cached[_placeholder_key(media_plan.thumb.dest_uri)]
            out[uri] = Placeholder(colour, data_uri)
    return out


def _drop_failed(gallery: Gallery, results: dict[str, JobResult], config) -> None:
    failed = [r for r in results.values() if not r.ok]
    if not failed:
        return
    for result in failed:
        gallery.media.pop(result.job_id, None)
        gallery.skipped.append(Skipped(result.job_id, result.error or "processing failed"))
    arrange_gallery(gallery, config.sort.albums, config.sort.media)


def _remove_stale(output: Path, stale: set[str]) -> int:
    removed = 0
    root = str(output)
    folders: set[str] = set()
    for dest_uri in stale:
        path = os.path.normpath(os.path.join(root, *dest_uri.split("/")))
        if not path.startswith(root.rstrip(os.sep) + os.sep):
            continue
        try:
            if os.path.isfile(path) and not os.path.islink(path):
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
    return removed


def _remove_temp_files(output: Path) -> None:
    for dirpath, _, names in os.walk(output):
        for name in names:
            if name.startswith(TMP_PREFIX):
                try:
                    os.unlink(os.path.join(dirpath, name))
                except OSError:
                    pass
