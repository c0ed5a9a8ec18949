"""Run jobs in parallel worker processes, pairing every result with its job by id.

pebble's process pool gives each job a timeout and survives a worker that dies
(a segfault in a decoder fails that one file, not the build).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import as_completed

from .specs import ImageJob, JobResult
from .worker import run_job

DEFAULT_TIMEOUT = 600.0


def run_jobs(
    jobs: Iterable[ImageJob],
    workers: int,
    on_result: Callable[[JobResult], None] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, JobResult]:
    """Run every job; return results keyed by job id. With one worker, run in this process."""
    jobs = sorted(jobs, key=lambda j: j.src_width * j.src_height, reverse=True)  # biggest first balances cores
    results: dict[str, JobResult] = {}
    if not jobs:
        return results

    def record(result: JobResult) -> None:
        results[result.job_id] = result
        if on_result:
            on_result(result)

    if workers <= 1 or len(jobs) == 1:
        for job in jobs:
            record(run_job(job))
        return results

    from pebble import ProcessExpired, ProcessPool

    with ProcessPool(max_workers=min(workers, len(jobs)), context=multiprocessing.get_context("spawn")) as pool:
        futures = {pool.schedule(run_job, args=(job,), timeout=timeout): job for job in jobs}
        try:
            for future in as_completed(futures):
                job = futures[future]
                try:
                    result = future.result()
                except FutureTimeout:
                    result = JobResult(job.job_id, ok=False, error=f"timed out after {timeout:.0f} s")
                except ProcessExpired as exc:
                    result = JobResult(job.job_id, ok=False, error=f"the decoder crashed (exit code {exc.exitcode})")
                except Exception as exc:  # pickling problems and the like
                    result = JobResult(job.job_id, ok=False, error=f"{type(exc).__name__}: {exc}")
                if result.job_id != job.job_id:  # never trust position or a confused worker
                    result = JobResult(job.job_id, ok=False, error="worker returned a result for another job")
                record(result)
        except BaseException:
            pool.stop()
            raise
    return results
