"""The render stage's records in the build cache (see cache.BuildCache, which they are part of): the
key each page was written with, the pages this build claims, the sitemap's rows, the digests of media
views, the albums' records (input fingerprint, pages, outputs) and what settling albums makes of them,
and the folders of the output without an index page."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

# the outputs that the records of this build's settled albums list (see claim_recorded), as `o`
SETTLED_OUTPUTS = "outputs o JOIN temp.settled s ON o.album = s.album_uri"


class PageRecords:
    """Mixed into BuildCache, whose connection (db), transactions (_transaction, _select_in) and
    outputs manifest (is_current) these use."""

    db: sqlite3.Connection

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
        for row in self._select_in(SETTLED_OUTPUTS, "o.dest_uri", seen):  # (row: the output's, then its album)
            return row[0], f"a page of {row[-1] or 'the top album'}", seen[row[0]]
        self._transaction("INSERT INTO temp.claims VALUES (?, ?)", rows)
        return None

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

    # -- the sitemap's lines (see render.sitemap): (sort key, url, line) -------------------------
    def sitemap_add(self, rows: Iterable[tuple[str, str, str | None, str]]) -> None:
        self._transaction("INSERT OR REPLACE INTO temp.sitemap VALUES (?, ?, ?, ?)", rows)

    def sitemap_settled(self) -> None:
        """Add the lines recorded with the albums claim_recorded settled, each album's as one row (its
        sort key: render.sitemap.sort_key(album, ''))."""
        self.db.execute(
            "INSERT OR REPLACE INTO temp.sitemap SELECT '0' || a.album_uri || char(1), NULL, a.album_uri, a.sitemap "
            "FROM albums a JOIN temp.settled USING (album_uri) WHERE a.sitemap != ''"
        )

    def sitemap_settled_digests(self) -> list[tuple[str, str, int | None]]:
        """(album, the digest of its sitemap lines, their count when the digest does not say it: a record
        from before, see render.sitemap.lines_digest) of the albums claim_recorded settled that have lines."""
        return self.db.execute(
            "SELECT a.album_uri, a.sitemap_digest, CASE WHEN instr(a.sitemap_digest, ':') > 0 THEN NULL "
            "ELSE length(a.sitemap) - length(replace(a.sitemap, char(10), '')) END "
            "FROM albums a JOIN temp.settled USING (album_uri) WHERE a.sitemap != ''"
        ).fetchall()

    def sitemap_clear(self) -> None:
        self.db.execute("DELETE FROM temp.sitemap")

    def sitemap_lines(
        self, after: str | None, limit: int, low: str = "", high: str | None = None
    ) -> list[tuple[str, str | None, str | None, str]]:
        """limit (sort key, url, album, line) rows in key order, from the first key after `after` (None:
        from `low` on), below `high` (a settled album's lines: one row, url None). One bound a side, each
        a range of the key's index (a bound in an OR, or two on one side, had SQLite read every row past
        the range's end for the last rows of each sitemap file)."""
        first = ("k > ?", after) if after is not None else ("k >= ?", low)
        upper, bound = (" AND k < ?", (high,)) if high is not None else ("", ())
        return self.db.execute(
            f"SELECT k, url, album, line FROM temp.sitemap WHERE {first[0]}{upper} ORDER BY k LIMIT ?",  # noqa: S608
            (first[1], *bound, limit),
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
    # a record from before each was kept lacks its media's outputs, its folders without an index or its sitemap lines
    _WHOLE = "outputs IS NOT NULL AND unindexed IS NOT NULL AND sitemap_digest IS NOT NULL"

    def get_album(self, album_uri: str) -> tuple[str, str, bool] | None:
        """(input fingerprint, its pages as JSON, whether the record is whole) recorded for an album."""
        return self.db.execute(
            f"SELECT key, pages, {self._WHOLE} FROM albums WHERE album_uri = ?", (album_uri,)  # noqa: S608
        ).fetchone()

    def album_keys(self) -> dict[str, str]:
        """The recorded input fingerprint of every album whose record is whole (see get_album)."""
        return dict(self.db.execute(f"SELECT album_uri, key FROM albums WHERE {self._WHOLE}"))  # noqa: S608

    def set_albums(self, rows: list[tuple[str, str, str, str, str, str, str]], drop: Iterable[str] = ()) -> None:
        """Record (album_uri, fingerprint, pages, outputs, unindexed: JSON lists, the pages' sitemap lines
        and their digest) of albums whose pages are all written; forget `drop`'s. Each output an album's record lists (its pages and its media's
        outputs) is marked as that album's in the manifest (see claim_recorded), and no other is.
        unindexed: the folders of those outputs (and above) where they have no index.html."""
        drop = [(uri,) for uri in drop]
        if drop:
            self._transaction("DELETE FROM albums WHERE album_uri = ?", drop, "UPDATE outputs SET album = NULL WHERE album = ?")
        if rows:
            self.db.execute("BEGIN")
            try:
                self.db.executemany("INSERT OR REPLACE INTO albums (album_uri, key, pages, outputs, unindexed, sitemap, sitemap_digest) "
                                    "VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
                self.db.executemany("UPDATE outputs SET album = NULL WHERE album = ?", [(row[0],) for row in rows])
                self.db.executemany(
                    "UPDATE outputs SET album = ?1 WHERE dest_uri IN "
                    "(SELECT json_extract(value, '$[0]') FROM json_each(?2) UNION ALL SELECT value FROM json_each(?3))",
                    [(uri, pages, outputs) for uri, _, pages, outputs, *_ in rows],
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
        self.db.execute(  # (the outputs of the records going: not a pass over every output an album has)
            "UPDATE outputs SET album = NULL WHERE album IN "
            "(SELECT album_uri FROM albums WHERE album_uri NOT IN (SELECT album_uri FROM temp.keep_albums))"
        )
        self.db.execute("DELETE FROM albums WHERE album_uri NOT IN (SELECT album_uri FROM temp.keep_albums)")
        self.db.execute("DROP TABLE temp.keep_albums")

    # -- folders of the output without an index page -------------------------------------
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
