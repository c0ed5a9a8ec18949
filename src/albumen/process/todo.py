"""The jobs a build has left to run, held as little as a million photos allow.

A first build has a job for every photo, each its media's planned job whole (every output missing):
held as jobs they were ~750 bytes a photo (paths, recipes, output names), ~700 MB for a million. Such a
job is held as its media's uri, and made again from the plan when it is sent to a worker
(`Todo.job`); a job with only part of its work left (a rebuild's) is held as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter

from .specs import ImageJob, VideoJob

SMALL_PIXELS = 1_000_000  # images at most this big travel in batches (see executor.run_jobs)

Item = str | ImageJob | VideoJob  # a whole planned image job's media uri, or the job itself


class Todo:
    """The jobs left, sorted as the executor sends them: large ones (and videos, which count as long
    jobs) first, biggest first, then small images in the order given (album by album)."""

    def __init__(self, make: Callable[[str], ImageJob | VideoJob] | None = None) -> None:
        """make(uri): that media's planned job (plan.media_job), the same each time it is made."""
        self.make = make
        self._large: list[tuple[int, Item]] = []  # (how big, item)
        self.small: list[Item] = []
        self.videos = 0

    @classmethod
    def of(cls, jobs: Iterable[ImageJob | VideoJob]) -> Todo:
        """Jobs held whole, as given."""
        todo = cls()
        for job in jobs:
            todo.add(job)
        return todo

    def add(self, job: ImageJob | VideoJob, planned: bool = False) -> None:
        """planned: the job is make(job.job_id) (its media's planned job whole): only its uri is held."""
        if isinstance(job, VideoJob):
            self.videos += 1
            self._large.append((job.src_width * job.src_height * 1000, job))  # (held whole: its own time limit)
            return
        item = job.job_id if planned and self.make is not None else job
        pixels = job.src_width * job.src_height
        if pixels <= SMALL_PIXELS:
            self.small.append(item)
        else:
            self._large.append((pixels, item))

    def large(self) -> list[Item]:
        """The large jobs, biggest first (those as big in the order given)."""
        self._large.sort(key=itemgetter(0), reverse=True)
        return [item for _, item in self._large]

    def clear(self) -> None:
        self._large, self.small = [], []

    def __len__(self) -> int:
        return len(self._large) + len(self.small)

    def job(self, item: Item) -> ImageJob | VideoJob:
        return self.make(item) if isinstance(item, str) else item

    def jobs(self, items: Iterable[Item]) -> tuple[ImageJob | VideoJob, ...]:
        return tuple(map(self.job, items))

    def ids(self) -> Iterator[str]:
        """Every job's media uri."""
        yield from (item_id(item) for _, item in self._large)
        yield from map(item_id, self.small)


def item_id(item: Item) -> str:
    return item if isinstance(item, str) else item.job_id
