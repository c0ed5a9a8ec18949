"""Run image and video jobs on the build's worker pool, pairing every result with its job by id.

Jobs always run in worker processes, even with one worker (-j 1) or one changed photo: a decoder
that crashes on a hostile file fails only that file, never the build (or the dev server).

Small images go to the workers in batches: for a 64-pixel photo, sending the job and its result
between processes costs as much as making it. A batch that fails as a whole (a decoder crash, a
timeout) is retried job by job, so one bad file still fails only itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..pool import TaskFailed, WorkerPool
from .cluster import DaskCluster
from .specs import ImageJob, JobResult, VideoJob
from .todo import Item, Todo, item_id
from .worker import remove_temp_files_of, run_job, run_job_tidy, run_jobs_batch, run_jobs_batch_tidy

DEFAULT_TIMEOUT = 600.0
BATCH = 16


def run_jobs(
    jobs: Todo | Iterable[ImageJob | VideoJob], pool: WorkerPool | DaskCluster | int, timeout: float = DEFAULT_TIMEOUT
) -> Iterator[JobResult]:
    """Run every job and yield each one's result as it arrives, paired with its job by id: on the
    local pool, or on a Dask cluster (whose tasks tidy up first: see worker.run_jobs_batch_tidy).

    Nothing is kept here: a caller that needs only counts holds no result of a 100,000-photo build,
    and a job held as its media's uri (see process.todo) is made when it is sent, and let go after.
    """
    if isinstance(pool, int):
        with WorkerPool(pool) as owned:
            yield from run_jobs(jobs, owned, timeout)
        return
    todo = jobs if isinstance(jobs, Todo) else Todo.of(jobs)
    del jobs
    # Large jobs first, biggest first: that balances the cores. Small images after them in the order
    # given (album by album): each takes a moment, so their order does not unbalance the cores, and
    # an album's images are then all made early, so that its pages are written while the workers make
    # the rest (render.writer.EarlyPages) instead of after the last image. A video counts as a long job.
    small = todo.small
    tasks = [(item,) for item in todo.large()] + [tuple(small[i : i + BATCH]) for i in range(0, len(small), BATCH)]
    todo.clear()  # from here on a job is held by its task only, and let go once it is done (see WorkerPool.run)
    del small

    def paired(item: Item, outcome) -> JobResult:
        job_id = item_id(item)
        if isinstance(outcome, TaskFailed):
            remove_temp_files_of(todo.job(item))  # a worker stopped mid-write (timed out, crashed) cleaned up nothing
            return JobResult(job_id, ok=False, error=str(outcome))
        if not isinstance(outcome, JobResult) or outcome.job_id != job_id:
            return JobResult(job_id, ok=False, error="worker returned a result for another job")
        return outcome

    def limit(batch) -> float:
        return sum(getattr(j, "timeout", timeout) for j in batch) if len(batch) > 1 else getattr(batch[0], "timeout", timeout)

    retry = []
    tidy = isinstance(pool, DaskCluster)
    # four tasks ahead per worker: the build writes pages between results (see render.writer.EarlyPages)
    results = pool.run(run_jobs_batch_tidy if tidy else run_jobs_batch, tasks, timeout=limit, ahead=4, prepare=todo.jobs)
    del tasks
    for batch, outcome in results:
        if isinstance(outcome, TaskFailed):
            if len(batch) == 1:
                yield paired(batch[0], outcome)
            else:
                retry.extend(batch)
            continue
        by_id = {r.job_id: r for r in outcome}
        for item in batch:  # pair by id: a result out of place is a failure, not someone else's success
            yield paired(item, by_id.get(item_id(item), TaskFailed("no result from the worker")))
        del batch, outcome, by_id
    results = pool.run(run_job_tidy if tidy else run_job, retry, timeout=lambda j: getattr(j, "timeout", timeout),
                       prepare=todo.job)
    for item, outcome in results:
        yield paired(item, outcome)
