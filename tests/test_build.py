"""End-to-end builds of small trees written by the tests: the model, URLs and pages as a visitor sees them."""

from __future__ import annotations

import os
import sys
from datetime import datetime
from pathlib import Path

import pytest

from conftest import (
    build_site,
    crawl,
    make_jpeg,
    make_png,
    refuse_reading,
    run_cli,
    run_cli_bounded,
    soup,
    tree_digest,
    write_config,
)


def photo_times(site: Path, album_dir: str) -> dict[str, str]:
    """Photo slug -> datetime attribute of its page's <time>."""
    out = {}
    for page in sorted((site / album_dir).glob("*/index.html")):
        t = soup(page).select_one(".photo-meta time")
        if t is not None:
            out[page.parent.name] = t["datetime"]
    return out


def grid_slugs(page: Path) -> list[str]:
    return [li["id"].removeprefix("m-") for li in soup(page).select(".grid li.tile")]


def add_xmp(jpeg: Path, **fields: str) -> None:
    """Insert an XMP packet (APP1) right after SOI."""
    props = "".join(
        f"<{k}><rdf:Alt><rdf:li xml:lang='x-default'>{v}</rdf:li></rdf:Alt></{k}>"
        if k in ("dc:title", "dc:description", "Iptc4xmpCore:AltTextAccessibility")
        else f"<{k}>{v}</{k}>"
        for k, v in fields.items()
    )
    packet = (
        "<?xpacket begin='\ufeff' id='W5M0MpCehiHzreSzNTczkc9d'?>"
        "<x:xmpmeta xmlns:x='adobe:ns:meta/'><rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>"
        "<rdf:Description rdf:about='' xmlns:dc='http://purl.org/dc/elements/1.1/' "
        "xmlns:xmp='http://ns.adobe.com/xap/1.0/' xmlns:photoshop='http://ns.adobe.com/photoshop/1.0/' "
        "xmlns:Iptc4xmpCore='http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/'>"
        f"{props}</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end='w'?>"
    ).encode()
    payload = b"http://ns.adobe.com/xap/1.0/\x00" + packet
    data = jpeg.read_bytes()
    jpeg.write_bytes(data[:2] + b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload + data[2:])


def add_iptc(jpeg: Path, **records: str) -> None:
    """Insert an IPTC-IIM block (Photoshop APP13). Keys: title (2:5), caption (2:120), date (2:55)."""
    tags = {"title": 5, "caption": 120, "date": 55, "keywords": 25}
    iim = b"".join(
        b"\x1c\x02" + bytes([tags[k]]) + len(v.encode()).to_bytes(2, "big") + v.encode() for k, v in records.items()
    )
    if len(iim) % 2:
        iim += b"\x00"
    resource = b"8BIM\x04\x04\x00\x00" + len(iim).to_bytes(4, "big") + iim
    payload = b"Photoshop 3.0\x00" + resource
    data = jpeg.read_bytes()
    jpeg.write_bytes(data[:2] + b"\xff\xed" + (len(payload) + 2).to_bytes(2, "big") + payload + data[2:])


@pytest.fixture
def small_tree(tmp_path: Path) -> Path:
    src = tmp_path / "photos"
    make_jpeg(src / "Trip" / "IMG_0001.jpg", date="2024:07:01 10:00:00", make="Canon", model="Canon EOS R6")
    make_jpeg(src / "Trip" / "IMG_0002.jpg", date="2024:07:02 10:00:00")
    make_jpeg(src / "Trip" / "Day two" / "beach.jpg", date="2024:07:03 09:00:00")
    png = make_png(src / "Trip" / "Day two" / "map.png")
    stamp = datetime(2024, 7, 3, 12, 0).timestamp()
    os.utime(png, (stamp, stamp))  # a PNG without EXIF is dated by its mtime
    make_jpeg(src / "Home" / "cat.jpg", date="2023:01:05 18:00:00")
    make_jpeg(src / "root-photo.jpg", date="2022:05:05 05:05:05")
    (src / "Trip" / "notes.txt").write_text("not a photo")
    (src / "Trip" / "index.md").write_text("Title: Summer trip\n\nTwo days by the *sea*.\n")
    (src / "Empty" / "Deeper").mkdir(parents=True)
    (src / "Empty" / "Deeper" / "readme.txt").write_text("nothing to see")
    return src


def test_zero_config_build_is_complete_and_has_no_broken_links(small_tree, tmp_path):
    site = tmp_path / "site"
    result = build_site(small_tree, site)
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("built 4 albums, 6 photos, 0 videos, 0 skipped in ")
    assert "ignored 2 files that are not photos or videos\n" in result.stdout  # counted; -v names them
    walk = crawl(site)
    assert walk.broken == []
    # every source photo is reachable: its page and its images
    photo_pages = {p for p in walk.pages if p.count("/") >= 1 and not p.startswith("static")}
    for rel in ["trip/img-0001/index.html", "trip/img-0002/index.html", "trip/day-two/beach/index.html",
                "trip/day-two/map/index.html", "home/cat/index.html", "root-photo/index.html"]:
        assert rel in photo_pages
    assert any(f.startswith("trip/img-0001/img-0001.thumb.") for f in walk.files)
    # the empty album is left out
    assert not (site / "empty").exists()
    # every folder of the output has an index.html
    redirects = 0
    for folder, _, files in os.walk(site):
        assert "index.html" in files, folder
        refresh = soup(Path(folder) / "index.html").select_one("meta[http-equiv=refresh]")
        if refresh is None:
            continue
        redirects += 1  # a folder without a page of its own sends the visitor to the nearest one above
        href = refresh["content"].split("url=", 1)[1]
        target = (Path(folder) / href).resolve()
        assert target in Path(folder).resolve().parents, (folder, href)
        assert not soup(target / "index.html").select_one("meta[http-equiv=refresh]"), (folder, href)
        between = Path(folder).resolve().parent
        while between != target:  # nothing nearer has a page
            assert soup(between / "index.html").select_one("meta[http-equiv=refresh]"), (folder, between)
            between = between.parent
    assert redirects >= 1


def test_album_page_content(small_tree, tmp_path):
    site = tmp_path / "site"
    build_site(small_tree, site)
    home = soup(site / "index.html")
    cards = [c.get_text(" ", strip=True) for c in home.select(".card")]
    assert any(c.startswith("Summer trip 1–3 July 2024 4 photos") for c in cards), cards
    trip = soup(site / "trip" / "index.html")
    assert trip.h1.get_text() == "Summer trip"
    assert trip.select_one(".description em").get_text() == "sea"
    crumbs = [a.get_text() for a in trip.select(".breadcrumbs a")]
    assert crumbs == ["photos"]
    imgs = trip.select(".grid img")
    assert len(imgs) == 2
    for img in imgs:
        assert int(img["width"]) > 0 and int(img["height"]) > 0
        assert all(c.split(" ")[1].endswith("w") for c in img["srcset"].split(", "))  # (one width: 64 px photos)
    # sub-album card with cover, count and date range
    card = trip.select_one(".card")
    assert "Day two" in card.get_text() and card.select_one("img") is not None
    assert card.select_one("time")["datetime"].startswith("2024-07-03")


def test_photo_page_works_without_javascript(small_tree, tmp_path):
    site = tmp_path / "site"
    build_site(small_tree, site)
    page = soup(site / "trip" / "img-0001" / "index.html")
    img = page.select_one("img.photo-image")
    assert (site / "trip" / "img-0001" / img["src"]).is_file()
    nav = {a["class"][0]: a["href"] for a in page.select(".photo-nav a")}
    assert nav["next"] == "../img-0002/"
    assert nav["up"].startswith("../#m-img-0001")
    assert "prev" not in nav
    assert page.select_one(".photo-meta time")["datetime"].startswith("2024-07-01T10:00:00")
    dl = page.select_one("dl.exif").get_text(" ", strip=True)
    assert "Canon EOS R6" in dl


