"""The stream (latest media across albums), Atom/RSS feeds, sitemap and robots.txt."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import feedparser
import pytest

from albumen.config import Config, validate_config
from albumen.scan import scan_source
from conftest import build_site, crawl, make_jpeg, soup, write_config


@pytest.fixture
def mixed(tmp_path):
    """Eleven photos over nested albums, dated by EXIF, sidecar and file name, one undated."""
    src = tmp_path / "photos"
    expected = {}  # src_uri -> datetime (UTC build), None when undated

    def exif(rel, when):
        make_jpeg(src / rel, date=when.strftime("%Y:%m:%d %H:%M:%S"))
        expected[rel] = when

    exif("2023/Spring/a.jpg", datetime(2023, 4, 1, 9))
    exif("2023/Spring/b.jpg", datetime(2023, 4, 2, 9))
    exif("2023/Summer/Beach/c.jpg", datetime(2023, 7, 14, 18))
    exif("2024/d.jpg", datetime(2024, 1, 1, 0, 5))
    exif("2024/Trip/e.jpg", datetime(2024, 6, 1, 12))
    make_jpeg(src / "2024/Trip/f.jpg", date="2010:01:01 00:00:00")
    (src / "2024/Trip/f.md").write_text("Date: 2024-06-02 08:00\n")
    expected["2024/Trip/f.jpg"] = datetime(2024, 6, 2, 8)
    make_jpeg(src / "2024/Trip/IMG_20240603_070000.jpg")
    expected["2024/Trip/IMG_20240603_070000.jpg"] = datetime(2024, 6, 3, 7)
    g = make_jpeg(src / "Misc/g.jpg")  # undated (its file's time is not when it was taken): after the others
    os.utime(g, (datetime(2022, 2, 2, 2, 2).timestamp(),) * 2)
    expected["Misc/g.jpg"] = None
    exif("Misc/h.jpg", datetime(2023, 7, 14, 18))  # same instant as c.jpg: ties by album path, then name
    exif("Misc/Deep/Er/i.jpg", datetime(2021, 5, 5, 5))
    exif("j.jpg", datetime(2024, 12, 24, 20))
    return src, expected


def stream_pages(site: Path, path: str = "stream") -> list[tuple[Path, list[str]]]:
    """Each stream page, newest first (following its 'next' links), with the slugs it shows."""
    pages = []
    page = site / path / "index.html"
    while True:
        doc = soup(page)
        pages.append((page, [str((page.parent / a["href"]).resolve().relative_to(site.resolve())) for a in doc.select(".grid li a")]))
        nxt = doc.select_one(".pagination a[rel=next]")
        if nxt is None:
            return pages
        page = (page.parent / nxt["href"] / "index.html").resolve()


def stream_slugs(site: Path, path: str = "stream") -> list[list[str]]:
    return [slugs for _, slugs in stream_pages(site, path)]


def test_stream_lists_every_media_once_newest_first(mixed, tmp_path):
    src, expected = mixed
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, 'timezone = "UTC"\n[stream]\npage_size = 4\n')))
    found = stream_pages(site)
    pages = [slugs for _, slugs in found]
    assert sum(map(len, pages)) == 11 and all(3 <= len(p) <= 12 for p in pages), pages  # page_size/2 + 1 to 3 * page_size
    assert all(re.fullmatch(r"stream/page/[0-9a-f]{12}/index.html", p.relative_to(site.resolve()).as_posix())
               for p, _ in found[1:]), found  # named after their items, not numbered
    times = []
    for page, _ in found:
        doc = soup(page)
        items = doc.select(".grid li")
        stamps = [li.select_one("time")["datetime"] if li.select_one("time") else None for li in items]
        assert len(doc.select("time")) == len([t for t in stamps if t])  # no other <time> on stream pages
        assert all(li.select_one(".tile-album").get_text() for li in items)
        times += stamps
    order = sorted(expected, key=lambda k: (expected[k] is not None, expected[k] or datetime.min), reverse=True)
    assert len(times) == len(expected) == 11
    assert times[-1] is None and None not in times[:-1]  # the undated photo comes last
    assert times[:-1] == sorted(times[:-1], reverse=True)
    assert [datetime.fromisoformat(t).replace(tzinfo=None) if t else None for t in times] == [expected[k] for k in order]
    assert [h for p in pages for h in p][-1] == "misc/g"
    # the tie: 2023/Summer/Beach/c.jpg before Misc/h.jpg (album path order)
    flat = [h for p in pages for h in p]
    assert flat.index("2023/summer/beach/c") < flat.index("misc/h"), flat
    walk = crawl(site)
    assert walk.broken == []
    assert "stream/index.html" in walk.pages  # the home page links to it
    assert soup(site / "index.html").select_one(".site-nav a")["href"] == "stream/"


def test_stream_limit_and_path(mixed, tmp_path):
    src, _ = mixed
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[stream]\nmax_items = 5\npath = "latest"\npage_size = 3\ntitle = "New"\n')))
    pages = stream_slugs(site, "latest")
    assert sum(map(len, pages)) == 5 and all(2 <= len(p) <= 9 for p in pages), pages
    assert soup(site / "latest" / "index.html").h1.get_text() == "New"
    assert not (site / "stream").exists()


def test_flattening_leaves_albums_untouched(mixed):
    src, expected = mixed
    gallery = scan_source(str(src), Config())
    before = {uri: (list(a.children), list(a.media)) for uri, a in gallery.albums.items()}
    paths = {uri: (m.album_uri, m.name) for uri, m in gallery.media.items()}
    flat = gallery.flatten("2024")
    assert sorted(m.src_uri for m in flat) == sorted(k for k in expected if k.startswith("2024/"))
    assert len(gallery.flatten("")) == 11
    assert {uri: (list(a.children), list(a.media)) for uri, a in gallery.albums.items()} == before
    assert {uri: (m.album_uri, m.name) for uri, m in gallery.media.items()} == paths


def test_album_named_stream_is_reported_and_renamed(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "stream" / "x.jpg")
    make_jpeg(src / "latest" / "y.jpg")
    site = tmp_path / "site"
    result = build_site(src, site)
    assert "stream: 'stream' is a name the site itself uses; published as 'stream-2'" in result.stderr
    assert (site / "stream-2" / "x" / "index.html").is_file()
    assert soup(site / "stream" / "index.html").select(".grid li")  # the stream is intact
    site2 = tmp_path / "site2"
    result = build_site(src, site2, "-c", str(write_config(tmp_path, '[stream]\npath = "latest"\n')))
    assert "latest: 'latest' is a name the site itself uses; published as 'latest-2'" in result.stderr
    strict = build_site(src, tmp_path / "site3", "--strict", expect=1)
    assert "published as 'stream-2'" in strict.stderr


def test_stream_path_must_be_one_segment():
    with pytest.raises(Exception) as info:
        validate_config({"stream": {"path": "../up"}})
    assert "stream.path: expected one URL segment" in str(info.value)


def test_feeds_parse_newest_first_with_resolving_links(mixed, tmp_path):
    src, expected = mixed
    site = tmp_path / "site"
    conf = write_config(tmp_path, 'url = "https://photos.example.org/gallery/"\ntimezone = "UTC"\n[feeds]\nitems = 6\n')
    build_site(src, site, "-c", str(conf))
    order = sorted((k for k in expected if expected[k]), key=lambda k: expected[k], reverse=True)
    for name, version in (("feed.xml", "atom10"), ("rss.xml", "rss20")):
        feed = feedparser.parse((site / name).read_bytes())
        assert not feed.bozo, feed.bozo_exception
        assert feed.version == version
        assert len(feed.entries) == 6
        dates = [e.published_parsed for e in feed.entries]
        assert dates == sorted(dates, reverse=True)
        ids = [e.id for e in feed.entries]
        assert len(set(ids)) == 6
        for entry in feed.entries:
            assert entry.link.startswith("https://photos.example.org/gallery/")
            rel = entry.link[len("https://photos.example.org/gallery/"):]
            assert (site / rel / "index.html").is_file()
            thumb = entry.summary.split('src="')[1].split('"')[0]
            assert (site / thumb[len("https://photos.example.org/gallery/"):]).is_file()
        assert feed.entries[0].link.endswith("/j/")
    assert [k for k in order][:1] == ["j.jpg"]
    # stable ids across rebuilds
    first = [e.id for e in feedparser.parse((site / "feed.xml").read_bytes()).entries]
    build_site(src, site, "-c", str(conf), "--force")
    assert [e.id for e in feedparser.parse((site / "feed.xml").read_bytes()).entries] == first
    # advertised on every page
    for page in site.rglob("index.html"):
        if page.parent.name == "static" or "page" == page.parent.name:
            continue
        doc = soup(page)
        if doc.select_one("meta[http-equiv=refresh]"):
            continue
        types = {link["type"] for link in doc.select("link[rel=alternate]")}
        assert {"application/atom+xml", "application/rss+xml"} <= types, page


def test_without_url_no_feeds_and_one_note(mixed, tmp_path):
    src, _ = mixed
    site = tmp_path / "site"
    result = build_site(src, site, "--strict")
    assert result.stdout.count("feeds and sitemap need the site's address") == 1
    for name in ("feed.xml", "rss.xml", "sitemap.xml", "robots.txt"):
        assert not (site / name).exists()


def test_sitemap_lists_every_public_page(mixed, tmp_path):
    src, _ = mixed
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, 'url = "https://photos.example.org/"\n')))
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = {loc.text for loc in ET.parse(site / "sitemap.xml").getroot().findall("s:url/s:loc", ns)}
    pages = {
        "https://photos.example.org/" + str(p.parent.relative_to(site)).replace(".", "").strip("/") + "/"
        for p in site.rglob("index.html")
        if not soup(p).select_one("meta[http-equiv=refresh]")
    }
    pages = {p.replace("org//", "org/") for p in pages}
    assert locs == pages
    assert "Sitemap: https://photos.example.org/sitemap.xml" in (site / "robots.txt").read_text()
    assert "Disallow" not in (site / "robots.txt").read_text()


def test_per_album_feeds(mixed, tmp_path):
    src, _ = mixed
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, 'url = "https://x.org/"\n[feeds]\nper_album = true\n')))
    feed = feedparser.parse((site / "2024" / "feed.xml").read_bytes())
    assert not feed.bozo
    assert len(feed.entries) == 4  # d, e, f and the file-name-dated one, all below 2024/
    assert all("/2024/" in e.link for e in feed.entries)


def test_stream_items_of_a_big_album_say_their_place_in_it(tmp_path):
    """A big album's stream items each know their place (looked up, not searched for)."""
    src = tmp_path / "photos"
    for i in range(1, 71):  # more than the renderer's small-album limit
        make_jpeg(src / "Big" / f"p{i:02d}.jpg", size=(16, 12), color=(3 * i, 90, 90),
                  date=f"2024:01:01 10:{i // 60:02d}:{i % 60:02d}")
    make_jpeg(src / "Small" / "s1.jpg", size=(16, 12), date="2023:01:01 10:00:00")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, "[stream]\npage_size = 100\n")))
    alts = {}
    for li in soup(site / "stream" / "index.html").select("li"):
        img, link = li.find("img"), li.find("a")
        if img is not None and link is not None:
            alts[link["href"].rstrip("/").rsplit("/", 1)[-1]] = img["alt"]
    assert len(alts) == 71
    for i in (1, 7, 64, 70):
        assert alts[f"p{i:02d}"].startswith(f"Photo {i} of 70, Big"), alts[f"p{i:02d}"]
    assert alts["s1"].startswith("Photo 1 of 1, Small")


