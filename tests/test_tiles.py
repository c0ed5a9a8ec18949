"""Grid tiles and album cards offer their images in every published format (a <picture> with AVIF and
WebP sources, JPEG in its <img>), as photo pages do; the JPEG thumbnail stays every page's fallback and
the placeholder's source."""

from __future__ import annotations

from pathlib import Path

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


def test_grid_tiles_and_album_cards_offer_every_format(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "Trip" / "a.jpg", size=(1200, 800), date="2024:07:01 10:00:00")
    make_jpeg(src / "Trip" / "b.jpg", size=(600, 900), date="2024:07:02 10:00:00")
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
    card = soup(home).select_one(".card img")
    _check_tile(home, card, ("image/avif", "image/webp"))
    inner = soup(album).select_one(".card img")  # Trip's card of Day 2
    _check_tile(album, inner, ("image/avif", "image/webp"))
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
    # 640, 1024 and 1200 px WebPs of the photo and the two thumbnails
    assert "made 5 derivatives of 1 photo and 1 video" in result.stdout, result.stdout
    for img in soup(album).select(".grid .tile img"):
        _check_tile(album, img, ("image/webp",))
