"""Reading files: done by the pool's worker processes, never the build process.

What a worker makes of one file (FileRecord: its kind, header, embedded metadata and content hash)
and how the scan hands the files to read to the pool in batches and takes the records back
(_read_all); the build process shares equal values between the records it gets (_share_equal_values).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from functools import partial

import xxhash

from ..errors import ProcessingError, described
from ..fsutil import open_regular
from ..model import EmbeddedMetadata, MediaInfo
from ..pool import TaskFailed, WorkerPool
from .kinds import KindReader, claiming, read_kind
from .sniff import Sniffed, sniff_bytes
from .walk import FileEntry

# The reader of videos: 2 looks for a cut-off end (see scan.video). A video's record made by an earlier
# one is read again; photos are not (a new cache schema would read and hash every photo again too).
VIDEO_READER = 2


@dataclass(slots=True)
class FileRecord:
    """What one media file told the scan. Plain data: cacheable and safe to send between processes."""

    kind: str | None
    format: str | None
    content_hash: str = ""
    info: MediaInfo | None = None
    embedded: EmbeddedMetadata | None = None
    notes: list[str] = field(default_factory=list)
    reason: str | None = None  # why the file was skipped
    reader: int = 0  # VIDEO_READER for a video (unset in records cached before it existed)
    kind_recipe: str = ""  # read by a plugin's media kind: its recipe (unset in records cached before)


def hash_file(abs_path: str) -> str:
    """Content fingerprint: XXH3-128 (it tells changed bytes apart; 7x faster than SHA-256 here)."""
    with open_regular(abs_path) as f:
        return hashlib.file_digest(f, xxhash.xxh3_128).hexdigest()


def read_media_file(abs_path: str, name: str, max_pixels: int, kinds: tuple[KindReader, ...] = ()) -> FileRecord:
    """Sniff, read the header and metadata of, and hash one file. kinds: plugins' media kinds, which
    read a file whose content is not a photo or a video when they claim its extension."""
    try:
        with open_regular(abs_path) as f:  # a FIFO swapped in since the walk would hang the worker
            head = f.read(64)
    except OSError as exc:
        return FileRecord("broken", None, reason=f"cannot read file ({exc.strerror})")
    sniffed: Sniffed = sniff_bytes(head, os.path.splitext(name)[1])
    if sniffed.kind not in ("image", "video") and kinds:
        reader = claiming(kinds, name)
        if reader is not None:
            return read_kind(abs_path, reader, FileRecord, hash_file)
    record = FileRecord(sniffed.kind, sniffed.format, reason=sniffed.reason)
    # imported here: only workers read files, and the build process need not load Pillow's parsers
    from .metadata import read_image
    from .video import read_video

    try:
        if sniffed.kind == "image":
            record.info, record.embedded, record.notes = read_image(abs_path, sniffed.format or "", max_pixels)
        elif sniffed.kind == "video":
            record.reader = VIDEO_READER
            record.info, record.embedded, record.notes = read_video(abs_path, sniffed.format or "video")
        if record.kind in ("image", "video"):
            record.content_hash = hash_file(abs_path)
    except ProcessingError as exc:
        return FileRecord("broken", sniffed.format, reason=exc.message)
    except Exception as exc:  # a reader's own failure (a library's exception): this file only, as plain data
        return FileRecord("broken", sniffed.format, reason=f"cannot read file: {described(exc)}"[:300])
    return record


def _share_equal_values(record: FileRecord, shared: dict) -> FileRecord:
    """Equal metadata becomes one shared object (frozen values, so nothing can tell the difference):
    photos of one camera, or of one size and format, do not each hold a copy read from its file.
    Done as each record arrives, so the copies are let go one at a time (their memory is reused by
    the next record) instead of all being held until the scan ends. At most _SHARED values are
    kept to share: each photo's metadata with its own date is a value of its own, and a first build
    of a million photos held every one of them till the scan's end (~1 KB a photo)."""
    if len(shared) >= _SHARED:
        shared.clear()
    try:
        if record.info is not None:
            record.info = shared.setdefault(record.info, record.info)
        embedded = record.embedded
        if embedded is not None:
            camera = shared.setdefault(embedded.camera, embedded.camera)
            if camera is not embedded.camera:  # (the record is this scan's own, just read or unpickled:
                # set in place, not copied with dataclasses.replace, ~1 s for 100,000 cached records)
                object.__setattr__(embedded, "camera", camera)
            # aware datetimes at one instant are equal across UTC offsets: the offset is part of the key
            key = ("embedded", embedded, embedded.date.utcoffset() if embedded.date else None)
            record.embedded = shared.setdefault(key, embedded)
    except TypeError:  # an unhashable value (not expected): keep this one's own
        pass
    return record


def read_media_batch(
    batch: tuple[tuple[str, str], ...], max_pixels: int, kinds: tuple[KindReader, ...] = ()
) -> list[FileRecord]:
    """Read several files in one worker task (fewer round trips for folders of small files)."""
    return [read_media_file(abs_path, name, max_pixels, kinds) for abs_path, name in batch]


_SHARED = 10_000  # values kept to share (see _share_equal_values)
_BATCH = 32  # files per task, or fewer when they add up to _BATCH_BYTES (hashing is most of the work)
_BATCH_BYTES = 32 << 20


def _batches(todo: list[tuple[str, FileEntry]]) -> list[tuple[tuple[str, FileEntry], ...]]:
    batches: list[tuple[tuple[str, FileEntry], ...]] = []
    current: list[tuple[str, FileEntry]] = []
    size = 0
    for item in todo:
        if current and (len(current) >= _BATCH or size + item[1].size > _BATCH_BYTES):
            batches.append(tuple(current))
            current, size = [], 0
        current.append(item)
        size += item[1].size
    if current:
        batches.append(tuple(current))
    return batches


def _payload(batch: tuple[tuple[str, FileEntry], ...]) -> tuple[tuple[str, str], ...]:
    """What a worker is given to read a batch: (path, name) of each file."""
    return tuple((entry.abs_path, entry.name) for _, entry in batch)


def _read_all(todo: list[tuple[str, FileEntry]], max_pixels: int, pool: WorkerPool | None, kinds: tuple = ()):
    """(item, FileRecord, lasting) for every file to read, read in batches by the pool's worker
    processes (todo is emptied once batched: each batch is let go once read), never by this one: the
    parsers of some formats are native code (libheif, libwebp, libavif, FFmpeg), and one that crashes
    on a hostile file must cost that file only. lasting:
    False when reading failed in a way the next build may not meet (see TaskFailed); a crash is
    lasting (the same bytes crash the same parser again)."""
    if pool is None:
        with WorkerPool() as own:
            yield from _read_all(todo, max_pixels, own, kinds)
        return
    reader = partial(read_media_batch, max_pixels=max_pixels, kinds=kinds)
    batches = _batches(todo)
    todo.clear()  # (its items are held by their batches, each let go once read: see WorkerPool.run)
    retry: list[tuple[str, FileEntry]] = []
    for batch, result in pool.run(reader, batches, timeout=300, prepare=_payload):
        if isinstance(result, TaskFailed):
            retry.extend(batch)  # find the one bad file: read the batch's files one by one
            continue
        for item, record in zip(batch, result, strict=True):
            yield item, record, True
    for (item,), result in pool.run(reader, [(item,) for item in retry], timeout=120, prepare=_payload):
        if isinstance(result, TaskFailed):
            yield item, FileRecord("broken", None, reason=f"cannot read file: {result}"), result.lasting
        else:
            yield item, result[0], True
