"""Listing a folder for the walk (scan.walk): its entries as raw tuples (list_raw), made in this
process or, for a large photo folder, a tree of folders at a time by the workers (list_tree) while the
walk makes the listings of those it has (Prefetch). Reads only."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterator
from dataclasses import dataclass
from stat import S_ISDIR, S_ISREG
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..pool import WorkerPool

# A folder is listed through a descriptor of it where the system can: each file is then looked at by
# its name in that folder (fstatat), not by its whole path from the top again (a million files six
# folders deep: 3.4 -> 3.0 s for the listing and stat calls alone).
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_BY_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")



def is_ignored(name: str, rel: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(rel, p) for p in patterns)


# A folder's raw listing (list_raw): its entries by name, each (name, link, mode, size, mtime_ns, error,
# plain): link, a symbolic link (what it leads to is looked at by the walk); else the entry's mode, size
# and modification time (0 for one passed over: see _passed_over), or why it could not be looked at;
# plain, a file as most are (a regular file by a name the walk takes as it is: not index.md, not passed
# over, UTF-8), listed without a look at anything else (but .nomedia's names).
RawEntry = tuple[str, bool, int, int, int, str, bool]


def list_raw(
    abs_dir: str, prefix: str = "", nomedia: set[str] | None = None, ignore: tuple[str, ...] = ()
) -> list[RawEntry]:
    """A folder's entries (raises OSError when it cannot be listed). Listed through a descriptor of the
    folder where the system can (see _BY_FD). Those the walk passes over by their name (see _passed_over:
    prefix, the folder's path in the photo folder and a '/') are not looked at."""
    fd = os.open(abs_dir, _DIR_FLAGS) if _BY_FD else None
    try:
        raw = []
        add = raw.append
        for entry in os.scandir(abs_dir if fd is None else fd):
            name = entry.name
            try:
                if entry.is_symlink():
                    add((name, True, 0, 0, 0, "", False))
                    continue
                index = len(name) == 8 and name.lower() == "index.md"
                # (most names start with no dot, in a folder with no .nomedia, no `ignore`: no call made)
                if (name.startswith(".") or nomedia or ignore) and _passed_over(name, prefix, nomedia, ignore):
                    add((name, False, 0, 0, 0, "", False))
                    continue
                st = entry.stat()
            except OSError as exc:
                add((name, False, 0, 0, 0, exc.strerror or "cannot be read", False))
                continue
            mode = st.st_mode
            add((name, False, mode, st.st_size, st.st_mtime_ns, "", S_ISREG(mode) and not index and utf8_name(name)))
        raw.sort()  # (by name: a folder's names are all different)
        return raw
    finally:
        if fd is not None:
            os.close(fd)


@dataclass(slots=True)
class Packed:
    """A folder's raw listing as a worker sends it (pack): its plain files as the text that the walk's
    listing_text makes of each (runs: those before each of the other entries, and those after the last),
    the other entries as they are. The walk makes no entry of a plain file, and the folder's text is
    these runs with what it says of the others between them: an unchanged folder's files (most of a
    library's) are taken from its snapshot, and were made into a million entries only to be let go
    (~1.5 s of the build process at a million photos, and ~230 MB)."""

    others: list[RawEntry]
    runs: list[bytes]  # len(others) + 1
    plain: int  # plain files in the runs


def pack(raw: list[RawEntry]) -> Packed:
    others: list[RawEntry] = []
    runs: list[bytes] = []
    run: list[str] = []
    for entry in raw:
        if entry[6]:
            run.append(f"{entry[0]}\0{entry[3]}\0{entry[4]}\0")
        else:
            runs.append("".join(run).encode("utf-8", "surrogateescape"))
            run = []
            others.append(entry)
    runs.append("".join(run).encode("utf-8", "surrogateescape"))
    return Packed(others, runs, len(raw) - len(others))


def utf8_name(name: str) -> bool:
    """Whether a name is text that a URL can carry (not bytes of another encoding, escaped by os)."""
    try:
        return name.isascii() or bool(name.encode("utf-8"))
    except UnicodeEncodeError:
        return False


def _passed_over(name: str, prefix: str, nomedia: set[str] | None, ignore: tuple[str, ...]) -> bool:
    """Whether the walk leaves this entry out whatever it is, before looking at it (index.md never is)."""
    if len(name) == 8 and name.lower() == "index.md":
        return False
    return name.startswith(".") or bool(nomedia and name in nomedia) or bool(ignore and is_ignored(name, prefix + name, ignore))


def list_tree(task: tuple[str, str, tuple[str, ...]]) -> dict[str, Packed | list[RawEntry] | tuple[int, str | None]]:
    """In a worker: the raw listing (list_raw) of a folder and of every folder below it, by path, packed
    (see Packed) but for a folder with a .nomedia (whose names the walk leaves out), or (errno, why) for
    one that cannot be listed. task: (the folder's path, its path in the photo folder,
    the ignore globs). Not below a folder the walk leaves out by its name, a link, or a folder with a
    .nomedia (read by the walk, which lists what is below it itself)."""
    abs_dir, src_uri, ignore = task
    found: dict[str, Packed | list[RawEntry] | tuple[int, str | None]] = {}
    stack = [(abs_dir, src_uri)]
    while stack:
        folder, uri = stack.pop()
        prefix = f"{uri}/" if uri else ""
        try:
            raw = list_raw(folder, prefix, None, ignore)
        except OSError as exc:
            found[folder] = (exc.errno or 0, exc.strerror)
            continue
        if any(entry[0] == ".nomedia" for entry in raw):
            found[folder] = raw
            continue
        found[folder] = pack(raw)
        # (a folder passed over by its name was not looked at: its mode is 0)
        stack.extend((os.path.join(folder, name), prefix + name) for name, link, mode, *_ in reversed(raw)
                     if not link and S_ISDIR(mode))
    return found


class Prefetch:
    """Folders' raw listings made by the workers (list_tree), a tree of folders a task, taken by the walk
    as it reaches them; it lists a folder itself when none has it (a task failed, a link, a .nomedia).
    The tasks go in the order the walk takes them, a few at a time: few listings wait for it at once."""

    def __init__(self, pool: WorkerPool, ignore: tuple[str, ...]) -> None:
        self.pool, self.ignore = pool, ignore
        self.started = False
        self.results: Iterator | None = None
        self.coming: set[str] = set()  # the folders at the top of the trees still on the way
        self.found: dict[str, Packed | list[RawEntry] | tuple[int, str | None]] = {}

    def start(self, trees: list[tuple[str, str]]) -> None:
        """trees: (path, path in the photo folder) of each tree's top folder, in the walk's order."""
        self.started = True
        self.coming = {path for path, _ in trees}
        self.results = self.pool.run(list_tree, [(path, uri, self.ignore) for path, uri in trees], ahead=2)

    def take(self, abs_dir: str) -> Packed | list[RawEntry] | None:
        """The folder's raw listing, None when the walk must list it (raises OSError when a worker could not)."""
        while abs_dir not in self.found and abs_dir in self.coming and self.results is not None:
            task, listed = next(self.results, (None, None))
            if task is None:
                break
            self.coming.discard(task[0])
            if isinstance(listed, dict):
                self.found.update(listed)
        found = self.found.pop(abs_dir, None)
        if isinstance(found, tuple):
            raise OSError(*found)
        return found

    def finish(self) -> None:
        """Every task's result taken (the tasks of folders left out), so that none is left running."""
        for _ in self.results or ():
            pass
        self.found.clear()
