"""The one place that runs the stages in order.

load_config -> scan_source -> plan_site -> run_jobs -> render_pages -> write (sink)
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .config import LoadedConfig
from .errors import SourceError, UsageError
from .model import Gallery, Skipped
from .process.executor import run_jobs
from .process.plan import STATIC_DIR, SitePlan, plan_site
from .process.specs import ImageJob, JobResult, Placeholder
from .render.pages import RenderContext, folder_index_pages, render_pages, static_files
from .scan import arrange_gallery, scan_source
from .write import DiskSink


class Reporter(Protocol):
    """How a build talks to its user. The CLI gives a progress bar on terminals, plain lines otherwise."""

    def phase(self, name: str, total: int | None = None) -> None: ...
    def advance(self, detail: str = "") -> None: ...
    def note(self, text: str) -> None: ...


class QuietReporter:
    def phase(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, detail: str = "") -> None:
        pass

    def note(self, text: str) -> None:
        pass


@dataclass
class BuildOptions:
    source: Path
    output: Path
    jobs: int = 0  # 0: all cores
    strict: bool = False
    force: bool = False


@dataclass
class BuildReport:
    source: Path
    output: Path
    albums: int = 0
    photos: int = 0
    videos: int = 0
    ignored: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    derivatives_made: int = 0
    images_processed: int = 0
    pages_written: int = 0
    pages_unchanged: int = 0
    seconds: float = 0.0

    @property
    def problems(self) -> bool:
        return bool(self.skipped or self.warnings)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


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


def build(loaded: LoadedConfig, options: BuildOptions, reporter: Reporter | None = None) -> BuildReport:
    """Build the whole site. Raises AlbumenError subclasses for usage, config and build failures."""
    reporter = reporter or QuietReporter()
    started = time.perf_counter()
    config = loaded.config
    source, output = check_paths(options.source, options.output)
    theme = loaded.resolve(config.theme)
    if theme is not None and not (theme / "templates").is_dir() and not (theme / "static").is_dir():
        raise UsageError(f"theme folder {theme} has neither templates/ nor static/", hint="check the 'theme' setting")
    report = BuildReport(source=source, output=output)

    reporter.phase("Scanning")
    gallery = scan_source(str(source), config, progress=lambda _uri: reporter.advance())
    plan = plan_site(gallery, config, str(output), str(source))

    output.mkdir(parents=True, exist_ok=True)
    todo = [job for job in plan.jobs.values() if options.force or not _outputs_exist(job, output)]
    reporter.phase("Processing images", total=len(todo))
    workers = options.jobs or default_jobs()

    def on_result(result: JobResult) -> None:
        reporter.advance(result.job_id)
        if not result.ok:
            reporter.note(f"skipped {result.job_id}: {result.error}")

    results = run_jobs(todo, workers, on_result=on_result)
    report.images_processed = sum(1 for r in results.values() if r.ok)
    report.derivatives_made = sum(len(r.written) for r in results.values())
    placeholders = _placeholders(plan, results, output)
    _drop_failed(gallery, results, config)

    reporter.phase("Writing pages")
    pages = render_pages(RenderContext(gallery, plan, placeholders, config, theme))
    statics = {f"{STATIC_DIR}/{name}": path for name, path in static_files(theme).items()}
    derivatives = [spec.dest_uri for uri, mp in plan.media.items() if uri in gallery.media for spec in mp.outputs]
    pages += folder_index_pages([p.dest_uri for p in pages] + derivatives + list(statics), config.pages.links)
    sink = DiskSink(str(output))
    for page in pages:
        sink.write(page.dest_uri, page.content)
    for dest_uri, path in statics.items():
        sink.copy(dest_uri, str(path))

    report.albums = len(gallery.albums)
    report.photos = sum(1 for m in gallery.media.values() if m.kind == "image")
    report.videos = sum(1 for m in gallery.media.values() if m.kind == "video")
    report.ignored = gallery.ignored
    report.skipped = sorted(gallery.skipped, key=lambda s: s.src_uri)
    report.warnings = gallery.warnings + plan.warnings
    report.pages_written = len(sink.written)
    report.pages_unchanged = sink.unchanged
    report.seconds = time.perf_counter() - started
    return report


def _outputs_exist(job: ImageJob, output: Path) -> bool:
    return all(os.path.exists(os.path.join(output, *spec.dest_uri.split("/"))) for spec in job.outputs)


def _placeholders(plan: SitePlan, results: dict[str, JobResult], output: Path) -> dict[str, Placeholder]:
    """Placeholders from this run's results, else recomputed from the existing thumbnail."""
    out: dict[str, Placeholder] = {}
    for uri, media_plan in plan.media.items():
        result = results.get(uri)
        if result is not None:
            if result.ok and result.placeholder:
                out[uri] = result.placeholder
            continue
        thumb = os.path.join(output, *media_plan.thumb.dest_uri.split("/"))
        try:
            from .process.engine import make_placeholder, pyvips

            out[uri] = make_placeholder(pyvips.Image.new_from_file(thumb))
        except Exception:
            pass
    return out


def _drop_failed(gallery: Gallery, results: dict[str, JobResult], config) -> None:
    failed = [r for r in results.values() if not r.ok]
    if not failed:
        return
    for result in failed:
        gallery.media.pop(result.job_id, None)
        gallery.skipped.append(Skipped(result.job_id, result.error or "processing failed"))
    arrange_gallery(gallery, config.sort.albums, config.sort.media)
