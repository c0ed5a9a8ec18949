"""Walk the source tree: hidden files, `.nomedia`, ignore globs and symbolic links.

Reads only. Symbolic links are followed when they point inside the source, and a
folder reached twice (a loop, or two links to one place) is walked once: under its own
name when the walk reaches it without a link (links to folders are followed only after
every folder reachable without one), so that its privacy and its private link are its own.
What a link leads to is recorded (WalkReport.links) for the scan, which leaves out a link
into a private album (see scan.links).
"""

from __future__ import annotations

import hashlib
import os
import stat as stat_mod
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import repeat
from stat import S_ISDIR, S_ISREG
from typing import TYPE_CHECKING

from ..fsutil import NotRegularFile, open_regular
from .listing import Packed, Prefetch, RawEntry, is_ignored, list_raw, pack, utf8_name
from .sidecar import decode_text

if TYPE_CHECKING:
    from ..pool import WorkerPool


@dataclass(slots=True)
class FileEntry:
    name: str
    folder: str  # the path of the folder it was listed in (one string for all its files: a million
    # files' own paths were ~100 MB held through the scan)
    size: int
    mtime_ns: int
    # index.md only (see _index_entry): hidden by .nomedia or `ignore`, so read for its private mark only;
    # why it must not be read at all (a link leading out of the photo folder, a broken one)
    hidden: bool = False
    refused: str = ""

    @property
    def abs_path(self) -> str:
        return os.path.join(self.folder, self.name)  # (as os.scandir's entries say it)


@dataclass(slots=True)
class DirListing:
    src_uri: str  # '' for the root
    abs_path: str
    # its files, in the order of their names; while `runs` holds its plain files (those a worker listed
    # and sent as text: see listing.Packed), only the others (index.md, links...), runs[i] coming before
    # files[i]: all_files() makes every entry
    files: list[FileEntry] = field(default_factory=list)
    real_uri: str = ""  # where the folder is in the photo folder: src_uri, unless reached through a link
    runs: list[bytes] | None = None
    plain: int = 0  # files in the runs

    def all_files(self) -> list[FileEntry]:
        """Every file listed, in the order of their names (the plain files' entries made now, once)."""
        if self.runs is not None:
            made: list[FileEntry] = []
            for n, run in enumerate(self.runs):
                if run:
                    parts = run.decode("utf-8", "surrogateescape").split("\0")  # name, size, time, ..., ''
                    made += map(FileEntry, parts[0:-1:3], repeat(self.abs_path), map(int, parts[1::3]), map(int, parts[2::3]))
                if n < len(self.files):
                    made.append(self.files[n])
            self.files, self.runs, self.plain = made, None, 0
        return self.files

    def file_count(self) -> int:
        return len(self.files) + self.plain

    def drop_files(self) -> None:
        self.files, self.runs, self.plain = [], None, 0


@dataclass(slots=True)
class LinkEntry:
    """A symbolic link met inside the photo folder, to a folder or a file listed under its name."""

    src_uri: str  # the link's own path
    real_uri: str  # where it leads, relative to the photo folder ('' for its top)
    folder: bool
    walked_as: str | None = None  # a folder: the name it was walked under (src_uri: through this link)


@dataclass
class WalkReport:
    warnings: list[str] = field(default_factory=list)
    links: list[LinkEntry] = field(default_factory=list)  # in the order met
    # index.md files of folders above a link's target that the walk did not list (hidden, ignored,
    # .nomedia, or reached through a link only): their private marks follow the folders below them.
    # None: the folder could not be listed.
    marks: dict[str, list[FileEntry] | None] = field(default_factory=dict)


