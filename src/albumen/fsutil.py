"""Atomic file writes: a temporary file in the destination folder, then os.replace.

An interrupted build can leave a temporary file behind (removed by the next
build), never a half-written file under a published name.
"""

from __future__ import annotations

import errno
import functools
import hashlib
import itertools
import os
import stat
from collections.abc import Iterable
from pathlib import Path

TMP_PREFIX = ".albumen-tmp-"
_serial = itertools.count()


class OutsideRoot(OSError):
    """A folder of the output leads outside it: it is (or is inside) a symbolic link to elsewhere."""


@functools.lru_cache(maxsize=4096)  # folders are written one after another: a small memo serves them
def _resolved(folder: str) -> str:
    """os.path.realpath, one lstat per folder not seen before (its parent is usually in the memo)."""
    parent, name = os.path.split(folder)
    if not name or not parent or parent == folder:
        return os.path.realpath(folder)
    path = os.path.join(_resolved(parent), name)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return os.path.realpath(path)
    except OSError:  # not there (yet): it will be made as a real folder
        pass
    return path


def forget_resolved() -> None:
    """Forget the folders resolved so far: a later build (albumen serve) or task checks them afresh."""
    _resolved.cache_clear()


def check_inside(folder: str, root: str) -> None:
    """Refuse a folder that the file system resolves to a place outside root (a symbolic link in the
    output leading elsewhere, perhaps into the photo folder): nothing is written or removed through it."""
    if ".." in folder.split(os.sep):  # the system would resolve it after any link: never meant here
        raise OutsideRoot(f"refusing an output path with '..' in it: {folder}")
    folder, root = os.path.abspath(folder), os.path.normpath(os.path.abspath(root))
    real, real_root = _resolved(folder), _resolved(root)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        inside = folder.startswith(root.rstrip(os.sep) + os.sep)
        shown = os.path.relpath(folder, root) if inside else folder
        raise OutsideRoot(f"output folder {shown} is a symbolic link to {real}, outside the output; "
                          "nothing is written through it")


class NotRegularFile(OSError):
    """A name that should be a file is a FIFO, a device or a socket: opening it could wait forever."""


def open_regular(abs_path: str):
    """open(abs_path, "rb"), for files found by name in the photo folder (.nomedia, sidecars,
    captions): a FIFO or a device there is refused with NotRegularFile instead of opened, since
    reading a FIFO waits for a writer that never comes. Opened without blocking and checked again
    on the open file, so one swapped in after the first look is refused too."""
    if not stat.S_ISREG(os.stat(abs_path).st_mode):
        raise NotRegularFile(errno.EINVAL, "not a regular file", abs_path)
    fd = os.open(abs_path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", abs_path)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def write_atomic(abs_path: str, data: bytes) -> os.stat_result:
    """Write data under abs_path all at once; returns the stat of the file written. (Callers writing
    into the output check its folder first: see check_inside.)"""
    tmp, st = write_temp(abs_path, data)
    try:
        os.replace(tmp, abs_path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return st


def write_temp(abs_path: str, data: bytes) -> tuple[str, os.stat_result]:
    """Write data into a temporary file beside abs_path (removed by the clean-up of an interrupted
    build); returns its path and stat, for os.replace to put it in place (the rename keeps them)."""
    folder, name = os.path.split(abs_path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:  # a name of our own: this process's id and a counter (cheaper than mkstemp's random names)
        tmp = os.path.join(folder, f"{TMP_PREFIX}{os.getpid()}-{next(_serial)}-{name[:40]}")
        try:
            fd = os.open(tmp, flags, 0o644)
            break
        except FileExistsError:  # left by an interrupted build of a process with the same id
            continue
        except FileNotFoundError:
            os.makedirs(folder, exist_ok=True)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, 0o644)  # readable by the web server whatever the umask
            st = os.fstat(fd)  # the rename keeps size and modification time
        finally:
            os.close(fd)
        return tmp, st
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_atomic_with(abs_path: str, fill) -> os.stat_result:
    """As write_atomic, the bytes written by fill(file) into a binary file: for a file too big to hold
    in memory (a plugin's archive)."""
    folder, name = os.path.split(abs_path)
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f"{TMP_PREFIX}{os.getpid()}-{next(_serial)}-{name[:40]}")
    try:
        with open(tmp, "xb") as f:
            fill(f)
            f.flush()
            os.fchmod(f.fileno(), 0o644)
            st = os.fstat(f.fileno())
        os.replace(tmp, abs_path)
        return st
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def same_content(abs_path: str, data: bytes) -> bool:
    """True when the file exists with exactly these bytes (so it need not be rewritten)."""
    try:
        if os.path.getsize(abs_path) != len(data):
            return False
        with open(abs_path, "rb") as f:
            return f.read() == data
    except OSError:
        return False


def remove_temp_files(folder: str, names: list[str] | None = None) -> None:
    """Remove the temporary files an interrupted write left in one folder (names: its listing,
    when the caller has it)."""
    if names is None:
        try:
            names = os.listdir(folder)
        except OSError:
            return
    for name in names:
        if name.startswith(TMP_PREFIX):
            try:
                os.unlink(os.path.join(folder, name))
            except OSError:
                pass


def make_private_dirs(folder: Path | str) -> None:
    """Make a folder of Albumen's own (the build cache's, the secret's) and those missing above it,
    readable by this user only (0700): they hold private album names and links, locations and the
    secret. A folder that exists is left as it is (it may be the user's: $ALBUMEN_CACHE_DIR)."""
    folder = os.fspath(folder)
    missing = []
    while not os.path.isdir(folder):
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for path in reversed(missing):
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass


def keep_private(path: Path | str, mode: int) -> None:
    """Take the group's and others' rights away from a file or folder of Albumen's own that an older
    version made readable to them (0644, 0755)."""
    try:
        st = os.stat(path)
        if st.st_mode & 0o077 and st.st_uid == os.getuid():
            os.chmod(path, mode)
    except (OSError, AttributeError):  # (no getuid on Windows)
        pass


def files_digest(paths: Iterable[str], seed: str = "") -> str:
    """A digest of seed and these files' bytes, in order: what a cache key holds of the code that makes
    what it keeps (a file that cannot be read, as in an install without sources, adds nothing)."""
    h = hashlib.sha256(seed.encode())
    for path in paths:
        try:
            with open(path, "rb") as f:
                h.update(f.read())
        except OSError:
            pass
        h.update(b"\0")
    return h.hexdigest()
