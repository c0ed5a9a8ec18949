"""The outputs manifest in the build cache (see cache.BuildCache, which it is part of): every file a
build wrote, with the size and modification time it was written with, the album whose record lists it,
and the outputs of the build under way (a temporary table); read in spans by other processes too."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from .pagerecords import SETTLED_OUTPUTS


class OutputRecords:
    """Mixed into BuildCache, whose connection (db), file (path) and transactions (_transaction) these use."""

    db: sqlite3.Connection
    path: Path

    def has_output(self, dest_uri: str) -> bool:
        return self.db.execute("SELECT 1 FROM outputs WHERE dest_uri = ?", (dest_uri,)).fetchone() is not None

    def output_named(self, name: str, other_than: str) -> tuple[str, int | None, int | None] | None:
        """A recorded output with this file name in another folder, with its stamp: one lookup in the
        index of names (a pass over the manifest for each name took ~1.2 s at a million photos, two of
        them for each photo added or edited)."""
        return self.db.execute(
            "SELECT dest_uri, size, mtime_ns FROM outputs WHERE name = ? AND dest_uri != ? LIMIT 1", (name, other_than)
        ).fetchone()

    def output_stamps(self, span: tuple[int, int] | None = None) -> Iterator[tuple[str, int | None, int | None]]:
        """Every recorded output with the size and modification time it was written with (None: not
        known), read as it is iterated; span: those of output_spans' span only."""
        return _output_stamps(self.db, span)

    def output_spans(self, parts: int) -> list[tuple[Callable, tuple[str, tuple[int, int]]]]:
        """The recorded outputs cut in about `parts` spans of rows, each as a function and its arguments
        that read its stamps in another process (output_stamps_in: the span's first and one past its last
        row number)."""
        low, high = self.db.execute("SELECT min(rowid), max(rowid) FROM outputs").fetchone()
        if low is None:
            return []
        step = max(1, -(-(high + 1 - low) // max(1, parts)))
        return [(output_stamps_in, (str(self.path), (start, min(start + step, high + 1)))) for start in range(low, high + 1, step)]


    def add_outputs(self, dest_uris: Iterable[str]) -> None:
        """Record paths this tool wrote (a recorded path keeps its stamp) and count them among this
        build's outputs (see stale_outputs)."""
        self._transaction(
            "INSERT OR IGNORE INTO outputs (dest_uri) VALUES (?)", ((u,) for u in dest_uris),
            "INSERT OR IGNORE INTO temp.current_outputs VALUES (?)",
        )

    def reserve_outputs(self, dest_uris: Iterable[str], current: bool = False) -> None:
        """Record paths about to be (re)written, before writing them, without a stamp: an interrupted
        build can still clean them up. stamp_outputs, once they are written, says what was written."""
        rows = ((u,) for u in dest_uris)
        upsert = (
            "INSERT INTO outputs (dest_uri) VALUES (?) "
            "ON CONFLICT(dest_uri) DO UPDATE SET size = NULL, mtime_ns = NULL"
        )
        if current:
            self._transaction(upsert, rows, "INSERT OR IGNORE INTO temp.current_outputs VALUES (?)")
        else:
            self._transaction(upsert, rows)

    def stamp_outputs(self, stamps: Iterable[tuple[str, int, int]]) -> None:
        """(dest_uri, size, mtime_ns) of files just written (or found already as they should be)."""
        self._transaction(
            "INSERT INTO outputs (dest_uri, size, mtime_ns) VALUES (?, ?, ?) "
            "ON CONFLICT(dest_uri) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns",
            stamps,
        )

    def mark_current(self, dest_uris: Iterable[str]) -> None:
        """Count paths among this build's outputs without recording them as written."""
        self._transaction("INSERT OR IGNORE INTO temp.current_outputs VALUES (?)", ((u,) for u in dest_uris))

    def current_outputs(self, after: str = "", limit: int = 1000) -> list[tuple[str, int | None, int | None]]:
        """This build's outputs (as marked so far, and the settled albums': see claim_recorded) in name
        order after `after`, with their stamps: read a chunk at a time, so that outputs recorded meanwhile
        do not disturb a reading."""
        return self.db.execute(
            "SELECT c.dest_uri, o.size, o.mtime_ns FROM temp.current_outputs c LEFT JOIN outputs o USING (dest_uri) "
            f"WHERE c.dest_uri > ?1 UNION SELECT o.dest_uri, o.size, o.mtime_ns FROM {SETTLED_OUTPUTS} "  # noqa: S608
            "WHERE o.dest_uri > ?1 ORDER BY 1 LIMIT ?2",
            (after, limit),
        ).fetchall()

    def is_current(self, dest_uri: str) -> bool:
        """Whether a path is among this build's outputs (as marked so far, and the settled albums')."""
        return self.db.execute(
            f"SELECT 1 FROM temp.current_outputs WHERE dest_uri = ?1 UNION ALL SELECT 1 FROM {SETTLED_OUTPUTS} "  # noqa: S608
            "WHERE o.dest_uri = ?1", (dest_uri,)
        ).fetchone() is not None

    def stale_outputs(self) -> list[tuple[str, int | None, int | None]]:
        """Recorded outputs that are not among this build's, with their stamps: the only files a build
        may remove, and only while each is still the file written there (stamp None: not known)."""
        # those of no album's record (partial index), then those of the albums not settled: not a pass
        # over every output (0.1 s at 100,000 photos). Every album an output names has a record (see
        # set_albums, keep_albums).
        return self.db.execute(
            "SELECT dest_uri, size, mtime_ns FROM outputs INDEXED BY outputs_unowned WHERE album IS NULL "
            "AND dest_uri NOT IN (SELECT dest_uri FROM temp.current_outputs) UNION ALL "
            "SELECT o.dest_uri, o.size, o.mtime_ns FROM albums a CROSS JOIN outputs o INDEXED BY outputs_by_album "
            "ON o.album = a.album_uri WHERE a.album_uri NOT IN (SELECT album_uri FROM temp.settled) "
            "AND o.dest_uri NOT IN (SELECT dest_uri FROM temp.current_outputs)"
        ).fetchall()

    def remove_outputs(self, dest_uris: Iterable[str]) -> None:
        """Forget these outputs, and the keys of those that are pages."""
        self._transaction("DELETE FROM outputs WHERE dest_uri = ?", ((u,) for u in dest_uris), "DELETE FROM pages WHERE dest_uri = ?")


def output_stamps_in(path: str, span: tuple[int, int]) -> Iterator[tuple[str, int | None, int | None]]:
    """In another process: output_stamps of one span, read as iterated from the cache file at `path`
    (a connection of its own, read only)."""
    db = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        yield from _output_stamps(db, span)
    finally:
        db.close()


def _output_stamps(db: sqlite3.Connection, span: tuple[int, int] | None) -> Iterator[tuple[str, int | None, int | None]]:
    if span is None:
        return iter(db.execute("SELECT dest_uri, size, mtime_ns FROM outputs"))
    return iter(db.execute("SELECT dest_uri, size, mtime_ns FROM outputs WHERE rowid >= ? AND rowid < ?", span))
