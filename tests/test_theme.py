"""Theme overrides, translations, share previews, responsive markup and alt text."""

from __future__ import annotations

import pytest

from conftest import build_site, make_jpeg, soup, write_config


def test_theme_overrides_file_by_file(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "A" / "a.jpg")
    theme = tmp_path / "cfg" / "mytheme"
    (theme / "templates" / "partials").mkdir(parents=True)
    (theme / "static").mkdir(parents=True)
    (theme / "templates" / "404.html").write_text("{% extends 'base.html' %}{% block main %}<p id=custom>gone</p>{% endblock %}")
    (theme / "static" / "albumen.css").write_text("body { background: hotpink; }")
    (theme / "static" / "extra.js").write_text("console.log('extra')")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, 'theme = "mytheme"\n')))
    assert soup(site / "404.html").select_one("#custom").get_text() == "gone"
    assert (site / "static" / "albumen.css").read_text() == "body { background: hotpink; }"
    assert (site / "static" / "extra.js").is_file()
    assert (site / "static" / "albumen.js").is_file()  # the rest still comes from the default theme
    assert soup(site / "a" / "index.html").select_one(".grid") is not None


def test_an_edited_template_is_used_by_the_next_build(tmp_path, isolated_cache):
    """Templates stay compiled in the build cache between builds; an edit still shows at once."""
    src = tmp_path / "p"
    make_jpeg(src / "A" / "a.jpg")
    theme = tmp_path / "cfg" / "mytheme"
    (theme / "templates").mkdir(parents=True)
    page = theme / "templates" / "404.html"
    page.write_text("{% extends 'base.html' %}{% block main %}<p id=custom>first</p>{% endblock %}")
    site = tmp_path / "site"
    conf = str(write_config(tmp_path, 'theme = "mytheme"\n'))
    build_site(src, site, "-c", conf)
    assert soup(site / "404.html").select_one("#custom").get_text() == "first"
    assert list(isolated_cache.rglob("__jinja2_*"))  # compiled templates are kept, in the cache
    assert not [p for p in site.rglob("*") if "jinja" in p.name]  # never in the published output
    page.write_text("{% extends 'base.html' %}{% block main %}<p id=custom>second</p>{% endblock %}")
    build_site(src, site, "-c", conf)
    assert soup(site / "404.html").select_one("#custom").get_text() == "second"


def test_french_translation(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "A" / "a.jpg", date="2024:07:01 10:00:00")
    make_jpeg(src / "A" / "b.jpg", date="2024:07:02 10:00:00")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, 'language = "fr"\ntimezone = "UTC"\n')))
    album = soup(site / "a" / "index.html")
    assert album.html["lang"] == "fr"
    assert "2 photos" in album.select_one(".album-meta").get_text()
    assert album.select_one(".album-meta time").get_text() == "1–2 juillet 2024"
    photo = soup(site / "a" / "a" / "index.html")
    assert photo.select_one(".photo-nav .up").get_text() == "Retour à l’album"
    assert "Photo 1 sur 2" in photo.select_one(".photo-meta").get_text()
    assert photo.select_one("img.photo-image")["alt"] == "Photo 1 sur 2, A, 1er juillet 2024"
    assert soup(site / "a" / "index.html").select_one("template#albumen-viewer") is not None
    viewer = (site / "a" / "index.html").read_text()
    assert 'aria-label="Fermer"' in viewer and 'aria-label="Plein écran"' in viewer


def test_share_previews_need_the_site_url(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "A" / "a.jpg", size=(1200, 800))
    (src / "A" / "a.md").write_text("Title: Harbour at dusk\n\nBoats & lights.\n")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, 'url = "https://photos.example.org/"\n')))
    page = soup(site / "a" / "a" / "index.html")

    def meta(prop):
        tag = page.find("meta", attrs={"property": prop}) or page.find("meta", attrs={"name": prop})
        return tag["content"] if tag else None

    assert meta("og:title") == "Harbour at dusk – A"
    assert meta("og:description") == "Boats & lights."
    assert meta("og:url") == "https://photos.example.org/a/a/"
    assert meta("og:image").startswith("https://photos.example.org/a/a/a.1200w.")  # the first size >= 1200 px
    assert meta("twitter:card") == "summary_large_image"
    assert page.find("link", rel="canonical")["href"] == "https://photos.example.org/a/a/"
    no_url = tmp_path / "site2"
    build_site(src, no_url)
    page = soup(no_url / "a" / "a" / "index.html")
    assert page.find("meta", attrs={"property": "og:image"}) is None


