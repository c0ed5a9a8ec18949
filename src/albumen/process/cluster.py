"""The build's image and video jobs on a dask.distributed cluster, beside the local pool (pool.py) and
behind the same small interface: run(fn, items, timeout, ahead) yields (item, result or TaskFailed).

`scheduler` is 'local:N' (a LocalCluster of N worker processes started for the build, closed after
it) or the address of an existing scheduler ('tcp://HOST:8786'). Workers get jobs as data and write
their files themselves, atomically, under names that are a function of the source and the recipe,
on storage they share with the build at the same path (see docs/CLUSTER.md): what comes back is a
few hundred bytes a job.

- Bounded: a few tasks per worker are submitted at a time, more as results come back, so that a
  million jobs never mean a million futures in the scheduler.
- A worker that dies (SIGKILL, a host gone) costs a retry: the scheduler runs its tasks again
  elsewhere. A task on which `distributed.scheduler.allowed-failures` + 1 workers died (3 + 1 by
  default) fails with KilledWorker. A worker that dies takes every task it holds with it, so such a
  task runs again alone, once the others are done: only a task that kills its workers with nothing
  beside it has failed. A batch that fails is then retried job by job (see executor.run_jobs), and
  the job that still kills its workers is skipped, named, as a poison file.
- Every worker runs the build's Albumen (process.remote.identity): checked when the build connects,
  and by every task, for workers that join later. Any difference stops the build naming both.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

from ..config.load import scheduler_target
from ..errors import BuildError, UsageError
from ..pool import TaskFailed, default_workers
from . import remote

CONNECT_SECONDS = 20.0
WORKERS_SECONDS = 60.0  # how long a build waits for a cluster with no worker to get one
_HINT = "start one with 'dask scheduler', or use --scheduler local:N; see docs/CLUSTER.md"


def parse_scheduler(value: str) -> tuple[str, int | str]:
    """('local', workers) or ('remote', address) (see config.load.scheduler_target); UsageError else."""
    target = scheduler_target(value)
    if target is None:
        raise UsageError(
            f"--scheduler: expected 'local', 'local:N' or a Dask scheduler's address such as "
            f"'tcp://HOST:8786', got {value!r}", hint=_HINT,
        )
    kind, where = target
    return (kind, where or default_workers()) if kind == "local" else (kind, where)


def check_reachable(address: str, seconds: float = 5.0) -> None:
    """A scheduler that cannot be reached stops the build before the photo folder is scanned."""
    parts = urlsplit(address)
    try:
        socket.create_connection((parts.hostname, parts.port), timeout=seconds).close()
    except OSError as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc.strerror or exc}", hint=_HINT) from None


def cluster_for(scheduler: str) -> DaskCluster | None:
    """The Dask cluster the scheduler setting (or --scheduler) names, checked before anything is read:
    dask installed, a remote scheduler reachable. None: this machine's worker pool."""
    if not scheduler:
        return None
    import importlib.util

    cluster = DaskCluster(scheduler)
    if importlib.util.find_spec("distributed") is None:
        raise UsageError(
            f"scheduler {scheduler!r} needs dask.distributed, which is not installed",
            hint="pip install 'albumen[dask]' (on this machine and on every worker)",
        )
    if cluster.kind == "remote":
        check_reachable(cluster.address)
    return cluster


