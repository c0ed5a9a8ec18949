"""The bundled documents plugin: PDFs (and chosen kinds of files) as tiles of their albums."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from PIL import Image

from conftest import build_site, make_jpeg, run_cli, soup, write_config


def make_pdf(path: Path, size=(600, 800), band=(200, 30, 30)) -> Path:
    """A one-page PDF (Pillow writes it): white, with a coloured band over its top quarter."""
    path.parent.mkdir(parents=True, exist_ok=True)
    page = Image.new("RGB", size, (255, 255, 255))
    page.paste(band, (0, 0, size[0], size[1] // 4))
    page.save(path, "PDF", resolution=72)
    return path


@pytest.fixture
def gallery(tmp_path) -> Path:
    src = tmp_path / "photos"
    make_jpeg(src / "Trip" / "a.jpg", size=(300, 200))
    make_pdf(src / "Trip" / "report.pdf")
    (src / "Trip" / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj\n<< garbage")
    (src / "Trip" / "route.gpx").write_text("<gpx></gpx>\n")
    (src / "Trip" / "notes.txt").write_text("not a document kind\n")
    return src


CONFIG = 'plugins = ["documents", "zip"]\n[plugin.documents]\nextensions = ["pdf", "gpx"]\n'


def test_a_pdf_gets_a_picture_of_its_first_page_and_a_download_link(gallery, tmp_path):
    """The PDF's tile shows its first page (drawn by PDFium, in the right proportions), links to the
    file as it is; a damaged PDF is skipped, named with the reason, and the build goes on (exit 0);
    a kind without pictures gets a tile with its type; the album's archive holds the documents too;
    a second build writes nothing."""
    site = tmp_path / "site"
    conf = write_config(tmp_path, CONFIG)
    done = build_site(gallery, site, "-c", str(conf))
    assert "skipped: Trip/broken.pdf: plugin documents: PdfiumError: Failed to load document" in done.stderr, done.stderr
    page = soup(site / "trip" / "index.html")
    tiles = {t.select_one(".badge").get_text(): t for t in page.select(".documents .tile")}
    assert set(tiles) == {"PDF", "GPX"}
    link = tiles["PDF"].select_one("a")
    assert link["download"] == "report.pdf" and link["type"] == "application/pdf"
    assert (site / "trip" / link["href"]).read_bytes() == (gallery / "Trip" / "report.pdf").read_bytes()
    with Image.open(site / "trip" / tiles["PDF"].select_one("img")["src"]) as thumb:
        rgb = thumb.convert("RGB")
        assert abs(rgb.width / rgb.height - 600 / 800) < 0.02, rgb.size
        top, bottom = rgb.getpixel((rgb.width // 2, rgb.height // 10)), rgb.getpixel((rgb.width // 2, rgb.height * 3 // 4))
    assert top[0] > 150 and top[1] < 80 and min(bottom) > 235, (top, bottom)
    gpx = tiles["GPX"].select_one("a")
    assert gpx["download"] == "route.gpx" and (site / "trip" / gpx["href"]).read_text() == "<gpx></gpx>\n"
    with Image.open(site / "trip" / tiles["GPX"].select_one("img")["src"]) as picture:
        assert picture.size[0] > 0
    assert len(page.select(".media .tile")) == 1  # the photo alone in the grid
    with zipfile.ZipFile(site / "trip" / "album.zip") as z:
        assert [i.filename for i in z.infolist()] == ["a.jpg", "report.pdf", "route.gpx"]
        assert z.read("report.pdf") == (gallery / "Trip" / "report.pdf").read_bytes()
    stamps = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in site.rglob("*") if p.is_file()}
    done = build_site(gallery, site, "-c", str(conf))
    assert "wrote 0 files" in done.stdout
    assert stamps == {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in site.rglob("*") if p.is_file()}
    assert build_site(gallery, site, "-c", str(conf), "--strict", expect=1).exit_code == 1  # the skipped PDF

    # another extension makes its tiles and re-makes nothing of the others (the kinds' recipes hold no option)
    (gallery / "Trip" / "book.epub").write_bytes(b"PK\x03\x04 an epub")
    conf.write_text(CONFIG.replace('["pdf", "gpx"]', '["pdf", "gpx", "epub"]'))
    done = build_site(gallery, site, "-c", str(conf))
    assert "read 1 new or changed file" in done.stdout and "made 2 derivatives;" in done.stdout, done.stdout  # the epub
    images = {p: s for p, s in stamps.items() if p.suffix in (".jpg", ".pdf", ".gpx")}
    assert images == {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in images}
    assert "EPUB" in {b.get_text() for b in soup(site / "trip" / "index.html").select(".documents .badge")}

    conf.write_text("")  # off (the default): the documents are files that are not media again
    build_site(gallery, site, "-c", str(conf))
    assert not list(site.rglob("*.pdf")) and soup(site / "trip" / "index.html").select_one(".documents") is None


def test_document_extensions_a_server_would_run_are_refused_when_the_config_is_loaded(tmp_path):
    conf = write_config(tmp_path, 'plugins = ["documents"]\n[plugin.documents]\nextensions = ["pdf", ".HTML", "svg"]\n')
    done = run_cli("build", str(tmp_path), "-o", str(tmp_path / "site"), "-c", str(conf))
    assert done.exit_code == 2
    assert ("plugin.documents: ValueError: extensions: html, svg: a web server would run or show such a file as a "
            "page") in done.stderr
    assert not (tmp_path / "site").exists()