def listing_text(listing: DirListing) -> bytes:
    """Everything the walk said of one folder, as bytes: its path, where it really is, and each file's
    name, size, modification time, path (when not the folder's path + its name) and what the walk
    said of it. The build's fingerprint (lastbuild), album fingerprints and folder snapshots all start
    from it (one pass over every file, not one for each)."""
    folder = listing.abs_path
    # (a file as most are, listed in its folder: three fields; one that is not says more, with its
    # path, which has a '/' that neither a name nor a number has)
    pieces = [
        f"{e.name}\0{e.size}\0{e.mtime_ns}\0" if not (e.hidden or e.refused) and e.folder == folder
        else f"{e.name}\0{e.size}\0{e.mtime_ns}\0{e.hidden:d}{e.refused}\0{e.abs_path}\0"
        for e in listing.files
    ]
    head = f"D{listing.src_uri}\0{folder}\0{listing.real_uri}\0"
    if listing.runs is None:
        return (head + "".join(pieces)).encode("utf-8", "surrogateescape")
    # the plain files' text as the worker made it (listing.Packed), the others' between: the same bytes
    parts = [head.encode("utf-8", "surrogateescape"), listing.runs[0]]
    for piece, run in zip(pieces, listing.runs[1:], strict=True):
        parts += (piece.encode("utf-8", "surrogateescape"), run)
    return b"".join(parts)


def listing_digest(text: bytes) -> str:
    """A folder's own digest, of its listing_text."""
    return hashlib.blake2b(text, digest_size=16).hexdigest()


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


def _relative(real: str, real_root: str) -> str:
    return "" if real == real_root else real[len(real_root.rstrip(os.sep)) + 1 :].replace(os.sep, "/")


# plain files listed by the walk's own process past which a folder's stay text (listing.pack), as the
# workers send them: a first build (the workers do not help: see build.PARALLEL_WALK) of a million files
# made an entry of each, ~460 MB held
PACK_FROM = 25_000


def walk_source(
    root: str, ignore: tuple[str, ...] = (), report: WalkReport | None = None, pool: WorkerPool | None = None
) -> Iterator[DirListing]:
    """Yield one listing per folder that is not ignored, parents before children.

    Links to folders are followed once every folder the walk reaches without one is listed (and links
    met through them after that): a folder is walked under its own name whenever it can be, and through
    a link only when no path leads to it (it is hidden, ignored, or under a .nomedia folder), through
    the first met of the links that lead to it. Costs nothing more for a folder without links.

    pool: workers that list folders (each sub-folder's tree, see listing.list_tree) while this process makes the
    listings of those it has: given for a large photo folder (a million files: the walk 4.2 -> 2.8 s on 2
    cores), where most of the time is the system's listing and looking at each file.
    """
    report = report if report is not None else WalkReport()
    prefetched = Prefetch(pool, ignore) if pool is not None else None
    files = 0  # listed so far: past PACK_FROM, the plain files of the folders listed here stay text too
    real_root = os.path.realpath(root)
    seen: dict[tuple[int, int], str] = {}
    listed: set[str] = set()  # real_uri of every folder listed
    stack: list[tuple[str, str, str, LinkEntry | None]] = [("", root, "", None)]
    pending: list[tuple[str, str, str, LinkEntry | None]] = []  # links to folders, to follow after the stack
    while stack or pending:
        if not stack:  # by where they lead: a link to a folder before one into it, whose folder it then holds
            stack, pending = sorted(pending, key=lambda item: item[2])[::-1], []  # popped from the end
        src_uri, abs_dir, real_uri, via = stack.pop()
        try:
            st = os.stat(abs_dir)
        except OSError as exc:
            report.warnings.append(f"{src_uri or '.'}: cannot read folder ({exc.strerror})")
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:
            if via is not None:
                via.walked_as = seen[key]  # the scan says why it is left out, once it knows what is private
            else:
                report.warnings.append(f"{src_uri}: folder already included through another link; walked once")
            continue
        seen[key] = src_uri
        if via is not None:
            via.walked_as = src_uri
        nomedia = _read_nomedia(abs_dir, src_uri, report)
        if nomedia is not None and not nomedia:
            continue
        listing = DirListing(src_uri=src_uri, abs_path=abs_dir, real_uri=real_uri)
        prefix = f"{src_uri}/" if src_uri else ""
        try:
            raw = prefetched.take(abs_dir) if prefetched is not None else None
            if raw is None or (nomedia is not None and isinstance(raw, Packed)):  # (a .nomedia made since)
                raw = list_raw(abs_dir, prefix, nomedia, ignore)
                if files >= PACK_FROM and nomedia is None:
                    raw = pack(raw)
        except OSError as exc:
            report.warnings.append(f"{src_uri or '.'}: cannot list folder ({exc.strerror})")
            continue
        listed.add(real_uri)
        subdirs: list[tuple[str, str, str, LinkEntry | None]] = []
        _list_folder(raw, listing, real_uri, real_root, nomedia, ignore, report, subdirs, pending)
        files += listing.file_count()
        yield listing
        stack.extend(reversed(subdirs))
        if prefetched is not None and not prefetched.started and len(stack) > 2 and not pending:
            # the trees of the folders still to walk (but the next one, walked here meanwhile)
            prefetched.start([(entry[1], entry[0]) for entry in reversed(stack[:-1]) if entry[3] is None])
    if prefetched is not None:
        prefetched.finish()
    _list_marks_above_links(report, listed, real_root)


