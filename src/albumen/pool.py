"""One pool of worker processes per build, created only when there is work for it.

pebble's process pool gives each task a timeout and survives a worker that dies
(a segfault in a decoder fails that one task, not the build).

Workers are forked when that is safe; otherwise (on Linux) they are forked from a fork server,
a clean process started once and kept, and spawned only where neither exists. A forked worker is
ready in half the time of a spawned one and costs half the CPU (no second interpreter, no second
import of what the build already has), which a cold build of a hundred photos feels. Safe means:
Linux, and this process has a single thread and has not loaded libvips (whose thread pool a child
would inherit half-made: the first image would hang). A build from the command line forks (it has
no other thread until the pool starts its own: even its progress bar is drawn without one); a
process that runs other threads (the dev server after its first build, a test runner) uses the
fork server, which costs a few tenths of a second once, not at every rebuild. No task ever runs in
this process (see run), so it never loads libvips, and pebble can fork a replacement for a worker
that died (from this process, whose only other threads by then are pebble's own). Forked workers
share nothing they use with the build: they receive jobs as data and never touch what they
inherited (the cache's database connection included: a worker leaves with os._exit or a signal,
never closing it).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, wait
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from .errors import BuildError


def _keep_freed_memory() -> None:
    """Keep freed memory for reuse instead of handing it back to the kernel after every image.

    glibc serves big buffers (a decoded photo, an encoded JPEG) with fresh mmap pages, so every
    image costs thousands of page faults: ~10 ms of system time per 24 MP photo on a VM, a
    tenth of the work. A worker's peak memory does not grow; it is just not returned between tasks.
    """
    import ctypes

    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (musl): nothing to tune
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    libc.mallopt(m_mmap_threshold, 256 << 20)
    libc.mallopt(m_trim_threshold, 512 << 20)


def _die_with_parent() -> None:
    """Have the kernel kill this worker when the process that started it dies (SIGKILL, a crash): an
    orphan would otherwise finish its task, however long, with no one to take the result."""
    import ctypes

    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() == 1:  # the parent died before that was set
        os._exit(1)


def _stop_children_on_sigterm() -> None:
    """The pool stops a worker with SIGTERM (the build was interrupted, or a task ran out of time):
    the system ffmpeg it runs is killed and reaped first. It would otherwise go on encoding, orphaned,
    after the build has exited, and could create its output file again after the build removed the
    temporary files."""
    previous = signal.getsignal(signal.SIGTERM)  # pebble's: multiprocessing's exit hooks, then _exit

    def stop(signum, frame) -> None:
        # never an import here: a signal that comes while the worker is still importing its modules
        # (a pool stopped right after it started) would raise ImportError from a module half-made, and
        # the worker would print a traceback instead of exiting. A module not (yet) there has started
        # no ffmpeg.
        video = sys.modules.get("albumen.process.video")
        stop_ffmpeg = getattr(video, "stop_ffmpeg", None)
        if stop_ffmpeg is not None and not stop_ffmpeg(signum):
            return  # an ffmpeg is being started: this signal comes again once it can be killed
        if callable(previous):
            previous(signum, frame)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)


def _worker_start() -> None:
    """Runs once in every new worker, while the build is still scanning."""
    import gc
    import warnings

    # A forked worker shares the build's memory until it writes to it: the garbage collector must
    # not walk (and so copy) the inherited objects. Freezing them is free and keeps workers small.
    gc.freeze()
    _keep_freed_memory()
    _die_with_parent()
    from .locks import forget_inherited

    forget_inherited()  # a worker forked from a build holding its output's lock: that lock is the build's
    _stop_children_on_sigterm()
    # A library's warning would be printed raw, over the progress display: the scan reports what the
    # decoders warn about for each file (see scan.metadata.read_image), once, as a warning of the build.
    warnings.simplefilter("ignore")
    # what every task needs, imported now rather than in the first task of each kind
    from PIL import Image

    from .process import engine, worker  # noqa: F401
    from .scan import metadata, read, video  # noqa: F401

    Image.preinit()  # Pillow's common formats, registered on the first open otherwise (~15 ms)


def can_fork() -> bool:
    """Whether workers forked from this process now would be sound (see the module's docstring)."""
    if not sys.platform.startswith("linux") or "pyvips" in sys.modules:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1  # native threads count too
    except OSError:
        return False


# imported once by the fork server, so that each worker forked from it starts with them (never
# libvips: see the module's docstring)
# (albumen.cli too: each worker re-imports the main script, the console script that imports it)
_SERVER_PRELOAD = [
    "albumen.cli", "albumen.pool", "albumen.scan.metadata", "albumen.scan.video", "albumen.process.worker",
]


def _start_method() -> str:
    """fork, forkserver or spawn: the fastest sound way to start workers from this process now."""
    if can_fork():
        return "fork"
    if sys.platform.startswith("linux"):
        return "forkserver"
    return "spawn"


def _context(method: str):
    """The multiprocessing context for a start method (the fork server's preloads set: they are read
    when it starts, once)."""
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(_SERVER_PRELOAD)
    return context


def warm_fork_server() -> None:
    """Start the fork server now, in the background (a process with other threads, such as the dev
    server, takes its workers from it): the first pool from it is then ready sooner."""
    if not sys.platform.startswith("linux"):
        return
    from multiprocessing import forkserver

    _context("forkserver")
    forkserver.ensure_running()


def _ready() -> bool:
    """A first task, so that the workers start now."""
    return True


class TaskFailed(Exception):
    """A task that timed out, crashed its worker, or raised.

    lasting: whether the same task would fail again. Not so for the time limit (a busy machine), a
    worker killed from outside (SIGKILL: the kernel out of memory) or a pool lost with the task
    (what killed it is not known): the next run may well succeed."""

    def __init__(self, message: str, lasting: bool = True, crashed: bool = False) -> None:
        super().__init__(message)
        self.lasting = lasting
        self.crashed = crashed  # its worker process died


def _orphaned(pool) -> bool:
    """Whether pebble holds a task as running on a worker that has exited, and so will never finish it.

    pebble reads the workers' messages on one thread and notices dead workers on another: when a worker
    takes a task and dies at once (a decoder crashing on the first bytes of a file), the dead worker can
    be handled before its message saying it took the task, which then marks the task as running on a
    process that is gone. Nothing ends that task but its time limit (600 s). Seen once in ~35 builds
    of 5 photos (3 crashing) with -j 1 on a loaded machine. Reads pebble's internals, and says no when
    they are not what 5.2 has."""
    try:
        manager = pool._pool_manager
        live = set(manager.worker_manager.workers)
        return any(task.worker_id and task.worker_id not in live for task in list(manager.task_manager.tasks.values()))
    except (AttributeError, RuntimeError, TypeError):  # another pebble, or the dict changed while read
        return False


def default_workers() -> int:
    """One worker per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class WorkerPool:
    def __init__(self, workers: int = 0) -> None:
        """workers: how many processes; 0 means one per core."""
        self.workers = max(1, workers or default_workers())
        self._pool = None
        self._released: list = []  # closed, their workers still exiting
        self._probes: list = []  # the running pool's start-up tasks (see _started)
        self._breaks = 0  # pools that broke since a worker last gave back a result (see run)
        self._unstarted = 0  # pools in a row that broke before any worker had started
        self.on_start: list[Callable[[], None]] = []  # called once workers exist (this process may
        # then run threads of its own: see can_fork)
        self.forked = False  # the running pool's workers were forked from this process

    def start(self) -> None:
        """Start the workers now: they take a tenth of a second (fork, imports), which the caller
        can spend on its own work meanwhile. (The first pool from a fork server waits for the server
        to start: a few tenths of a second, once per process.)"""
        self._get()

    @property
    def started(self) -> bool:
        """Whether workers exist (the pool was started and not released or stopped since)."""
        return self._pool is not None

    @property
    def parallel(self) -> bool:
        return self.workers > 1

    def _get(self):
        if self._pool is None:
            from pebble import ProcessPool

            method = _start_method()
            self.forked = method == "fork"
            self._pool = ProcessPool(max_workers=self.workers, context=_context(method), initializer=_worker_start)
            # pebble starts its workers with the first task; these also tell that they could start
            self._probes = [self._pool.schedule(_ready) for _ in range(self.workers)]
            for hook in self.on_start:
                hook()
        return self._pool

    def run(
        self,
        fn: Callable,
        items: Iterable[Any],
        timeout: float | Callable[[Any], float] | None = None,
        ahead: int = 2,
        prepare: Callable[[Any], Any] | None = None,
    ) -> Iterator[tuple[Any, Any]]:
        """Yield (item, result) as tasks finish; result is a TaskFailed when the task failed.

        Every task runs in a worker process, even with one worker or one task: a parser or decoder
        that crashes on a hostile file fails that task only, never this process, and a time limit
        holds. timeout: seconds per task, or a function of the item giving them.
        Tasks go to the workers a few at a time (`ahead` queued per worker), in order: enough to keep
        them busy while the caller spends a moment on each result, few enough to hold little.
        prepare(item): what the task is given, made as it is sent (items then hold less than tasks).
        """
        items = list(items)
        if not items:
            return
        from concurrent.futures.process import BrokenProcessPool

        from pebble import ProcessExpired

        limit = timeout if callable(timeout) else (lambda _item: timeout)

        lost_marker = object()

        def outcome(future, i: int) -> Any:
            """The task's result, a TaskFailed, or lost_marker when it went down with its pool."""
            try:
                return future.result()
            except BrokenProcessPool:
                return lost_marker
            except FutureTimeout:
                return TaskFailed(f"timed out after {limit(items[i]):.0f} s", lasting=False)
            except ProcessExpired as exc:
                killed = exc.exitcode == -signal.SIGKILL
                return TaskFailed(f"the worker crashed (exit code {exc.exitcode})", lasting=not killed, crashed=True)
            except Exception as exc:
                return TaskFailed(f"{type(exc).__name__}: {exc}")

        pool = self._pool_or_error()
        waiting = deque(range(len(items)))
        running: dict[Any, int] = {}
        retried: set[int] = set()  # tasks already run again alone (after their pool broke, or their worker died)
        shared: set[int] = set()  # tasks that ran while others did
        stalled = 0  # waits in a row that found a task held for a worker that is gone (see _orphaned)
        try:
            while waiting or running:
                broke = False
                while waiting and len(running) < ahead * self.workers:
                    if waiting[0] in retried and running:
                        break  # a task lost with a broken pool runs again alone: if it breaks the
                        # pool again, it is the one whose worker died, and no other task is lost
                    i = waiting[0]
                    seconds = limit(items[i])
                    try:
                        future = pool.schedule(fn, args=(items[i] if prepare is None else prepare(items[i]),), timeout=seconds)
                    except RuntimeError:
                        if pool.active:
                            raise
                        broke = True  # pebble's "Unexpected error within the Pool": it broke
                        break
                    waiting.popleft()
                    running[future] = i
                    if len(running) > 1:
                        shared.update(running.values())
                    if i in retried:
                        break
                done: set = set()
                if not broke:
                    # bounded: pebble never finishes the tasks still in its queue when it gives up
                    done, _ = wait(running, timeout=1.0, return_when=FIRST_COMPLETED)
                    broke = not done and not pool.active
                    stalled = stalled + 1 if not done and not broke and _orphaned(pool) else 0
                    broke = broke or stalled >= 3
                if broke:  # whatever had finished before the pool broke still counts
                    done = {future for future in running if future.done()}
                lost: list[int] = []
                for future in done:
                    i = running.pop(future)
                    result = outcome(future, i)
                    if result is lost_marker:
                        lost.append(i)
                        continue
                    if isinstance(result, TaskFailed) and result.crashed and i in shared and i not in retried:
                        # pebble can blame the wrong task for a worker that died: the one that worker had
                        # just finished, its result still on the way, is failed in place of the one it had
                        # just taken. A task failed by a crash beside others runs again alone, to be sure.
                        shared.discard(i)
                        retried.add(i)
                        waiting.appendleft(i)
                        continue
                    shared.discard(i)
                    item, items[i] = items[i], None  # done: held no longer than the caller holds it
                    self._breaks = 0
                    yield item, result
                if broke or lost:
                    # pebble gave up on the pool (it can, when a worker dies right as it takes a task):
                    # none of its unfinished tasks will come back. A fresh pool runs them once more.
                    lost.extend(running.values())
                    running.clear()
                    self._unstarted = 0 if self._started() else self._unstarted + 1
                    self.stop()
                    self._breaks += 1
                    # twice in a row before a worker ran anything, or again and again: not one task's
                    # crash, the workers cannot run at all
                    if self._unstarted >= 2 or self._breaks > 10:
                        raise BuildError(
                            "worker processes keep failing to start",
                            hint="check that the machine has memory to spare, then build again",
                        )
                    pool = self._pool_or_error()
                    for i in sorted(lost, reverse=True):
                        if i in retried:
                            item, items[i] = items[i], None
                            yield item, TaskFailed("the worker crashed (it took the worker pool down)", lasting=False)
                        else:
                            retried.add(i)
                            waiting.appendleft(i)
        except BaseException:
            self.stop()
            raise

    def _pool_or_error(self):
        try:
            return self._get()
        except (OSError, RuntimeError) as exc:  # fork failing (out of memory, too many processes)
            raise BuildError(
                f"cannot start worker processes: {exc}", hint="check that the machine has memory to spare"
            ) from None

    def _started(self) -> bool:
        """Whether a worker of the current pool ever ran a task (its start-up probe came back)."""
        return any(probe.done() and probe.exception() is None for probe in self._probes)

    def release(self) -> None:
        """No more tasks for now: the workers exit in the background (a later run starts new ones).

        pebble's join polls every 0.1 s; joining on a thread of its own means nobody waits for it
        at the end of the build.
        """
        if self._pool is not None:
            pool = self._pool
            pool.close()
            joiner = threading.Thread(target=pool.join, name="albumen-pool-release", daemon=True)
            joiner.start()
            self._released.append((pool, joiner))
            self._pool = None

    def stop(self) -> None:
        for pool, joiner in self._all():
            pool.stop()
            (joiner or pool).join()

    def close(self) -> None:
        """Wait for the running pool's workers to finish; released ones finish exiting on their own
        (their join thread; at the latest, Python's exit stops them): nobody waits for them."""
        for pool, joiner in self._all():
            if joiner is None:
                pool.close()
                pool.join()

    def _all(self) -> list:
        pools = self._released + ([(self._pool, None)] if self._pool is not None else [])
        self._released, self._pool = [], None
        return pools

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            self.close()
        else:
            self.stop()
