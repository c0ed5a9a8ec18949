"""One build at a time per output folder and per build cache.

Two builds writing one output at once undo each other's work: each takes the other's temporary
files for leftovers of an interrupted build and removes them (its videos then fail), and each
removes as stale the pages the other just wrote. So a build holds an exclusive lock on its output
folder and on its cache from before it reads either to its end, and `albumen serve` holds its
output for as long as it runs. A second build refuses (exit 2), naming the process that holds
the folder, or waits for it with --wait.

The lock is the kernel's (flock), not a file that merely exists: it ends with its process, however
that ends (a killed build never blocks the next), and nothing has to guess whether a lock is
stale. The output's lock is taken on the output folder itself, opened for reading. A lock file in
the output would be published with the site (and removed by `rsync --delete` from a copy); one in
a per-user folder keyed by the output's path would not be seen by another user, or by the same
user with another cache or runtime folder ($ALBUMEN_CACHE_DIR, a cron job), nor through another
path to the same folder. The folder itself is the same folder whatever names it, for anyone who
can write it, and leaves nothing behind. The cache is locked too (a file `lock` in its folder,
which also names its holder): the cache is per output path, but an output deleted and made again
while `albumen serve` runs is a new folder with the same cache. Who holds an output is read from
/proc/locks on Linux, else from the cache's lock file when the cache is the same.
"""

from __future__ import annotations

import errno
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .errors import UsageError
from .fsutil import make_private_dirs

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock; builds are not kept apart there
    fcntl = None  # type: ignore[assignment]

CACHE_LOCK = "lock"


class BusyError(UsageError):
    """Another process is building into this output (or with this cache); nothing was written."""


@dataclass
class _Held:
    fd: int
    thread: int
    count: int = 1


_held: dict[tuple[int, int], _Held] = {}  # (st_dev, st_ino) of each folder or file locked by this process
_guard = threading.Lock()


def command_of(argv: list[str]) -> str:
    """How a process was started, for messages: 'albumen build', 'albumen serve', or its command line."""
    for arg in argv[:-1]:
        name = os.path.basename(arg)  # the console script, 'python -m albumen', or its __main__.py
        if name in ("albumen", "albumen.exe") or (name == "__main__.py" and os.path.basename(os.path.dirname(arg)) == "albumen"):
            word = next((a for a in argv[argv.index(arg) + 1:] if not a.startswith("-")), "")
            return f"albumen {word}".strip()
    text = " ".join(argv)
    return text if len(text) <= 80 else text[:79] + "…"


def _command_of_pid(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return None
    return command_of(argv) if argv else None


def _flock_holder(st: os.stat_result) -> int | None:
    """The process holding a flock on this file or folder, from /proc/locks (Linux)."""
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            for line in f:
                parts = line.split()  # '1: FLOCK  ADVISORY  WRITE 1234 fe:00:2146487 0 EOF'
                if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == wanted and parts[4].isdigit():
                    return int(parts[4])
    except OSError:
        pass
    return None


def _note_of(cache_dir: Path | None) -> tuple[int | None, str | None]:
    """(pid, command) that the holder of a cache wrote into its lock file, while it holds it (the
    note stays when its writer is gone)."""
    if cache_dir is None or fcntl is None:
        return None, None
    try:
        fd = os.open(cache_dir / CACHE_LOCK, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None, None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return None, None  # nobody holds it: the note is an old one
        except OSError:
            pass
        pid, _, command = os.read(fd, 4096).decode("utf-8", "replace").strip().partition(" ")
        return int(pid), command or None
    except (OSError, ValueError):
        return None, None
    finally:
        os.close(fd)


def _holder(st: os.stat_result, cache_dir: Path | None) -> str:
    """'albumen serve (pid 1234)', or what can be told of the process holding a lock."""
    pid = _flock_holder(st)
    command = _command_of_pid(pid) if pid is not None else None
    if pid is None or command is None:
        noted_pid, noted = _note_of(cache_dir)
        if noted_pid is not None and (pid is None or pid == noted_pid):
            pid, command = noted_pid, command or noted
    if pid is None:
        return "another process"
    return f"{command or 'a process'} (pid {pid})"


def _open_folder(folder: Path) -> int:
    return os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))