def _list_folder(
    raw: Packed | list[RawEntry], listing: DirListing, real_uri: str, real_root: str, nomedia: set[str] | None,
    ignore: tuple[str, ...], report: WalkReport, subdirs: list, pending: list,
) -> None:
    """One folder's entries (listing.list_raw, or as a worker packed them) into its listing's files, its
    sub-folders (subdirs) and its links to folders (pending, see walk_source)."""
    if isinstance(raw, Packed):  # the plain files stay text: each other entry listed, between its runs
        runs = [[raw.runs[0]]]
        for entry, run in zip(raw.others, raw.runs[1:], strict=True):
            before = len(listing.files)
            _list_entries([entry], listing, real_uri, real_root, nomedia, ignore, report, subdirs, pending)
            if len(listing.files) == before:
                runs[-1].append(run)  # (nothing listed of it: the runs on each side are one)
            else:
                runs.append([run])
        listing.runs, listing.plain = [b"".join(run) for run in runs], raw.plain
        return
    _list_entries(raw, listing, real_uri, real_root, nomedia, ignore, report, subdirs, pending)


def _list_entries(
    raw: list[RawEntry], listing: DirListing, real_uri: str, real_root: str, nomedia: set[str] | None,
    ignore: tuple[str, ...], report: WalkReport, subdirs: list, pending: list,
) -> None:
    src_uri, abs_dir = listing.src_uri, listing.abs_path
    prefix = f"{src_uri}/" if src_uri else ""
    add = listing.files.append
    for entry in raw:  # (a million times: a plain file first, with nothing made for it but its entry)
        if entry[6] and not (nomedia and entry[0] in nomedia):
            add(FileEntry(entry[0], abs_dir, entry[3], entry[4]))
            continue
        name, link, mode, size, mtime_ns, error, _ = entry
        if len(name) == 8 and name.lower() == "index.md":  # it may mark its album private: never passed over
            rel = prefix + name
            hidden = bool(nomedia and name in nomedia) or bool(ignore and is_ignored(name, rel, ignore))
            index, found = _index_entry(entry, abs_dir, rel, real_root, hidden)
            add(index)
            if found is not None:  # an index.md linked to a private album's keeps its album private (scan.links)
                report.links.append(found)
            continue
        if name.startswith(".") or (nomedia and name in nomedia):
            continue
        if not utf8_name(name):  # bytes that are not UTF-8 (an old zip file): no URL can carry them
            shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            report.warnings.append(f"{src_uri + '/' if src_uri else ''}{shown}: name is not valid UTF-8; ignored (rename it)")
            continue
        if ignore and is_ignored(name, prefix + name, ignore):
            continue
        followed = None
        if error:
            report.warnings.append(f"{prefix + name}: broken symbolic link or unreadable entry; ignored")
            continue
        if link:
            rel = prefix + name
            path = os.path.join(abs_dir, name)
            try:
                real = os.path.realpath(path)
                if not _inside(real, real_root):
                    report.warnings.append(f"{rel}: symbolic link points outside the source folder; ignored")
                    continue
                target = os.stat(path)
            except OSError:
                report.warnings.append(f"{rel}: broken symbolic link or unreadable entry; ignored")
                continue
            mode, size, mtime_ns = target.st_mode, target.st_size, target.st_mtime_ns
            followed = LinkEntry(rel, _relative(real, real_root), stat_mod.S_ISDIR(mode))
        if S_ISREG(mode):
            add(FileEntry(name, abs_dir, size, mtime_ns))
            if followed is not None:
                report.links.append(followed)
        elif S_ISDIR(mode):
            if followed is None:
                subdirs.append((prefix + name, os.path.join(abs_dir, name), f"{real_uri}/{name}" if real_uri else name, None))
            else:
                report.links.append(followed)
                pending.append((followed.src_uri, os.path.join(abs_dir, name), followed.real_uri, followed))


