"""Plugins: found by entry point, bundled name or module path; options validated before any work;
filters run in the workers however they were started; pages, files and media kinds of their own."""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap
from pathlib import Path

import pytest
from PIL import Image

from conftest import (
    albumen_process,
    build_site,
    crawl,
    example_plugin_files,
    install_plugin,
    make_jpeg,
    run_cli,
    soup,
    tree_digest,
    write_config,
)

TINT = 'plugins = ["tint"]\n\n[plugin.tint]\n'


def _gallery(src: Path) -> Path:
    make_jpeg(src / "Alps" / "a.jpg", size=(400, 300), color=(40, 80, 200), date="2024:01:01 10:00:00")
    make_jpeg(src / "Alps" / "b.jpg", size=(300, 400), color=(40, 180, 60), date="2024:01:02 10:00:00")
    make_jpeg(src / "top.jpg", size=(320, 240), color=(200, 200, 40), date="2024:01:03 10:00:00")
    return src


def _centre(path: Path) -> tuple[int, int, int]:
    with Image.open(path) as im:
        rgb = im.convert("RGB")
        return rgb.getpixel((rgb.width // 2, rgb.height // 2))


def _near(a, b, tolerance: int = 8) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a, b, strict=True))


def _images(site: Path) -> dict[str, tuple[int, int]]:
    """Every published image -> (inode, mtime_ns)."""
    return {str(p.relative_to(site)): (p.stat().st_ino, p.stat().st_mtime_ns) for p in site.rglob("*.jpg")}


def _stamps(site: Path) -> dict[str, tuple[int, int, int]]:
    return {str(p.relative_to(site)): (p.stat().st_ino, p.stat().st_mtime_ns, p.stat().st_size)
            for p in site.rglob("*") if p.is_file()}


def _build(tmp_path: Path, src: Path, site: Path, conf: Path, plugins: Path | None, start: str | None = None,
           expect: int = 0):
    done = albumen_process(tmp_path, "build", str(src), "-o", str(site), "-c", str(conf), pythonpath=plugins,
                           start=start)
    assert done.returncode == expect, done.stdout + done.stderr
    return done


@pytest.fixture
def tint(tmp_path) -> Path:
    """The guide's example plugin (docs/PLUGINS.md), installed: a folder to put on PYTHONPATH."""
    return install_plugin(tmp_path / "site-packages", example_plugin_files())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers are Linux's")
def test_an_installed_plugin_filters_and_adds_pages_alike_with_forked_and_spawned_workers(tmp_path, tint):
    """The guide's plugin, installed as a package declaring the entry point: its filter tints the
    display images (not the thumbnails, as configured) in the worker processes, which import it by
    name, and its page, its template and its file are written. Forked and spawned workers make the
    same site, file for file (Sigal's plugins do nothing under spawn)."""
    src = _gallery(tmp_path / "photos")
    (src / "Secret").mkdir()
    make_jpeg(src / "Secret" / "hidden.jpg", size=(300, 200), color=(90, 90, 90))
    (src / "Secret" / "index.md").write_text("private: true\n")
    conf = write_config(tmp_path, 'url = "https://example.org/"\n' + TINT
                        + 'colour = "#ff0000"\nstrength = 0.5\nthumbnails = false\n[images]\nformats = ["jpeg", "webp"]\n')
    sites = {}
    for start in ("fork", "spawn"):
        site = sites[start] = tmp_path / f"site-{start}"
        done = _build(tmp_path, src, site, conf, tint, start)
        assert f'start methods: ["{start}"]' in done.stderr, done.stderr
        assert "warning:" not in done.stderr, done.stderr  # (spawn: multiprocessing may warn of a semaphore at exit)
    assert tree_digest(sites["fork"]) == tree_digest(sites["spawn"])

    site = sites["spawn"]
    display = next((site / "alps" / "a").glob("a.400w.*.jpg"))
    thumb = next((site / "alps" / "a").glob("a.thumb.*.jpg"))
    assert _near(_centre(display), (148, 40, 100)), _centre(display)  # half (40, 80, 200), half red
    webp = next((site / "alps" / "a").glob("a.400w.*.webp"))  # encoded by libvips from the filtered pixels
    assert _near(_centre(webp), (148, 40, 100)), _centre(webp)
    assert _near(_centre(thumb), (40, 80, 200)), _centre(thumb)
    page = soup(site / "tints" / "index.html")
    assert page.select_one("h1").get_text() == "Tints"
    assert "Every image is tinted 50% with #ff0000. 3 photos." in page.select_one(".tint-note").get_text()
    assert [a.get_text() for a in page.select(".tint-album h2 a")] == ["photos", "Alps"]  # the public albums only
    assert page.select_one('meta[name="generator"]') is not None  # the theme's base.html
    assert "https://example.org/tints/" in (site / "sitemap.xml").read_text()
    private = list((site / "p").glob("*/tints/index.html"))
    assert len(private) == 1 and soup(private[0]).select_one('meta[name="robots"]')["content"] == "noindex,nofollow"
    assert "tints" not in (site / "sitemap.xml").read_text().split("tints/", 1)[1]  # once: not the private one
    data = json.loads((site / "tints.json").read_text())
    assert data["tint"] == "#ff0000" and [a["title"] for a in data["albums"]] == ["photos", "Alps"]
    assert crawl(site).broken == []
    assert crawl(site, "tints/index.html").broken == []