def _open_lock_file(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)


@dataclass
class _Request:
    what: str  # 'output folder', 'build cache'
    where: Path
    cache_dir: Path | None  # whose lock file may name the holder
    wait: bool
    waiting: Callable[[str], None] | None
    can_wait: bool  # the command has --wait (for the hint)
    warnings: list[str]


def _acquire(open_fd: Callable[[], int], req: _Request, note: bool = False) -> Callable[[], None]:
    """Take an exclusive flock on what open_fd opens; returns what releases it. Reentrant in the
    thread that holds it (`albumen serve` building)."""
    if fcntl is None:
        return lambda: None
    try:
        fd = open_fd()
    except OSError as exc:
        req.warnings.append(_unlockable(req.where, exc))
        return lambda: None
    st = os.fstat(fd)
    key = (st.st_dev, st.st_ino)
    with _guard:
        mine = _held.get(key)
        if mine is not None and mine.thread == threading.get_ident():
            mine.count += 1
            os.close(fd)
            return lambda: _leave(key)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):  # NFS, some FUSE folders
                req.warnings.append(_unlockable(req.where, exc))
                os.close(fd)
                return lambda: None
            holder = _holder(st, req.cache_dir)
            if not req.wait:
                raise _busy(req, holder) from None
            if req.waiting is not None:
                req.waiting(f"waiting for {holder}, which is writing {req.where}")
            fcntl.flock(fd, fcntl.LOCK_EX)
        if note:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()} {command_of(sys.argv)}\n".encode("utf-8", "replace"), 0)
    except BaseException:
        os.close(fd)
        raise
    with _guard:
        _held[key] = _Held(fd, threading.get_ident())
    return lambda: _leave(key)


def _leave(key: tuple[int, int]) -> None:
    with _guard:
        held = _held[key]
        held.count -= 1
        if held.count:
            return
        del _held[key]
    os.close(held.fd)  # the lock goes with the last descriptor of it


def _unlockable(where: Path, exc: OSError) -> str:
    return (f"cannot lock {where} ({exc.strerror or exc}): nothing keeps another build from writing into it "
            "at the same time")


def _busy(req: _Request, holder: str) -> BusyError:
    if holder.startswith("albumen serve"):
        hint = "stop it (Ctrl-C where it runs; it rebuilds by itself when the photos change), or use another output folder (-o)"
    elif req.can_wait:
        hint = "let it finish, or give --wait to start when it has (or use another output folder: -o)"
    else:
        hint = "let it finish and start again, or use another output folder (-o)"
    return BusyError(
        f"{req.where} is in use by {holder}: two builds writing one {req.what} at once would undo each other's "
        "work, so this one did not start",
        hint=hint,
    )


@contextmanager
def hold_output(
    output: Path, cache_dir: Path | None = None, wait: bool = False,
    waiting: Callable[[str], None] | None = None, can_wait: bool = True,
) -> Iterator[list[str]]:
    """Hold the output folder (which must exist), then the cache folder's lock file, for the block.

    Raises BusyError when another process holds either, unless wait: then waiting(message) is called
    and the lock awaited. A thread that holds them already (`albumen serve` building) holds them
    once more. Yields warnings: a file system that cannot lock (the build goes on without).
    """
    warnings: list[str] = []
    release = _acquire(lambda: _open_folder(output), _Request(
        "output folder", output, cache_dir, wait, waiting, can_wait, warnings))
    try:
        if cache_dir is None:
            yield warnings
            return
        make_private_dirs(cache_dir)
        release_cache = _acquire(lambda: _open_lock_file(cache_dir / CACHE_LOCK), _Request(
            "build cache", cache_dir, cache_dir, wait, waiting, can_wait, warnings), note=True)
        try:
            yield warnings
        finally:
            release_cache()
    finally:
        release()


def forget_inherited() -> None:
    """In a worker forked from a process holding locks: close its copies of them (never unlock: the
    lock is the build's), so a lock lives exactly as long as the process that took it."""
    with _guard:
        for held in _held.values():
            try:
                os.close(held.fd)
            except OSError:
                pass
        _held.clear()

