"""The worker pool: every task's result comes back exactly once, paired with its task."""

import os
import time

import pytest

from albumen.pool import TaskFailed, WorkerPool


def _where(item: int) -> tuple[int, int]:
    if item == 13:
        raise ValueError("unlucky")
    time.sleep(0.02)
    return item * item, os.getpid()


@pytest.mark.parametrize("workers", [1, 2])
def test_every_task_once_with_its_own_result_and_always_in_a_worker(workers):
    items = list(range(40))
    with WorkerPool(workers) as pool:
        results = list(pool.run(_where, items, timeout=30))
        assert sorted(item for item, _ in results) == items
        failed = [item for item, result in results if isinstance(result, TaskFailed)]
        assert failed == [13] and "unlucky" in str(dict(results)[13])
        assert all(result[0] == item * item for item, result in results if item != 13)
        # never in this process: not with one worker, not for a single task
        pids = {result[1] for item, result in results if item != 13}
        assert os.getpid() not in pids and len(pids) <= workers
        single = list(pool.run(_where, [5], timeout=30))
        assert single[0][1][0] == 25 and single[0][1][1] != os.getpid()


def _dies_on_negative(n: int) -> int:
    if n < 0:
        os._exit(3)  # a worker dying mid-task, as a decoder crash would
    return n * n


def test_a_pool_pebble_gives_up_on_is_replaced_and_its_tasks_run_again(monkeypatch):
    """When a worker dies right as it takes a task, pebble may not find that task among the running
    ones and declare the whole pool broken ("All workers expired"), failing every unfinished task.
    Simulated here: every worker death breaks the pool. The other tasks still succeed (on a fresh
    pool), the dying one fails alone, and nothing hangs."""
    from concurrent.futures.process import BrokenProcessPool

    from pebble.pool.process import PoolManager

    def gives_up(self, worker_id):
        raise BrokenProcessPool("All workers expired")

    monkeypatch.setattr(PoolManager, "find_expired_task", gives_up)
    items = [1, 2, -1, 3, -2, -3, 4, -4, -5, 5, 6]  # dying tasks in a row: still progress, not a stuck pool
    for workers in (1, 2):
        with WorkerPool(workers) as pool:
            results = dict(pool.run(_dies_on_negative, items, timeout=60))
        assert sorted(results) == sorted(items)
        assert all(isinstance(results[n], TaskFailed) and "crashed" in str(results[n]) for n in items if n < 0)
        assert {n: results[n] for n in items if n > 0} == {n: n * n for n in items if n > 0}


class _Unsendable:
    def __reduce__(self):
        raise RuntimeError("cannot be sent")  # kills pebble's scheduling thread, not just this task


def _square_or_fail(value):
    return value * value


# pebble's scheduling thread dies of it (that is what the pool recovers from), which pytest reports
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_task_pebble_leaves_on_a_dead_worker_is_run_again_and_nothing_hangs(monkeypatch):
    """pebble reads the workers' messages on one thread and notices dead workers on another: a worker
    that takes a task and dies at once can be handled before its "I took it" message, which then
    marks the task as running on a process that is gone, for ever (seen: a -j 1 build of 5 photos, 3
    crashing, hung in CI). Simulated here: pebble never finds the task of a worker that died. The
    pool notices the orphan, runs the task again alone in a fresh pool, and fails it only then; the
    others succeed; nothing waits for the 60 s time limit."""
    from pebble.pool.process import PoolManager

    def not_found(self, worker_id):
        raise LookupError("Not found")

    monkeypatch.setattr(PoolManager, "find_expired_task", not_found)
    items = [1, -1, 2, 3, -2, 4]
    with WorkerPool(1) as pool:
        started = time.monotonic()
        results = dict(pool.run(_dies_on_negative, items, timeout=60))
        elapsed = time.monotonic() - started
    assert sorted(results) == sorted(items)
    assert {n: results[n] for n in items if n > 0} == {n: n * n for n in items if n > 0}
    for n in (-1, -2):
        assert isinstance(results[n], TaskFailed) and "crashed" in str(results[n]), results[n]
    assert elapsed < 55, elapsed  # not the time limit: the orphan was noticed


