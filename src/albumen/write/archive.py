"""ZIP archives of files stored as they are (photos and videos are compressed already: deflating them
again saves nothing and costs time), written streaming, one file read at a time.

The same members (names, files, sizes, dates) give the same bytes on any machine and with any Python:
the format is written here, not by zipfile, whose output changed between versions. The size of an
archive is known before it is written (archive_size: a page links it with its size), and ZIP64
records are used only where a size, an offset or the count needs them (over 4 GiB, 65,535 files).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import IO

LIMIT = 0xFFFFFFFF  # a size or offset from here on is in a ZIP64 record (the tests lower it)
COUNT_LIMIT = 0xFFFF
_MARK, _COUNT_MARK = 0xFFFFFFFF, 0xFFFF  # a 32-bit (16-bit) field at this value says: see the ZIP64 record
_CHUNK = 1 << 20
_UTF8 = 0x0800  # general purpose flag 11: the name is UTF-8
_UNIX = 3 << 8  # "version made by": Unix, so that the permissions below are read
_FILE_MODE = 0o100644 << 16


@dataclass(frozen=True)
class Member:
    """One file of an archive: its name in it, the file to read, its size, and the time it is dated
    (a wall-clock time; None, or one a ZIP cannot hold, is 1980-01-01 00:00)."""

    name: str
    path: str
    size: int
    date: datetime | None = None


@dataclass(frozen=True)
class _Entry:
    member: Member
    name: bytes
    offset: int
    zip64: bool  # its size needs the ZIP64 extra field

    @property
    def flags(self) -> int:
        return _UTF8 if not self.member.name.isascii() else 0

    @property
    def version(self) -> int:
        return 45 if self.zip64 or self.offset >= LIMIT else 20


def _layout(members: Sequence[Member]) -> tuple[list[_Entry], int]:
    """Each member's entry and where it starts; the offset of the central directory."""
    entries = []
    offset = 0
    for member in members:
        name = member.name.encode("utf-8")
        zip64 = member.size >= LIMIT
        entries.append(_Entry(member, name, offset, zip64))
        offset += 30 + len(name) + (20 if zip64 else 0) + member.size
    return entries, offset


def _central_extra(entry: _Entry) -> bytes:
    fields = [entry.member.size, entry.member.size] if entry.zip64 else []
    if entry.offset >= LIMIT:
        fields.append(entry.offset)
    return struct.pack(f"<HH{len(fields)}Q", 1, 8 * len(fields), *fields) if fields else b""


def _central_size(entries: list[_Entry]) -> int:
    return sum(46 + len(e.name) + len(_central_extra(e)) for e in entries)


def _needs_zip64_end(count: int, start: int, size: int) -> bool:
    return count >= COUNT_LIMIT or start >= LIMIT or size >= LIMIT


def archive_size(members: Sequence[Member]) -> int:
    """The size in bytes of the archive write_archive makes of these members."""
    entries, start = _layout(members)
    size = _central_size(entries)
    return start + size + (76 if _needs_zip64_end(len(entries), start, size) else 0) + 22


def _dos_time(date: datetime | None) -> tuple[int, int]:
    if date is None or not 1980 <= date.year <= 2107:
        return 0, (1 << 5) | 1  # 1980-01-01 00:00:00
    return (date.hour << 11) | (date.minute << 5) | (date.second // 2), ((date.year - 1980) << 9) | (date.month << 5) | date.day


def write_archive(members: Sequence[Member], out: IO[bytes]) -> None:
    """Write the archive into a binary file that can seek (each entry's checksum is written in its
    header once its file is read). Raises OSError when a member cannot be read or is not the size given."""
    entries, start = _layout(members)
    base = out.tell()
    crcs = []
    for entry in entries:
        member = entry.member
        time, date = _dos_time(member.date)
        size32 = _MARK if entry.zip64 else member.size
        extra = struct.pack("<HHQQ", 1, 16, member.size, member.size) if entry.zip64 else b""
        header = struct.pack("<IHHHHHIIIHH", 0x04034B50, entry.version, entry.flags, 0, time, date, 0, size32, size32,
                             len(entry.name), len(extra))
        out.write(header + entry.name + extra)
        crc = 0
        read = 0
        with open(member.path, "rb") as f:
            while chunk := f.read(min(_CHUNK, member.size - read + 1)):
                read += len(chunk)
                if read > member.size:
                    break
                crc = zlib.crc32(chunk, crc)
                out.write(chunk)
        if read != member.size:
            raise OSError(f"{member.path} is not of the size it had ({member.size} bytes) any more")
        end = out.tell()
        out.seek(base + entry.offset + 14)
        out.write(struct.pack("<I", crc))
        out.seek(end)
        crcs.append(crc)
    for entry, crc in zip(entries, crcs, strict=True):
        member = entry.member
        time, date = _dos_time(member.date)
        size32 = _MARK if entry.zip64 else member.size
        extra = _central_extra(entry)
        out.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, _UNIX | entry.version, entry.version, entry.flags, 0,
                              time, date, crc, size32, size32, len(entry.name), len(extra), 0, 0, 0, _FILE_MODE,
                              _MARK if entry.offset >= LIMIT else entry.offset))
        out.write(entry.name + extra)
    size = _central_size(entries)
    count = len(entries)
    if _needs_zip64_end(count, start, size):
        out.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, _UNIX | 45, 45, 0, 0, count, count, size, start))
        out.write(struct.pack("<IIQI", 0x07064B50, 0, start + size, 1))
    shown = _COUNT_MARK if count >= COUNT_LIMIT else count
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, shown, shown, _MARK if size >= LIMIT else size,
                          _MARK if start >= LIMIT else start, 0))