class DaskCluster:
    """A connection to a Dask cluster for one build: made when the first jobs are run, closed after."""

    parallel = True  # pages are written between results, paced (see render.writer.EarlyPages)

    def __init__(self, scheduler: str) -> None:
        self.kind, target = parse_scheduler(scheduler)
        self.address = target if self.kind == "remote" else f"local:{target}"
        self._local_workers = target if self.kind == "local" else 0
        self._client = None
        self._cluster = None
        self._workers = 1  # worker processes, as last asked of the scheduler
        self._asked = 0.0
        self.identity = remote.identity()
        self.starved = False  # the cluster had no worker for WORKERS_SECONDS during a run (see _Watch)
        self.tasks = 0  # tasks sent in this build
        self.most_workers = 0  # the most worker processes seen at once

    # -- connection --------------------------------------------------------------------------------

    def start(self) -> None:
        if self._client is not None:
            return
        from distributed import Client

        try:
            if self.kind == "local":
                self._cluster = _local_cluster(self._local_workers)
                self._client = Client(self._cluster, set_as_default=False)
            else:
                self._client = Client(self.address, timeout=CONNECT_SECONDS, set_as_default=False)
        except OSError as exc:  # the scheduler went away, or a LocalCluster could not start
            self.close()
            raise BuildError(f"cannot connect to the Dask scheduler at {self.address}: {exc}", hint=_HINT) from None
        try:
            self._client.wait_for_workers(1, timeout=WORKERS_SECONDS)
        except TimeoutError:
            self.close()
            raise BuildError(
                f"the Dask cluster at {self.address} has no worker (waited {WORKERS_SECONDS:.0f} s)",
                hint="start workers with 'dask worker ADDRESS --nthreads 1 --nworkers auto' on hosts that share "
                "the photo folder and the output; see docs/CLUSTER.md",
            ) from None
        self._check_workers()

    def _check_workers(self) -> None:
        """Every worker runs this Albumen (the same code and encoders), or the build stops now."""
        try:
            found = self._client.run(remote.identity)
        except Exception as exc:  # an older Albumen without this module, or none at all
            raise BuildError(
                f"a Dask worker at {self.address} cannot run Albumen's tasks ({type(exc).__name__}: {exc})",
                hint=f"install this build's Albumen on every worker: {self.identity}",
            ) from None
        for worker, theirs in sorted(found.items()):
            if theirs != self.identity:
                raise _wrong_albumen(worker, theirs, self.identity)
        self._workers = max(1, len(found))
        self._asked = time.monotonic()

    def _worker_count(self) -> int:
        """Worker processes now (a cluster grows and shrinks), asked at most every two seconds."""
        if time.monotonic() - self._asked > 2.0:
            self._asked = time.monotonic()
            try:
                self._workers = max(1, self._client.scheduler_info(n_workers=0)["n_workers"])
            except Exception:  # keep the last count: a result or an error will tell what is wrong
                pass
        self.most_workers = max(self.most_workers, self._workers)
        return self._workers

    def summary(self) -> str:
        """What the cluster did in this build, for the build's notes."""
        return (f"images made on the Dask cluster at {self.address}: {self.tasks} tasks, "
                f"up to {self.most_workers} workers")

    # -- tasks -------------------------------------------------------------------------------------

    def run(
        self,
        fn: Callable,
        items: Iterable[Any],
        timeout: float | Callable[[Any], float] | None = None,
        ahead: int = 2,
        prepare: Callable[[Any], Any] | None = None,
    ) -> Iterator[tuple[Any, Any]]:
        """Yield (item, result) as tasks finish; result is a TaskFailed when the task failed.

        fn is sent by name (the workers import it), each item as data (or prepare(item), made as it is
        sent: see WorkerPool.run). `ahead` tasks per worker are in the cluster at a time."""
        items = list(items)
        if not items:
            return
        import uuid

        from distributed import as_completed

        self.start()
        client = self._client
        limit = timeout if callable(timeout) else (lambda _item: timeout)
        token = uuid.uuid4().hex[:12]
        waiting = deque(range(len(items)))
        running: dict[Any, int] = {}
        alone: deque[int] = deque()  # failed with their workers beside other tasks: run again alone
        solo: set[int] = set()  # run alone: their failure is their own
        shared: set[int] = set()  # ran while other tasks did
        done = as_completed(loop=client.loop)

        def submit(i: int) -> None:
            future = client.submit(
                remote.run_task, self.identity, fn, items[i] if prepare is None else prepare(items[i]), limit(items[i]),
                key=f"albumen-{fn.__name__}-{token}-{i}-{int(i in solo)}", pure=False,
            )
            running[future] = i
            if len(running) > 1:
                shared.update(running.values())
            done.add(future)
            self.tasks += 1

        def fill() -> None:
            while waiting and len(running) < ahead * self._worker_count():
                submit(waiting.popleft())
            if not waiting and not running and alone:
                i = alone.popleft()
                solo.add(i)
                submit(i)

        watch = _Watch(self, running)
        try:
            fill()
            for future in done:
                i = running.pop(future)
                result = self._outcome(future, limit(items[i]))
                killed = future.status == "error" and _killed(future)
                future.release()
                if killed and i in shared and i not in solo:
                    # a worker that dies takes down every task it held: a task beside the one that kills
                    # its workers may have been there at each death, and failed with it (seen with 2 workers)
                    shared.discard(i)
                    alone.append(i)
                    fill()
                    continue
                shared.discard(i)
                item, items[i] = items[i], None  # done: held no longer than the caller holds it
                yield item, result
                fill()
        except BaseException:
            self._cancel(list(running))
            raise
        finally:
            watch.stop()

    def _outcome(self, future, seconds: float | None) -> Any:
        from distributed import KilledWorker

        status = future.status
        if status == "finished":
            return future.result()
        if status == "cancelled" and self.starved:
            raise BuildError(
                f"the Dask cluster at {self.address} has had no worker for {WORKERS_SECONDS:.0f} s",
                hint="start workers (see docs/CLUSTER.md), then build again: what was made is kept",
            )
        if status == "cancelled":  # the scheduler was lost, or the cluster closed under the build
            raise BuildError(f"lost the Dask scheduler at {self.address} during the build",
                             hint="build again once the cluster is up: what was made is kept")
        # Any other status is 'error' or, when the worker holding a finished task's result died before
        # it was fetched ("Couldn't gather 1 keys, rescheduling"), 'pending' again: wait for the end
        exc = future.exception()
        if exc is None:  # it ran again: finished now, or cancelled
            return self._outcome(future, seconds)
        if isinstance(exc, remote.WrongAlbumen):
            raise _wrong_albumen(exc.address, exc.worker, self.identity)
        if isinstance(exc, KilledWorker):
            over = f", or it ran over its time limit of {seconds:.0f} s" if seconds else ""
            return TaskFailed(f"the worker crashed ({exc.allowed_failures + 1} Dask workers died running it{over})")
        return TaskFailed(f"{type(exc).__name__}: {exc}")

    def _cancel(self, futures: list) -> None:
        if futures and self._client is not None:
            try:
                self._client.cancel(futures, force=True)
            except Exception:
                pass

    # -- the pool's interface ----------------------------------------------------------------------

    def release(self) -> None:
        """No more jobs in this build: a local cluster's workers exit now (pages are rendered next)."""
        self.close()

    def stop(self) -> None:
        """The build failed or was interrupted: tasks not yet started are dropped with the connection
        (a task running on a remote worker finishes, atomically; the build removes temporary files)."""
        self.close()

    def close(self) -> None:
        client, cluster, self._client, self._cluster = self._client, self._cluster, None, None
        for closing in (client, cluster):
            if closing is not None:
                try:
                    closing.close()
                except Exception:  # already gone
                    pass


