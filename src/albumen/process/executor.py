"""Run image and video jobs on the build's worker pool, pairing every result with its job by id.

Jobs always run in worker processes, even with one worker (-j 1) or one changed photo: a decoder
that crashes on a hostile file fails only that file, never the build (or the dev server).

Small images go to the workers in batches: for a 64-pixel photo, sending the job and its result
between processes costs as much as making it. A batch that fails as a whole (a decoder crash, a
timeout) is retried job by job, so one bad file still fails only itself.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Iterator

from ..fsutil import OutsideRoot, check_inside, remove_temp_files
from ..pool import TaskFailed, WorkerPool
from .specs import ImageJob, JobResult, VideoJob
from .worker import run_job, run_jobs_batch

DEFAULT_TIMEOUT = 600.0
SMALL_PIXELS = 1_000_000  # images at most this big travel in batches
BATCH = 16


def run_jobs(
    jobs: Iterable[ImageJob | VideoJob], pool: WorkerPool | int, timeout: float = DEFAULT_TIMEOUT
) -> Iterator[JobResult]:
    """Run every job and yield each one's result as it arrives, paired with its job by id.

    Nothing is kept here: a caller that needs only counts holds no result of a 100,000-photo build.
    """
    if isinstance(pool, int):
        with WorkerPool(pool) as owned:
            yield from run_jobs(jobs, owned, timeout)
        return
    # biggest first balances the cores; a video counts as a long job
    ordered = sorted(
        jobs, key=lambda j: j.src_width * j.src_height * (1000 if isinstance(j, VideoJob) else 1), reverse=True
    )
    del jobs  # from here on a job is held by its task only, and let go once it is done (see WorkerPool.run)
    small = [j for j in ordered if isinstance(j, ImageJob) and j.src_width * j.src_height <= SMALL_PIXELS]
    large = [j for j in ordered if not (isinstance(j, ImageJob) and j.src_width * j.src_height <= SMALL_PIXELS)]
    del ordered
    tasks = [(j,) for j in large] + [tuple(small[i : i + BATCH]) for i in range(0, len(small), BATCH)]
    del small, large

    def paired(job, outcome) -> JobResult:
        if isinstance(outcome, TaskFailed):
            _remove_temp_files(job)  # a worker stopped mid-write (timed out, crashed) cleaned up nothing
            return JobResult(job.job_id, ok=False, error=str(outcome))
        if not isinstance(outcome, JobResult) or outcome.job_id != job.job_id:
            return JobResult(job.job_id, ok=False, error="worker returned a result for another job")
        return outcome

    def limit(batch) -> float:
        return sum(getattr(j, "timeout", timeout) for j in batch) if len(batch) > 1 else getattr(batch[0], "timeout", timeout)

    retry = []
    # four tasks ahead per worker: the build writes pages between results (see render.writer.EarlyPages)
    results = pool.run(run_jobs_batch, tasks, timeout=limit, ahead=4)
    del tasks
    for batch, outcome in results:
        if isinstance(outcome, TaskFailed):
            if len(batch) == 1:
                yield paired(batch[0], outcome)
            else:
                retry.extend(batch)
            continue
        by_id = {r.job_id: r for r in outcome}
        for job in batch:  # pair by id: a result out of place is a failure, not someone else's success
            yield paired(job, by_id.get(job.job_id, TaskFailed("no result from the worker")))
        del batch, outcome, by_id
    for job, outcome in pool.run(run_job, retry, timeout=lambda j: getattr(j, "timeout", timeout)):
        yield paired(job, outcome)


def _remove_temp_files(job: ImageJob | VideoJob) -> None:
    """Temporary files left in the job's output folders (each media has folders of its own; the
    build writes a media's page there only once its job is done)."""
    for folder in {os.path.join(job.abs_dest_root, *posixpath.dirname(s.dest_uri).split("/")) for s in job.outputs}:
        try:
            check_inside(folder, job.abs_dest_root)
        except OutsideRoot:  # nothing was written there: nothing to clean up through a link
            continue
        remove_temp_files(folder)