def _thumb(name: str) -> bool:
    """A thumbnail, or an album cover's card image (filtered as a thumbnail)."""
    return ".thumb." in name or ".cover" in name


def test_a_plugin_option_remakes_exactly_the_outputs_it_touches_and_nothing_else(tmp_path, tint):
    """A plugin's name, version and options are part of the recipe of every output it filters: a
    second build with nothing changed writes nothing; tinting the thumbnails no more re-makes the
    thumbnails only, a new strength the display images only; without the plugin, every image has the
    name it has in a gallery that never had it (an existing site re-makes nothing)."""
    src = _gallery(tmp_path / "photos")
    site = tmp_path / "site"
    conf = write_config(tmp_path, TINT + "strength = 0.3\nthumbnails = true\n")
    _build(tmp_path, src, site, conf, tint)
    first = _images(site)
    assert len(first) == 7  # three photos: a display image and a thumbnail each; Alps's cover's card image
    stamps = _stamps(site)

    done = _build(tmp_path, src, site, conf, tint)
    assert "nothing changed" in done.stdout, done.stdout
    assert _stamps(site) == stamps  # nothing written

    conf.write_text(TINT + "strength = 0.3\nthumbnails = false\n")
    done = _build(tmp_path, src, site, conf, tint)
    assert "made 4 derivatives of 3 photos" in done.stdout, done.stdout  # (a cover's card image is a thumbnail)
    second = _images(site)
    assert {k: v for k, v in second.items() if not _thumb(k)} == {k: v for k, v in first.items() if not _thumb(k)}
    assert not {k for k in second if _thumb(k)} & set(first)  # every thumbnail made again

    conf.write_text(TINT + "strength = 0.6\nthumbnails = false\n")
    done = _build(tmp_path, src, site, conf, tint)
    assert "made 3 derivatives of 3 photos" in done.stdout, done.stdout
    third = _images(site)
    assert {k: v for k, v in third.items() if _thumb(k)} == {k: v for k, v in second.items() if _thumb(k)}
    assert not {k for k in third if not _thumb(k)} & set(second)

    conf.write_text("")
    _build(tmp_path, src, site, conf, None)
    never = tmp_path / "never"
    _build(tmp_path, src, never, conf, None)
    assert set(_images(site)) == set(_images(never))
    assert not (site / "tints.json").exists() and not (site / "tints").exists()  # its files went with it


def test_unknown_unimportable_and_misconfigured_plugins_stop_before_anything_is_written(tmp_path, tint):
    """An unknown name, a plugin whose import fails and options that do not fit its schema are
    configuration errors: exit status 2, every problem told at once, nothing written."""
    broken = {
        "pyproject.toml": textwrap.dedent("""
            [project]
            name = "albumen-broken"
            version = "0.1"
            [project.entry-points."albumen.plugins"]
            broken = "albumen_broken"
        """),
        "albumen_broken/__init__.py": "raise ImportError('needs libfoo, which is not installed')\n",
    }
    install_plugin(tint, broken)
    src = _gallery(tmp_path / "photos")
    site = tmp_path / "site"
    conf = write_config(tmp_path, textwrap.dedent("""
        plugins = ["tnit", "broken", "tint", "no_such_module.plugin"]

        [plugin.tint]
        strength = 2
        colr = "#ffffff"

        [plugin.frame]
        width = 3
    """))
    done = _build(tmp_path, src, site, conf, tint, expect=2)
    err = done.stderr
    assert "6 problems in" in err, err
    from albumen.plugins.manager import BUNDLED

    assert (f"plugins: unknown plugin 'tnit' (did you mean 'tint'? bundled: {', '.join(sorted(BUNDLED))}; "
            "installed: broken, tint;") in err, err
    assert ("plugins: 'broken' (package albumen-broken 0.1, entry point albumen_broken) cannot be imported: "
            "ImportError: needs libfoo, which is not installed") in err
    assert "plugin.tint.strength: expected a number from 0.0 to 1.0, got an integer (2)" in err
    assert "plugin.tint.colr: unknown setting; did you mean 'plugin.tint.colour'?" in err
    assert "plugins: unknown plugin 'no_such_module.plugin'" in err
    assert "plugin.frame: options of a plugin that is not turned on (add 'frame' to plugins)" in err
    assert not site.exists()


