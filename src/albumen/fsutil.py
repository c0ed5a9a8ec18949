"""Atomic file writes: a temporary file in the destination folder, then os.replace.

An interrupted build can leave a temporary file behind (removed by the next
build), never a half-written file under a published name.
"""

from __future__ import annotations

import itertools
import os

TMP_PREFIX = ".albumen-tmp-"
_serial = itertools.count()


def write_atomic(abs_path: str, data: bytes) -> os.stat_result:
    """Write data under abs_path all at once; returns the stat of the file written."""
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