def test_undated_media_show_no_date_and_come_after_dated_ones(tmp_path):
    """A photo of 2005 copied today has only today's file time: it was shown as taken '4 December 2026'
    and led the stream as the newest. Undated, it shows no date and comes after the dated media (in the
    stream, the feeds and date orders, both ways); its feed entry is updated at the file's time, not
    published then. file_dates = true asks for the file's time as the date."""
    src = tmp_path / "p"
    make_jpeg(src / "Trip" / "beach.jpg", date="2005:06:01 10:00:00")
    make_jpeg(src / "Trip" / "later.jpg", date="2010:06:01 10:00:00")
    copied = datetime(2026, 12, 4, 9, 30, tzinfo=UTC)
    scan = make_jpeg(src / "Trip" / "scan.jpg")
    os.utime(scan, (copied.timestamp(),) * 2)
    make_jpeg(src / "Other" / "x.jpg", date="2008:01:01 10:00:00")
    make_jpeg(src / "Desc" / "a.jpg", date="2001:01:01 10:00:00")
    make_jpeg(src / "Desc" / "b.jpg", date="2002:01:01 10:00:00")
    os.utime(make_jpeg(src / "Desc" / "c.jpg"), (datetime(2026, 11, 1, tzinfo=UTC).timestamp(),) * 2)
    (src / "Desc" / "index.md").write_text("Sort: -date\n")
    site = tmp_path / "site"
    conf = 'url = "https://x.org/"\ntimezone = "UTC"\n'
    build_site(src, site, "-c", str(write_config(tmp_path, conf)))

    page = soup(site / "trip" / "scan" / "index.html")
    assert page.select("time") == [] and "2026" not in page.get_text()
    assert page.select_one("img.photo-image")["alt"] == "Photo 3 of 3, Trip"
    viewer = json.loads(soup(site / "trip" / "index.html").select_one("#albumen-items").string)
    assert [(i["n"], i["dt"], i["di"]) for i in viewer][2] == (3, "", "")
    assert soup(site / "trip" / "index.html").select_one(".album-meta time").get_text() == "June 2005 – June 2010"
    assert stream_slugs(site) == [["trip/later", "other/x", "trip/beach", "desc/b", "desc/a", "desc/c", "trip/scan"]]
    tile = soup(site / "stream" / "index.html").select(".grid li")[-1]
    assert tile.select_one("time") is None and tile.select_one(".tile-album").get_text() == "Trip"
    # album orders: undated last whichever the direction
    assert [li["id"].removeprefix("m-") for li in soup(site / "trip" / "index.html").select(".grid li")] == ["beach", "later", "scan"]
    assert [li["id"].removeprefix("m-") for li in soup(site / "desc" / "index.html").select(".grid li")] == ["b", "a", "c"]
    # feeds: no published date for it, the file's time as when it was last updated
    atom = ET.parse(site / "feed.xml").getroot()
    ns = {"a": "http://www.w3.org/2005/Atom"}
    entries = {e.find("a:id", ns).text: e for e in atom.findall("a:entry", ns)}
    undated = entries["https://x.org/trip/scan/"]
    assert undated.find("a:published", ns) is None
    assert undated.find("a:updated", ns).text == "2026-12-04T09:30:00+00:00"
    dated = entries["https://x.org/trip/beach/"]
    assert dated.find("a:published", ns).text == dated.find("a:updated", ns).text == "2005-06-01T10:00:00+00:00"
    assert atom.find("a:updated", ns).text == "2026-12-04T09:30:00+00:00"  # the feed's latest change
    assert not feedparser.parse((site / "feed.xml").read_bytes()).bozo
    rss = ET.parse(site / "rss.xml").getroot()
    items = {i.find("link").text: i for i in rss.iter("item")}
    assert items["https://x.org/trip/scan/"].find("pubDate") is None
    assert items["https://x.org/trip/beach/"].find("pubDate").text == "Wed, 01 Jun 2005 10:00:00 +0000"

    # asked for, the file's time is the date: shown, and sorted as such
    site2 = tmp_path / "site2"
    build_site(src, site2, "-c", str(write_config(tmp_path, conf + "file_dates = true\n")))
    assert soup(site2 / "trip" / "scan" / "index.html").select_one(".photo-meta time").get_text() == "4 December 2026, 09:30"
    assert stream_slugs(site2)[0][0] == "trip/scan"


