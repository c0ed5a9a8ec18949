"""Grid tiles and album cards offer their images in every published format (a <picture> with AVIF and
WebP sources, JPEG in its <img>), as photo pages do; the JPEG thumbnail stays every page's fallback and
the placeholder's source. An album card shows its cover's card images: 3:2 crops sized for a card."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from conftest import build_site, make_jpeg, make_video, soup, write_config

FORMATS = {"image/avif": "AVIF", "image/webp": "WEBP"}


def _first(srcset: str) -> tuple[str, int]:
    url, width = srcset.split(",")[0].split()
    return url, int(width.rstrip("w"))


def _check_tile(page: Path, img, expect_modern: tuple[str, ...]) -> None:
    """A tile's <img> (a JPEG thumbnail) and the <source>s beside it: each source's first candidate is
    the thumbnail in that format, the same size as the JPEG one; its other candidates are of its format."""
    folder = page.parent
    jpeg = folder / img["src"]
    with Image.open(jpeg) as im:
        assert im.format == "JPEG" and im.size == (int(img["width"]), int(img["height"]))
    picture = img.parent if img.parent.name == "picture" else None
    types = tuple(s["type"] for s in picture.find_all("source")) if picture else ()
    assert types == expect_modern, (page, types)
    for source in picture.find_all("source") if picture else ():
        assert source["sizes"] == img["sizes"]
        url, width = _first(source["srcset"])
        assert ".thumb." in url
        with Image.open(folder / url) as im:
            assert im.format == FORMATS[source["type"]] and im.size == (int(img["width"]), int(img["height"]))
            assert width == im.width
        for candidate in source["srcset"].split(", ")[1:]:
            url, width = candidate.split()
            with Image.open(folder / url) as im:
                assert im.format == FORMATS[source["type"]] and f"{im.width}w" == width


def _check_card(page: Path, img, expect_modern: tuple[str, ...]) -> list[int]:
    """An album card's image: its cover's 3:2 crops, in JPEG in the <img> and in each modern format in
    its <source>s, the same widths in each. Returns those widths."""
    folder = page.parent
    sets = [("image/jpeg", img["srcset"])]
    picture = img.parent if img.parent.name == "picture" else None
    sets += [(s["type"], s["srcset"]) for s in (picture.find_all("source") if picture else ())]
    assert tuple(t for t, _ in sets[1:]) == expect_modern
    widths = []
    for mime, srcset in sets:
        found = []
        for candidate in srcset.split(", "):
            url, width = candidate.split()
            with Image.open(folder / url) as im:
                assert im.format == {"image/jpeg": "JPEG", **FORMATS}[mime] and f"{im.width}w" == width
                if ".cover" in url:
                    assert abs(im.width / im.height - 1.5) < 0.01, im.size
                    found.append(im.width)
                else:  # then the display images wider than the crops, for a very wide card
                    assert found and im.width > found[-1], (url, found)
        widths = widths or found
        assert found == widths
    assert img["src"] == img["srcset"].split()[0] and (int(img["width"]), int(img["height"])) == (widths[0], round(widths[0] / 1.5))
    return widths


def test_cover_geometry_fits_cards_and_never_upscales():
    from albumen.process.plan import cover_geometry

    assert cover_geometry(4000, 3000) == [(400, 267), (800, 533), (1200, 800)]
    assert cover_geometry(1391, 2463) == [(400, 267), (800, 533), (1200, 800)]  # a portrait: its middle
    assert cover_geometry(1024, 768) == [(400, 267), (800, 533), (1024, 683)]
    assert cover_geometry(640, 480) == [(400, 267), (640, 427)]
    assert cover_geometry(600, 400) == [(400, 267), (600, 400)]
    assert cover_geometry(100, 68) == [(100, 67)]
    assert cover_geometry(7200, 300) == [(400, 267), (450, 300)]  # a panorama: its middle, its full height
    assert cover_geometry(300, 7200) == [(300, 200)]


def test_grid_tiles_and_album_cards_offer_every_format(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "Trip" / "a.jpg", size=(1200, 800), date="2024:07:01 10:00:00")
    make_jpeg(src / "Trip" / "b.jpg", size=(600, 900), date="2024:07:02 10:00:00")
    (src / "Trip" / "index.md").write_text("Thumbnail: b.jpg\n\n")
    make_jpeg(src / "Trip" / "Day 2" / "c.jpg", size=(900, 600), date="2024:07:03 10:00:00")
    make_video(src / "Trip" / "clip.mp4", seconds=0.5, size=(320, 240))
    config = write_config(tmp_path, '[images]\nformats = ["jpeg", "webp", "avif"]\nsizes = [640, 1024]\n')
    site = tmp_path / "site"
    build_site(src, site, "-c", str(config))
    album = site / "trip" / "index.html"
    page = soup(album)
    tiles = page.select(".grid .tile img")
    assert len(tiles) == 3  # a, b and the video
    for img in tiles:
        _check_tile(album, img, ("image/avif", "image/webp"))
    home = site / "index.html"
    card = soup(home).select_one(".card img")  # Trip's cover, b.jpg (a sidecar chose it): a portrait
    assert "/b." in card["src"]
    assert _check_card(home, card, ("image/avif", "image/webp")) == [400, 600]
    inner = soup(album).select_one(".card img")  # Trip's card of Day 2: c.jpg
    assert _check_card(album, inner, ("image/avif", "image/webp")) == [400, 800, 900]
    # what a browser fetches for a card: the crop that fills it, not a display image
    # (a phone's 396 px card at 1.75 dppx needs 693 px: 800, where a 1024 px display image was fetched)
    assert not [p for p in site.rglob("*.cover*") if p.name.split(".")[0] not in ("b", "c")]
    stream = site / "stream" / "index.html"
    for img in soup(stream).select(".grid .tile img"):
        _check_tile(stream, img, ("image/avif", "image/webp"))
    # the placeholder still comes from the JPEG thumbnail
    assert "background-image:url(data:image/" in page.select_one(".grid .tile")["style"]
    # a rebuild that plans everything again (the folder changed) makes nothing
    (src / "notes.txt").write_text("a change in the folder")
    result = build_site(src, site, "-c", str(config))
    assert "made 0 derivatives; rendered 0 pages, wrote 0 files" in result.stdout, result.stdout


def test_jpeg_only_tiles_are_plain_images_and_adding_formats_remakes_no_jpeg(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "Trip" / "a.jpg", size=(1200, 800), date="2024:07:01 10:00:00")
    make_video(src / "Trip" / "clip.mp4", seconds=0.5, size=(320, 240))
    site = tmp_path / "site"
    build_site(src, site)
    album = site / "trip" / "index.html"
    for img in soup(album).select(".grid .tile img"):
        _check_tile(album, img, ())
    before = {p.relative_to(site): p.stat().st_mtime_ns for p in site.rglob("*") if p.suffix in (".jpg", ".mp4")}
    assert not list(site.rglob("*.webp"))
    config = write_config(tmp_path, '[images]\nformats = ["jpeg", "webp"]\n')
    result = build_site(src, site, "-c", str(config))
    after = {p.relative_to(site): p.stat().st_mtime_ns for p in site.rglob("*") if p.suffix in (".jpg", ".mp4")}
    assert after == before  # the JPEG images and the video keep their names and files
    thumbs = sorted(p.name.split(".")[0] for p in site.rglob("*.thumb.*.webp"))
    assert thumbs == ["a", "clip"]
    # 640, 1024 and 1200 px WebPs of the photo, its three card images (it is Trip's cover), two thumbnails
    assert "made 8 derivatives of 1 photo and 1 video" in result.stdout, result.stdout
    for img in soup(album).select(".grid .tile img"):
        _check_tile(album, img, ("image/webp",))


CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (scripts/test.sh installs it)")
def test_a_browser_fetches_card_images_sized_for_the_card(tmp_path):
    """Chromium on a phone (412 px at 1.75 dppx, Lighthouse's mobile) and on a desktop (1440 px at 1x)
    picks, for each album card, a WebP crop at least as sharp as the card needs and less than twice
    as wide: a phone fetched a 1024 px display image (a portrait's whole height) for a 396 px card."""
    from playwright.sync_api import sync_playwright

    src = tmp_path / "p"
    make_jpeg(src / "Wide" / "w.jpg", size=(3000, 2000), date="2024:07:01 10:00:00")
    make_jpeg(src / "Tall" / "t.jpg", size=(2000, 3000), date="2024:07:02 10:00:00")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\nformats = ["jpeg", "webp"]\n')))
    shown = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            for width, height, dpr in ((412, 823, 1.75), (1440, 900, 1)):
                context = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=dpr)
                page = context.new_page()
                page.goto((site / "index.html").as_uri())
                page.wait_for_load_state("load")
                shown[width] = page.eval_on_selector_all(
                    ".card img", "els => els.map(e => [e.currentSrc, e.getBoundingClientRect().width, "
                    "e.getBoundingClientRect().height])")
                for src_url, box_w, box_h in shown[width]:
                    name = src_url.rsplit("/", 1)[-1]
                    assert ".cover" in name and name.endswith(".webp"), (width, name)
                    with Image.open(next(site.rglob(name))) as im:
                        assert im.width >= box_w * dpr * 0.98 and im.height >= box_h * dpr * 0.98, (width, name, box_w)
                        assert im.width < 2 * box_w * dpr, (width, name, box_w)
                context.close()
        finally:
            browser.close()
    assert len(shown[412]) == len(shown[1440]) == 2
