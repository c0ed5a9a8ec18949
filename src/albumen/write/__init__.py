"""Output sinks. Pages and static files go through a sink; image workers write their own files atomically."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable

from ..errors import BuildError
from ..fsutil import OutsideRoot, check_inside, same_content, write_atomic, write_atomic_with, write_temp


class PathHashes:
    """Paths by their 64-bit hash, 8 bytes each in 65,536 byte strings (by the hash's low bits), not a
    set of ints: a first build of a million photos writes a million pages, and the set of their hashes
    held ~66 MiB (an int object and a table slot each), these ~12. A lookup searches, in C, the ~15
    hashes (at a million) of one string. Two paths sharing a 64-bit hash is beyond unlikely."""

    _BUCKETS = 1 << 16

    def __init__(self) -> None:
        self.buckets: list[bytearray | None] = [None] * self._BUCKETS

    def _place(self, path: str) -> tuple[int, bytes]:
        """The path's bucket, and its hash as the 8 bytes kept there."""
        number = hash(path) & 0xFFFF_FFFF_FFFF_FFFF
        return number & (self._BUCKETS - 1), number.to_bytes(8, "little")

    def __contains__(self, path: str) -> bool:
        index, key = self._place(path)
        bucket = self.buckets[index]
        return bucket is not None and _holds(bucket, key)

    def claim(self, path: str) -> bool:
        """Add the path; False, and nothing added, when it is there already (one hash and search)."""
        index, key = self._place(path)
        bucket = self.buckets[index]
        if bucket is None:
            self.buckets[index] = bytearray(key)
        elif _holds(bucket, key):
            return False
        else:
            bucket += key
        return True


def _holds(bucket: bytearray, key: bytes) -> bool:
    at = bucket.find(key)
    while at >= 0 and at % 8:  # (found across two hashes: look on)
        at = bucket.find(key, at + 1)
    return at >= 0


class DiskSink:
    """Writes under one output folder: atomically, only when the bytes changed, never twice to one path."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.claimed = PathHashes()  # paths written so far (every path held was ~130 MB at a million photos)
        self.written = 0  # files whose bytes changed
        self.unchanged = 0
        self.stamps: list[tuple[str, int, int]] = []  # (dest_uri, size, mtime_ns) since take_stamps
        # A file that replaces one of the last build's waits in a temporary file until commit(): an
        # existing page must not link to a new one before that is written, and a build stopped
        # part-way (Ctrl-C, SIGTERM) must leave a site whose every link leads somewhere. New files
        # (reachable only through replaced ones) are written at once.
        self.defer_replacements = False
        self.deferred: dict[str, tuple[str, int, int]] = {}  # dest_uri -> its temporary file, size, mtime_ns

    def take_stamps(self) -> list[tuple[str, int, int]]:
        """What the files written (or found as they should be) since the last call are: for the
        cache's manifest, so a later build removes one only while it is still that file."""
        stamps, self.stamps = self.stamps, []
        return stamps

    def abs_path(self, dest_uri: str) -> str:
        path = os.path.normpath(os.path.join(self.root, *dest_uri.split("/")))
        if not (path == self.root or path.startswith(self.root.rstrip(os.sep) + os.sep)):
            raise BuildError(f"refusing to write outside the output folder: {dest_uri}")
        return path

    def has(self, dest_uri: str) -> bool:
        """Whether this sink wrote (or found unchanged) this path already."""
        return dest_uri in self.claimed

    def _claim(self, dest_uri: str) -> None:
        if not self.claimed.claim(dest_uri):
            raise BuildError(f"two outputs claim one path: {dest_uri}")

    def write(self, dest_uri: str, data: bytes, again: bool = False) -> bool:
        """Write when different; True when the file changed.

        again=True: this build wrote the path already and means to replace it (a page written
        early whose content changed since, see render.writer.EarlyPages)."""
        if not again:
            self._claim(dest_uri)
        path = self.abs_path(dest_uri)
        try:  # before reading it too: a page behind a link leading out is not this site's, changed or not
            check_inside(os.path.dirname(path), self.root)
        except OutsideRoot as exc:
            raise BuildError(str(exc), hint="replace the link with a real folder, or remove it") from None
        waiting = self.deferred.pop(dest_uri, None)  # written earlier in this build, to replace the file
        if waiting is not None:
            os.unlink(waiting[0])
        if same_content(path, data):
            self.unchanged += 1
            st = os.stat(path)
            self.stamps.append((dest_uri, st.st_size, st.st_mtime_ns))
            return False
        if self.defer_replacements and os.path.lexists(path):
            tmp, st = write_temp(path, data)
            self.deferred[dest_uri] = (tmp, st.st_size, st.st_mtime_ns)
            self.written += 1
            return True
        st = write_atomic(path, data)
        self.stamps.append((dest_uri, st.st_size, st.st_mtime_ns))
        self.written += 1
        return True

    def write_with(self, dest_uri: str, fill) -> None:
        """Write the bytes fill(file) writes into a binary file (never compared: a plugin's big file,
        written only when its key changed)."""
        self._claim(dest_uri)
        path = self.abs_path(dest_uri)
        try:
            check_inside(os.path.dirname(path), self.root)
        except OutsideRoot as exc:
            raise BuildError(str(exc), hint="replace the link with a real folder, or remove it") from None
        st = write_atomic_with(path, fill)
        self.stamps.append((dest_uri, st.st_size, st.st_mtime_ns))
        self.written += 1

    def is_deferred(self, dest_uri: str) -> bool:
        return dest_uri in self.deferred

    def commit(self) -> None:
        """Put every deferred file in place (its stamp then taken): once every new file is written."""
        for dest_uri, (tmp, size, mtime_ns) in self.deferred.items():
            os.replace(tmp, self.abs_path(dest_uri))
            self.stamps.append((dest_uri, size, mtime_ns))
        self.deferred = {}

    def copy(self, dest_uri: str, abs_src_path: str) -> bool:
        with open(abs_src_path, "rb") as f:
            return self.write(dest_uri, f.read())


def outputs_not_as_written_by(pool, root: str, spans: list[tuple[Callable, tuple]]) -> dict[str, int | None]:
    """outputs_not_as_written of every recorded output, the workers (pool: a pool.WorkerPool) each
    looking at spans of them that they read from the cache themselves (spans: BuildCache.output_spans),
    while this process waits: a rebuild with nothing changed of a million photos looks at 3 million
    files. A span whose task fails is looked at here."""
    damaged: dict[str, int | None] = {}
    for (_, read, args), found in pool.run(outputs_not_as_written_in, [(root, read, args) for read, args in spans]):
        damaged.update(found if isinstance(found, dict) else outputs_not_as_written(root, read(*args)))
    return damaged


def outputs_not_as_written_in(task: tuple[str, Callable, tuple]) -> dict[str, int | None]:
    """In a worker: outputs_not_as_written under root of the stamps read(*args) gives (a span of them)."""
    root, read, args = task
    return outputs_not_as_written(root, read(*args))


def outputs_not_as_written(root: str, stamps: Iterable[tuple[str, int | None, int | None]]) -> dict[str, int | None]:
    """The files among these (dest_uri, size, mtime_ns written) that are missing under root or not as
    written (another size or modification time; a file recorded without them only has to be there):
    dest_uri -> the size written.

    One stat per file and nothing read, relative to the output folder: about 3-4 microseconds a
    file (a tenth of a second for 10,000 photos' 30,000 files), which is cheaper than walking the
    output and, streamed from the cache, holds nothing in memory."""
    damaged: dict[str, int | None] = {}
    try:
        folder = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return {uri: size for uri, size, _ in stamps}
    relative = os.stat in os.supports_dir_fd
    try:
        for uri, size, mtime_ns in stamps:
            try:
                if relative:
                    st = os.stat(uri, dir_fd=folder, follow_symlinks=False)
                else:  # pragma: no cover - every POSIX system Albumen runs on has dir_fd
                    st = os.stat(os.path.join(root, *uri.split("/")), follow_symlinks=False)
            except OSError:
                damaged[uri] = size
                continue
            if not stat.S_ISREG(st.st_mode) or (
                size is not None and (st.st_size != size or st.st_mtime_ns != mtime_ns)
            ):
                damaged[uri] = size
    finally:
        os.close(folder)
    return damaged
