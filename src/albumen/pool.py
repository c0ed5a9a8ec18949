"""One pool of worker processes per build, created only when there is work for it.

pebble's process pool gives each task a timeout and survives a worker that dies
(a segfault in a decoder fails that one task, not the build). Workers are started
with 'spawn': they import only what their task needs and share nothing.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import as_completed
from typing import Any


def _worker_start() -> None:
    """Keep freed memory for reuse instead of handing it back to the kernel after every image.

    glibc serves big buffers (a decoded photo, an encoded JPEG) with fresh mmap pages, so every
    image costs thousands of page faults: ~10 ms of system time per 24 MP photo on a VM, a
    tenth of the work. A worker's peak memory does not grow; it is just not returned between tasks.
    """
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc (musl): nothing to tune
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    libc.mallopt(m_mmap_threshold, 256 << 20)
    libc.mallopt(m_trim_threshold, 512 << 20)


class TaskFailed(Exception):
    """A task that timed out, crashed its worker, or raised."""


class WorkerPool:
    def __init__(self, workers: int) -> None:
        self.workers = max(1, workers)
        self._pool = None

    @property
    def parallel(self) -> bool:
        return self.workers > 1

    def _get(self):
        if self._pool is None:
            from pebble import ProcessPool

            self._pool = ProcessPool(
                max_workers=self.workers, context=multiprocessing.get_context("spawn"), initializer=_worker_start
            )
        return self._pool

    def run(
        self, fn: Callable, items: Iterable[Any], timeout: float | Callable[[Any], float] | None = None
    ) -> Iterator[tuple[Any, Any]]:
        """Yield (item, result) as tasks finish; result is a TaskFailed when the task failed.

        timeout: seconds per task, or a function of the item giving them.
        """
        items = list(items)
        if not items:
            return
        if not self.parallel or len(items) == 1:
            for item in items:
                try:
                    yield item, fn(item)
                except Exception as exc:  # same contract as the pool
                    yield item, TaskFailed(f"{type(exc).__name__}: {exc}")
            return
        from pebble import ProcessExpired

        pool = self._get()
        limit = timeout if callable(timeout) else (lambda _item: timeout)
        futures = {pool.schedule(fn, args=(item,), timeout=limit(item)): i for i, item in enumerate(items)}
        try:
            for future in as_completed(futures):
                item = items[futures[future]]
                try:
                    result = future.result()
                except FutureTimeout:
                    result = TaskFailed(f"timed out after {limit(item):.0f} s")
                except ProcessExpired as exc:
                    result = TaskFailed(f"the worker crashed (exit code {exc.exitcode})")
                except Exception as exc:
                    result = TaskFailed(f"{type(exc).__name__}: {exc}")
                yield item, result
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self._pool is not None:
            self._pool.stop()
            self._pool.join()
            self._pool = None

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool.join()
            self._pool = None

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            self.close()
        else:
            self.stop()