def test_source_tree_is_never_written(small_tree, tmp_path):
    (small_tree / "Trip" / "IMG_0001.md").write_text("---\ntitle: A\n---\n")
    (small_tree / "Home" / ".nomedia").write_text("cat-not-here.jpg\n")
    os.symlink(small_tree / "Trip", small_tree / "Home" / "link-to-trip")
    before = tree_digest(small_tree)
    mtimes = {p: p.stat().st_mtime_ns for p in small_tree.rglob("*")}
    site = tmp_path / "site"
    build_site(small_tree, site, "-j", "2")
    build_site(small_tree, site)  # a rebuild too
    assert tree_digest(small_tree) == before
    assert {p: p.stat().st_mtime_ns for p in small_tree.rglob("*")} == mtimes


def test_output_inside_source_is_refused_and_nothing_is_written(small_tree):
    before = tree_digest(small_tree)
    result = run_cli("build", str(small_tree), "-o", str(small_tree / "_site"))
    assert result.exit_code == 2
    assert "inside the photo folder" in result.stderr
    assert "-o ../site" in result.stderr
    assert tree_digest(small_tree) == before


def test_source_inside_output_is_refused(small_tree):
    result = run_cli("build", str(small_tree), "-o", str(small_tree.parent))
    assert result.exit_code == 2
    assert "is inside the output folder" in result.stderr


def test_missing_source_and_no_source(tmp_path):
    result = run_cli("build", str(tmp_path / "nope"), "-o", str(tmp_path / "out"))
    assert result.exit_code == 2 and "photo folder not found" in result.stderr
    assert not (tmp_path / "out").exists()
    result = run_cli("build", cwd=tmp_path)
    assert result.exit_code == 2
    assert "albumen build PHOTOS" in result.stderr


def test_invalid_config_stops_before_any_work(small_tree, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "albumen.toml").write_text('[images]\nqualty = 80\nsizes = "big"\n')
    result = run_cli("build", str(small_tree), "-o", str(tmp_path / "out"), cwd=work)
    assert result.exit_code == 2
    assert str(work / "albumen.toml") in result.stderr
    assert "images.qualty: unknown setting; did you mean 'images.quality'?" in result.stderr
    assert "images.sizes: expected a list of integers" in result.stderr
    assert not (tmp_path / "out").exists()


def test_config_source_and_output_resolve_against_config_folder(small_tree, tmp_path):
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "albumen.toml").write_text(f'source = "{os.path.relpath(small_tree, conf)}"\noutput = "../built"\ntitle = "Mine"\n')
    result = run_cli("build", "-j", "1", cwd=conf)
    assert result.exit_code == 0, result.output
    assert soup(tmp_path / "built" / "index.html").title.get_text() == "Mine"


def test_metadata_precedence(tmp_path):
    src = tmp_path / "p"
    a = make_jpeg(src / "a.jpg", description="exif caption", date="2019:01:01 00:00:00")
    add_iptc(a, title="iptc title")
    add_xmp(a, **{"dc:title": "xmp title"})
    (src / "a.md").write_text("Title: sidecar title\nDate: 2020-02-02 12:00\n")
    b = make_jpeg(src / "b.jpg", description="exif caption b", date="2017:01:01 00:00:00")
    add_iptc(b, title="iptc title b", caption="iptc caption b")
    add_xmp(b, **{"dc:title": "xmp title b", "photoshop:DateCreated": "2018-03-03T10:00:00+01:00"})
    c = make_jpeg(src / "c.jpg", date="2016:01:01 00:00:00")
    add_iptc(c, title="iptc title c", date="20150405")
    make_jpeg(src / "d.jpg", description="only exif", date="2014:01:01 08:00:00")
    make_jpeg(src / "IMG_20130607_080910.jpg")
    e = make_jpeg(src / "e.jpg")
    stamp = datetime(2012, 1, 1, 12, 0).timestamp()
    os.utime(e, (stamp, stamp))
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, 'timezone = "UTC"\n')))

    def title(slug):
        return soup(site / slug / "index.html").select_one(".photo-caption h1").get_text()

    assert title("a") == "sidecar title"
    assert title("b") == "xmp title b"
    assert title("c") == "iptc title c"
    assert soup(site / "b" / "index.html").select_one(".description").get_text().strip() == "iptc caption b"
    assert soup(site / "d" / "index.html").select_one(".description").get_text().strip() == "only exif"
    times = photo_times(site, ".")
    assert times["a"] == "2020-02-02T12:00:00+00:00"
    assert times["b"] == "2018-03-03T10:00:00+01:00"
    assert times["c"] == "2015-04-05"  # an IPTC day without a time: a day, not midnight
    assert times["d"] == "2014-01-01T08:00:00+00:00"
    assert times["img-20130607-080910"] == "2013-06-07T08:09:10+00:00"
    assert "e" not in times  # its file's time is not when it was taken (see test_undated_media...)



def test_time_zones(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "plain.jpg", date="2024:01:15 12:00:00")
    make_jpeg(src / "summer.jpg", date="2024:07:15 12:00:00")
    make_jpeg(src / "tokyo.jpg", date="2024:07:15 12:00:00", offset="+09:00")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, 'timezone = "America/New_York"\n')))
    times = photo_times(site, ".")
    assert times["plain"] == "2024-01-15T12:00:00-05:00"
    assert times["summer"] == "2024-07-15T12:00:00-04:00"
    assert times["tokyo"] == "2024-07-15T12:00:00+09:00"


def test_offset_time_stands_in_when_offset_time_original_is_missing(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "only.jpg", date="2024:07:15 12:00:00", offset_time="+09:00")
    make_jpeg(src / "both.jpg", date="2024:07:15 12:00:00", offset="+02:00", offset_time="+09:00")
    make_jpeg(src / "invalid.jpg", date="2024:07:15 12:00:00", offset_time="+99:00")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, 'timezone = "America/New_York"\n')))
    times = photo_times(site, ".")
    assert times["only"] == "2024-07-15T12:00:00+09:00"
    assert times["both"] == "2024-07-15T12:00:00+02:00"  # OffsetTimeOriginal wins
    assert times["invalid"] == "2024-07-15T12:00:00-04:00"  # ignored: the configured zone


def test_a_burst_keeps_its_order_by_sub_seconds_but_pages_show_whole_seconds(tmp_path):
    src = tmp_path / "p"
    # one second, three frames: '9' is 0.9 s and '10' is 0.10 s; names in the opposite order
    make_jpeg(src / "Burst" / "a.jpg", date="2024:07:01 12:00:00", subsec="9")
    make_jpeg(src / "Burst" / "b.jpg", date="2024:07:01 12:00:00", subsec="50")
    make_jpeg(src / "Burst" / "c.jpg", date="2024:07:01 12:00:00", subsec="10 ")
    # XMP wins over EXIF, but a date to the same second keeps the camera's fraction
    add_xmp(make_jpeg(src / "Burst" / "d.jpg", date="2024:07:01 12:00:00", subsec="95"),
            **{"photoshop:DateCreated": "2024-07-01T12:00:00"})
    site = tmp_path / "site"
    config = 'timezone = "UTC"\nurl = "https://example.org/"\n'
    build_site(src, site, "-c", str(write_config(tmp_path, config)))
    assert grid_slugs(site / "burst" / "index.html") == ["c", "b", "a", "d"]
    assert set(photo_times(site, "burst").values()) == {"2024-07-01T12:00:00+00:00"}
    feed = (site / "feed.xml").read_text()
    assert "<updated>2024-07-01T12:00:00+00:00</updated>" in feed and "12:00:00." not in feed
    assert "<pubDate>Mon, 01 Jul 2024 12:00:00 +0000</pubDate>" in (site / "rss.xml").read_text()
    assert "12:00:00." not in (site / "burst" / "index.html").read_text()  # nor in the viewer's data