def _pages_by_name(uris: list[str], size: int) -> dict[str, tuple[str, ...]]:
    from albumen.render.stream import page_names, stream_chunks

    pages = stream_chunks(uris, size)
    return dict(zip(page_names(pages), map(tuple, pages), strict=True))


def test_stream_pages_change_near_the_change_only():
    """One item added or removed anywhere in a 20,000-item stream changes a page or two (their items
    or their names), never the pages after it (numbered pages of a fixed size all shifted)."""
    rng = random.Random(24)
    uris = [f"{2000 + i // 1000}/Event {i // 40:04d}/IMG_{i % 40:04d}.jpg" for i in range(20_000)]
    before = _pages_by_name(uris, 60)
    sizes = [len(p) for p in before.values()]
    assert all(31 <= n <= 180 for n in sizes), (min(sizes), max(sizes))  # page_size/2 + 1 to 3 * page_size
    assert 50 <= len(uris) / len(sizes) <= 75  # about page_size a page
    changed = []
    for _ in range(40):
        at = rng.randrange(len(uris))
        for after in (uris[:at] + [f"new/{at}.jpg"] + uris[at:], uris[:at] + uris[at + 1:]):
            now = _pages_by_name(after, 60)
            changed.append(sum(1 for name, items in now.items() if before.get(name) != items))
    assert max(changed) <= 2 and sum(changed) / len(changed) <= 1.2, changed
    assert _pages_by_name([], 60) == {"": ()}
    assert list(_pages_by_name(["a", "b"], 1).values()) == [("a",), ("b",)]


