"""The worker pool: every task's result comes back exactly once, paired with its task."""

import os
import time

from albumen.pool import TaskFailed, WorkerPool


def _where(item: int) -> tuple[int, int]:
    if item == 13:
        raise ValueError("unlucky")
    time.sleep(0.02)
    return item * item, os.getpid()


def test_every_task_once_with_its_own_result_and_the_parent_helps_while_workers_start():
    items = list(range(40))
    with WorkerPool(2) as pool:
        results = list(pool.run(_where, items, timeout=30, help_while_starting=True))
        assert sorted(item for item, _ in results) == items
        failed = [item for item, result in results if isinstance(result, TaskFailed)]
        assert failed == [13] and "unlucky" in str(dict(results)[13])
        where = {item: result[1] for item, result in results if item != 13}
        assert all(result[0] == item * item for item, result in results if item != 13)
        here = {item for item, pid in where.items() if pid == os.getpid()}
        # workers need a few tenths of a second to start: this process ran the first tasks meanwhile
        assert 0 in here
        # without help, everything runs in the workers
        again = list(pool.run(_where, items[:10], timeout=30))
        assert sorted(item for item, _ in again) == items[:10]
        assert all(result[1] != os.getpid() for _, result in again)
        # once the workers are up, help is no longer given
        later = list(pool.run(_where, items[:10], timeout=30, help_while_starting=True))
        assert all(result[1] != os.getpid() for _, result in later)


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