FLAKY = '''\
"""Fails on purpose, each hook on one thing."""

from albumen.plugins import ImageFilter, OutputFile, hookimpl

__version__ = "1"


@hookimpl
def albumen_image_filters(media):
    if media.name == "worse.jpg":
        raise KeyError("no filter for worse.jpg")
    return ImageFilter("flaky:explode", roles=("display",), facts=("name",))


def explode(image, ctx):
    if ctx.media.name.startswith("bad"):
        raise ValueError("cannot filter " + ctx.media.name)
    return image


@hookimpl
def albumen_page_context(page):
    if page.dir == "good2":
        raise RuntimeError("no context for this page")


@hookimpl
def albumen_extra_outputs(outputs):
    pages = [f"{info.dest_uri} {info.size}" for info in outputs.files([".html"])]
    assert not [info for info in outputs.files() if info.dest_uri.startswith("listing")]  # not its own
    yield OutputFile("listing.txt", "\\n".join(pages))
    yield OutputFile("big.bin", write=lambda f: f.write(b"x" * 100_000), key="constant")
    yield OutputFile("index.html", "a plugin's page over the home page")
    raise OSError("the disk is full")
'''


def test_a_plugin_that_raises_fails_only_what_it_was_working_on(tmp_path):
    """A filter that raises fails its photo, the plugin named in the reason (so does the planner's
    hook raising for one photo, though that photo's images were made before); a page context that
    raises fails that page; a file of the plugin's that collides with the site's is refused, and
    the rest of its files are still written; the build succeeds and says so. The next build with
    nothing changed gives the plugin its chance again, and a file whose key did not change is not
    written again. (A module on the path, named by its import path in plugins.)"""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "flaky.py").write_text(FLAKY)
    src = tmp_path / "photos"
    for name in ("good1", "bad", "good2", "worse"):
        make_jpeg(src / f"{name}.jpg", size=(200, 150))
    site = tmp_path / "site"
    conf = write_config(tmp_path, 'plugins = ["flaky"]\n')
    done = _build(tmp_path, src, site, conf, tmp_path / "lib")
    err = done.stderr
    assert "skipped: bad.jpg: plugin flaky: ValueError: cannot filter bad.jpg" in err, err
    assert "skipped: worse.jpg: plugin flaky: KeyError: 'no filter for worse.jpg'" in err, err  # the planner's hook
    assert "warning: plugin flaky: RuntimeError: no context for this page (good2/index.html is not written)" in err
    assert "warning: plugin flaky: index.html is already a file of the site" in err
    assert "warning: plugin flaky: OSError: the disk is full (its other files are not written)" in err
    assert (site / "good1" / "index.html").is_file() and not (site / "good2" / "index.html").exists()
    assert not (site / "bad").exists() and "bad" not in (site / "index.html").read_text()
    assert "a plugin's page" not in (site / "index.html").read_text()
    listing = (site / "listing.txt").read_text().splitlines()
    assert "index.html" in {line.split()[0] for line in listing} and "good1/index.html" in {line.split()[0] for line in listing}
    assert (site / "big.bin").stat().st_size == 100_000
    big = (site / "big.bin").stat().st_mtime_ns

    again = _build(tmp_path, src, site, conf, tmp_path / "lib")
    assert "nothing changed" not in again.stdout
    assert "skipped: bad.jpg: plugin flaky" in again.stderr
    assert (site / "big.bin").stat().st_mtime_ns == big  # its key did not change: not made again

    conf.write_text("")
    _build(tmp_path, src, site, conf, None)
    assert not (site / "listing.txt").exists() and not (site / "big.bin").exists()
    conf.write_text('plugins = ["flaky"]\n')  # worse.jpg's images are there now, unfiltered: still it fails
    assert "skipped: worse.jpg: plugin flaky" in _build(tmp_path, src, site, conf, tmp_path / "lib").stderr
    conf.write_text("")
    _build(tmp_path, src, site, conf, None)
    assert (site / "bad").is_dir() and (site / "good2" / "index.html").is_file()