def _list_marks_above_links(report: WalkReport, listed: set[str], real_root: str) -> None:
    """The index.md files of the folders above each link's target that no listing holds (see
    WalkReport.marks): a private mark there makes the target private, though the walk never lists them."""
    for link in report.links:
        folder = link.real_uri if link.folder else link.real_uri.rpartition("/")[0]
        while folder:
            if folder not in listed and folder not in report.marks:
                abs_dir = os.path.join(real_root, *folder.split("/"))
                found: list[FileEntry] | None = []
                try:
                    with os.scandir(abs_dir) as entries:
                        for entry in entries:
                            if entry.name.lower() == "index.md":
                                st = os.stat(entry.path)
                                found.append(FileEntry(entry.name, abs_dir, st.st_size, st.st_mtime_ns))
                except OSError:
                    found = None  # cannot tell: the scan takes the folder as private
                report.marks[folder] = found
            folder = folder.rpartition("/")[0]


def _index_entry(
    entry: RawEntry, folder: str, rel: str, real_root: str, hidden: bool
) -> tuple[FileEntry, LinkEntry | None]:
    """An album's index.md (any capitals), whatever it is: it may say 'private: true', so one that
    cannot be read is listed all the same (the scan then keeps its album private, with a warning
    saying why), and so is one that .nomedia or `ignore` hide (the scan reads it for its private mark
    only). Not readable: a link leading out of the photo folder (not followed), a broken one or a
    loop; a FIFO, a device or a folder (refused when opened: see fsutil.open_regular)."""
    name, is_link, mode, size, mtime_ns, error, _ = entry
    if error:
        return FileEntry(name, folder, 0, 0, hidden, error), None
    if not is_link:
        return FileEntry(name, folder, size, mtime_ns, hidden), None
    path = os.path.join(folder, name)
    try:
        st = os.lstat(path)
    except OSError as exc:
        return FileEntry(name, folder, 0, 0, hidden, exc.strerror or "cannot be read"), None
    refused = ""
    link = None
    real = os.path.realpath(path)
    if not _inside(real, real_root):
        refused = "a symbolic link leading outside the photo folder, which is not followed"
    else:
        try:
            st = os.stat(path)
        except OSError as exc:
            refused = f"a broken symbolic link: {exc.strerror}"
        else:
            link = LinkEntry(rel, _relative(real, real_root), stat_mod.S_ISDIR(st.st_mode))
    return FileEntry(name, folder, st.st_size, st.st_mtime_ns, hidden, refused), link