def test_a_photo_added_or_removed_rewrites_only_the_stream_pages_around_it(tmp_path):
    src = tmp_path / "p"
    for a in range(4):
        for i in range(30):  # 120 photos, a day apart, an album a month (a stream item says which
            # photo of its album it is: the pages showing the album of the photo added change too)
            make_jpeg(src / f"A{a}" / f"p{i:02d}.jpg", date=f"2024:{3 + a:02d}:{1 + i:02d} 10:00:00")
    conf = write_config(tmp_path, 'url = "https://example.org/"\n[stream]\npage_size = 10\n')
    site = tmp_path / "site"
    build_site(src, site, "-c", str(conf))

    def stream_files() -> dict[str, bytes]:
        return {p.relative_to(site).as_posix(): p.read_bytes() for p in (site / "stream").rglob("index.html")}

    first = stream_files()
    assert 8 <= len(first) <= 20

    def albums_shown(page: str) -> set[str]:
        return {a["href"].split("/")[-3] for a in soup(site / page).select(".grid li a")}

    older = {page for page in first if albums_shown(page) == {"a0"}}  # March: after May in the stream
    assert len(older) >= 2
    # a photo in the middle of the stream (between A2/p13 and A2/p14), named so that it ends a page:
    # a page more, and no page after it may change for that (its place is no part of its key)
    from albumen.render.stream import stream_chunks

    order = [f"A{a}/p{i:02d}.jpg" for a in range(3, -1, -1) for i in range(29, -1, -1)]  # newest first
    pages = len(stream_chunks(order, 10))
    name, at = next((f"n{k}", at) for at in range(order.index("A2/p20.jpg"), order.index("A2/p05.jpg")) for k in range(50)
                    if len(stream_chunks([*order[:at], f"A2/n{k}.jpg", *order[at:]], 10)) == pages + 1)
    day = int(order[at][4:6]) + 1  # the day of the photo before which it comes in the stream
    make_jpeg(src / "A2" / f"{name}.jpg", date=f"2024:05:{day:02d} 10:30:00")
    result = build_site(src, site, "-c", str(conf), "-v")
    added = stream_files()
    assert len(added) == len(first) + 1
    changed = sorted(k for k in added if first.get(k) != added[k])
    assert "stream/index.html" in changed  # its count
    rendered = sorted(line.strip() for line in result.stdout.splitlines() if line.strip().startswith("stream/"))
    assert rendered == changed  # nothing rendered to come out the same
    assert any(name in a["href"] for p in changed if p != "stream/index.html" for a in soup(site / p).select(".grid a"))
    # the pages of the other albums' photos are those of the last build (numbered pages shifted them
    # all), but for the neighbours of a page renamed: they link to it
    assert all(added[page] == first[page] for page in older if page in added)
    assert len([page for page in older if page in added]) >= len(older) - 1
    assert len(changed) <= 8, changed  # the first, A2's (each item says which of its album's 31 it is), neighbours
    clean = tmp_path / "clean"  # the same photos built at once: the same stream, byte for byte
    shutil.copytree(src, clean / "p")
    build_site(clean / "p", clean / "site", "-c", str(conf))
    assert {p.relative_to(clean / "site").as_posix(): p.read_bytes() for p in (clean / "site" / "stream").rglob("index.html")} == added
    (src / "A2" / f"{name}.jpg").unlink()
    result = build_site(src, site, "-c", str(conf), "-v")
    assert stream_files() == first  # back as it was
    rendered = sorted(line.strip() for line in result.stdout.splitlines() if line.strip().startswith("stream/"))
    assert rendered == sorted(k for k in first if added.get(k) != first[k])
    assert crawl(site).broken == []