def test_a_plugin_page_claiming_a_page_of_the_site_stops_the_build_naming_the_plugin(tmp_path):
    """A plugin's page is claimed like every page: one at an album's path stops the build before it is
    written there, the message naming both."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "clash.py").write_text(
        "from albumen.plugins import ExtraPage, hookimpl\n"
        "@hookimpl\ndef albumen_extra_pages():\n    return [ExtraPage('trip/index.html', content='mine')]\n"
    )
    src = tmp_path / "photos"
    make_jpeg(src / "Trip" / "a.jpg")
    done = _build(tmp_path, src, tmp_path / "site", write_config(tmp_path, 'plugins = ["clash"]\n'), tmp_path / "lib",
                  expect=1)
    assert "two pages claim one output path: trip/index.html (album.html and plugin clash)" in done.stderr, done.stderr
    assert "mine" not in (tmp_path / "site" / "trip" / "index.html").read_text()


NOTES = '''\
"""Notes (.note files) as documents: a tile with a picture and a download link."""

from albumen.plugins import KindInfo, MediaKind, hookimpl

__version__ = "1"


@hookimpl
def albumen_media_kinds():
    return MediaKind("note", "NOTE", (".note",), read="notes:read", thumbnail="notes:picture",
                     mime="text/plain")


def read(abs_path, ctx):
    with open(abs_path, encoding="utf-8") as f:
        first = f.readline().strip()
    if first == "FAIL":
        raise ValueError("not a note I can read")
    if first == "SKIP":
        return None
    return KindInfo(300, 200, title=first, date="2024-02-03T04:05:06")


def picture(abs_path, width, height, ctx):
    from PIL import Image

    return Image.new("RGB", (width, height), (250, 20, 200))
'''


def test_a_media_kind_of_a_plugin_is_a_tile_with_a_download_link(tmp_path):
    """A plugin's media kind: files it claims become tiles in their album (its picture as the
    thumbnail, made in a worker, its type, a link that downloads the file as it is), never pages of
    their own nor items of the stream; a file its reader refuses is skipped naming the plugin, one it
    declines is ignored; without the plugin, they are ignored again and their files removed."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "notes.py").write_text(NOTES)
    src = tmp_path / "photos"
    make_jpeg(src / "Trip" / "a.jpg", size=(200, 150))
    (src / "Trip" / "plan.note").write_text("Day by day\nthen more\n")
    (src / "Trip" / "broken.note").write_text("FAIL\n")
    (src / "Trip" / "other.note").write_text("SKIP\n")
    (src / "Papers").mkdir()
    (src / "Papers" / "poly.html.note").write_text("<script>alert(1)</script>\n")
    site = tmp_path / "site"
    conf = write_config(tmp_path, 'plugins = ["notes"]\n')
    done = _build(tmp_path, src, site, conf, tmp_path / "lib")
    assert "skipped: Trip/broken.note: plugin notes: ValueError: not a note I can read" in done.stderr, done.stderr
    page = soup(site / "trip" / "index.html")
    tiles = page.select(".documents .tile")
    assert len(tiles) == 1
    link = tiles[0].select_one("a")
    assert link["download"] == "plan.note" and link["type"] == "text/plain"
    assert tiles[0].select_one(".badge").get_text() == "NOTE" and tiles[0].select_one("img")["alt"] == "Day by day"
    assert (site / "trip" / link["href"]).read_bytes() == (src / "Trip" / "plan.note").read_bytes()
    thumb = site / "trip" / tiles[0].select_one("img")["src"]
    assert _near(_centre(thumb), (250, 20, 200))
    assert len(page.select(".media .tile")) == 1  # the photo, in the grid (and its viewer) alone
    # no page of its own: its folder holds its files, and the redirect every folder without a page gets
    assert soup(site / "trip" / "plan" / "index.html").select_one('meta[http-equiv="refresh"]') is not None
    assert "plan" not in (site / "stream" / "index.html").read_text()
    papers = soup(site / "papers" / "index.html")  # an album of documents only has its page
    href = papers.select_one(".documents a")["href"]
    assert href.endswith(".note") and ".html" not in href.rsplit(".", 2)[-2:]  # the kind's extension, not its name's
    assert crawl(site).broken == []

    conf.write_text("")
    done = _build(tmp_path, src, site, conf, None)
    assert not list(site.rglob("*.note")) and not (site / "papers").exists()
    assert "broken.note" not in done.stderr