def test_grid_tiles_carry_sizes_and_placeholders(tmp_path):
    src = tmp_path / "p"
    for i in range(12):
        make_jpeg(src / f"p{i:02d}.jpg", size=(900, 600))
    site = tmp_path / "site"
    build_site(src, site)
    tiles = soup(site / "index.html").select(".grid li")
    assert len(tiles) == 12
    for n, tile in enumerate(tiles):
        img = tile.img
        assert (img["width"], img["height"]) == ("480", "320")
        assert "--w:480;--h:320" in tile["style"] and "background-color:#" in tile["style"]
        assert img.get("loading") == ("lazy" if n >= 8 else None)
        assert img.get("fetchpriority") == ("high" if n == 0 else None if n < 3 else "low")
        assert img["alt"].startswith(f"Photo {n + 1} of 12, p")
        assert "900w" in img["srcset"] and img["sizes"].endswith("px")


EAGER = 8  # images a page loads at once (partials/eager.html)
FIRST = 3  # of which with the browser's priority or higher: a phone's first row


def test_the_first_images_of_every_page_load_at_once_and_the_first_first(tmp_path):
    """Above the fold, a lazy image waits for layout and delays the Largest Contentful Paint: the
    first images of a page (album cards, then thumbnails) are eager, the first with high priority;
    after a phone's first row they ask for low priority, so that they do not share a slow line with
    the first row's (the stream's LCP on real photos in Lighthouse: 2.6 s before, bench/README.md)."""
    src = tmp_path / "p"
    for a in range(10):  # the home page: ten album cards
        make_jpeg(src / f"A{a:02d}" / "a.jpg")
    for c in range(3):  # three sub-album cards, then the album's own grid
        make_jpeg(src / "A00" / f"C{c}" / "c.jpg")
    for i in range(5):
        make_jpeg(src / "A00" / f"p{i:02d}.jpg")
    for i in range(25):  # with a.jpg, three pages: 10, 10, 6
        make_jpeg(src / "A01" / f"q{i:02d}.jpg", date=f"2024:07:01 10:{i:02d}:00")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, "[pages]\npage_size = 10\n[stream]\npage_size = 20\n")))
    expected = {"index.html": 10, "a00/index.html": 3 + 6, "a01/index.html": 10, "a01/page/2/index.html": 10,
                "a01/page/3/index.html": 6}
    for page in [site / "stream" / "index.html", *(site / "stream" / "page").glob("*/index.html")]:  # ~20 each
        expected[page.relative_to(site).as_posix()] = len(soup(page).select(".grid li"))
    assert len(expected) >= 7 and min(expected.values()) >= 3
    for path, count in expected.items():
        imgs = soup(site / path).find_all("img")
        assert len(imgs) == count, path
        assert [i.get("fetchpriority") for i in imgs] == ["high"] + [None] * (min(count, FIRST) - 1) + ["low"] * (count - FIRST), path
        assert [i.get("loading") for i in imgs] == [None] * min(count, EAGER) + ["lazy"] * (count - EAGER), path
    album = soup(site / "a00" / "index.html")
    assert album.select_one(".cards img")["fetchpriority"] == "high"  # the cards come first
    assert [i.get("loading") for i in album.select(".grid img")] == [None] * (EAGER - 3) + ["lazy"]