def test_sitemap_files_hold_every_line_once_and_a_change_moves_few_of_them():
    """render.sitemap.plan_files: the files hold every line of every piece (an album's lines) once, in
    order, at most `limit` a file (an empty file only when there is nothing); a piece longer than the
    limit is cut. Where files end is told by the albums: a line added to or removed from one album
    changes the file that holds it, and the files after it only until an album ends one again."""
    import random

    from albumen.render.sitemap import plan_files

    rng = random.Random(7)
    changed_files = []
    for _ in range(2000):
        limit = rng.choice([1, 2, 5, 20, 100])
        albums = [f"a{n}" for n in sorted(rng.sample(range(10_000), rng.randint(0, 40)))]
        counts = [rng.choice([1, 1, 2, 3, 8, 30, 250]) for _ in albums]
        files = plan_files(counts, albums, limit)
        assert files and (files[0] or not any(counts))
        assert all(file for file in files[1:]) and all(sum(end - start for _, start, end in f) <= limit for f in files)
        covered = [(i, line) for file in files for i, start, end in file for line in range(start, end)]
        assert covered == [(i, line) for i, count in enumerate(counts) for line in range(count)]
        if albums:  # one line more in one album: the files named by their first album and line
            j = rng.randrange(len(albums))
            after = plan_files(counts[:j] + [counts[j] + 1] + counts[j + 1 :], albums, limit)
            changed_files.append(len(_named_files(after, albums) - _named_files(files, albums)))
    changed_files.sort()
    assert changed_files[len(changed_files) // 2] <= 1 and changed_files[int(len(changed_files) * 0.9)] <= 3, changed_files[-20:]


def _named_files(files, albums):
    """Sitemap files as their albums' slices (what they hold, whatever the pieces' numbers)."""
    return {tuple((albums[i], start, end) for i, start, end in file) for file in files}


def _chunk_ends_before(keys, size):
    """The stream's page ends as a window slid over every item found them: the reference."""
    from collections import deque

    n = len(keys)
    half = max(0, size // 2)
    high = 3 * max(1, size)
    window: deque[int] = deque()
    ends, last = [], -1
    for j in range(n + half):
        if j < n:
            while window and keys[window[-1]] >= keys[j]:
                window.pop()
            window.append(j)
        i = j - half
        if i < 0:
            continue
        while window[0] < i - half:
            window.popleft()
        if (window[0] == i and half <= i < n - 1 - half and i - last > half) or i - last >= high:
            ends.append(i)
            last = i
    return ends


def test_stream_page_ends_are_the_sliding_windows_ends():
    """render.stream.chunk_ends looks only at each block's smallest key: the ends a window slid over
    every item gives, on 3,000 random key lists (sizes 0 to 12 and 60, few distinct keys for ties and
    long runs without an end, which are cut at 3 * size)."""
    import random

    from albumen.render.stream import chunk_ends

    rng = random.Random(60)
    for n in range(3000):
        size = rng.choice([0, 1, 2, 3, 4, 5, 7, 12, 60])
        spread = rng.choice([2, 5, 1 << 64])
        keys = [rng.randrange(spread) for _ in range(rng.randint(0, 400))]
        if n % 10 == 0:
            keys.sort(reverse=rng.random() < 0.5)  # (runs without a smallest in the middle: forced cuts)
        assert chunk_ends(keys, size) == _chunk_ends_before(keys, size), (n, size, len(keys))