def test_plugins_load_in_the_order_of_the_config_from_their_three_sources(tmp_path, monkeypatch):
    """Bundled by short name, a module by its path, in the order the config's plugins gives (filters of the
    first see the pixels first); a plugin's options that fail its own check are told like the core's."""
    from albumen.config import load_config
    from albumen.errors import ConfigError
    from albumen.plugins.manager import Plugins
    from albumen.process.specs import MediaFacts

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "second.py").write_text(
        "from albumen.plugins import ImageFilter, hookimpl\n"
        "@hookimpl\ndef albumen_image_filters():\n    return ImageFilter('second:f', roles=('thumb',))\n"
        "def f(image, ctx):\n    return image\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    conf = write_config(tmp_path, 'plugins = ["second", "frame"]\n[plugin.frame]\nwidth = 3\n')
    loaded = load_config(conf)
    infos = loaded.config.loaded_plugins
    assert [(i.name, i.origin, i.version) for i in infos] == [("second", "module", ""), ("frame", "bundled", "1")]
    calls = Plugins(infos).image_filters(MediaFacts(name="a.jpg"))
    assert [(c.plugin, c.function, c.roles) for c in calls] == [
        ("second", "second:f", ("thumb",)),
        ("frame", "albumen.plugins.bundled.frame:draw", ("display", "poster")),
    ]
    assert calls[1].options.width == 3 and "frame@1:" in calls[1].recipe
    conf.write_text('plugins = ["frame"]\n[plugin.frame]\ncolour = "red"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(conf)
    assert caught.value.problems == ["plugin.frame: ValueError: colour: expected '#rrggbb', got 'red'"]


def test_the_bundled_frame_draws_a_border_and_albumen_init_lists_its_options(tmp_path):
    """A bundled plugin by its short name, in a build of this process (its workers import the filter
    by name); its options are in docs/SETTINGS.md and, commented out, in what albumen init writes."""
    src = tmp_path / "photos"
    make_jpeg(src / "a.jpg", size=(400, 300), color=(20, 60, 200))
    site = tmp_path / "site"
    conf = write_config(tmp_path, 'plugins = ["frame"]\n[plugin.frame]\nwidth = 10\ncolour = "#00ff00"\n')
    build_site(src, site, "-c", str(conf))
    display = next((site / "a").glob("a.400w.*.jpg"))
    with Image.open(display) as im:
        assert _near(im.convert("RGB").getpixel((3, 150)), (0, 255, 0), 40)
        assert _near(im.convert("RGB").getpixel((200, 150)), (20, 60, 200), 12)
    settings = (Path(__file__).resolve().parents[1] / "docs" / "SETTINGS.md").read_text()
    assert "| `plugin.frame.width` | `8` |" in settings and "| `plugins` | `[]` |" in settings
    assert run_cli("init", str(tmp_path / "new")).exit_code == 0
    written = (tmp_path / "new" / "albumen.toml").read_text()
    assert "# [plugin.frame]" in written and "# colour = \"#ffffff\"" in written
    from albumen.config import load_config

    assert load_config(tmp_path / "new" / "albumen.toml").config.plugins == ()  # the plugins' part commented out


def test_a_build_without_plugins_imports_nothing_of_them():
    """Galleries without plugins pay nothing for them: neither pluggy nor the manager is imported."""
    import subprocess

    code = ("import sys, albumen.cli, albumen.build, albumen.config\n"
            "albumen.config.validate_config({'title': 'x'})\n"
            "print(sorted(m for m in sys.modules if m == 'pluggy' or m.startswith('albumen.plugins')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_the_guide_documents_every_hook(tmp_path):
    """docs/PLUGINS.md has a section for every hook specification, and names no hook that is not one."""
    from albumen.plugins import hookspecs

    specs = {name for name in dir(hookspecs) if name.startswith("albumen_")}
    guide = (Path(__file__).resolve().parents[1] / "docs" / "PLUGINS.md").read_text()
    documented = set(re.findall(r"^### `(albumen_\w+)\(", guide, re.M))
    documented |= {m for m in re.findall(r"`(albumen_\w+)\(", guide)}
    assert specs <= documented, specs - documented
    assert set(re.findall(r"\balbumen_[a-z_]+(?=\()", guide)) - {"albumen_tint"} <= specs