@pytest.mark.parametrize("options", ['formats = ["jpeg"]', 'formats = ["jpeg", "webp"]\n[pages]\nlinks = "index.html"'])
def test_a_photo_page_prefetches_the_next_photo_and_its_page(tmp_path, options):
    src = tmp_path / "p"
    for i in range(3):
        make_jpeg(src / "A" / f"p{i}.jpg", size=(1800, 1200), date=f"2024:07:01 10:0{i}:00")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, f"[images]\n{options}\n")))
    webp = "webp" in options
    for i in range(2):
        page = soup(site / "a" / f"p{i}" / "index.html")
        image, next_page = [link["href"] for link in page.find_all("link", rel="prefetch")]
        assert image.startswith(f"../p{i + 1}/p{i + 1}.") and (site / "a" / f"p{i}" / image).is_file()
        shown = soup(site / "a" / f"p{i + 1}" / "index.html").select_one(".photo-frame")
        offered = (shown.source if webp else shown.img)["srcset"]  # the first format <picture> offers
        assert image.removeprefix(f"../p{i + 1}/") + " 1600w" in offered  # fills a 1920x1080 screen
        assert image.endswith(".webp" if webp else ".jpg")
        assert next_page == (f"../p{i + 1}/index.html" if webp else f"../p{i + 1}/")
        assert page.find("link", rel="next")["href"] == next_page
    assert soup(site / "a" / "p2" / "index.html").find("link", rel="prefetch") is None  # the last photo


def test_meta_descriptions_read_as_the_text_does():
    """Inline markup leaves no stray space ('albumen demo : every' from `albumen demo`: every);
    paragraphs and line breaks still separate words."""
    from albumen.render.views import plain_text

    assert plain_text("<p>by <code>albumen demo</code>: every <em>one</em></p><p>Next<br>line</p>") == (
        "by albumen demo: every one Next line"
    )
    assert plain_text("<p><a href='x'>Link</a>, then</p>") == "Link, then"


def test_a_day_alone_is_shown_without_a_made_up_time(tmp_path):
    """`date: 2024-03-01` in a sidecar names a day, not midnight; a time given, or the camera's own
    clock (even at midnight), is shown."""
    src = tmp_path / "p"
    make_jpeg(src / "day.jpg", date="2024:05:05 12:34:00")
    (src / "day.md").write_text("---\ndate: 2024-03-01\n---\n")
    make_jpeg(src / "timed.jpg", date="2024:05:05 12:34:00")
    (src / "timed.md").write_text("---\ndate: 2024-03-01 14:30\n---\n")
    make_jpeg(src / "midnight.jpg", date="2024:05:06 00:00:00")
    site = tmp_path / "site"
    build_site(src, site)

    def shown(slug: str) -> str:
        return soup(site / slug / "index.html").select_one("time").get_text()

    assert shown("day") == "1 March 2024"
    assert soup(site / "day" / "index.html").select_one("time")["datetime"] == "2024-03-01"  # a day, in HTML too
    assert shown("timed") == "1 March 2024, 14:30"
    assert shown("midnight") == "6 May 2024, 00:00"


def test_counts_name_photos_and_videos_apart_in_each_language():
    from albumen.render.i18n import format_counts

    assert format_counts(30, 1, "en") == "30 photos, 1 video"
    assert format_counts(1, 0, "en") == "1 photo"
    assert format_counts(0, 5, "en") == "5 videos"
    assert format_counts(0, 0, "en") == "0 photos"
    assert format_counts(30, 2, "fr") == "30 photos, 2 vidéos"
    assert format_counts(0, 1, "fr") == "1 vidéo"


def test_the_theme_stays_small_and_asks_nothing_of_other_sites():
    """Budget (issue 20): the default theme's CSS and JavaScript, gzipped, under 25 KB, and neither
    they nor the templates fetch anything from another site (the map link is a link, not a request)."""
    import gzip
    import re

    from albumen.render.themes import DEFAULT_THEME

    static = DEFAULT_THEME / "static"
    size = sum(len(gzip.compress(p.read_bytes(), 9)) for p in static.iterdir() if p.suffix in (".css", ".js"))
    assert 4_000 < size < 25_000, size
    for path in [*static.iterdir(), *(DEFAULT_THEME / "templates").rglob("*.html")]:
        text = path.read_text()
        assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", text), path
        assert not re.search(r"<(script|link|img|source|iframe)[^>]+(src|href)=\"(https?:)?//", text), path
