"""What the build keeps of the workers' results as they arrive (see executor.run_jobs): counts, the
stamps of the files made and the placeholders (sent to the cache in batches), and the failures.

Nothing of a result is held once counted: a 100,000-photo build keeps no list of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..config import Config
from ..model import Gallery, Skipped
from ..report import BuildReport, Reporter
from ..scan.arrange import arrange_gallery
from .plan import SitePlan
from .remaining import placeholder_key
from .specs import JobResult

if TYPE_CHECKING:
    from ..cache import BuildCache


class Tally:
    def __init__(self, gallery: Gallery, plan: SitePlan, cache: BuildCache, report: BuildReport, reporter: Reporter):
        self.gallery = gallery
        self.plan = plan
        self.cache = cache
        self.report = report
        self.reporter = reporter
        self.fresh: list[tuple[str, str, str]] = []  # placeholders not sent to the cache yet
        self.made: list[tuple[str, int, int]] = []  # stamps of derivatives made, for the cache's manifest
        self.failed: list[tuple[str, str]] = []  # (media, why)

    def take(self, result: JobResult) -> bool:
        """Count one result; False when its job failed."""
        report = self.report
        kind = self.gallery.media[result.job_id].kind
        self.reporter.advance(result.job_id, kind)
        if not result.ok:
            self.reporter.note(f"skipped {result.job_id}: {result.error}")
            self.failed.append((result.job_id, result.error or "processing failed"))
            if (result.error or "").startswith("plugin "):  # (process.filters): a plugin's failure, not the
                self.gallery.unsettled += 1  # file's: the next build tries again, even with nothing changed
            return False
        if kind == "video":
            report.videos_processed += 1
        elif kind == "image":  # (an item of a plugin's media kind is neither)
            report.photos_processed += 1
        report.derivatives_made += len(result.written)
        self.made.extend(result.written)
        if result.placeholder:
            thumb = placeholder_key(self.plan.media[result.job_id].thumb_uri)
            self.fresh.append((thumb, result.placeholder.colour, result.placeholder.data_uri))
        return True

    def send(self, pages_waiting: bool) -> None:
        """Send what was gathered to the cache: placeholders by 200, or at once when pages about to be
        written show them (pages_waiting); stamps by 1000."""
        if len(self.fresh) >= 200 or (self.fresh and pages_waiting):
            self.cache.put_placeholders(self.fresh)
            self.fresh.clear()
        if len(self.made) >= 1000:
            self.cache.stamp_outputs(self.made)
            self.made.clear()

    def finish(self) -> None:
        """Every result is in: the rest goes to the cache."""
        self.cache.put_placeholders(self.fresh)
        self.cache.stamp_outputs(self.made)
        self.fresh, self.made = [], []

    def drop_failed(self, config: Config) -> None:
        """The media whose job failed leave the gallery (skipped, with the reason), and the albums are
        arranged again (counts, covers)."""
        if not self.failed:
            return
        for job_id, error in self.failed:
            self.gallery.media.pop(job_id, None)
            self.gallery.skipped.append(Skipped(job_id, error))
        arrange_gallery(self.gallery, config.sort.albums, config.sort.media)
