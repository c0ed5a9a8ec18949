"""The work still to do: of each planned job, the outputs missing from the output folder (or moved
there from another folder instead of being made again) and the placeholder the cache lacks."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Container, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..write.relocate import LinksOut, Relocator
from .plan import SitePlan
from .specs import ImageJob, VideoJob
from .todo import Todo

if TYPE_CHECKING:
    from ..cache import BuildCache


def placeholder_key(thumb_uri: str) -> str:
    """Placeholders are keyed by the thumbnail's file name (content + recipe hash), not its folder,
    so a photo whose album moves keeps its placeholder."""
    return thumb_uri.rpartition("/")[2]  # (posixpath.basename: 3x slower, asked twice per photo)


def _abs(root: str, dest_uri: str) -> str:
    return f"{root}/{dest_uri}" if os.sep == "/" else os.path.join(root, *dest_uri.split("/"))


def remaining_jobs(
    jobs: Callable[[Callable[[str], bool]], Iterable[ImageJob | VideoJob]], plan: SitePlan, cache: BuildCache,
    output: Path, forced: Callable[[str], bool], damaged: dict[str, int | None],
    make: Callable[[str], ImageJob | VideoJob] | None = None,
) -> tuple[Todo, int]:
    """The jobs with work left (see remaining), and how many derivatives were moved into place from
    another folder instead. The outputs the jobs will write are reserved in the cache's manifest (see
    reserve_outputs); the files moved, and those found as made though their time changed, are stamped
    there. forced(media uri): redo all of that media's job.

    jobs(unfinished): the planned jobs (plan.plan_jobs), which need not make the job of a media for
    which unfinished(uri) is False: every output in place, nothing forced or damaged, its placeholder
    known. A rebuild after one change then makes one job, not one per photo of the library.
    make(uri): that media's planned job again (plan.media_job): a job with all its work left is then
    held as its uri (see process.todo)."""
    known = _Placeholders(cache)
    relocate = Relocator(cache, output)
    leads_out = LinksOut(output)
    touched: list[tuple[str, int, int]] = []
    root = str(output)

    exists = os.path.exists

    def unfinished(uri: str) -> bool:
        media_plan = plan.media[uri]
        uris = media_plan.output_uris()
        thumb = next(uris)  # (the JPEG thumbnail comes first: see MediaPlan.thumb_uri)
        if forced(uri) or placeholder_key(thumb) not in known:
            return True
        if leads_out(_abs(root, media_plan.dest_dir)):
            return True
        if damaged and any(dest in damaged for dest in media_plan.output_uris()):
            return True
        return not exists(_abs(root, thumb)) or not all(exists(_abs(root, dest)) for dest in uris)

    todo = Todo(make)
    writes: list[str] = []
    for job in jobs(unfinished):
        left = remaining(job, plan, known, output, forced(job.job_id), relocate, leads_out, damaged, touched)
        if left is None:
            continue
        todo.add(left, planned=left is job)
        writes.extend(spec.dest_uri for spec in left.outputs)
        if len(writes) >= 50_000:
            cache.reserve_outputs(writes)
            writes.clear()
    cache.reserve_outputs(writes)
    known.clear()  # (every placeholder name of the library, when they were read: let go now)
    cache.stamp_outputs(relocate.moved + touched)
    return todo, len(relocate.moved)


class _Placeholders:
    """The placeholders the cache has, by thumbnail name: asked one at a time while few are asked (a
    rebuild whose settled albums ask none), read all at once from the 200th (a first build asks them all)."""

    def __init__(self, cache: BuildCache) -> None:
        self.cache = cache
        self.asked = 0
        self.names: set[str] | None = None

    def __contains__(self, name: str) -> bool:
        if self.names is None:
            self.asked += 1
            if self.asked < 200:
                return self.cache.get_placeholder(name) is not None
            self.names = self.cache.placeholder_keys()
        return name in self.names

    def clear(self) -> None:
        self.names = None


def remaining(
    job: ImageJob | VideoJob, plan: SitePlan, known: Container[str], output: Path, forced: bool, relocate: Relocator,
    leads_out: LinksOut, damaged: dict[str, int | None], touched: list[tuple[str, int, int]],
) -> ImageJob | VideoJob | None:
    """The part of a job still to do: its missing outputs, and its placeholder when the cache lacks it.

    damaged: outputs the last build wrote that were missing or changed at the start of this one,
    with the size written: one there with another size is made again; one that kept its size (a
    copy or a touch changed its time) is still the file made, and is added to `touched` (stamps)."""
    if forced:
        return job

    def absent(dest_uri: str) -> bool:
        path = _abs(str(output), dest_uri)
        if dest_uri in damaged:
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError:
                st = None
            if st is not None and stat.S_ISREG(st.st_mode) and st.st_size == damaged[dest_uri]:
                touched.append((dest_uri, st.st_size, st.st_mtime_ns))
                return False
            if st is not None:
                return True
        return not os.path.exists(path) and not relocate(dest_uri)

    if leads_out(os.path.join(output, *plan.media[job.job_id].dest_dir.split("/"))):
        return job  # outputs behind a link leading out are not this site's: the job (which refuses
        # to write there) fails, and the media is skipped with the reason
    missing = tuple(s for s in job.outputs if absent(s.dest_uri))
    captions = tuple(dest for _, dest in getattr(job, "tracks", ()) if absent(dest))
    thumb = plan.media[job.job_id].thumb
    need_placeholder = placeholder_key(thumb.dest_uri) not in known
    if not (missing or captions or need_placeholder):
        return None
    source = os.path.join(output, *thumb.dest_uri.split("/")) if need_placeholder and thumb not in missing else None
    if isinstance(job, VideoJob):
        return replace(job, todo=tuple(s.dest_uri for s in missing) + captions, placeholder_source=source)
    if len(missing) == len(job.outputs) and source == job.placeholder_source:
        return job  # all of it: the planned job itself, not a copy
    return replace(job, outputs=missing, placeholder_source=source)
