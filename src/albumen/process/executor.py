"""Run image and video jobs on the build's worker pool, pairing every result with its job by id.

Small images go to the workers in batches: for a 64-pixel photo, sending the job and its result
between processes costs as much as making it. A batch that fails as a whole (a decoder crash, a
timeout) is retried job by job, so one bad file still fails only itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..pool import TaskFailed, WorkerPool
from .specs import ImageJob, JobResult, VideoJob
from .worker import run_job, run_jobs_batch

DEFAULT_TIMEOUT = 600.0
SMALL_PIXELS = 1_000_000  # images at most this big travel in batches
BATCH = 16


def run_jobs(
    jobs: Iterable[ImageJob | VideoJob],
    pool: WorkerPool | int,
    on_result: Callable[[JobResult], None] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, JobResult]:
    """Run every job; return results keyed by job id (never matched by position)."""
    if isinstance(pool, int):
        with WorkerPool(pool) as owned:
            return run_jobs(jobs, owned, on_result, timeout)
    # biggest first balances the cores; a video counts as a long job
    ordered = sorted(
        jobs, key=lambda j: j.src_width * j.src_height * (1000 if isinstance(j, VideoJob) else 1), reverse=True
    )
    small = [j for j in ordered if isinstance(j, ImageJob) and j.src_width * j.src_height <= SMALL_PIXELS]
    large = [j for j in ordered if not (isinstance(j, ImageJob) and j.src_width * j.src_height <= SMALL_PIXELS)]
    tasks = [(j,) for j in large] + [tuple(small[i : i + BATCH]) for i in range(0, len(small), BATCH)]
    results: dict[str, JobResult] = {}

    def record(job, outcome) -> None:
        if isinstance(outcome, TaskFailed):
            result = JobResult(job.job_id, ok=False, error=str(outcome))
        elif not isinstance(outcome, JobResult) or outcome.job_id != job.job_id:
            result = JobResult(job.job_id, ok=False, error="worker returned a result for another job")
        else:
            result = outcome
        results[job.job_id] = result
        if on_result:
            on_result(result)

    def limit(batch) -> float:
        return sum(getattr(j, "timeout", timeout) for j in batch) if len(batch) > 1 else getattr(batch[0], "timeout", timeout)

    retry = []
    for batch, outcome in pool.run(run_jobs_batch, tasks, timeout=limit):
        if isinstance(outcome, TaskFailed):
            if len(batch) == 1:
                record(batch[0], outcome)
            else:
                retry.extend(batch)
            continue
        by_id = {r.job_id: r for r in outcome}
        for job in batch:  # pair by id: a result out of place is a failure, not someone else's success
            record(job, by_id.get(job.job_id, TaskFailed("no result from the worker")))
    for job, outcome in pool.run(run_job, retry, timeout=lambda j: getattr(j, "timeout", timeout)):
        record(job, outcome)
    return results
