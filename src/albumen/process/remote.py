"""What a Dask worker runs for a build (see process.cluster): the build's task functions, wrapped.

A worker gets the same tasks as the local pool's workers (jobs as data: paths and recipes, never
pixels) and writes the same files, on the storage it shares with the build. The wrapper adds what a
worker process of someone else's cluster does not give for free:

- the check that it runs the same Albumen as the build (a task that carries another identity is
  refused: its files would have other bytes under the same names);
- one Albumen task at a time per worker process (a worker started with several threads runs the
  others' tasks after it): a worker runs one system ffmpeg at a time, as the local pool's do, and
  libvips runs one thread per process (engine), so processes are the parallelism;
- glibc's allocator tuned as in the local pool's workers: Dask's nanny starts workers with
  MALLOC_TRIM_THRESHOLD_=65536, which hands freed memory back to the kernel after every image and
  costs Pillow 13-20 % in page faults;
- a time limit: a task past its time ends its worker process (the local pool's kills its worker too;
  the nanny starts another and the scheduler counts the death against the task, see cluster).
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

OVERRUN_EXIT = 75  # the exit status of a worker process that ended a task over its time limit

# what makes a published file's bytes, besides Albumen's own code
_LIBRARIES = (("Pillow", "Pillow"), ("pyvips-binary", "libvips"), ("av", "PyAV"), ("pillow-heif", "pillow-heif"))

_one_task = threading.Lock()
_prepared = False


@functools.cache
def identity() -> str:
    """This process's Albumen: its version, a digest of its code (two checkouts of one version may
    differ) and the versions of the libraries that encode images and videos."""
    from .. import __version__

    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    parts = [f"Albumen {__version__} (code {digest.hexdigest()[:12]})"]
    for distribution, shown in _LIBRARIES:
        try:
            parts.append(f"{shown} {metadata.version(distribution)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{shown} missing")
    return ", ".join(parts)


class WrongAlbumen(Exception):
    """A worker whose Albumen is not the build's: the build stops (see cluster)."""

    def __init__(self, worker: str, address: str) -> None:
        super().__init__(worker, address)
        self.worker, self.address = worker, address


def run_task(expected: str, fn: Callable[[Any], Any], item: Any, seconds: float | None) -> Any:
    """Run one of the build's tasks (fn, imported by name on the worker) on its item."""
    if identity() != expected:
        raise WrongAlbumen(identity(), _address())
    with _one_task:
        _prepare()
        watchdog = None
        if seconds:
            watchdog = threading.Timer(seconds, _overrun)
            watchdog.daemon = True
            watchdog.start()
        try:
            return fn(item)
        finally:
            if watchdog is not None:
                watchdog.cancel()


def _address() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):  # not in a Dask worker
        return f"process {os.getpid()}"


def _prepare() -> None:
    """Once per worker process, before its first image."""
    global _prepared
    if _prepared:
        return
    from ..pool import _keep_freed_memory

    # the nanny's setting is read by glibc as the process starts; mallopt replaces it
    os.environ.pop("MALLOC_TRIM_THRESHOLD_", None)  # and the ffmpeg a worker runs does not get it
    _keep_freed_memory()
    from PIL import Image

    Image.preinit()
    _prepared = True


def _overrun() -> None:
    """A task over its time limit: this process ends (a decoder or an encoder stuck in native code
    cannot be stopped otherwise). The system ffmpeg a worker runs dies with it (see video._child_setup)."""
    os._exit(OVERRUN_EXIT)
