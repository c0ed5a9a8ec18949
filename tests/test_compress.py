"""The bundled compress plugin: .gz and .br copies beside the site's text files."""

from __future__ import annotations

import gzip
from pathlib import Path

import brotli
import pytest

from conftest import build_site, make_jpeg, write_config

TEXT = (".html", ".css", ".js", ".svg", ".xml", ".json", ".vtt", ".txt")


def _stamps(site: Path, pattern: str = "*") -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(site)): (p.stat().st_ino, p.stat().st_mtime_ns) for p in site.rglob(pattern) if p.is_file()}


@pytest.fixture
def gallery(tmp_path) -> Path:
    src = tmp_path / "photos"
    make_jpeg(src / "Alps" / "a.jpg", size=(300, 200), date="2024:07:01 09:00:00")
    make_jpeg(src / "Alps" / "b.jpg", size=(300, 200), date="2024:07:02 09:00:00")
    make_jpeg(src / "top.jpg", size=(300, 200), date="2024:01:01 10:00:00")
    return src


CONFIG = 'url = "https://photos.example.org/"\nplugins = ["compress"]\n[plugin.compress]\n'


def test_every_text_file_gets_gz_and_br_copies_that_decompress_to_it(gallery, tmp_path):
    """Pages, the theme's CSS, JS and SVG, the feeds and the sitemap: each has a .gz and a .br beside it
    that decompress to its bytes; images and robots.txt (not in the list) have none."""
    site = tmp_path / "site"
    build_site(gallery, site, "-c", str(write_config(tmp_path, CONFIG)))
    sources = [p for p in site.rglob("*") if p.is_file() and p.suffix in (".html", ".css", ".js", ".svg", ".xml")]
    assert {p.suffix for p in sources} == {".html", ".css", ".js", ".svg", ".xml"}
    for path in sources:
        data = path.read_bytes()
        assert gzip.decompress(path.with_name(path.name + ".gz").read_bytes()) == data, path
        assert brotli.decompress(path.with_name(path.name + ".br").read_bytes()) == data, path
    copies = {p for p in site.rglob("*") if p.suffix in (".gz", ".br")}
    assert len(copies) == 2 * len(sources)
    assert not list(site.rglob("*.jpg.gz")) and not (site / "robots.txt.gz").exists()
    assert (site / "index.html.gz").read_bytes()[4:8] == b"\0\0\0\0"  # no time in the gzip header


def test_copies_follow_their_file_and_an_unchanged_file_is_not_compressed_again(gallery, tmp_path):
    """A second build with nothing changed writes nothing; a page rewritten gets new copies, the others
    keep theirs (not compressed again); a page removed takes its copies with it; changing how .gz files
    are made re-makes those only."""
    site = tmp_path / "site"
    conf = write_config(tmp_path, CONFIG)
    build_site(gallery, site, "-c", str(conf))
    first = _stamps(site)
    done = build_site(gallery, site, "-c", str(conf))
    assert "wrote 0 files" in done.stdout and _stamps(site) == first

    (gallery / "Alps" / "b.md").write_text("title: Bright morning\n")
    build_site(gallery, site, "-c", str(conf))
    second = _stamps(site)
    page = "alps/b/index.html"
    assert second[page] != first[page]
    assert second[page + ".gz"] != first[page + ".gz"] and second[page + ".br"] != first[page + ".br"]
    assert b"Bright morning" in gzip.decompress((site / (page + ".gz")).read_bytes())
    for name in ("static/albumen.css", "static/albumen.js"):  # unchanged: neither compressed nor written
        for copy in (name + ".gz", name + ".br"):
            assert second[copy] == first[copy]

    (gallery / "Alps" / "a.jpg").unlink()
    build_site(gallery, site, "-c", str(conf))
    assert not (site / "alps" / "a").exists()
    second = _stamps(site)

    conf.write_text(CONFIG + "zopfli = false\n")
    build_site(gallery, site, "-c", str(conf))
    third = _stamps(site)
    gz = {k for k in third if k.endswith(".gz")}
    assert gz and all(third[k] != second.get(k) for k in gz)
    br = {k for k in third if k.endswith(".br") and k in second}
    assert br and all(third[k] == second[k] for k in br)
    assert gzip.decompress((site / "index.html.gz").read_bytes()) == (site / "index.html").read_bytes()

    conf.write_text('url = "https://photos.example.org/"\n')
    build_site(gallery, site, "-c", str(conf))
    assert not [p for p in site.rglob("*") if p.suffix in (".gz", ".br")]


def test_compress_options_are_checked_when_the_config_is_loaded(tmp_path):
    from albumen.config import load_config
    from albumen.errors import ConfigError

    conf = write_config(tmp_path, 'plugins = ["compress"]\n[plugin.compress]\nformats = ["zstd"]\nextensions = ["gz"]\n')
    with pytest.raises(ConfigError) as caught:
        load_config(conf)
    assert caught.value.problems == ["plugin.compress.formats: 'zstd' is not one of gzip, brotli"]
    conf.write_text('plugins = ["compress"]\n[plugin.compress]\nextensions = ["gz"]\n')
    with pytest.raises(ConfigError) as caught:
        load_config(conf)
    assert caught.value.problems == ["plugin.compress: ValueError: extensions: expected extensions such as 'html', got ['gz']"]