def test_modification_times_sort_photos_but_do_not_date_albums_that_have_real_dates(tmp_path):
    """With file_dates: by default a file's time dates nothing (see test_undated_media_...)."""
    src = tmp_path / "p"
    make_jpeg(src / "Family" / "Trip" / "jan.jpg", date="2019:01:10 10:00:00")
    make_jpeg(src / "Family" / "Trip" / "mar.jpg", date="2019:03:05 10:00:00")
    make_jpeg(src / "Family" / "Trip" / "scan.jpg")  # no date inside: dated by its mtime, i.e. now
    for name, day in (("old1.jpg", 1), ("old2.jpg", 3)):  # an album of undated scans only
        scan = make_jpeg(src / "Family" / "Scans" / name)
        stamp = datetime(2015, 6, day, 12, 0).timestamp()
        os.utime(scan, (stamp, stamp))
    make_jpeg(src / "Later" / "a.jpg", date="2021:05:05 10:00:00")
    site = tmp_path / "site"
    config = 'timezone = "UTC"\nfile_dates = true\n[sort]\nmedia = "-date"\nalbums = "-date"\n'
    build_site(src, site, "-c", str(write_config(tmp_path, config)))

    def cards(page: Path) -> dict[str, tuple[str, str]]:
        """Card title -> (date shown, cover thumbnail)."""
        return {c.select_one(".card-title").get_text(): (c.select_one(".card-meta time").get_text(),
                                                          c.select_one(".card-image img")["src"])
                for c in soup(page).select(".cards .card")}

    # the photo is still sorted by its mtime (newest first), but neither dates nor covers the album
    assert grid_slugs(site / "family" / "trip" / "index.html") == ["scan", "mar", "jan"]
    trip = soup(site / "family" / "trip" / "index.html").select_one(".album-meta time")
    assert trip.get_text() == "10 January – 5 March 2019" and trip["datetime"].startswith("2019-03-05")
    family = cards(site / "family" / "index.html")
    assert family["Trip"][0] == "10 January – 5 March 2019"
    assert family["Trip"][1].startswith("trip/mar/")  # the first photo with a real date is the cover
    assert family["Scans"][0] == "1–3 June 2015"  # nothing better: the mtimes are used
    home = cards(site / "index.html")
    assert home["Family"][0] == "10 January – 5 March 2019"  # not widened by Scans' guesses either
    assert list(home) == ["Later", "Family"]  # Family's date is March 2019, not today


def test_paired_raw_and_live_photo_files(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "IMG_1.JPG", date="2024:01:01 10:00:00")
    (src / "IMG_1.CR2").write_bytes(b"II*\x00\x10\x00\x00\x00CR\x02\x00" + b"\x00" * 200)
    make_jpeg(src / "IMG_2.jpg", date="2024:01:01 11:00:00")
    (src / "IMG_2.MOV").write_bytes((20).to_bytes(4, "big") + b"ftypqt  \x00\x00\x00\x00qt  " + b"\x00" * 100)
    (src / "IMG_3.NEF").write_bytes(b"MM\x00*" + b"\x00" * 200)
    site = tmp_path / "site"
    result = build_site(src, site)
    assert "built 1 album, 2 photos, 0 videos, 1 skipped" in result.stdout
    assert "skipped: IMG_3.NEF: camera RAW file (NEF) without a JPEG or HEIC beside it" in result.stderr
    assert "IMG_1.CR2" not in result.output and "IMG_2.MOV" not in result.output


def test_same_stem_files_and_their_sidecars(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "a.jpg", color=(255, 0, 0))
    make_png(src / "a.png")
    (src / "a.jpg.md").write_text("Title: the jpeg\n")
    (src / "a.md").write_text("Title: shared stem\n")
    make_jpeg(src / "index.jpg")
    (src / "index.jpg.md").write_text("Title: photo called index\n")
    (src / "index.md").write_text("Title: The album\n")
    site = tmp_path / "site"
    result = build_site(src, site)
    assert "same URL name 'a' as a.jpg; published as 'a-2'" in result.stderr
    titles = {p.parent.name: soup(p).select_one(".photo-caption h1").get_text() for p in site.glob("*/index.html")
              if p.parent.name not in ("static", "stream")}
    assert titles["a"] == "the jpeg"
    assert titles["a-2"] == "shared stem"
    assert titles["index"] == "photo called index"
    assert soup(site / "index.html").h1.get_text() == "The album"


def test_natural_sort_and_sort_settings(tmp_path):
    src = tmp_path / "p"
    for name in ["IMG_10.jpg", "IMG_2.jpg", "IMG_1.jpg"]:
        make_jpeg(src / "A" / name)
    make_jpeg(src / "B" / "x.jpg", date="2024:01:03 00:00:00")
    make_jpeg(src / "B" / "y.jpg", date="2024:01:01 00:00:00")
    make_jpeg(src / "B" / "z.jpg", date="2024:01:02 00:00:00")
    (src / "B" / "index.md").write_text("Sort: -date\n")
    make_jpeg(src / "C" / "k.jpg")
    make_jpeg(src / "C" / "l.jpg")
    (src / "C" / "k.md").write_text("Title: Zebra\n")
    (src / "C" / "l.md").write_text("Title: Aardvark\n")
    (src / "C" / "index.md").write_text("---\nsort: title\n---\n")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[sort]\nmedia = "name"\nalbums = "name"\n')))
    assert grid_slugs(site / "a" / "index.html") == ["img-1", "img-2", "img-10"]
    assert grid_slugs(site / "b" / "index.html") == ["x", "z", "y"]
    assert grid_slugs(site / "c" / "index.html") == ["l", "k"]
    cards = [c.select_one(".card-title").get_text() for c in soup(site / "index.html").select(".card")]
    assert cards == ["A", "B", "C"]


def test_slugs_transliterate_and_collisions_are_reported(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "Été à Zürich" / "Ça va.jpg")
    make_jpeg(src / "Stream" / "s.jpg")
    make_jpeg(src / "static" / "s.jpg")
    make_jpeg(src / "ete a zurich" / "x.jpg")
    site = tmp_path / "site"
    result = build_site(src, site)
    # natural name order decides who keeps the plain name: 'ete a zurich' sorts before 'Été à Zürich'
    assert (site / "ete-a-zurich" / "x" / "index.html").is_file()
    assert (site / "ete-a-zurich-2" / "ca-va" / "index.html").is_file()
    assert (site / "stream-2" / "s" / "index.html").is_file()
    assert (site / "static-2" / "s" / "index.html").is_file()
    assert "Stream: 'stream' is a name the site itself uses; published as 'stream-2'" in result.stderr
    assert "Été à Zürich: same URL name 'ete-a-zurich' as ete a zurich; published as 'ete-a-zurich-2'" in result.stderr
    assert crawl(site).broken == []


def test_original_names_mode_keeps_names_percent_encoded(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "Été 2024" / "IMG 1.jpg")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[pages]\nslugs = "original"\n')))
    assert (site / "Été 2024" / "IMG 1" / "index.html").is_file()
    hrefs = [a["href"] for a in soup(site / "index.html").select(".card a")]
    assert hrefs == ["%C3%89t%C3%A9%202024/"]
    assert crawl(site).broken == []


