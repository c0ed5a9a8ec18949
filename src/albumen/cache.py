"""The build cache: one SQLite file per (source, output) pair, outside both.

It remembers, per source file, its stat fingerprint, content hash and metadata
(so an unchanged file is not re-read); per thumbnail, its placeholder; per page,
the fingerprint of what it shows (so an unchanged page is not re-rendered); and
every output path Albumen may have written, with the size and modification time
of the file it wrote there (so stale files can be removed, and nothing else ever
is: a file someone replaced since is left alone). It holds GPS positions and private names, which is why it
never lives in the published output.

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

from .fsutil import keep_private, make_private_dirs
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


# the outputs that the records of this build's settled albums list (see claim_recorded), as `o`
_SETTLED_OUTPUTS = "outputs o JOIN temp.settled s ON o.album = s.album_uri"


class BuildCache(ScanCache):
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
            CREATE TABLE IF NOT EXISTS albums (album_uri TEXT PRIMARY KEY, key TEXT, pages TEXT, outputs TEXT, unindexed TEXT);
            CREATE TABLE IF NOT EXISTS media_views (uri TEXT PRIMARY KEY, digest TEXT);
            CREATE TABLE IF NOT EXISTS folders (folder TEXT PRIMARY KEY, key TEXT, snapshot BLOB);
            CREATE TEMP TABLE IF NOT EXISTS current_outputs (dest_uri TEXT PRIMARY KEY);
            CREATE TEMP TABLE IF NOT EXISTS claims (dest_uri TEXT PRIMARY KEY, template TEXT);
            CREATE TEMP TABLE IF NOT EXISTS sitemap (url TEXT PRIMARY KEY, lastmod TEXT);
            CREATE TEMP TABLE IF NOT EXISTS settled (album_uri TEXT PRIMARY KEY);
            """
        )
        if "outputs" not in {row[1] for row in db.execute("PRAGMA table_info(albums)")}:
            # records from before settled albums (see claim_recorded): each gets its outputs when listed again
            db.execute("ALTER TABLE albums ADD COLUMN outputs TEXT")
        if "size" not in {row[1] for row in db.execute("PRAGMA table_info(outputs)")}:
            # a manifest from before stamps: its files count as unstamped (removable when stale)
            db.execute("ALTER TABLE outputs ADD COLUMN size INTEGER")
            db.execute("ALTER TABLE outputs ADD COLUMN mtime_ns INTEGER")
        if "name" not in {row[1] for row in db.execute("PRAGMA table_xinfo(outputs)")}:
            # each output's file name, computed by SQLite (the part after the last '/': rtrim takes off
            # every character that is not a '/') and indexed, for output_named
            db.execute(
                "ALTER TABLE outputs ADD COLUMN name TEXT GENERATED ALWAYS AS "
                "(replace(dest_uri, rtrim(dest_uri, replace(dest_uri, '/', '')), '')) VIRTUAL"
            )
        db.execute("CREATE INDEX IF NOT EXISTS outputs_by_name ON outputs (name)")
        if "album" not in {row[1] for row in db.execute("PRAGMA table_info(outputs)")}:
            # the album whose record lists each output (see set_albums): records from before are not
            # settled until they are listed again and say so
            db.execute("ALTER TABLE outputs ADD COLUMN album TEXT")
            db.execute("UPDATE albums SET outputs = NULL")
        if "unindexed" not in {row[1] for row in db.execute("PRAGMA table_info(albums)")}:
            db.execute("ALTER TABLE albums ADD COLUMN unindexed TEXT")  # (see folders_without_index)
        db.execute("CREATE INDEX IF NOT EXISTS outputs_by_album ON outputs (album) WHERE album IS NOT NULL")
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

    def forget_missing(self, seen: set[str], folders: Container[str] = ()) -> None:
        """Drop records of source files that no longer exist: those not seen, unless their folder is one
        of `folders` (taken from its snapshot: every file in it as last time). Ends the scan: the
        records leave memory."""
        self.flush()
        self._folder, self._files = None, {}
        gone = [uri for (uri,) in self.db.execute("SELECT src_uri FROM files")
                if uri not in seen and uri.rpartition("/")[0] not in folders]
        if gone:
            self._transaction("DELETE FROM files WHERE src_uri = ?", [(u,) for u in gone])

    def get_folder(self, folder: str, key: str) -> bytes | None:
        row = self.db.execute("SELECT snapshot FROM folders WHERE folder = ? AND key = ?", (folder, key)).fetchone()
        return row[0] if row else None

    def put_folders(self, rows: list[tuple[str, str, bytes]], keep: set[str]) -> None:
        gone = [(folder,) for (folder,) in self.db.execute("SELECT folder FROM folders") if folder not in keep]
        self._transaction("INSERT OR REPLACE INTO folders VALUES (?, ?, ?)", rows)
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

    # -- pages ------------------------------------------------------------------
    def page_keys(self, dest_uris: Iterable[str]) -> dict[str, str]:
        """The recorded keys of these pages (those that have one)."""
        return dict(self._select_in("pages", "dest_uri", dest_uris))

    def set_page_keys(self, rows: Iterable[tuple[str, str]]) -> None:
        """(dest_uri, key) of pages just written."""
        self._transaction("INSERT OR REPLACE INTO pages VALUES (?, ?)", rows)

    def forget_other_pages(self) -> None:
        """Drop the keys of pages that are not among this build's current outputs. A build that settled
        albums leaves that to remove_outputs, which forgets the keys of the stale outputs it forgets (a
        pass over every page's key, 0.1 s at 100,000 photos); one that settled none goes over them all."""
        if self.db.execute("SELECT 1 FROM temp.settled LIMIT 1").fetchone() is None:
            self.db.execute("DELETE FROM pages WHERE dest_uri NOT IN (SELECT dest_uri FROM temp.current_outputs)")

    # -- pages listed by this build: two may not claim one path --------------------------
    def claim_pages(self, rows: list[tuple[str, str]]) -> tuple[str, str, str] | None:
        """Record (dest_uri, template) of pages listed; returns (dest_uri, template before, template now)
        of a path listed twice (nothing is recorded then)."""
        seen: dict[str, str] = {}
        for uri, template in rows:
            if uri in seen:
                return uri, seen[uri], template
            seen[uri] = template
        for uri, before in self._select_in("temp.claims", "dest_uri", seen):
            return uri, before, seen[uri]
        it = iter(seen)
        while chunk := list(islice(it, 500)):
            for uri, album in self.db.execute(
                f"SELECT o.dest_uri, o.album FROM {_SETTLED_OUTPUTS} WHERE o.dest_uri IN ({','.join('?' * len(chunk))})",  # noqa: S608
                chunk,
            ):
                return uri, f"a page of {album or 'the top album'}", seen[uri]
        self._transaction("INSERT INTO temp.claims VALUES (?, ?)", rows)
        return None

    # each recorded page (j.value: [dest_uri, template, sitemap url, lastmod]) of the albums claim_recorded settled
    _SETTLED_PAGES = "FROM albums a JOIN temp.settled USING (album_uri), json_each(a.pages) j"

    def claim_recorded(self, album_uris: Iterable[str]) -> bool:
        """Claim the pages recorded for these albums, and count them and their media's outputs among this
        build's outputs: every output their records list (see set_albums), by the album named in the
        manifest, with nothing copied (a million photos' three million outputs took ~4 s to copy into
        the tables of this build's outputs). False, and nothing claimed, when one of those pages is
        claimed already."""
        self.db.execute("DELETE FROM temp.settled")
        self._transaction("INSERT OR IGNORE INTO temp.settled VALUES (?)", ((u,) for u in album_uris))
        if self.db.execute(  # (the pages claimed so far looked up, not the settled albums' outputs gone through)
            "SELECT 1 FROM temp.claims c WHERE EXISTS (SELECT 1 FROM outputs o WHERE o.dest_uri = c.dest_uri "
            "AND o.album IN (SELECT album_uri FROM temp.settled)) LIMIT 1"
        ).fetchone() is not None:
            self.db.execute("DELETE FROM temp.settled")
            return False
        return True

    def sitemap_recorded(self) -> None:
        """Add the sitemap rows recorded with the pages of the albums claim_recorded settled."""
        self.db.execute(
            "INSERT OR REPLACE INTO temp.sitemap SELECT json_extract(j.value, '$[2]'), json_extract(j.value, '$[3]') "
            f"{self._SETTLED_PAGES} WHERE json_extract(j.value, '$[2]') IS NOT NULL"  # noqa: S608
        )

    def sitemap_add(self, rows: Iterable[tuple[str, str]]) -> None:
        self._transaction("INSERT OR REPLACE INTO temp.sitemap VALUES (?, ?)", rows)

    def sitemap_clear(self) -> None:
        self.db.execute("DELETE FROM temp.sitemap")

    def sitemap_count(self) -> int:
        return self.db.execute("SELECT count(*) FROM temp.sitemap").fetchone()[0]

    def sitemap_rows(self, after: str | None, limit: int) -> list[tuple[str, str]]:
        """limit rows in url order, from the first url after `after` (None: from the first)."""
        if after is None:
            return self.db.execute("SELECT url, lastmod FROM temp.sitemap ORDER BY url LIMIT ?", (limit,)).fetchall()
        return self.db.execute(
            "SELECT url, lastmod FROM temp.sitemap WHERE url > ? ORDER BY url LIMIT ?", (after, limit)
        ).fetchall()

    def unclaim_recorded(self) -> None:
        """Undo claim_recorded (the albums' pages are listed again)."""
        self.db.execute("DELETE FROM temp.settled")

    def forget_claims(self) -> None:
        self.db.execute("DELETE FROM temp.claims")

    # -- digests of media views (see render.pages.ViewDigests) -------------------------
    # Kept between builds: a media view's digest holds as long as its album's input fingerprint does
    # (see render.albumkeys), and the view is fingerprinted again whenever its album's views are built.
    def put_view_digests(self, rows: Iterable[tuple[str, str]]) -> None:
        self._transaction("INSERT OR REPLACE INTO media_views VALUES (?, ?)", rows)

    def view_digests(self, uris: Iterable[str]) -> dict[str, str]:
        return dict(self._select_in("media_views", "uri", uris))

    # -- albums' input fingerprints and the pages they listed (see render.albumkeys) ------
    def get_album(self, album_uri: str) -> tuple[str, str, bool] | None:
        """(input fingerprint, its pages as JSON, whether the record is whole) recorded for an album: a
        record from before they were kept lacks its media's outputs and its folders without an index."""
        return self.db.execute(
            "SELECT key, pages, outputs IS NOT NULL AND unindexed IS NOT NULL FROM albums WHERE album_uri = ?", (album_uri,)
        ).fetchone()

    def album_keys(self) -> dict[str, str]:
        """The recorded input fingerprint of every album whose record is whole (see get_album)."""
        return dict(self.db.execute("SELECT album_uri, key FROM albums WHERE outputs IS NOT NULL AND unindexed IS NOT NULL"))

    def set_albums(self, rows: list[tuple[str, str, str, str, str]], drop: Iterable[str] = ()) -> None:
        """Record (album_uri, fingerprint, pages, outputs, unindexed: JSON lists) of albums whose pages are
        all written; forget `drop`'s. Each output an album's record lists (its pages and its media's
        outputs) is marked as that album's in the manifest (see claim_recorded), and no other is.
        unindexed: the folders of those outputs (and above) where they have no index.html."""
        drop = [(uri,) for uri in drop]
        if drop:
            self._transaction("DELETE FROM albums WHERE album_uri = ?", drop, "UPDATE outputs SET album = NULL WHERE album = ?")
        if rows:
            self.db.execute("BEGIN")
            try:
                self.db.executemany("INSERT OR REPLACE INTO albums (album_uri, key, pages, outputs, unindexed) VALUES (?, ?, ?, ?, ?)", rows)
                self.db.executemany("UPDATE outputs SET album = NULL WHERE album = ?", [(row[0],) for row in rows])
                self.db.executemany(
                    "UPDATE outputs SET album = ?1 WHERE dest_uri IN "
                    "(SELECT json_extract(value, '$[0]') FROM json_each(?2) UNION ALL SELECT value FROM json_each(?3))",
                    [(uri, pages, outputs) for uri, _, pages, outputs, _ in rows],
                )
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")

    def settle_albums(self, prefix: str) -> None:
        """Records written pending (their keys start with prefix) hold from now on."""
        self.db.execute("UPDATE albums SET key = substr(key, ?) WHERE key LIKE ? || '%'", (len(prefix) + 1, prefix))

    def keep_albums(self, album_uris: Iterable[str]) -> None:
        """Forget the records of albums not listed by this build (an album can have many thousand
        of them: worked out in SQLite)."""
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS keep_albums (album_uri TEXT PRIMARY KEY)")
        self.db.execute("DELETE FROM temp.keep_albums")
        self._transaction("INSERT OR IGNORE INTO temp.keep_albums VALUES (?)", ((u,) for u in album_uris))
        self.db.execute("DELETE FROM albums WHERE album_uri NOT IN (SELECT album_uri FROM temp.keep_albums)")
        self.db.execute(
            "UPDATE outputs SET album = NULL WHERE album IS NOT NULL AND album NOT IN (SELECT album_uri FROM temp.keep_albums)"
        )
        self.db.execute("DROP TABLE temp.keep_albums")

    # -- outputs manifest ---------------------------------------------------------
    def has_output(self, dest_uri: str) -> bool:
        return self.db.execute("SELECT 1 FROM outputs WHERE dest_uri = ?", (dest_uri,)).fetchone() is not None

    def output_named(self, name: str, other_than: str) -> tuple[str, int | None, int | None] | None:
        """A recorded output with this file name in another folder, with its stamp: one lookup in the
        index of names (a pass over the manifest for each name took ~1.2 s at a million photos, two of
        them for each photo added or edited)."""
        return self.db.execute(
            "SELECT dest_uri, size, mtime_ns FROM outputs WHERE name = ? AND dest_uri != ? LIMIT 1", (name, other_than)
        ).fetchone()

    def output_stamps(self) -> Iterator[tuple[str, int | None, int | None]]:
        """Every recorded output with the size and modification time it was written with (None: not
        known), read as it is iterated."""
        return iter(self.db.execute("SELECT dest_uri, size, mtime_ns FROM outputs"))

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
            f"WHERE c.dest_uri > ?1 UNION SELECT o.dest_uri, o.size, o.mtime_ns FROM {_SETTLED_OUTPUTS} "  # noqa: S608
            "WHERE o.dest_uri > ?1 ORDER BY 1 LIMIT ?2",
            (after, limit),
        ).fetchall()

    def is_current(self, dest_uri: str) -> bool:
        """Whether a path is among this build's outputs (as marked so far, and the settled albums')."""
        return self.db.execute(
            f"SELECT 1 FROM temp.current_outputs WHERE dest_uri = ?1 UNION ALL SELECT 1 FROM {_SETTLED_OUTPUTS} "  # noqa: S608
            "WHERE o.dest_uri = ?1", (dest_uri,)
        ).fetchone() is not None

    def folders_without_index(self) -> list[tuple[str, str]]:
        """Every folder of this build's outputs (as marked so far) that has no index.html, with the
        nearest folder above it that has one ('' for the top), in name order.

        The settled albums' records name such folders among their outputs (see set_albums): only
        those are looked up. This build's other outputs are gone through in name order, where
        everything below a folder comes together: the folders open around the output being read are
        all that is held (no set of every folder: ~100 MB of names at a million photos). A recursive
        query in SQLite took 1.1 s at 100,000 photos, a seventh of a rebuild after one change: its
        string functions cost more than the names."""
        open_: list[list] = []  # [folder, has an index.html] of the folders around the last output read
        missing: set[str] = set()
        last = None
        for (uri,) in self.db.execute("SELECT dest_uri FROM temp.current_outputs ORDER BY dest_uri"):
            folder, _, name = uri.rpartition("/")
            if folder != last:
                last = folder
                while open_ and not uri.startswith(open_[-1][0] + "/"):  # left behind: nothing more below it
                    done, has_index = open_.pop()
                    if not has_index:
                        missing.add(done)
                if folder and (not open_ or open_[-1][0] != folder):
                    at = len(open_[-1][0]) + 1 if open_ else 0
                    while (at := folder.find("/", at)) != -1:
                        open_.append([folder[:at], False])
                        at += 1
                    open_.append([folder, False])
            if name == "index.html" and folder:
                open_[-1][1] = True
        missing.update(folder for folder, has_index in open_ if not has_index)
        missing.update(folder for (folder,) in self.db.execute(
            "SELECT j.value FROM albums a JOIN temp.settled USING (album_uri), json_each(a.unindexed) j"
        ))
        settled = self.db.execute("SELECT 1 FROM temp.settled LIMIT 1").fetchone() is not None
        out = []
        for folder in sorted(missing):
            if settled and self.is_current(f"{folder}/index.html"):  # (a settled album's, or this build's)
                continue
            target = folder.rpartition("/")[0]
            while target and not self.is_current(f"{target}/index.html"):
                target = target.rpartition("/")[0]
            out.append((folder, target))
        return out

    def stale_outputs(self) -> list[tuple[str, int | None, int | None]]:
        """Recorded outputs that are not among this build's, with their stamps: the only files a build
        may remove, and only while each is still the file written there (stamp None: not known)."""
        return self.db.execute(
            "SELECT dest_uri, size, mtime_ns FROM outputs WHERE dest_uri NOT IN (SELECT dest_uri FROM temp.current_outputs) "
            "AND (album IS NULL OR album NOT IN (SELECT album_uri FROM temp.settled))"
        ).fetchall()

    def remove_outputs(self, dest_uris: Iterable[str]) -> None:
        """Forget these outputs, and the keys of those that are pages."""
        self._transaction("DELETE FROM outputs WHERE dest_uri = ?", ((u,) for u in dest_uris), "DELETE FROM pages WHERE dest_uri = ?")
