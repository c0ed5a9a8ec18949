"""The build cache: one SQLite file per (source, output) pair, outside both.

It remembers, per source file, its stat fingerprint, content hash and metadata
(so an unchanged file is not re-read); per thumbnail, its placeholder; per page,
the fingerprint of what it shows (so an unchanged page is not re-rendered); and
every output path Albumen may have written, with the size and modification time
of the file it wrote there (so stale files can be removed, and nothing else ever
is: a file someone replaced since is left alone). It holds GPS positions and private names, which is why it
never lives in the published output.

The render stage's records (page keys, claims, the sitemap's rows, the albums' records) are in
pagerecords.PageRecords, part of BuildCache.

Writes happen in short transactions (SQLite WAL), so an interrupted build leaves
a usable cache; an unreadable cache is replaced, with a warning.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sqlite3
from collections.abc import Container, Iterable, Iterator
from itertools import islice
from pathlib import Path

import xxhash

from .fsutil import keep_private, make_private_dirs
from .outputrecords import OutputRecords
from .pagerecords import PageRecords
from .scan import FileRecord, ScanCache

# 6: content hashes are XXH3-128; 7: records say whether IPTC/XMP name a place; 8: EXIF text as UTF-8;
# 9: EXIF dates carry their sub-seconds (SubSecTime*), and OffsetTime when OffsetTimeOriginal is missing;
# colour "adobergb" (untagged JPEGs whose EXIF says Adobe RGB)
SCHEMA_VERSION = "9"


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


class BuildCache(PageRecords, OutputRecords, ScanCache):
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.path = folder / "cache.sqlite"
        self.warnings: list[str] = []
        self._folder: str | None = None  # the folder whose file records are loaded (see get_file)
        self._files: dict[str, tuple[int, int, bytes]] = {}
        self._pending_files: list[tuple[str, int, int, bytes]] = []
        self.db = self._open()
        # no output recorded: the cache is new (lost, or unreadable and started again), or has never built
        self.started_empty = self.db.execute("SELECT 1 FROM outputs LIMIT 1").fetchone() is None

    # -- opening ---------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        # the folder and the database (SQLite gives its -wal and -shm files the database's mode) are
        # this user's only: the manifest lists every p/<token>/ path, the records hold locations
        make_private_dirs(self.folder)
        keep_private(self.folder, 0o700)
        for suffix in ("", "-wal", "-shm"):
            keep_private(f"{self.path}{suffix}", 0o600)
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
        os.close(os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600))
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.executescript(
            """
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE IF NOT EXISTS files (src_uri TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER, record BLOB);
            CREATE TABLE IF NOT EXISTS placeholders (thumb_uri TEXT PRIMARY KEY, colour TEXT, data_uri TEXT);
            CREATE TABLE IF NOT EXISTS pages (dest_uri TEXT PRIMARY KEY, key TEXT);
            CREATE TABLE IF NOT EXISTS outputs (dest_uri TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER);
            -- (name: see output_named, added below)
            CREATE TABLE IF NOT EXISTS albums (album_uri TEXT PRIMARY KEY, key TEXT, pages TEXT, outputs TEXT, unindexed TEXT,
                                              sitemap TEXT, sitemap_digest TEXT);
            CREATE TABLE IF NOT EXISTS media_views (uri TEXT PRIMARY KEY, digest TEXT);
            CREATE TABLE IF NOT EXISTS folders (folder TEXT PRIMARY KEY, key TEXT, snapshot BLOB);
            CREATE TEMP TABLE IF NOT EXISTS current_outputs (dest_uri TEXT PRIMARY KEY);
            CREATE TEMP TABLE IF NOT EXISTS claims (dest_uri TEXT PRIMARY KEY, template TEXT);
            CREATE TEMP TABLE IF NOT EXISTS sitemap (k TEXT PRIMARY KEY, url TEXT UNIQUE, album TEXT, line TEXT);
            CREATE TEMP TABLE IF NOT EXISTS settled (album_uri TEXT PRIMARY KEY);
            """
        )
        # the columns each table has (an older cache's gets the missing ones, each ALTER a column of its own)
        albums = {row[1] for row in db.execute("PRAGMA table_info(albums)")}
        outputs = {row[1] for row in db.execute("PRAGMA table_xinfo(outputs)")}  # (xinfo: generated ones too)
        if "outputs" not in albums:
            # records from before settled albums (see claim_recorded): each gets its outputs when listed again
            db.execute("ALTER TABLE albums ADD COLUMN outputs TEXT")
        if "size" not in outputs:
            # a manifest from before stamps: its files count as unstamped (removable when stale)
            db.execute("ALTER TABLE outputs ADD COLUMN size INTEGER")
            db.execute("ALTER TABLE outputs ADD COLUMN mtime_ns INTEGER")
        if "name" not in outputs:
            # each output's file name, computed by SQLite (the part after the last '/': rtrim takes off
            # every character that is not a '/') and indexed, for output_named
            db.execute(
                "ALTER TABLE outputs ADD COLUMN name TEXT GENERATED ALWAYS AS "
                "(replace(dest_uri, rtrim(dest_uri, replace(dest_uri, '/', '')), '')) VIRTUAL"
            )
        db.execute("CREATE INDEX IF NOT EXISTS outputs_by_name ON outputs (name)")
        if "album" not in outputs:
            # the album whose record lists each output (see set_albums): records from before are not
            # settled until they are listed again and say so
            db.execute("ALTER TABLE outputs ADD COLUMN album TEXT")
            db.execute("UPDATE albums SET outputs = NULL")
        if "unindexed" not in albums:
            db.execute("ALTER TABLE albums ADD COLUMN unindexed TEXT")  # (see folders_without_index)
        for column in ("sitemap", "sitemap_digest"):  # (see render.sitemap)
            if column not in albums:
                db.execute(f"ALTER TABLE albums ADD COLUMN {column} TEXT")
        if db.execute("SELECT 1 FROM meta WHERE key = 'sitemap_counts'").fetchone() is None:
            # records from before a digest of an album's sitemap lines began with their count (see
            # render.sitemap.lines_digest): counted once here, not in every build
            with db:
                db.execute(
                    "UPDATE albums SET sitemap_digest = (length(sitemap) - length(replace(sitemap, char(10), ''))) "
                    "|| ':' || sitemap_digest WHERE sitemap_digest IS NOT NULL AND instr(sitemap_digest, ':') = 0"
                )
                db.execute("INSERT OR REPLACE INTO meta VALUES ('sitemap_counts', '1')")
        db.execute("CREATE INDEX IF NOT EXISTS outputs_by_album ON outputs (album) WHERE album IS NOT NULL")
        db.execute("CREATE INDEX IF NOT EXISTS outputs_unowned ON outputs (dest_uri) WHERE album IS NULL")  # (stale_outputs)
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None or row[0] != SCHEMA_VERSION:
            if row is not None:
                self.warnings.append("build cache format changed; starting a new one")
            with db:
                db.execute("BEGIN")
                for table in ("files", "placeholders", "pages", "albums", "media_views", "folders"):
                    db.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed names
                db.execute("UPDATE outputs SET album = NULL WHERE album IS NOT NULL")  # (the records are gone)
                db.execute("DELETE FROM meta WHERE key = 'fingerprint'")  # so this build is a real one
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

    def has_meta(self, key: str) -> bool:
        """Whether there is such a value (not read: a summary can be tens of MB)."""
        return self.db.execute("SELECT 1 FROM meta WHERE key = ?", (key,)).fetchone() is not None

    def set_meta(self, key: str, value: str | None) -> None:
        if value is None:
            self.db.execute("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- source files -------------------------------------------------------
    def _folder_files(self, folder: str) -> dict[str, tuple[int, int, bytes]]:
        """The records of the files directly in one folder: the scan asks folder by folder, so only one
        folder's records are in memory at a time (100,000 cached records at once would be ~55 MB, and
        the holes they leave when freed would keep the process that much bigger)."""
        if folder != self._folder:
            if folder:
                prefix = folder + "/"
                rows = self.db.execute(
                    "SELECT * FROM files WHERE src_uri > ? AND src_uri < ? AND instr(substr(src_uri, ?), '/') = 0",
                    (prefix, folder + "0", len(prefix) + 1),  # '0' sorts right after '/'
                )
            else:
                rows = self.db.execute("SELECT * FROM files WHERE instr(src_uri, '/') = 0")
            self._files = {uri: (size, mtime, blob) for uri, size, mtime, blob in rows}
            self._folder = folder
        return self._files

    def get_file(self, src_uri: str, size: int, mtime_ns: int) -> FileRecord | None:
        entry = self._folder_files(src_uri.rpartition("/")[0]).get(src_uri)
        if entry is None or entry[0] != size or entry[1] != mtime_ns:
            return None
        try:
            record = pickle.loads(entry[2])
        except Exception:
            return None
        return record if isinstance(record, FileRecord) else None

    def put_file(self, src_uri: str, size: int, mtime_ns: int, record: FileRecord) -> None:
        blob = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        self._files.pop(src_uri, None)
        self._pending_files.append((src_uri, size, mtime_ns, blob))
        if len(self._pending_files) >= 2000:
            self.flush()

    def forget_missing(self, seen: set[str], folders: Container[str] = (), listed: Iterable[str] | None = None) -> None:
        """Drop records of source files that no longer exist: those not seen, unless their folder is one
        of `folders` (taken from its snapshot: every file in it as last time). Ends the scan: the
        records leave memory.

        listed: every folder of the photo folder (the walk's). When they are the folders of the last
        build that gave them, a file gone is in a folder not taken from its snapshot (its listing
        changed): only those folders' records are looked at, not every photo's (0.08 s at 100,000)."""
        self.flush()
        self._folder, self._files = None, {}
        same = False
        if listed is not None:
            listed = list(listed)  # (gone through twice below)
            names = xxhash.xxh3_128("\0".join(sorted(listed)).encode("utf-8", "surrogateescape")).hexdigest()
            same = self.get_meta("scan_folders") == names
            self.set_meta("scan_folders", names)
        if same and "" in folders:
            uris = (uri for folder in listed if folder not in folders for uri in self._files_below(folder))
        else:
            uris = (uri for (uri,) in self.db.execute("SELECT src_uri FROM files"))
        gone = [uri for uri in uris if uri not in seen and uri.rpartition("/")[0] not in folders]
        if gone:
            self._transaction("DELETE FROM files WHERE src_uri = ?", [(u,) for u in gone])

    def _files_below(self, folder: str) -> list[str]:
        """The records of files in this folder and below it (not the top: every file is below it)."""
        return [uri for (uri,) in self.db.execute(
            "SELECT src_uri FROM files WHERE src_uri > ?1 || '/' AND src_uri < ?1 || '0'", (folder,))]

    def get_folder(self, folder: str, key: str) -> bytes | None:
        row = self.db.execute("SELECT snapshot FROM folders WHERE folder = ? AND key = ?", (folder, key)).fetchone()
        return row[0] if row else None

    def put_folders(self, rows: list[tuple[str, str, bytes]], keep: set[str] | None = None) -> None:
        self._transaction("INSERT OR REPLACE INTO folders VALUES (?, ?, ?)", rows)
        if keep is None:
            return
        gone = [(folder,) for (folder,) in self.db.execute("SELECT folder FROM folders") if folder not in keep]
        if gone:
            self._transaction("DELETE FROM folders WHERE folder = ?", gone)

    def flush(self) -> None:
        if self._pending_files:
            rows, self._pending_files = self._pending_files, []
            self._transaction("INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?)", rows)

    def _transaction(self, sql: str, rows: Iterable[tuple], *more: str) -> None:
        """Run sql for every row (and each of `more` for the same rows) in one transaction."""
        self.db.execute("BEGIN")
        try:
            if not more:
                self.db.executemany(sql, rows)
            else:
                it = iter(rows)
                while chunk := list(islice(it, 2000)):
                    for statement in (sql, *more):
                        self.db.executemany(statement, chunk)
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

    # -- placeholders ---------------------------------------------------------
    def placeholder_keys(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT thumb_uri FROM placeholders")}

    def get_placeholder(self, thumb_uri: str) -> tuple[str, str] | None:
        row = self.db.execute("SELECT colour, data_uri FROM placeholders WHERE thumb_uri = ?", (thumb_uri,)).fetchone()
        return (row[0], row[1]) if row else None

    def get_placeholders(self, thumb_uris: Iterable[str]) -> dict[str, tuple[str, str]]:
        """thumb_uri -> (colour, data_uri) of those of these that have one."""
        return {uri: (colour, data) for uri, colour, data in self._select_in("placeholders", "thumb_uri", thumb_uris)}

    def _select_in(self, table: str, column: str, values: Iterable[str]) -> Iterator[tuple]:
        """Rows of table whose column is one of values (500 at a time: few queries, any SQLite)."""
        it = iter(values)
        while chunk := list(islice(it, 500)):
            yield from self.db.execute(
                f"SELECT * FROM {table} WHERE {column} IN ({','.join('?' * len(chunk))})", chunk  # noqa: S608
            )

    def put_placeholders(self, rows: list[tuple[str, str, str]]) -> None:
        if rows:
            self._transaction("INSERT OR REPLACE INTO placeholders VALUES (?, ?, ?)", rows)

    def placeholder_count(self) -> int:
        return self.db.execute("SELECT count(*) FROM placeholders").fetchone()[0]

    def keep_placeholders(self, thumb_uris: Iterable[str]) -> None:
        """Forget every placeholder but these (worked out in SQLite: no set of every name in memory)."""
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS keep_thumbs (thumb_uri TEXT PRIMARY KEY)")
        self.db.execute("DELETE FROM temp.keep_thumbs")
        self._transaction("INSERT OR IGNORE INTO temp.keep_thumbs VALUES (?)", ((u,) for u in thumb_uris))
        self.db.execute("DELETE FROM placeholders WHERE thumb_uri NOT IN (SELECT thumb_uri FROM temp.keep_thumbs)")
        self.db.execute("DROP TABLE temp.keep_thumbs")