def _killed(future) -> bool:
    """Whether the task failed because the workers running it died (KilledWorker)."""
    from distributed import KilledWorker

    return isinstance(future.exception(), KilledWorker)


class _Watch:
    """While tasks are out: a cluster left without any worker would hold them for ever. After
    WORKERS_SECONDS without one, the tasks are cancelled and the build stops, saying so. (A scheduler
    lost is the client's to notice: it closes after failing to reconnect, cancelling them too.)"""

    def __init__(self, cluster: DaskCluster, running: dict) -> None:
        self.cluster, self.running = cluster, running
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="albumen-dask-watch", daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        since = None  # when the cluster was last seen without a worker
        while not self.stopped.wait(5.0):
            client = self.cluster._client
            try:
                workers = client.scheduler_info(n_workers=0)["n_workers"]  # a count, not every worker's details
            except Exception:  # the connection is being lost: the client's own timeout decides
                continue
            if workers:
                since = None
            elif since is None:
                since = time.monotonic()
            elif time.monotonic() - since > WORKERS_SECONDS:
                self.cluster.starved = True
                try:
                    futures = list(self.running)
                except RuntimeError:  # changed meanwhile (a result came): look again
                    continue
                self.cluster._cancel(futures)
                return

    def stop(self) -> None:
        self.stopped.set()


def _wrong_albumen(worker: str, theirs: str, ours: str) -> BuildError:
    return BuildError(
        f"the Dask worker {worker} runs another Albumen than this build:\n"
        f"  worker: {theirs}\n  build:  {ours}",
        hint="install the same Albumen (and its pinned libraries) on every worker, then build again: "
        "files made by another version would have other bytes under the same names",
    )


def _local_cluster(workers: int):
    """A LocalCluster of worker processes with one thread each, without the nanny's
    MALLOC_TRIM_THRESHOLD_ (see remote) or the workers' profiler, no dashboard, and no memory limit
    (as the local pool)."""
    import dask
    from distributed import LocalCluster

    environ = {k: v for k, v in dask.config.get("distributed.nanny.pre-spawn-environ").items()
               if k != "MALLOC_TRIM_THRESHOLD_"}
    # the workers' statistical profiler samples their threads every 10 ms: 10-15 % more CPU per image here
    with dask.config.set({"distributed.nanny.pre-spawn-environ": environ, "distributed.worker.profile.enabled": False}):
        return LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
            dashboard_address=None, memory_limit=0, silence_logs=logging.ERROR,
        )
