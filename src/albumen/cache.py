"""The build cache: one SQLite file per (source, output) pair, outside both.

It remembers, per source file, its stat fingerprint, content hash and metadata
(so an unchanged file is not re-read); per thumbnail, its placeholder; per page,
the fingerprint of what it shows (so an unchanged page is not re-rendered); and
every output path Albumen may have written (so stale files can be removed, and
nothing else ever is). It holds GPS positions and private names, which is why it
never lives in the published output.

Writes happen in short transactions (SQLite WAL), so an interrupted build leaves
a usable cache; an unreadable cache is replaced, with a warning.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from .scan import FileRecord, ScanCache

SCHEMA_VERSION = "6"  # 6: content hashes are XXH3-128


def default_cache_dir(source: Path, output: Path, configured: Path | None = None) -> Path:
    """Where the cache of this source/output pair lives: setting > $ALBUMEN_CACHE_DIR > user cache folder."""
    root = os.environ.get("ALBUMEN_CACHE_DIR")
    if configured is not None:
        base = configured  # still one cache per source and output: a shared folder must not mix galleries
    elif root:
        base = Path(root).expanduser()
    else:
        from platformdirs import user_cache_dir

        base = Path(user_cache_dir("albumen")) / "builds"
    key = hashlib.sha256(f"{source.resolve()}\0{output.resolve()}".encode()).hexdigest()[:16]
    return base / key


class BuildCache(ScanCache):
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / "cache.sqlite"
        self.warnings: list[str] = []
        self._files: dict[str, tuple[int, int, bytes]] | None = None
        self._pending_files: list[tuple[str, int, int, bytes]] = []
        self.db = self._open()

    # -- opening ---------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            return self._connect()
        except sqlite3.DatabaseError as exc:
            self.warnings.append(f"build cache {self.path} was unreadable ({exc}); starting a new one")
            for suffix in ("", "-wal", "-shm"):
                try:
                    os.unlink(f"{self.path}{suffix}")
                except FileNotFoundError:
                    pass
            return self._connect()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(
            """
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE IF NOT EXISTS files (src_uri TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, record BLOB);
            CREATE TABLE IF NOT EXISTS placeholders (thumb_uri TEXT PRIMARY KEY, colour TEXT, data_uri TEXT);
            CREATE TABLE IF NOT EXISTS pages (dest_uri TEXT PRIMARY KEY, key TEXT);
            CREATE TABLE IF NOT EXISTS outputs (dest_uri TEXT PRIMARY KEY);
            """
        )
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None or row[0] != SCHEMA_VERSION:
            if row is not None:
                self.warnings.append("build cache format changed; starting a new one")
            with db:
                db.execute("BEGIN")
                for table in ("files", "placeholders", "pages"):
                    db.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed names
                db.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        db.execute("SELECT count(*) FROM files").fetchone()  # fails early on a corrupt file
        return db

    def close(self) -> None:
        self.flush()
        self.db.close()

    # -- build state ------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.db.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- source files -------------------------------------------------------
    def _load_files(self) -> dict[str, tuple[int, int, bytes]]:
        if self._files is None:
            self._files = {
                uri: (size, mtime, blob) for uri, size, mtime, blob in self.db.execute("SELECT * FROM files")
            }
        return self._files

    def get_file(self, src_uri: str, size: int, mtime_ns: int) -> FileRecord | None:
        entry = self._load_files().get(src_uri)
        if entry is None or entry[0] != size or entry[1] != mtime_ns:
            return None
        try:
            record = pickle.loads(entry[2])
        except Exception:
            return None
        return record if isinstance(record, FileRecord) else None

    def put_file(self, src_uri: str, size: int, mtime_ns: int, record: FileRecord) -> None:
        blob = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        self._load_files()[src_uri] = (size, mtime_ns, blob)
        self._pending_files.append((src_uri, size, mtime_ns, blob))
        if len(self._pending_files) >= 2000:
            self.flush()

    def forget_missing(self, seen: set[str]) -> None:
        """Drop records of source files that no longer exist. Ends the scan: the records leave memory."""
        gone = [uri for uri in self._load_files() if uri not in seen]
        if gone:
            self._transaction("DELETE FROM files WHERE src_uri = ?", [(u,) for u in gone])
        self._files = None

    def flush(self) -> None:
        if self._pending_files:
            rows, self._pending_files = self._pending_files, []
            self._transaction("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", rows)

    def _transaction(self, sql: str, rows: Iterable[tuple]) -> None:
        self.db.execute("BEGIN")
        try:
            self.db.executemany(sql, rows)
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- placeholders ---------------------------------------------------------
    def get_placeholders(self) -> dict[str, tuple[str, str]]:
        return {uri: (colour, data) for uri, colour, data in self.db.execute("SELECT * FROM placeholders")}

    def put_placeholders(self, rows: list[tuple[str, str, str]]) -> None:
        if rows:
            self._transaction("INSERT OR REPLACE INTO placeholders VALUES (?, ?, ?)", rows)

    def keep_placeholders(self, thumb_uris: set[str]) -> None:
        current = {row[0] for row in self.db.execute("SELECT thumb_uri FROM placeholders")}
        stale = current - thumb_uris
        if stale:
            self._transaction("DELETE FROM placeholders WHERE thumb_uri = ?", [(u,) for u in stale])

    # -- pages ------------------------------------------------------------------
    def get_page_keys(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT dest_uri, key FROM pages"))

    def set_page_keys(self, keys: dict[str, str], remove: Iterable[str] = ()) -> None:
        self._transaction("INSERT OR REPLACE INTO pages VALUES (?, ?)", keys.items())
        removed = [(u,) for u in remove]
        if removed:
            self._transaction("DELETE FROM pages WHERE dest_uri = ?", removed)

    # -- outputs manifest ---------------------------------------------------------
    def get_outputs(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT dest_uri FROM outputs")}

    def add_outputs(self, dest_uris: Iterable[str]) -> None:
        """Record paths before writing them, so an interrupted build can still clean them up."""
        self._transaction("INSERT OR IGNORE INTO outputs VALUES (?)", ((u,) for u in dest_uris))

    def remove_outputs(self, dest_uris: Iterable[str]) -> None:
        self._transaction("DELETE FROM outputs WHERE dest_uri = ?", ((u,) for u in dest_uris))
