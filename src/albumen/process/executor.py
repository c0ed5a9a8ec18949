"""Run image jobs on the build's worker pool, pairing every result with its job by id."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..pool import TaskFailed, WorkerPool
from .specs import ImageJob, JobResult, VideoJob
from .worker import run_job

DEFAULT_TIMEOUT = 600.0


def run_jobs(
    jobs: Iterable[ImageJob],
    pool: WorkerPool | int,
    on_result: Callable[[JobResult], None] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, JobResult]:
    """Run every job; return results keyed by job id (never matched by position)."""
    if isinstance(pool, int):
        with WorkerPool(pool) as owned:
            return run_jobs(jobs, owned, on_result, timeout)
    # biggest first balances the cores; a video counts as a long job
    ordered = sorted(jobs, key=lambda j: j.src_width * j.src_height * (1000 if isinstance(j, VideoJob) else 1), reverse=True)
    results: dict[str, JobResult] = {}
    for job, outcome in pool.run(run_job, ordered, timeout=lambda j: getattr(j, "timeout", timeout)):
        if isinstance(outcome, TaskFailed):
            result = JobResult(job.job_id, ok=False, error=str(outcome))
        elif not isinstance(outcome, JobResult) or outcome.job_id != job.job_id:
            result = JobResult(job.job_id, ok=False, error="worker returned a result for another job")
        else:
            result = outcome
        results[job.job_id] = result
        if on_result:
            on_result(result)
    return results
