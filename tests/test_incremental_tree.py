"""One photo changed in a built gallery: the rebuild gives, file for file, the site a clean build of
the new photo folder gives, and renders only the pages that show the change.

Each case builds a gallery of nested albums (with the stream, feeds and sitemap on), changes one
photo (added, its caption edited in a sidecar, deleted, moved to another album), builds again into
the same output, and compares every file of that output with a clean build of the changed folder
into an empty one. The pages rendered are counted (the -v summary) and must be the pages whose bytes
changed: one too few leaves a stale page (the comparison fails), one too many is work for nothing.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import build_site, make_jpeg, write_config

CONFIG = """url = "https://example.org/gallery/"
[stream]
page_size = 4
[feeds]
items = 3
[pages]
page_size = 3
[images]
sizes = [320]
[thumbnails]
height = 60
"""

ALBUMS = {  # album -> photos (name, day of March 2024): dates interleave across albums in the stream
    "Trips/Alps": [("alp1", 1), ("alp2", 5), ("alp3", 9), ("alp4", 13), ("alp5", 17)],
    "Trips/Beach": [("sea1", 2), ("sea2", 6), ("sea3", 10), ("sea4", 14)],
    "City": [("city1", 3), ("city2", 7), ("city3", 11), ("city4", 15)],
    "Home": [("home1", 4)],
}


def make_gallery(src: Path) -> Path:
    for a, (album, photos) in enumerate(ALBUMS.items()):
        for name, day in photos:
            make_jpeg(src / album / f"{name}.jpg", size=(48, 36), color=(50 * a, 6 * day, 120),
                      date=f"2024:03:{day:02d} 10:00:00")
    (src / "Trips" / "index.md").write_text("Title: Trips away\n\nWhere we went.\n")
    (src / "Trips" / "Alps" / "alp2.md").write_text("Title: Above the clouds\n")
    return src


# Each change returns the photo pages of the changed photo's neighbours (before and after): their keys
# hold the neighbour's view, so they may be rendered again even where their bytes do not change.


def add(src: Path) -> set[str]:
    make_jpeg(src / "Trips" / "Beach" / "sea9.jpg", size=(48, 36), color=(9, 99, 199), date="2024:03:08 10:00:00")
    return {"trips/beach/sea2/index.html", "trips/beach/sea3/index.html"}


def edit_caption(src: Path) -> set[str]:
    (src / "Trips" / "Alps" / "alp2.md").write_text("Title: Below the clouds\n\nA new caption.\n")
    return {"trips/alps/alp1/index.html", "trips/alps/alp3/index.html"}


def delete(src: Path) -> set[str]:
    (src / "City" / "city2.jpg").unlink()
    return {"city/city1/index.html", "city/city3/index.html"}


def move(src: Path) -> set[str]:
    (src / "Trips" / "Alps" / "alp4.jpg").rename(src / "City" / "alp4.jpg")
    return {"trips/alps/alp3/index.html", "trips/alps/alp5/index.html", "city/city3/index.html", "city/city4/index.html"}


def pages(site: Path) -> dict[str, bytes]:
    """Every page of the site (HTML and the feeds', sitemap's and robots' text) -> its bytes."""
    return {
        p.relative_to(site).as_posix(): p.read_bytes()
        for p in site.rglob("*")
        if p.is_file() and p.suffix in (".html", ".xml", ".txt") and "static" not in p.parts
    }


def files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


def assert_clean_build(src: Path, site: Path, conf: Path) -> None:
    """site holds, file for file, what a clean build of src gives (a copy of src beside it, built into
    an empty folder with a cache of its own: nothing of the first build's applies)."""
    clean = src.parent / "clean" / "site"
    clean_src = src.parent / "clean" / src.name  # (same name: the home page is titled after it)
    shutil.rmtree(clean.parent, ignore_errors=True)
    shutil.copytree(src, clean_src)
    build_site(clean_src, clean, "-c", str(conf))
    got, want = files(site), files(clean)
    assert sorted(got) == sorted(want)
    assert [name for name in want if got[name] != want[name]] == []


def rendered(stdout: str) -> set[str]:
    """The pages a build rendered, from its -v listing, checked against its count."""
    found = re.search(r"rendered (\d+|no) pages?", stdout)
    assert found, stdout
    listed = set(re.findall(r"^  (\S+\.(?:html|xml)|robots\.txt)$", stdout, re.MULTILINE))  # (not files read)
    assert len(listed) == (0 if found.group(1) == "no" else int(found.group(1))), stdout
    return listed


@pytest.mark.parametrize("change", [add, edit_caption, delete, move], ids=lambda f: f.__name__)
def test_one_photo_changed_rebuilds_to_the_clean_build_of_the_new_folder(tmp_path, isolated_cache, change):
    src = make_gallery(tmp_path / "photos")
    conf = write_config(tmp_path, CONFIG)
    site = tmp_path / "site"
    build_site(src, site, "-c", str(conf))
    before = pages(site)
    neighbours = change(src)
    result = build_site(src, site, "-c", str(conf), "-v")

    assert_clean_build(src, site, conf)

    after = pages(site)
    differ = {name for name in after if before.get(name) != after[name]}
    assert differ, "the change shows on no page"
    # the pages whose bytes changed were rendered, and no other but the neighbours' (see add)
    done = rendered(result.stdout)
    assert differ <= done, sorted(differ - done)
    assert done - differ <= neighbours, sorted(done - differ)
    assert "home/index.html" not in done and "home/home1/index.html" not in done


def test_nothing_renders_when_only_another_folder_is_touched(tmp_path, isolated_cache):
    """A file that is not media (a note) added to an album: the listing changed, no page did."""
    src = make_gallery(tmp_path / "photos")
    conf = write_config(tmp_path, CONFIG)
    site = tmp_path / "site"
    build_site(src, site, "-c", str(conf))
    (src / "City" / "notes.txt").write_text("not a photo\n")
    result = build_site(src, site, "-c", str(conf), "-v")
    assert "nothing changed" not in result.stdout
    assert rendered(result.stdout) == set()


def test_views_are_built_only_for_the_albums_a_change_reaches(tmp_path, isolated_cache, monkeypatch):
    """An album whose input fingerprint (its folder's listing, as arranged, its cards' albums) is the
    recorded one is listed from its record: none of its views is built. The changed photo's album is
    built, and its parent, whose card of it may show another cover or count (and an album whose card
    shows a cover from it); no other album."""
    from albumen.render.pages import ViewBuilder

    built: list[str] = []
    real = ViewBuilder.album

    def counting(self, uri, full=True):
        if full:
            built.append(uri)
        return real(self, uri, full)

    monkeypatch.setattr(ViewBuilder, "album", counting)
    src = make_gallery(tmp_path / "photos")
    conf = write_config(tmp_path, CONFIG)
    site = tmp_path / "site"
    build_site(src, site, "-c", str(conf))
    assert sorted(built) == ["", "City", "Home", "Trips", "Trips/Alps", "Trips/Beach"]
    built.clear()
    (src / "City" / "notes.txt").write_text("not a photo\n")  # City's listing changed, nothing it shows
    build_site(src, site, "-c", str(conf))
    assert sorted(built) == ["", "City"]
    built.clear()
    edit_caption(src)
    build_site(src, site, "-c", str(conf))
    assert sorted(built) == ["", "Trips", "Trips/Alps"]  # the home page's card of Trips has an Alps cover
    built.clear()
    delete(src)
    result = build_site(src, site, "-c", str(conf), "-v")
    assert sorted(built) == ["", "City"]
    assert "city/city1/index.html" in rendered(result.stdout)
    built.clear()
    next(site.glob("home/home1/index.html")).unlink()  # a page of a settled album deleted from the output
    move(src)
    build_site(src, site, "-c", str(conf))
    # Home is settled: its files are not looked at by a build after a change, but by the next one with
    # nothing changed, which looks at every file the last build wrote and puts back the page
    assert sorted(built) == ["", "City", "Trips", "Trips/Alps"]
    built.clear()
    result = build_site(src, site, "-c", str(conf), "-v")
    assert sorted(built) == ["Home"]
    assert rendered(result.stdout) == {"home/home1/index.html"}
    assert (site / "home" / "home1" / "index.html").is_file()


def test_a_photo_failing_in_a_rebuild_gives_the_clean_build_of_the_new_folder(tmp_path, isolated_cache, monkeypatch):
    """A photo that fails while its images are made (cut off after its header) re-arranges the albums
    after pages were listed: the albums settled before (listed from their records, their pages claimed
    at once) are listed again, and the site is a clean build's, file for file."""
    from albumen.render.writer import PageWriter

    src = make_gallery(tmp_path / "photos")
    conf = write_config(tmp_path, CONFIG)
    site = tmp_path / "site"
    build_site(src, site, "-c", str(conf))
    settled: list[set[str]] = []
    real = PageWriter.forget_listed
    monkeypatch.setattr(PageWriter, "forget_listed", lambda self: settled.append(set(self.renderer.settled)) or real(self))
    whole = make_jpeg(tmp_path / "whole.jpg", size=(480, 360), date="2024:03:30 10:00:00").read_bytes()
    (src / "Home" / "home0.jpg").write_bytes(whole[: len(whole) // 2])  # Home's only other photo: a second one
    result = build_site(src, site, "-c", str(conf), "-v")
    assert "Home/home0.jpg" in result.output
    assert settled == [{"City", "Trips", "Trips/Alps", "Trips/Beach"}]  # listed again after the failure

    assert_clean_build(src, site, conf)


def test_stream_pages_made_only_of_settled_albums_photos_are_not_fingerprinted_again(tmp_path, isolated_cache, monkeypatch):
    """A stream page whose photos all belong to settled albums, and which is made of the same photos as
    at the last build, is the page that build wrote: its views' digests are not even looked up."""
    from albumen.render.stores import ViewDigests

    src = make_gallery(tmp_path / "photos")
    for day in range(1, 17):  # newer than all the others: the first stream pages are theirs alone
        make_jpeg(src / "Later" / f"later{day}.jpg", size=(48, 36), color=(9, 9 * day, 60), date=f"2024:04:{day:02d} 10:00:00")
    conf = write_config(tmp_path, CONFIG)
    site = tmp_path / "site"
    build_site(src, site, "-c", str(conf))
    asked: list[list[str]] = []
    real = ViewDigests.get
    monkeypatch.setattr(ViewDigests, "get", lambda self, uris: asked.append(list(uris)) or real(self, asked[-1]))
    edit_caption(src)  # Trips/Alps/alp2.md
    result = build_site(src, site, "-c", str(conf), "-v")
    assert asked, "no stream page was fingerprinted"
    assert all(any(uri.startswith("Trips/Alps/") for uri in items) for items in asked), asked
    stream_pages = sorted(p.relative_to(site).as_posix() for p in (site / "stream").rglob("index.html"))
    assert len(asked) < len(stream_pages)
    assert [p for p in rendered(result.stdout) if p.startswith("stream/")] == [  # the one showing alp2
        p for p in stream_pages if "Below the clouds" in (site / p).read_text()]


def test_a_sitemap_past_its_limit_is_an_index_of_files_with_every_page_once_in_order(tmp_path, isolated_cache, monkeypatch):
    """Past SITEMAP_LIMIT urls, sitemap.xml lists sitemap-NAME.xml files of at most that many urls each:
    together the urls of the one-file sitemap, in the same order, also after a rebuild that settles
    albums (whose lines come from their records, cut where a file ends). The urls go album by album,
    the stream's pages (of no album) last. A caption changes no file; a photo added changes the files
    that hold its album's lines, and the others are kept as written."""
    import xml.etree.ElementTree as ET

    import albumen.render.sitemap

    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    src = make_gallery(tmp_path / "photos")
    conf = write_config(tmp_path, CONFIG)
    whole = tmp_path / "whole"
    build_site(src, whole, "-c", str(conf))
    want = [loc.text for loc in ET.parse(whole / "sitemap.xml").getroot().findall("s:url/s:loc", ns)]
    assert len(want) > 14 and len(set(want)) == len(want)
    stream = [url for url in want if "/stream/" in url]
    assert stream and want[-len(stream):] == stream

    monkeypatch.setattr(albumen.render.sitemap, "SITEMAP_LIMIT", 5)
    site = tmp_path / "site"
    for step in ("first build", "rebuild after a change"):
        if step != "first build":
            edit_caption(src)
        build_site(src, site, "-c", str(conf))
        index = ET.parse(site / "sitemap.xml").getroot()
        files = [loc.text.rpartition("/")[2] for loc in index.findall("s:sitemap/s:loc", ns)]
        assert len(files) > 2 and all(re.fullmatch(r"sitemap-[0-9a-f]{12}\.xml", name) for name in files), step
        got = []
        for name in files:
            urls = [loc.text for loc in ET.parse(site / name).getroot().findall("s:url/s:loc", ns)]
            assert 0 < len(urls) <= 5, (step, name)
            got += urls
        assert got == want, step
        assert sorted(p.name for p in site.glob("sitemap-*.xml")) == sorted(files), step

    # another caption: the same lines, told by the albums' digests (render.sitemap.sitemap_tasks): the
    # files are listed as written, not made again; one that is gone is made again
    stamps = {p.name: p.stat().st_mtime_ns for p in site.glob("sitemap*.xml")}
    (src / "Trips" / "Alps" / "alp2.md").write_text("Title: Below the clouds\n\nSaid again.\n")
    result = build_site(src, site, "-c", str(conf), "-v")
    assert not [name for name in rendered(result.stdout) if name.startswith("sitemap")]
    assert {p.name: p.stat().st_mtime_ns for p in site.glob("sitemap*.xml")} == stamps
    (site / files[1]).unlink()
    build_site(src, site, "-c", str(conf))
    assert (site / files[1]).is_file()
    contents = {p.name: p.read_bytes() for p in site.glob("sitemap-*.xml")}
    add(src)  # (new lines in one album: the files holding them are made again, the others kept)
    result = build_site(src, site, "-c", str(conf), "-v")
    made = {name for name in rendered(result.stdout) if name.startswith("sitemap-")}
    now = {p.name: p.read_bytes() for p in site.glob("sitemap-*.xml")}
    changed = {name for name in now if contents.get(name) != now[name]}
    # (a file of the stream's lines may be made again alike: its key says which of them changed)
    assert changed and changed <= made and len(made) <= 3, (made, changed)
    assert len(now) - len(made) >= 4 and len(set(now) & set(contents)) >= len(contents) - 2, (made, sorted(now))
    assert_clean_build(src, site, conf)


def test_album_records_from_before_sitemap_counts_get_them_once_and_the_sitemap_holds(tmp_path, isolated_cache, monkeypatch):
    """A record's digest of its album's sitemap lines starts with their count (render.sitemap.lines_digest).
    A cache from before holds the digest alone: opening it counts them once (not in every build), the
    next rebuild keeps the sitemap's files as written, and the site is the clean build's."""
    import sqlite3

    import albumen.render.sitemap
    from albumen.render.sitemap import lines_digest

    monkeypatch.setattr(albumen.render.sitemap, "SITEMAP_LIMIT", 5)
    src = make_gallery(tmp_path / "photos")
    conf = write_config(tmp_path, CONFIG)
    site = tmp_path / "site"
    build_site(src, site, "-c", str(conf))
    (cache,) = isolated_cache.rglob("cache.sqlite")
    with sqlite3.connect(cache) as db:
        rows = db.execute("SELECT album_uri, sitemap, sitemap_digest FROM albums WHERE sitemap != ''").fetchall()
        assert rows and all(digest == lines_digest(lines) and digest.startswith(f"{lines.count(chr(10))}:") for _, lines, digest in rows)
        db.execute("UPDATE albums SET sitemap_digest = substr(sitemap_digest, instr(sitemap_digest, ':') + 1)")
        db.execute("DELETE FROM meta WHERE key = 'sitemap_counts'")
    db.close()
    stamps = {p.name: p.stat().st_mtime_ns for p in site.glob("sitemap*.xml")}
    edit_caption(src)
    result = build_site(src, site, "-c", str(conf), "-v")
    assert not [name for name in rendered(result.stdout) if name.startswith("sitemap")]
    assert {p.name: p.stat().st_mtime_ns for p in site.glob("sitemap*.xml")} == stamps
    with sqlite3.connect(cache) as db:
        again = db.execute("SELECT album_uri, sitemap, sitemap_digest FROM albums WHERE sitemap != ''").fetchall()
    db.close()
    assert len(again) == len(rows) and all(digest == lines_digest(lines) for _, lines, digest in again)
    assert_clean_build(src, site, conf)


def test_plans_are_made_only_for_the_albums_a_change_reaches_and_the_pages_it_renders(tmp_path, isolated_cache, monkeypatch):
    """A settled album's photos are not planned (process.plan.MediaPlans): their album's fingerprint
    says what their plans are made of. The changed album's photos are, and so are those the pages
    rendered show (a card's cover, the stream page of the change); the site is a clean build's."""
    import albumen.process.plan as plan_module

    planned: list[str] = []
    real = plan_module._plan_image
    monkeypatch.setattr(plan_module, "_plan_image", lambda media, *a, **k: planned.append(media.src_uri) or real(media, *a, **k))
    src = make_gallery(tmp_path / "photos")
    conf = write_config(tmp_path, CONFIG)
    site = tmp_path / "site"
    build_site(src, site, "-c", str(conf))
    assert len(planned) == sum(len(photos) for photos in ALBUMS.values())
    planned.clear()
    edit_caption(src)
    build_site(src, site, "-c", str(conf))
    assert {f"Trips/Alps/{name}.jpg" for name, _ in ALBUMS["Trips/Alps"]} <= set(planned)
    # City (settled) shows on no page rendered but the stream page of alp2's day (5: days 6 to 3) and
    # the home page (its card's cover, its newest photo)
    assert {uri for uri in planned if uri.startswith("City/")} <= {"City/city1.jpg", "City/city4.jpg"}, planned
    assert "City/city2.jpg" not in planned and "Home/home1.jpg" in planned

    assert_clean_build(src, site, conf)


def test_a_cache_from_before_outputs_named_their_album_settles_nothing_until_listed_again(tmp_path, isolated_cache, monkeypatch):
    """The manifest names the album whose record lists each output (cache.set_albums), and a settled
    album's outputs are this build's by that name. A cache from before has no such names: its records
    settle no album (else every settled album's files would be stale, and removed), the rebuild gives
    the clean build, and the one after settles again."""
    import sqlite3

    from albumen.render.writer import PageWriter

    settled: list[set[str]] = []
    real = PageWriter.settle
    monkeypatch.setattr(PageWriter, "settle", lambda self, albums: settled.append(set(albums)) or real(self, albums))
    src = make_gallery(tmp_path / "photos")
    conf = write_config(tmp_path, CONFIG)
    site = tmp_path / "site"
    build_site(src, site, "-c", str(conf))
    caches = list(isolated_cache.rglob("cache.sqlite"))
    assert len(caches) == 1
    with sqlite3.connect(caches[0]) as db:
        db.executescript("DROP INDEX outputs_by_album; DROP INDEX outputs_unowned; ALTER TABLE outputs DROP COLUMN album;")
    delete(src)  # City/city2.jpg: its outputs are stale
    settled.clear()
    build_site(src, site, "-c", str(conf))
    assert settled in ([], [set()]), settled

    assert_clean_build(src, site, conf)

    settled.clear()
    edit_caption(src)
    build_site(src, site, "-c", str(conf))
    assert settled and settled[-1] >= {"City", "Home"}, settled
    with sqlite3.connect(caches[0]) as db:
        named = dict(db.execute("SELECT album, count(*) FROM outputs WHERE album IS NOT NULL GROUP BY album"))
    assert set(named) >= {"City", "Home", "Trips/Beach"}, named