def test_a_task_that_cannot_be_sent_fails_alone_and_nothing_hangs():
    items = [1, 2, _Unsendable(), 3, 4]
    with WorkerPool(1) as pool:
        results = list(pool.run(_square_or_fail, items, timeout=60))
    assert len(results) == len(items)
    by_value = {item if isinstance(item, int) else "bad": result for item, result in results}
    assert isinstance(by_value["bad"], TaskFailed)
    assert {n: by_value[n] for n in (1, 2, 3, 4)} == {1: 1, 2: 4, 3: 9, 4: 16}


def _never_starts() -> None:
    os._exit(1)


def test_workers_that_never_start_fail_the_build_instead_of_hanging(monkeypatch):
    from albumen import pool as pool_module
    from albumen.errors import BuildError

    monkeypatch.setattr(pool_module, "_worker_start", _never_starts)
    with WorkerPool(1) as pool, pytest.raises(BuildError, match="keep failing to start"):
        list(pool.run(_dies_on_negative, list(range(40)), timeout=60))


def test_timeout_fails_only_that_task():
    with WorkerPool(2) as pool:
        results = dict(pool.run(time.sleep, [0.01, 5, 0.01], timeout=lambda s: 1 if s > 1 else 30))
    assert isinstance(results[5], TaskFailed) and "timed out" in str(results[5])
    assert results[0.01] is None


def test_released_pool_lets_workers_exit_and_starts_new_ones_when_needed():
    with WorkerPool(2) as pool:
        first = {result[1] for _, result in pool.run(_where, [1, 2, 3], timeout=30)}
        pool.release()
        again = dict(pool.run(_where, [4, 5, 6], timeout=30))
        assert {item: result[0] for item, result in again.items()} == {4: 16, 5: 25, 6: 36}
        assert not first & {result[1] for result in again.values()}, "new workers after a release"


FORK_SCRIPT = '''
import json, os, sys

def square(n):
    if n < 0:
        os._exit(3)  # a worker dying mid-task, as a decoder crash would
    return n * n, os.getpid()

def vips_mean(n):
    from albumen.process import engine
    return engine.pyvips.Image.black(64, 64).linear(1, n).copy_memory().avg()

if __name__ == "__main__":
    from albumen.pool import TaskFailed, WorkerPool, can_fork
    out = {"can_fork_at_start": can_fork()}
    with WorkerPool(2) as pool:
        pool.start()
        out["forked"] = pool.forked
        results = dict(pool.run(square, [1, -1, 2, 3, 4], timeout=60))
        out["crash_failed_only_itself"] = isinstance(results[-1], TaskFailed) and all(
            results[n][0] == n * n for n in (1, 2, 3, 4))
        out["vips_in_workers"] = [r for _, r in pool.run(vips_mean, [5, 7], timeout=60)]
        out["single_item_pid"] = next(iter(pool.run(square, [6], timeout=60)))[1][1]
        out["vips_loaded_here"] = "pyvips" in sys.modules
    import albumen.process.engine as engine
    engine.pyvips.Image.black(2000, 2000).gaussblur(2).copy_memory()  # libvips now runs here
    out["can_fork_after_vips"] = can_fork()
    from albumen.pool import _start_method
    out["method_after_vips"] = _start_method()
    with WorkerPool(2) as pool:
        pool.start()
        out["forked_after_vips"] = pool.forked
        out["vips_after"] = [r for _, r in pool.run(vips_mean, [9, 11], timeout=60)]
    out["pid"] = os.getpid()
    print(json.dumps(out))
'''


def test_workers_fork_from_a_clean_process_and_come_from_a_fork_server_once_it_has_run_libvips(tmp_path):
    """Forked workers start fast, but only a process without libvips (and without other threads)
    may fork them: a child inheriting libvips' thread pool hangs on its first image."""
    import json
    import subprocess
    import sys

    script = tmp_path / "forks.py"
    script.write_text(FORK_SCRIPT)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if not sys.platform.startswith("linux"):
        assert out["forked"] is False
        return
    assert out["can_fork_at_start"] and out["forked"]
    assert out["crash_failed_only_itself"], "a replacement worker was forked and did the rest"
    assert sorted(out["vips_in_workers"]) == [5.0, 7.0]
    assert out["single_item_pid"] != out["pid"], "a forked pool runs even a single task in a worker"
    assert out["vips_loaded_here"] is False
    assert out["can_fork_after_vips"] is False and out["forked_after_vips"] is False
    assert out["method_after_vips"] == "forkserver"
    assert sorted(out["vips_after"]) == [9.0, 11.0]