def test_index_html_links_for_file_browsing(small_tree, tmp_path):
    site = tmp_path / "site"
    build_site(small_tree, site, "-c", str(write_config(tmp_path, '[pages]\nlinks = "index.html"\n')))
    for page in site.rglob("index.html"):
        for a in soup(page).select("a[href]"):
            href = a["href"]
            if href.startswith(("#", "http")) or "." in href.rsplit("/", 1)[-1]:
                continue
            pytest.fail(f"{page}: directory link {href!r} does not end in index.html")
    assert crawl(site).broken == []


def test_nomedia_and_ignore_patterns(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "Keep" / "a.jpg")
    make_jpeg(src / "Keep" / "b.jpg")
    make_jpeg(src / "Keep" / "draft.tmp.jpg")
    make_jpeg(src / "Hidden" / "x.jpg")
    (src / "Hidden" / ".nomedia").write_text("")
    (src / "Keep" / ".nomedia").write_text("b.jpg\n")
    make_jpeg(src / "Scans" / "s.jpg")
    make_jpeg(src / ".thumbnails" / "t.jpg")
    make_jpeg(src / "Keep" / ".hidden.jpg")
    site = tmp_path / "site"
    result = build_site(src, site, "-c", str(write_config(tmp_path, 'ignore = ["*.tmp.jpg", "Scans"]\n')))
    assert "built 2 albums, 1 photo," in result.stdout
    assert sorted(p.parent.name for p in site.glob("*/*/index.html")) == ["a"]


def test_a_nomedia_in_any_encoding_hides_its_names_and_one_not_read_whole_hides_its_folder(tmp_path, monkeypatch):
    """A .nomedia with a byte-order mark hid nothing: Notepad's UTF-8 mark stuck to its first name,
    and PowerShell's UTF-16 (`'b.jpg' > .nomedia`) was decoded as UTF-8. One that cannot be read
    whole (NUL bytes of UTF-16 without a mark, more than 1 MiB, a broken link) hides its folder,
    with a warning, as a FIFO does; a broken link was taken for no .nomedia at all, and an unreadable
    one hid its folder without a word."""
    src = tmp_path / "p"
    names = "b.jpg\r\nc.jpg\r\n"
    listed = {
        "Bom8": ("\ufeff" + names).encode(), "Bom16": ("\ufeff" + names).encode("utf-16-le"),
        "Bom16be": ("\ufeff" + names).encode("utf-16-be"), "Mac": names.replace("\r\n", "\r").encode(),
    }
    for folder, raw in listed.items():
        for name in ("a.jpg", "b.jpg", "c.jpg"):
            make_jpeg(src / folder / name)
        (src / folder / ".nomedia").write_bytes(raw)
    for folder in ("Nul", "Huge", "Broken"):
        make_jpeg(src / folder / "x.jpg")
    (src / "Nul" / ".nomedia").write_bytes(names.encode("utf-16-le"))
    (src / "Huge" / ".nomedia").write_bytes(b"x.jpg\n" + b"y" * (1 << 20))
    (src / "Broken" / ".nomedia").symlink_to(tmp_path / "gone")
    make_jpeg(src / "Locked" / "x.jpg")
    (src / "Locked" / ".nomedia").write_text("nothing.jpg\n")
    from albumen.scan import walk

    refuse_reading(monkeypatch, walk, "Locked")
    site = tmp_path / "site"
    result = build_site(src, site)
    assert sorted(str(p.parent.relative_to(site)) for p in site.glob("*/*/index.html")) == [
        f"{folder.lower()}/a" for folder in sorted(listed)
    ]
    assert "Nul/.nomedia: cannot read it (NUL bytes in it: UTF-16 without a byte-order mark, or not text; " \
           "save it as UTF-8); not read, the folder is hidden" in result.stderr
    assert "Huge/.nomedia: larger than 1 MiB; not read, the folder is hidden" in result.stderr
    assert "Broken/.nomedia: a broken symbolic link; not read, the folder is hidden" in result.stderr
    assert "Locked/.nomedia: cannot read it (Permission denied); not read, the folder is hidden" in result.stderr
    assert "Bom" not in result.stderr and "Mac" not in result.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_fifos_in_the_photo_folder_or_as_the_config_never_hang_the_build(tmp_path):
    """A FIFO named .nomedia made the build (and serve) wait forever for a writer. Files found by
    name are opened only when regular: the .nomedia FIFO hides its folder (fail closed) with a
    warning; FIFO sidecars and captions are not files, so they are not read; a FIFO config is an
    error. In a process of its own with a time limit: a regression fails instead of hanging."""
    src = tmp_path / "p"
    make_jpeg(src / "Open" / "a.jpg")
    make_jpeg(src / "Hidden" / "x.jpg")
    os.mkfifo(src / "Hidden" / ".nomedia")
    for name in ("a.md", "a.vtt"):
        os.mkfifo(src / "Open" / name)
    make_jpeg(src / "Locked" / "l.jpg")
    os.mkfifo(src / "Locked" / "index.md")  # it may say 'private: true': not read, so kept private
    site = tmp_path / "site"
    result = run_cli_bounded("build", str(src), "-o", str(site), "-j", "1", timeout=90)
    assert result.exit_code == 0, result.output
    assert "Hidden/.nomedia: not a regular file (a FIFO or a device?); not read, the folder is hidden" in result.stderr
    assert "Locked/index.md: cannot read it (not a regular file); its album is kept private" in result.stderr
    assert "1 photo," not in result.stdout and ", 2 photos," in result.stdout, result.stdout  # Open and Locked
    assert not (site / "hidden").exists() and (site / "open" / "index.html").is_file()
    assert not (site / "locked").exists() and b"Locked" not in (site / "index.html").read_bytes()
    assert list((site / "p").glob("*/index.html"))
    fifo = tmp_path / "albumen.toml"
    os.mkfifo(fifo)
    result = run_cli_bounded("build", str(src), "-o", str(site), "-c", str(fifo), timeout=90)
    assert result.exit_code == 2 and "cannot read config file: not a regular file" in result.stderr, result.output


def test_symlinks_inside_followed_outside_ignored_and_loops_terminate(tmp_path):
    src = tmp_path / "p"
    outside = tmp_path / "elsewhere"
    make_jpeg(outside / "secret.jpg")
    make_jpeg(src / "A" / "a.jpg")
    os.symlink(src, src / "A" / "loop")  # a loop back to the root
    os.symlink(outside, src / "outside-link")
    os.symlink(src / "A" / "a.jpg", src / "linked.jpg")
    site = tmp_path / "site"
    result = build_site(src, site)
    assert "outside-link: symbolic link points outside the source folder; ignored" in result.stderr
    assert not any("secret" in str(p) for p in site.rglob("*"))
    assert (site / "linked" / "index.html").is_file()
    assert (site / "a" / "a" / "index.html").is_file()


def test_hostile_metadata_and_names_are_escaped(tmp_path):
    src = tmp_path / "p"
    evil = "<script>alert(1)</script>"
    a = make_jpeg(src / "<b>bold" / "x.jpg", description=evil, make="<i>Make</i>", model='"><img src=x onerror=alert(2)>')
    add_xmp(a, **{"dc:title": "&lt;script&gt;alert(3)&lt;/script&gt;"})
    make_jpeg(src / "<b>bold" / "<img src=x onerror=alert(4)>.jpg")
    (src / "<b>bold" / "index.md").write_text(f"Title: {evil}\n\n<script>alert(5)</script> text\n")
    site = tmp_path / "site"
    build_site(src, site)
    for page in site.rglob("*.html"):
        text = page.read_text()
        assert "<script>alert" not in text, page
        assert "<img src=x" not in text, page
        assert "<b>bold" not in text, page
    album = next(site.glob("b-bold/index.html"))
    assert soup(album).h1.get_text() == evil
    photo = soup(site / "b-bold" / "x" / "index.html")
    assert photo.select_one(".photo-caption h1").get_text() == "<script>alert(3)</script>"
    assert photo.select_one(".description").get_text().strip() == evil


