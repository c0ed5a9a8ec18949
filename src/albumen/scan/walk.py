"""Walk the source tree: hidden files, `.nomedia`, ignore globs and symbolic links.

Reads only. Symbolic links are followed when they point inside the source, and a
folder reached twice (a loop, or two links to one place) is walked once.
"""

from __future__ import annotations

import fnmatch
import os
import stat as stat_mod
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..fsutil import NotRegularFile, open_regular
from .sidecar import decode_text


@dataclass(slots=True)
class FileEntry:
    name: str
    abs_path: str
    size: int
    mtime_ns: int
    # index.md only (see _index_entry): hidden by .nomedia or `ignore`, so read for its private mark only;
    # why it must not be read at all (a link leading out of the photo folder, a broken one)
    hidden: bool = False
    refused: str = ""


@dataclass(slots=True)
class DirListing:
    src_uri: str  # '' for the root
    abs_path: str
    files: list[FileEntry] = field(default_factory=list)


@dataclass
class WalkReport:
    warnings: list[str] = field(default_factory=list)


def is_ignored(name: str, rel: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(rel, p) for p in patterns)


_MAX_NOMEDIA_BYTES = 1 << 20


def _read_nomedia(abs_dir: str, src_uri: str, report: WalkReport) -> set[str] | None:
    """None when there is no .nomedia; an empty set means 'ignore the whole folder'. One that cannot
    be read whole hides the folder (fail closed: the names it lists could be anything), with a
    warning: one that is not a regular file (a FIFO would make the build wait forever, so it is not
    opened), a broken link, an unreadable one, one too large, one that is not text."""
    path = os.path.join(abs_dir, ".nomedia")
    try:
        with open_regular(path) as f:
            raw = f.read(_MAX_NOMEDIA_BYTES + 1)
        if len(raw) > _MAX_NOMEDIA_BYTES:
            why = "larger than 1 MiB"
        else:
            return {line.strip() for line in decode_text(raw, path)[0].split("\n") if line.strip()}
    except FileNotFoundError:
        if not os.path.islink(path):
            return None
        why = "a broken symbolic link"
    except NotRegularFile:
        why = "not a regular file (a FIFO or a device?)"
    except OSError as exc:  # NotText too
        why = f"cannot read it ({exc.strerror})"
    shown = f"{src_uri}/.nomedia" if src_uri else ".nomedia"
    report.warnings.append(f"{shown}: {why}; not read, the folder is hidden")
    return set()


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def walk_source(root: str, ignore: tuple[str, ...] = (), report: WalkReport | None = None) -> Iterator[DirListing]:
    """Yield one listing per folder that is not ignored, parents before children."""
    report = report if report is not None else WalkReport()
    real_root = os.path.realpath(root)
    seen: set[tuple[int, int]] = set()
    stack: list[tuple[str, str]] = [("", root)]
    while stack:
        src_uri, abs_dir = stack.pop()
        try:
            st = os.stat(abs_dir)
        except OSError as exc:
            report.warnings.append(f"{src_uri or '.'}: cannot read folder ({exc.strerror})")
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:
            report.warnings.append(f"{src_uri}: folder already included through another link; walked once")
            continue
        seen.add(key)
        nomedia = _read_nomedia(abs_dir, src_uri, report)
        if nomedia is not None and not nomedia:
            continue
        listing = DirListing(src_uri=src_uri, abs_path=abs_dir)
        try:
            entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
        except OSError as exc:
            report.warnings.append(f"{src_uri or '.'}: cannot list folder ({exc.strerror})")
            continue
        subdirs: list[tuple[str, str]] = []
        for entry in entries:
            name = entry.name
            rel = f"{src_uri}/{name}" if src_uri else name
            if name.lower() == "index.md":  # it may mark its album private: never passed over
                hidden = bool(nomedia and name in nomedia) or bool(ignore and is_ignored(name, rel, ignore))
                listing.files.append(_index_entry(entry, real_root, hidden))
                continue
            if name.startswith(".") or (nomedia and name in nomedia):
                continue
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:  # bytes that are not UTF-8 (an old zip file): no URL can carry them
                shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                report.warnings.append(f"{src_uri + '/' if src_uri else ''}{shown}: name is not valid UTF-8; ignored (rename it)")
                continue
            if ignore and is_ignored(name, rel, ignore):
                continue
            try:
                if entry.is_symlink():
                    real = os.path.realpath(entry.path)
                    if not _inside(real, real_root):
                        report.warnings.append(f"{rel}: symbolic link points outside the source folder; ignored")
                        continue
                    target = os.stat(entry.path)
                else:
                    target = entry.stat()
            except OSError:
                report.warnings.append(f"{rel}: broken symbolic link or unreadable entry; ignored")
                continue
            if stat_mod.S_ISDIR(target.st_mode):
                subdirs.append((rel, entry.path))
            elif stat_mod.S_ISREG(target.st_mode):
                listing.files.append(FileEntry(name, entry.path, target.st_size, target.st_mtime_ns))
        yield listing
        stack.extend(reversed(subdirs))


def _index_entry(entry: os.DirEntry, real_root: str, hidden: bool) -> FileEntry:
    """An album's index.md (any capitals), whatever it is: it may say 'private: true', so one that
    cannot be read is listed all the same (the scan then keeps its album private, with a warning
    saying why), and so is one that .nomedia or `ignore` hide (the scan reads it for its private mark
    only). Not readable: a link leading out of the photo folder (not followed), a broken one or a
    loop; a FIFO, a device or a folder (refused when opened: see fsutil.open_regular)."""
    refused = ""
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError as exc:
        return FileEntry(entry.name, entry.path, 0, 0, hidden, exc.strerror or "cannot be read")
    if stat_mod.S_ISLNK(st.st_mode):
        if not _inside(os.path.realpath(entry.path), real_root):
            refused = "a symbolic link leading outside the photo folder, which is not followed"
        else:
            try:
                st = os.stat(entry.path)
            except OSError as exc:
                refused = f"a broken symbolic link: {exc.strerror}"
    return FileEntry(entry.name, entry.path, st.st_size, st.st_mtime_ns, hidden, refused)