def test_pagination_and_up_links(tmp_path):
    src = tmp_path / "p"
    for i in range(1, 8):
        make_jpeg(src / "Big" / f"p{i}.jpg", date=f"2024:01:0{i} 00:00:00")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, "[pages]\npage_size = 3\n")))
    assert grid_slugs(site / "big" / "index.html") == ["p1", "p2", "p3"]
    assert grid_slugs(site / "big" / "page" / "2" / "index.html") == ["p4", "p5", "p6"]
    assert grid_slugs(site / "big" / "page" / "3" / "index.html") == ["p7"]
    up = soup(site / "big" / "p5" / "index.html").select_one(".photo-nav a.up")["href"]
    assert up == "../page/2/#m-p5"
    pag = soup(site / "big" / "page" / "2" / "index.html").select_one(".pagination")
    assert pag.select_one("a[rel=prev]")["href"] == "../../"
    assert pag.select_one("a[rel=next]")["href"] == "../3/"
    assert crawl(site).broken == []


def test_strict_turns_skips_into_failure(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "ok.jpg")
    (src / "broken.jpg").write_text("this is text")
    site = tmp_path / "site"
    result = build_site(src, site)
    assert "skipped: broken.jpg: not a valid JPG file" in result.stderr
    assert "1 skipped" in result.stdout
    result = build_site(src, tmp_path / "site2", "--strict", expect=1)
    assert "--strict" in result.stderr


def test_camera_details_are_configurable_and_gps_hidden_by_default(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "g.jpg", make="NIKON CORPORATION", model="NIKON D70", gps=(48.8584, 2.2945))
    site = tmp_path / "site"
    build_site(src, site)
    page = soup(site / "g" / "index.html")
    text = page.select_one("dl.exif").get_text(" ", strip=True)
    assert "NIKON D70" in text and "CORPORATION" not in text
    assert "48.858" not in page.decode()
    site2 = tmp_path / "site2"
    build_site(src, site2, "-c", str(write_config(tmp_path, '[pages]\nexif = ["gps"]\n')))
    page = soup(site2 / "g" / "index.html")
    assert "NIKON" not in page.select_one("dl.exif").get_text()
    assert "48.85840, 2.29450" in page.select_one("dl.exif").get_text()


def test_parallel_build_isolates_a_bad_file(tmp_path):
    src = tmp_path / "p"
    for i in range(4):
        make_jpeg(src / f"ok{i}.jpg", size=(300, 200))
    good = (src / "ok0.jpg").read_bytes()
    (src / "truncated.jpg").write_bytes(good[: len(good) // 2])
    site = tmp_path / "site"
    result = run_cli("build", str(src), "-o", str(site), "-j", "2")
    assert result.exit_code == 0, result.output
    assert "skipped: truncated.jpg: cannot decode image" in result.stderr
    assert "4 photos" in result.stdout and "1 skipped" in result.stdout
    assert not (site / "truncated").exists() or not list((site / "truncated").glob("*.jpg"))
    assert crawl(site).broken == []


CRASHING_CLI = """
import os, signal, sys

import albumen.process.worker as worker

real = worker._make_outputs


def crashing(job, written):
    if "boom" in os.path.basename(job.abs_src_path):
        os.kill(os.getpid(), signal.SIGSEGV)  # what a decoder bug meeting a hostile file does
    return real(job, written)


worker._make_outputs = crashing  # inherited by the workers this process forks

import albumen.scan.read as scan_read

real_read = scan_read.read_media_file  # looked up there by read_media_batch, in the workers


def crashing_read(abs_path, name, max_pixels, *kinds):
    if name.startswith("parse"):
        os.kill(os.getpid(), signal.SIGSEGV)  # a native header parser (libheif, libwebp, ...) crashing
    if name.startswith("oom"):
        os.kill(os.getpid(), signal.SIGKILL)  # what the kernel does to a process when memory runs out
    return real_read(abs_path, name, max_pixels, *kinds)


scan_read.read_media_file = crashing_read

import albumen.pool as pool

real_method = pool._start_method


def fork_only():
    assert real_method() == "fork", "the planted crashes reach workers by fork only"
    return "fork"


pool._start_method = fork_only

if __name__ == "__main__":
    from albumen.cli import main

    sys.argv = ["albumen", *sys.argv[1:]]
    try:
        main()
    finally:  # what the build process itself loaded: never a decoder or a native parser
        print("loaded:", sorted(m for m in ("PIL", "pyvips", "av", "pillow_heif") if m in sys.modules), file=sys.stderr)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the crash is planted in forked workers")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_decoder_crash_fails_only_its_file_with_one_worker_and_in_a_one_photo_rebuild(tmp_path, jobs):
    """Files are always read and images always made in worker processes: a crash (a segfault in a
    parser or a decoder) costs that file, not the build, even with -j 1 and when the crashing photo
    is the only one to make."""
    import subprocess

    script = tmp_path / "crashing_albumen.py"
    script.write_text(CRASHING_CLI)
    src, site = tmp_path / "p", tmp_path / "site"
    for name in ("a", "boom", "c", "parsebomb", "oom"):
        make_jpeg(src / f"{name}.jpg", size=(300, 200))

    def build(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(script), "build", str(src), "-o", str(site), "-j", jobs, *extra],
            capture_output=True, text=True, timeout=300,
        )

    done = build()
    assert done.returncode == 0, done.stderr
    assert "loaded: []" in done.stderr
    assert "skipped: boom.jpg: the worker crashed" in done.stderr
    assert "skipped: parsebomb.jpg: cannot read file: the worker crashed" in done.stderr
    assert "skipped: oom.jpg: cannot read file: the worker crashed" in done.stderr
    assert "2 photos" in done.stdout and "3 skipped" in done.stdout
    assert {p.parent.name for p in site.rglob("*.jpg")} >= {"a", "c"}
    assert not (site / "boom").exists()
    assert crawl(site).broken == []
    # a rebuild with one photo to make, the crashing one (the photo was replaced by another that crashes)
    (src / "boom.jpg").unlink()
    make_jpeg(src / "boom2.jpg", size=(320, 200))
    done = build("--strict", "-v")
    assert "processed 1 photo\n" in done.stdout, done.stdout
    # read again: boom2.jpg (new) and oom.jpg (killed from outside: it may work next time), not
    # parsebomb.jpg (its crash is remembered until the file changes)
    assert "read 2 new or changed files" in done.stdout, done.stdout
    assert "skipped: parsebomb.jpg" in done.stderr and "skipped: oom.jpg" in done.stderr
    assert done.returncode == 1 and "skipped: boom2.jpg: the worker crashed" in done.stderr, done.stderr
    assert "--strict: failing" in done.stderr and "loaded: []" in done.stderr
    assert crawl(site).broken == []
    # and again with nothing changed: oom.jpg is not settled, so the build is not taken as unchanged
    done = build("-v")
    assert "read 1 new or changed file\n" in done.stdout and "skipped: oom.jpg" in done.stderr, done.stdout


def test_control_characters_never_reach_pages_or_feeds(tmp_path):
    import xml.dom.minidom

    src = tmp_path / "p"
    make_jpeg(src / "A" / "a.jpg", description="desc \x01\x08\x0b\x1b end")
    (src / "A" / "a.md").write_text('---\ntitle: "bad \\ud800 \\x07 title"\n---\n')
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, 'url = "https://x.org/"\n[feeds]\nper_album = true\n')))
    for name in ("feed.xml", "rss.xml", "a/feed.xml", "sitemap.xml"):
        xml.dom.minidom.parse(str(site / name))  # well-formed
    assert soup(site / "a" / "a" / "index.html").select_one(".photo-caption h1").get_text() == "bad   title"


def test_names_that_are_not_utf8_are_reported_not_fatal(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "ok.jpg")
    bad = os.fsencode(str(src)) + b"/Caf\xe9"
    os.makedirs(bad)
    make_jpeg(Path(os.fsdecode(bad + b"/x.jpg")))
    result = build_site(src, tmp_path / "site")
    assert "name is not valid UTF-8; ignored" in result.stderr
    assert "1 photo" in result.stdout


def test_original_names_with_url_characters(tmp_path):
    src = tmp_path / "p"
    for name in ("#tag", "data:text", "Where are we?", "feed.xml"):
        make_jpeg(src / name / "x.jpg")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[pages]\nslugs = "original"\n[feeds]\nper_album = true\n')))
    hrefs = sorted(a["href"] for a in soup(site / "index.html").select(".card a"))
    assert hrefs == ["Where%20are%20we_/", "_tag/", "data_text/", "feed.xml-2/"]  # feed.xml is the site's own
    assert crawl(site).broken == []


def test_a_compact_plan_gives_back_the_specs_it_was_made_from(tmp_path):
    """The plan keeps every photo's outputs as shared looks + name hashes; what it hands out must be
    exactly the specs planned (names, sizes, formats, qualities, crops, roles, order)."""
    from albumen.config.load import load_config
    from albumen.process.plan import MediaPlan, plan_site
    from albumen.process.specs import OutputSpec
    from albumen.scan import scan_source

    src = tmp_path / "photos"
    make_jpeg(src / "a" / "wide.one.jpg", size=(3000, 2000))
    make_jpeg(src / "a" / "twin.jpg", size=(3000, 2000), color=(10, 200, 10))
    make_jpeg(src / "a" / "tall.jpg", size=(1800, 1200), orientation=6)  # shown 1200 x 1800
    make_png(src / "b" / "pic.png", size=(900, 600))
    conf = write_config(tmp_path, '[images]\nformats = ["jpeg", "webp", "avif"]\noriginals = "copy"\n')
    config = load_config(conf).config
    gallery = scan_source(str(src), config)
    plan = plan_site(gallery, config, str(tmp_path / "out"), str(src))
    wide = plan.media["a/wide.one.jpg"]
    assert isinstance(wide, MediaPlan) and wide.thumb.role == "thumb"
    assert [(s.format, s.width) for s in wide.thumbs] == [(f, wide.thumb.width) for f in ("jpeg", "webp", "avif")]
    assert [(s.format, s.width) for s in wide.images] == [
        (f, w) for f in ("jpeg", "webp", "avif") for w in (640, 1024, 1600, 2048)]
    assert wide.original.format == "copy" and wide.original.name.endswith(".jpg")
    assert all(isinstance(s, OutputSpec) and s.folder == wide.dest_dir for s in wide.outputs)
    assert all(s.name.startswith("wide-one." if "-" in wide.dest_dir else "wide.one.") for s in wide.outputs)
    for mp in plan.media.values():
        specs = (*mp.thumbs, *mp.cards, *mp.images, mp.original)
        named = [(look, s.name.rsplit(".", 2)[1]) for look, s in zip(mp.looks, specs, strict=True)]
        again = MediaPlan.of(mp.src_uri, mp.dest_dir, named)
        assert again.outputs == mp.outputs and again.looks is mp.looks and again.digests == mp.digests
        assert len({s.dest_uri for s in mp.outputs}) == len(mp.outputs)  # every output its own file
        assert list(mp.output_uris()) == [s.dest_uri for s in mp.outputs] and mp.thumb_uri == mp.thumb.dest_uri
        assert [(uri, look.width, look.format) for uri, look in mp.named()] == [
            (s.dest_uri, s.width, s.format) for s in (*mp.thumbs, *mp.cards, *mp.images, mp.original)]
    # photos of one size share one tuple of looks; their hashes differ
    twin = plan.media["a/twin.jpg"]
    assert twin.looks is wide.looks and twin.digests != wide.digests
    assert [s.width for s in twin.outputs] == [s.width for s in wide.outputs]
    tall = plan.media["a/tall.jpg"]
    assert tall.looks is not wide.looks
    assert tall.thumb.height == wide.thumb.height and tall.thumb.width < tall.thumb.height
    assert plan.media["b/pic.png"].largest.width == 900


def test_derivative_names_are_pinned():
    """A derivative's name is its cache key and its URL: a refactoring must not change it (a change to
    the pipeline bumps PROCESSING_VERSION instead, or STILLS_VERSION when only still images change).
    Still images' names say how they are made (decode scale, intermediates) since STILLS_VERSION 1;
    a video's says which encoder made it since VIDEOS_VERSION 2."""
    from albumen.config import Config
    from albumen.model import EmbeddedMetadata, Media, MediaInfo
    from albumen.process.plan import _plan_image, _plan_video

    photo = Media(src_uri="Trip/IMG_1.jpg", album_uri="Trip", name="IMG_1.jpg", size=1, mtime_ns=1,
                  content_hash="0123456789abcdef0123456789abcdef",
                  info=MediaInfo("image", "jpeg", 4000, 3000, orientation=6), embedded=EmbeddedMetadata())
    assert [s.dest_uri for s in _plan_image(photo, "trip/img-1", Config()).outputs] == [
        "trip/img-1/img-1.thumb.1d6fd34313.jpg", "trip/img-1/img-1.640w.319c674d71.jpg",
        "trip/img-1/img-1.1024w.faba11fb07.jpg", "trip/img-1/img-1.1600w.90dd3b31c7.jpg",
        "trip/img-1/img-1.2048w.4602a7ed88.jpg",
    ]
    clip = Media(src_uri="Trip/clip.mp4", album_uri="Trip", name="clip.mp4", size=1, mtime_ns=1,
                 content_hash="fedcba9876543210fedcba9876543210",
                 info=MediaInfo("video", "mp4", 1920, 1080, duration=3.0, video_codec="h264", audio_codec="aac",
                                bitrate=50_000_000), embedded=EmbeddedMetadata())
    assert [s.dest_uri for s in _plan_video(clip, "trip/clip", Config(), "pyav 18.1.0").outputs] == [
        "trip/clip/clip.thumb.aab80e9f17.jpg", "trip/clip/clip.poster.f758ebd94c.jpg",
        "trip/clip/clip.720p.9e33f0e9df.mp4",
    ]


def test_a_build_leaves_the_garbage_collector_as_it_found_it(tmp_path):
    """The scan and the plan pause Python's cyclic collector and freeze what they make (build's
    _collector_paused): a process that builds again and again (serve, watch) gets it back running with
    nothing frozen, so that one build's gallery can be collected; a collector its caller turned off stays off."""
    import gc

    src, out = tmp_path / "photos", tmp_path / "out"
    for i in range(3):
        make_jpeg(src / "Trip" / f"IMG_{i}.jpg", date=datetime(2021, 5, 6, 7, 8, i))
    assert gc.isenabled() and gc.get_freeze_count() == 0
    build_site(src, out)
    assert (out / "trip" / "img-1" / "index.html").is_file()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        build_site(src, out, "--force")
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert gc.get_freeze_count() == 0


def test_shared_recipe_texts_never_name_a_photo_with_another_photos_recipe(tmp_path):
    """Photos alike share their outputs' looks and recipe texts, planned once (plan._plan_image): a photo
    must never get another's because the key they are shared by missed something its recipe reads. Every
    photo below has the same content, so only its recipe tells its outputs' names apart. Each is planned
    right after a neighbour that differs from it in one thing only: it gets exactly the names it gets
    planned alone, and names of its own where its recipe differs (the neighbour's where it does not)."""
    from dataclasses import replace

    from albumen.config import load_config
    from albumen.model import GPS, EmbeddedMetadata, Media, MediaInfo
    from albumen.process.plan import _plan_image
    from albumen.process.specs import FilterCall

    conf = write_config(tmp_path, '[images]\nformats = ["jpeg", "webp"]\noriginals = "copy"\n')
    base = Media(src_uri="Trip/IMG_1.jpg", album_uri="Trip", name="IMG_1.jpg", size=1, mtime_ns=1,
                 content_hash="0123456789abcdef0123456789abcdef",
                 info=MediaInfo("image", "jpeg", 4000, 3000), embedded=EmbeddedMetadata())
    png = replace(base, info=replace(base.info, format="png"))
    gif = replace(base, info=replace(base.info, format="gif"))
    sepia = (FilterCall("sepia", "x:sepia", ("display",), recipe="sepia@1"),)
    plain = (base, (), False)
    cases = {  # label -> (neighbour, (media, filters, cover), same names as the neighbour's)
        "orientation": (plain, (replace(base, info=replace(base.info, orientation=6)), (), False), False),
        "size": (plain, (replace(base, info=replace(base.info, width=3000, height=2000)), (), False), False),
        "format": (plain, (png, (), False), False),
        "colour": (plain, (replace(base, info=replace(base.info, colour="p3")), (), False), False),
        "frames": ((gif, (), False), (replace(gif, info=replace(gif.info, frames=3)), (), False), False),
        "artist": (plain, (replace(base, embedded=EmbeddedMetadata(artist="Ann")), (), False), False),
        "copyright": (plain, (replace(base, embedded=EmbeddedMetadata(copyright="(c) Ann")), (), False), False),
        "place": ((png, (), False), (replace(png, embedded=EmbeddedMetadata(gps=GPS(48.85, 2.35))), (), False), False),
        "filters": (plain, (base, sepia, False), False),
        "cover": (plain, (base, (), True), False),
        # what no recipe reads: another name, file, size, time, title or keywords
        "twin": (plain, (replace(base, src_uri="Trip/IMG_2.jpg", name="IMG_2.jpg", size=9, mtime_ns=9,
                                 embedded=EmbeddedMetadata(title="Another", keywords=("k",))), (), False), True),
    }

    def names(media, filters, cover, config):
        media_plan = _plan_image(media, "trip/img-1", config, filters, cover)
        return [uri.rpartition("/")[2].split(".", 1)[1] for uri in media_plan.output_uris()]

    shared = load_config(conf).config
    for label, (neighbour, photo, alike) in cases.items():
        for first, then in ((neighbour, photo), (photo, neighbour)):  # either one planned first
            names(*first, shared)
            together = names(*then, shared)
            alone = names(*then, load_config(conf).config)  # (a new config: nothing shared with the plans above)
            assert together == alone, label
            assert (together == names(*first, load_config(conf).config)) is alike, label


@pytest.mark.parametrize("bad", ["2024-02-30", "2024-13-01", "2024-01-01 25:00:00", "0000-01-01", "not a date"])
def test_a_bad_sidecar_date_is_a_warning_naming_the_file_not_a_crash(tmp_path, bad):
    src, out = tmp_path / "src", tmp_path / "out"
    make_jpeg(src / "Trip" / "a.jpg", date=datetime(2021, 5, 6, 7, 8, 9))
    make_jpeg(src / "Trip" / "b.jpg", date=datetime(2021, 5, 7, 7, 8, 9))
    (src / "Trip" / "index.md").write_text(f"---\ntitle: The trip\ndate: {bad}\n---\nAbout it.\n")
    (src / "Trip" / "a.md").write_text(f"---\ntitle: First\ndate: {bad}\n---\n")
    (src / "Trip" / "b.md").write_text("---\ndate: 2022-03-04 05:06:07\n---\n")  # a good one still wins
    result = build_site(src, out)
    assert "Traceback" not in result.output
    assert f"Trip/index.md: date '{bad}' is not a date" in result.output
    assert f"Trip/a.md: date '{bad}' is not a date" in result.output
    times = photo_times(out, "trip")
    assert times["a"].startswith("2021-05-06T07:08:09")  # its own (EXIF) date, not a crash
    assert times["b"].startswith("2022-03-04T05:06:07")
    page = soup(out / "trip" / "index.html")
    assert page.select_one("h1").get_text(strip=True) == "The trip"
    assert soup(out / "trip" / "a" / "index.html").select_one("h1").get_text(strip=True) == "First"


def test_a_sidecar_that_is_not_utf8_is_read_as_windows_1252_with_a_warning(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    make_jpeg(src / "Paris" / "a.jpg")
    (src / "Paris" / "a.md").write_bytes("Title: Café de Flore\n\nUn café.\n".encode("cp1252"))
    result = build_site(src, out)
    assert "Paris/a.md: not UTF-8 text; read as Windows-1252" in result.output
    page = soup(out / "paris" / "a" / "index.html")
    assert page.select_one("h1").get_text(strip=True) == "Café de Flore"
    assert "\ufffd" not in (out / "paris" / "a" / "index.html").read_text()


def test_photos_at_the_top_of_the_folder_link_back_to_the_home_page_at_their_place(tmp_path):
    """A flat folder of photos (the commonest gallery): each photo page's "Back to the album" and
    rel=up lead to the home page's grid, at that photo, not to an anchor of the photo page itself."""
    src, out = tmp_path / "src", tmp_path / "out"
    make_jpeg(src / "one.jpg")
    make_jpeg(src / "two.jpg")
    make_jpeg(src / "Sub" / "three.jpg")
    build_site(src, out)
    page = soup(out / "one" / "index.html")
    assert page.select_one("a.up")["href"] == "../#m-one"
    assert page.select_one('link[rel="up"]')["href"] == "../#m-one"
    assert soup(out / "index.html").select_one("#m-one") is not None
    assert soup(out / "sub" / "three" / "index.html").select_one("a.up")["href"] == "../#m-three"
    walk = crawl(out)
    assert walk.broken == []
    assert {"one/index.html", "two/index.html", "sub/three/index.html"} <= walk.pages


@pytest.mark.parametrize("url, root", [(None, "/"), ("https://example.org/gallery/", "/gallery/"),
                                       ("https://photos.example.org", "/")])
def test_the_404_page_links_from_the_site_root_as_servers_show_it_at_any_missing_address(tmp_path, url, root):
    """nginx's error_page, GitHub Pages and Netlify serve 404.html at the address that was missing
    (/trip/gone/): its stylesheet, script and links must not be relative to where it lies."""
    src, out = tmp_path / "src", tmp_path / "out"
    make_jpeg(src / "Trip" / "a.jpg")
    extra = ("-c", str(write_config(tmp_path, f'url = "{url}"\n'))) if url else ()
    build_site(src, out, *extra)
    page = soup(out / "404.html")
    refs = [t.get("href") or t.get("src") for t in page.select("link[href], script[src], a[href]")]
    local = [r for r in refs if not r.startswith(("#", "http"))]
    assert local and all(r.startswith(root) for r in local), refs
    assert page.select_one('link[rel="stylesheet"]')["href"].startswith(root + "static/albumen.css")
    assert page.select_one("header a")["href"] == root
    for ref in local:  # each leads to a file of the site, wherever the page is shown
        path = ref.split("?")[0].split("#")[0].removeprefix(root)
        assert (out / path).is_file() or (out / path / "index.html").is_file(), ref
    # the other pages keep their relative links
    assert soup(out / "trip" / "index.html").select_one('link[rel="stylesheet"]')["href"].startswith("../static/")


def test_a_folder_without_photos_builds_an_empty_site_and_says_so(tmp_path):
    src, out = tmp_path / "Pictures", tmp_path / "out"
    (src / "notes").mkdir(parents=True)
    (src / "notes" / "todo.txt").write_text("buy film")
    result = build_site(src, out)
    assert f"warning: no photos or videos in {src}: the site has no pictures" in result.output
    assert (out / "index.html").is_file()
    build_site(src, out, "--strict", expect=1)
    make_jpeg(src / "a.jpg")
    assert "no photos or videos" not in build_site(src, out).output


def test_no_srcset_lists_two_files_of_one_width(tmp_path):
    """A small photo's thumbnail can be as wide as one of its display sizes: the grid's and the
    album cards' srcset then name that width once (two candidates of one width are invalid HTML)."""
    src, out = tmp_path / "src", tmp_path / "out"
    make_jpeg(src / "Small" / "tiny.jpg", size=(120, 80))
    make_jpeg(src / "Small" / "big.jpg", size=(1200, 800))
    make_jpeg(src / "top.jpg", size=(300, 200))
    build_site(src, out)
    checked = 0
    for page in out.rglob("*.html"):
        for tag in soup(page).select("[srcset]"):
            widths = [part.strip().split(" ")[1] for part in tag["srcset"].split(", ")]
            assert len(widths) == len(set(widths)), (page, tag["srcset"])
            assert all(w.endswith("w") and w[:-1].isdigit() for w in widths), tag["srcset"]
            checked += 1
    assert checked > 5


def test_verbose_names_the_ignored_files(small_tree, tmp_path):
    """-v says which files were ignored (five, then how many more); -vv all; a rebuild with nothing to
    do says the same."""
    for i in range(7):
        (small_tree / "Home" / f"scan-{i}.pdf").write_bytes(b"%PDF-1.4 not a photo")
    site = tmp_path / "site"
    first = build_site(small_tree, site, "-v")
    line = next(ln for ln in first.stdout.splitlines() if ln.startswith("ignored "))
    assert line == ("ignored 9 files that are not photos or videos: Empty/Deeper/readme.txt, Home/scan-0.pdf, "
                    "Home/scan-1.pdf, Home/scan-2.pdf, Home/scan-3.pdf and 4 more (-vv lists all)")
    again = build_site(small_tree, site, "-vv")
    assert "nothing changed since the last build" in again.stdout
    line = next(ln for ln in again.stdout.splitlines() if ln.startswith("ignored "))
    assert line.endswith(": Empty/Deeper/readme.txt, Home/scan-0.pdf, Home/scan-1.pdf, Home/scan-2.pdf, "
                         "Home/scan-3.pdf, Home/scan-4.pdf, Home/scan-5.pdf, Home/scan-6.pdf, Trip/notes.txt")
    (small_tree / "Home" / "scan-6.pdf").unlink()
    one = build_site(small_tree, site, "-v")
    assert "ignored 8 files that are not photos or videos: " in one.stdout and "scan-6" not in one.stdout
    quiet = build_site(small_tree, site)
    assert "ignored 8 files that are not photos or videos\n" in quiet.stdout and "scan-0" not in quiet.stdout


def test_a_sidecar_meant_for_a_photo_but_not_used_is_named(tmp_path):
    """photo.md loses to photo.jpg.md, and Photo.md does not match photo.jpg: both are warnings (they
    were only counted as ignored files); a README.md beside the photos stays quietly ignored."""
    src, out = tmp_path / "src", tmp_path / "out"
    make_jpeg(src / "a.jpg")
    make_jpeg(src / "b.jpg")
    (src / "a.md").write_text("Title: loses\n")
    (src / "a.jpg.md").write_text("Title: wins\n")
    (src / "B.md").write_text("Title: wrong case\n")
    (src / "README.md").write_text("# notes\n")
    result = build_site(src, out)
    assert "warning: a.md: not used (a.jpg.md is the sidecar of a.jpg); ignored" in result.output
    assert "warning: B.md: not used (sidecar names must match the file's name exactly, capitals too" in result.output
    assert "README.md" not in result.output
    assert soup(out / "a" / "index.html").select_one("h1").get_text(strip=True) == "wins"


def test_building_into_a_folder_of_other_files_names_what_it_replaced(tmp_path):
    """A page written over a file Albumen had not made is named once (it was replaced silently);
    files at other paths are left alone, and a later build, or one over its own pages, says nothing."""
    src, out = tmp_path / "src", tmp_path / "out"
    make_jpeg(src / "a.jpg")
    out.mkdir()
    (out / "index.html").write_text("<p>my old home page</p>")
    (out / "CNAME").write_text("photos.example.org\n")
    conf = write_config(tmp_path, 'url = "https://photos.example.org/"\n')  # sitemap.xml and robots.txt too
    result = build_site(src, out, "-c", str(conf))
    assert f"warning: replaced 1 file in {out} that Albumen had not made: index.html" in result.output
    assert (out / "CNAME").read_text() == "photos.example.org\n"
    assert "replaced" not in build_site(src, out, "-c", str(conf)).output
    elsewhere = tmp_path / "cache2"  # a lost cache: the pages, feeds and sitemap there are Albumen's own
    assert (out / "sitemap.xml").is_file() and (out / "robots.txt").is_file()
    result = run_cli("build", str(src), "-o", str(out), "-c", str(conf), "-j", "1", env={"ALBUMEN_CACHE_DIR": str(elsewhere)})
    assert result.exit_code == 0 and "replaced" not in result.output, result.output


def test_index_md_keys_that_cannot_be_used_are_warnings(tmp_path):
    """A thumbnail that names no photo of the album and a sort order that is not one were silently
    ignored; they are warnings naming the file, and the defaults are used."""
    src, out = tmp_path / "src", tmp_path / "out"
    make_jpeg(src / "Trip" / "a.jpg", date=datetime(2020, 1, 1))
    make_jpeg(src / "Trip" / "b.jpg", date=datetime(2020, 1, 2))
    (src / "Trip" / "index.md").write_text("Title: Trip\nThumbnail: missing.jpg\nSort: -bo gus\nAlbum_sort: ???\n\n")
    result = build_site(src, out)
    assert "Trip/index.md: thumbnail 'missing.jpg' is not a photo or video of this album" in result.output
    assert "Trip/index.md: 'sort: -bo gus' is not an order" in result.output
    assert "Trip/index.md: 'album_sort: ???' is not an order" in result.output
    assert result.output.count("thumbnail 'missing.jpg'") == 1
    assert grid_slugs(out / "trip" / "index.html") == ["a", "b"]  # the default order (date)
    (src / "Trip" / "index.md").write_text("Title: Trip\nThumbnail: b.jpg\nSort: -date\n\n")
    result = build_site(src, out)
    assert "index.md" not in result.output
    assert grid_slugs(out / "trip" / "index.html") == ["b", "a"]
