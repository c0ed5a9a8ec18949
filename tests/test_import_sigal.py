"""albumen import-sigal: a Sigal configuration read without running it, turned into an albumen.toml
that Albumen's own loader accepts, every setting accounted for."""

from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import tomllib
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from albumen.config import validate_config
from albumen.config.schema import Config
from albumen.importers.pyconf import read_pyconf
from albumen.importers.sigal import PLUGIN_TABLE, PLUGINS_KEY, SIGAL_DEFAULTS
from conftest import run_cli

SIGAL = "2.6.1"
TEMPLATE = "sigal/templates/sigal.conf.py"


def sigal_template() -> str:
    """Sigal's own annotated sigal.conf.py, from its 2.6.1 wheel (scripts/test.sh downloads it) or an
    installed Sigal 2.6.1."""
    folder = Path(os.environ.get("ALBUMEN_TEST_DOWNLOADS") or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "albumen-tests")
    for wheel in sorted(folder.glob(f"sigal-{SIGAL}-*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            return archive.read(TEMPLATE).decode("utf-8")
    try:
        if importlib.metadata.version("sigal") == SIGAL:
            files = importlib.metadata.files("sigal") or []
            path = next(f for f in files if str(f) == TEMPLATE)
            return Path(path.locate()).read_text(encoding="utf-8")
    except (importlib.metadata.PackageNotFoundError, StopIteration):
        pass
    pytest.skip(f"Sigal {SIGAL}'s wheel is not in {folder} and Sigal {SIGAL} is not installed: "
                "scripts/test.sh downloads it (pip download --no-deps sigal==2.6.1)")


def uncommented(text: str) -> str:
    """The template with every commented-out setting given its example value: each '# name = value'
    line, with the comment lines after it that complete the statement."""
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        statement = _commented_statement(lines, i) if re.match(r"^# ?[a-z0-9_]+ ?=", lines[i]) else None
        if statement:
            out += statement
            i += len(statement)
        else:
            out.append(lines[i])
            i += 1
    return "\n".join(out)


def _commented_statement(lines: list[str], start: int) -> list[str] | None:
    """The lines from start on, uncommented, that make one valid statement (None when none do)."""
    for end in range(start + 1, min(start + 15, len(lines)) + 1):
        if not lines[end - 1].startswith("#"):
            return None
        chunk = [re.sub(r"^# ?", "", line) for line in lines[start:end]]
        try:
            ast.parse("\n".join(chunk))
        except SyntaxError:
            continue
        return chunk
    return None


def albumen_loads(path: Path) -> Config:
    """Albumen's own loader on the file. While this Albumen has no plugin system, the plugin lines are
    left out of the check (the loader would call them unknown settings), and only those; with one, the
    lines of the plugins it does not bundle yet (issue 21 brings them one by one)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    if PLUGINS_KEY not in {f for f in Config.__dataclass_fields__}:
        return validate_config({k: v for k, v in data.items() if k not in (PLUGINS_KEY, PLUGIN_TABLE)}, str(path))
    from albumen.plugins.manager import BUNDLED

    data[PLUGINS_KEY] = [name for name in data.get(PLUGINS_KEY, []) if name in BUNDLED]
    data[PLUGIN_TABLE] = {name: table for name, table in data.get(PLUGIN_TABLE, {}).items() if name in BUNDLED}
    return validate_config(data, str(path))


def import_conf(tmp_path: Path, text: str, *args: str, name: str = "sigal.conf.py"):
    conf = tmp_path / name
    conf.write_text(text, encoding="utf-8")
    toml = tmp_path / "albumen.toml"
    result = run_cli("import-sigal", str(conf), "-o", str(toml), *args)
    return result, toml


def reported(output: str, kind: str = "not carried over") -> dict[str, str]:
    """'not carried over: NAME (line N): reason' lines, by name."""
    out = {}
    for line in output.splitlines():
        m = re.match(rf"^{kind}: (.+?)(?: \(lines? [\d-]+\))?: (.*)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


# ------------------------------------------------------------------------------------------ pyconf
def test_literals_are_read_as_python_would_and_nothing_is_run(tmp_path):
    marker = tmp_path / "ran"
    conf = read_pyconf(
        (
            "import os\n"
            f"open({str(marker)!r}, 'w').write('x')\n"
            f"__import__('pathlib').Path({str(marker)!r}).touch()\n"
            "title = 'Sea ' 'and ' + 'sky'\n"
            "img_size = (800, 600)\n"
            "offset = -3\n"
            "ratio = -0.5\n"
            "opts = {'quality': 90, 'flags': [True, False, None], 'pair': (1, -2)}\n"
            "plugins = ['sigal.plugins.zip_gallery']\n"
            "plugins += ['sigal.plugins.feeds']\n"
            "source = os.path.join('a', 'b')\n"
            "theme = THEME\n"
            "author = f'{title}!'\n"
            "plain = f'no fields'\n"
            "sizes = [x * 2 for x in (1, 2)]\n"
            "later = 1\n"
            "later = 2\n"
            "first, second = 'a', 'b'\n"
            "exec_me = eval('1')\n"
        ).encode(),
        "sigal.conf.py",
    )
    values = {name: a.value for name, a in conf.values.items()}
    assert values == {
        "title": "Sea and sky", "img_size": (800, 600), "offset": -3, "ratio": -0.5,
        "opts": {"quality": 90, "flags": [True, False, None], "pair": (1, -2)},
        "plugins": ["sigal.plugins.zip_gallery", "sigal.plugins.feeds"], "plain": "no fields", "later": 2,
        "first": "a", "second": "b",
    }
    unread = {name: u.why for name, u in conf.unread.items()}
    assert unread == {
        "source": "computed: a call (os.path.join('a', 'b'))",
        "theme": "computed: a name (THEME)",
        "author": "computed: an f-string (f'{title}!')",
        "sizes": "computed: a list comprehension ([x * 2 for x in (1, 2)])",
        "exec_me": "computed: a call (eval('1'))",
    }
    assert [s.line for s in conf.statements] == [2, 3]  # the two calls, listed, not run
    assert not marker.exists()
    assert conf.values["plugins"].line == 9 and conf.values["plugins"].end_line == 10


def test_settings_set_where_only_running_the_file_decides_are_not_read():
    conf = read_pyconf(
        b"img_size = (800, 600)\nif DEBUG:\n    img_size = (640, 480)\n"
        b"plugins = ['a']\nplugins.append('b')\nopts = {'q': 1}\nopts['q'] = 2\n",
        "c.py",
    )
    assert conf.values == {}
    assert conf.unread["img_size"].why == "set in an if statement (line 2)"
    assert conf.unread["plugins"].why.startswith("changed by an expression statement (plugins.append('b'))")
    assert conf.unread["opts"].why.startswith("changed by an assignment to a part of it")


# ---------------------------------------------------------------------------------- import-sigal
def test_sigal_template_as_shipped(tmp_path):
    result, toml = import_conf(tmp_path, sigal_template())
    assert result.exit_code == 0, result.output
    data = tomllib.loads(toml.read_text(encoding="utf-8"))
    assert data == {
        "source": "pictures",
        "sort": {"albums": "name", "media": "name"},  # Sigal's orders, which the template does not set
        "images": {"sizes": [640, 800]},
        "thumbnails": {"height": 210},
        "pages": {"slugs": "original"},
    }
    config = albumen_loads(toml)
    assert config.images.sizes == (640, 800) and config.thumbnails.height == 210
    text = toml.read_text(encoding="utf-8")
    assert "# sigal.conf.py line 50: img_size = (800, 600)\n" in text
    assert "# sigal.conf.py line 16: source = \"pictures\"\n" in text
    assert reported(result.output) == {
        "theme": "Sigal's galleria theme: Albumen has one theme of its own (a justified grid and a full-screen "
                 "viewer), changed file by file by a theme folder (theme = \"my-theme\", docs/THEMES.md)",
    }
    assert "# theme (line 25): Sigal's galleria theme" in text


def test_sigal_template_with_every_setting_given(tmp_path):
    """Every setting the template documents, set to its example: each one is a Sigal setting the importer
    knows (none is 'not a setting of Sigal'), and the result loads."""
    full = uncommented(sigal_template())
    conf = read_pyconf(full.encode(), "sigal.conf.py")
    assert len(conf.values) > 60 and not conf.unread  # the uncommenting worked
    assert set(conf.values) <= set(SIGAL_DEFAULTS)
    result, toml = import_conf(tmp_path, full, "-v")
    assert result.exit_code == 0, result.output
    assert "not a setting of Sigal" not in result.output
    data = tomllib.loads(toml.read_text(encoding="utf-8"))
    assert data[PLUGINS_KEY] == ["adjust", "compress", "copyright", "documents"]
    assert data[PLUGIN_TABLE]["documents"] == {"extensions": ["pdf"]}  # Sigal's nonmedia_files
    assert data[PLUGIN_TABLE]["adjust"] == {"color": 1.0, "brightness": 1.0, "contrast": 1.0, "sharpness": 1.0}
    assert data[PLUGIN_TABLE]["compress"] == {"formats": ["gzip"], "extensions": ["htm", "html", "css", "js", "svg"]}
    assert data[PLUGIN_TABLE]["copyright"]["text"] == "© An example copyright message"
    assert data[PLUGIN_TABLE]["copyright"]["position"] == "bottom-left"
    assert data["images"] == {"sizes": [640, 800], "quality": 85, "progressive": True}
    assert data["thumbnails"] == {"height": 210, "style": "square"}
    assert data["videos"] == {"formats": ["mp4", "webm"], "max_size": 480}
    lost = reported(result.output)
    assert lost["plugin sigal.plugins.encrypt"].startswith("use password albums: [passwords] in albumen.toml")
    assert "'password'" not in toml.read_text(encoding="utf-8")  # the template's encrypt_options, not copied
    assert lost["plugin sigal.plugins.watermark"] == "enabled without a watermark image: Sigal added none"
    needless = reported(result.output, "not needed")
    for core in ("feeds", "media_page", "nomedia", "extended_caching"):
        assert needless[f"plugin sigal.plugins.{core}"].startswith("part of Albumen")
    # every setting given is in the output, one way or another
    named = set(lost) | set(needless) | {n.split(" ")[0] for n in list(lost) + list(needless)}
    written = {"title", "source", "destination", "img_size", "jpg_options", "thumb_size", "thumb_fit", "video_format",
               "video_size", "albums_sort_attr", "albums_sort_reverse", "medias_sort_attr", "medias_sort_reverse",
               "plugins", "adjust_options", "compress_assets_options", "copyright", "html_language"}
    assert set(conf.values) - named - written == set()
    albumen_loads(toml)


PHOTOGRAPHER = """\
# -*- coding: utf-8 -*-
title = "Jeanne's photographs"
author = "Jeanne Martin"
source = "../Pictures/Published"
destination = "site"
theme = "photoswipe"
img_size = (2048, 1365)
thumb_size = (300, 300)
thumb_fit = True
jpg_options = {"quality": 90, "optimize": True, "progressive": True, "subsampling": 0}
keep_orig = True
orig_link = True
albums_sort_attr = ["meta.date", "name"]
albums_sort_reverse = True
medias_sort_attr = "date"
ignore_directories = ["_drafts"]
ignore_files = ["*.tmp.jpg"]
html_language = "fr"
google_analytics = "UA-1234-5"
index_in_url = True
video_format = "mp4"
mp4_options = ["-crf", "20", "-preset", "slow", "-movflags", "+faststart"]
video_size = (1280, 720)
plugins = [
    "sigal.plugins.watermark",
    "sigal.plugins.copyright",
    "sigal.plugins.zip_gallery",
    "sigal.plugins.feeds",
    "sigal.plugins.titleregexp",
    "sigal.plugins.compress_assets",
    "sigal.plugins.adjust",
    "sigal.plugins.encrypt",
    "myplugins.exif_badge",
]
watermark = "../Pictures/Published/.marks/mark.png"
watermark_position = (1800, 1300)
watermark_opacity = 0.4
copyright = "© Jeanne Martin"
copyright_text_font_size = 24
copyright_text_color = (255, 255, 255)
zip_gallery = "{album.name}.zip"
zip_media_format = "orig"
zip_skip_if_exists = True
atom_feed = {"feed_url": "https://photos.example.org/feed.xml", "nb_items": 20}
titleregexp = {
    "regexp": [
        {"search": r"^([0-9]*)-(.*)$", "replace": r"\\2 (\\1)", "count": 1, "break": 1},
        {"search": r"([a-z][a-z])([A-Z][a-z])", "replace": r"\\1 \\2"},
    ],
    "substitute": [["_", " "]],
}
compress_assets_options = {"method": "zopfli"}
adjust_options = {"brightness": 1.1, "contrast": 1.05, "saturation": 2}
encrypt_options = {"password": "hunter2", "ask_password": True}
galery_theme = "classic"
"""


def test_a_photographers_config(tmp_path):
    """Settings and plugins carried over, paths rewritten against the new file (written in another
    folder than sigal.conf.py), conversions explained, losses listed, and the file loads."""
    sigal_dir = tmp_path / "sigal"
    sigal_dir.mkdir()
    (tmp_path / "Pictures" / "Published" / ".marks").mkdir(parents=True)  # hidden in the photo folder
    Image.new("RGBA", (205, 50)).save(tmp_path / "Pictures" / "Published" / ".marks" / "mark.png")
    (sigal_dir / "sigal.conf.py").write_text(PHOTOGRAPHER, encoding="utf-8")
    toml = tmp_path / "albumen" / "albumen.toml"
    result = run_cli("import-sigal", str(sigal_dir / "sigal.conf.py"), "-o", str(toml))
    assert result.exit_code == 0, result.output
    data = tomllib.loads(toml.read_text(encoding="utf-8"))
    p = os.path.join
    assert data == {
        "title": "Jeanne's photographs",
        "author": "Jeanne Martin",
        "language": "fr",
        "source": p("..", "Pictures", "Published"),  # ../Pictures/Published from sigal/, seen from albumen/
        "output": p("..", "sigal", "site"),
        "ignore": ["_drafts", "*.tmp.jpg"],
        "url": "https://photos.example.org/",
        PLUGINS_KEY: ["watermark", "copyright", "zip", "titles", "compress", "adjust"],
        "sort": {"albums": "-date", "media": "date"},
        "images": {"sizes": [640, 1024, 1600, 2048], "quality": 90, "progressive": True, "originals": "copy"},
        "thumbnails": {"height": 300, "style": "square"},
        "videos": {"max_size": 1280, "crf": 20, "preset": "slow"},
        "pages": {"links": "index.html", "slugs": "original"},
        "feeds": {"items": 20},
        PLUGIN_TABLE: {
            "watermark": {"image": p("..", "Pictures", "Published", ".marks", "mark.png"), "position": "bottom-right", "scale": 0.1,
                          "opacity": 0.4},
            "copyright": {"text": "© Jeanne Martin", "size": 0.0176, "color": "#ffffff", "opacity": 1.0,
                          "position": "bottom-left"},
            "zip": {"source": "originals"},
            "titles": {"rules": [
                {"pattern": "^([0-9]*)-(.*)$", "replace": "\\2 (\\1)", "count": 1, "albums": True, "media": False},
                {"pattern": "([a-z][a-z])([A-Z][a-z])", "replace": "\\1 \\2", "count": 0, "albums": True, "media": False},
                {"pattern": "_", "replace": " ", "count": 0, "albums": True, "media": False},
            ]},
            "compress": {"formats": ["gzip"], "extensions": ["htm", "html", "css", "js", "svg"]},
            "adjust": {"brightness": 1.1, "contrast": 1.05},
        },
    }
    config = albumen_loads(toml)
    assert config.sort.albums == "-date" and config.pages.links == "index.html"
    text = toml.read_text(encoding="utf-8")
    flat = text.replace("\n# ", " ")  # the comments unwrapped
    assert "hunter2" not in text and "hunter2" not in result.output
    assert "# sigal.conf.py line 7: img_size = (2048, 1365)\n" in text
    assert "the nearest corner of an image 2048x1365 (img_size) is bottom-right" in flat
    assert "24/1365 of the shorter side" in flat  # the copyright's size in pixels, converted
    assert "Albumen marks the thumbnails only with thumbnails = true" in flat
    assert "It is in the photo folder" not in flat  # (hidden there: not published)
    lost = reported(result.output)
    assert lost["plugin sigal.plugins.encrypt"] == (
        "use password albums: [passwords] in albumen.toml or 'password:' in an album's index.md, encrypted end to end (docs/PASSWORDS.md); Sigal's password is not copied: set it again")
    assert lost["plugin myplugins.exif_badge"] == "a plugin of your own: Albumen cannot run Sigal's plugins"
    assert lost["zip_gallery"] == "Albumen names each album's archive itself (Sigal: '{album.name}.zip')"
    assert lost["adjust_options (saturation)"] == "not a brightness, contrast, color or sharpness factor"
    assert lost["mp4_options (-movflags +faststart)"].startswith("Albumen runs the encoder itself")
    assert lost["jpg_options (subsampling)"] == "Albumen sets the other options of its JPEG encoder itself"
    assert lost["google_analytics"].startswith("Albumen's theme makes no request to other sites")
    assert lost["orig_link"].startswith("Albumen publishes cleaned copies of originals")
    assert lost["galery_theme"] == "not a setting of Sigal 2.6.1 or its plugins (did you mean galleria_theme?)"
    assert "theme" in lost and "titleregexp" not in lost
    for name, reason in lost.items():  # the same list at the end of the file
        assert f"# {name} (line" in text and reason in flat
    approximately = [line for line in result.output.splitlines() if line.startswith("approximately: ")]
    assert any(line.startswith("approximately: plugin.titles.rules: ") and "'break'" in line for line in approximately)
    assert any(line.startswith("approximately: plugin.watermark.position: ") for line in approximately)
    assert reported(result.output, "not needed") == {}  # listed in the file, printed with -v
    assert "# zip_skip_if_exists (line 43): archives are rebuilt only when their content changes" in text


COMPUTED = """\
import os
ROOT = os.path.dirname(os.path.abspath(__file__))
title = "Trips " + str(2024)
source = os.path.join(ROOT, "pictures")
img_size = (1600, 1200)
thumb_size = tuple(x // 2 for x in (400, 300))
author = f"{os.environ.get('USER')}"
medias_sort_attr = "date"
medias_sort_reverse = not False
plugins = ["sigal.plugins.watermark"]
plugins.append("sigal.plugins.copyright")
watermark = "mark.png"
if os.environ.get("SMALL"):
    img_size = (640, 480)
keep_orig = True
open(os.path.join(ROOT, "ran"), "w").write("ran")
"""


def test_computed_values_are_reported_not_run(tmp_path):
    result, toml = import_conf(tmp_path, COMPUTED)
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "ran").exists()
    data = tomllib.loads(toml.read_text(encoding="utf-8"))
    assert data == {"sort": {"albums": "name"}, "images": {"originals": "copy"}, "pages": {"slugs": "original"}}
    albumen_loads(toml)
    lost = reported(result.output)
    assert lost == {
        "title": "computed: a call (str(2024)); not run: set title by hand",
        "source": 'computed: a call (os.path.join(ROOT, "pictures")); not run: set source by hand',
        "thumb_size": "computed: a call (tuple(x // 2 for x in (400, 300))); not run: set thumbnails.height by hand",
        "author": "computed: an f-string (f\"{os.environ.get('USER')}\"); not run: set author by hand",
        "medias_sort_attr": "goes with medias_sort_reverse, which cannot be read: set sort.media by hand",
        "medias_sort_reverse": "computed: an operation (not False); not run: set sort.media by hand",
        "plugins": 'changed by an expression statement (plugins.append("sigal.plugins.copyright")); not run: '
                   "set plugins by hand",
        "watermark": 'plugins cannot be read (changed by an expression statement (plugins.append("sigal.plugins.'
                     'copyright"))), so whether Sigal used it (sigal.plugins.watermark) is not known',
        "img_size": "set in an if statement (line 13); not run: set images.sizes by hand",
    }
    assert "# img_size (line 13): set in an if statement (line 13); not run: set images.sizes by hand" in \
        toml.read_text(encoding="utf-8")


def test_a_syntax_error_names_its_line_and_writes_nothing(tmp_path):
    result, toml = import_conf(tmp_path, 'title = "x"\nimg_size = (800, 600\nthumb_size = (200, 150)\n')
    assert result.exit_code == 2
    assert "sigal.conf.py: not valid Python at line 2" in result.output
    assert not toml.exists()
    result, _ = import_conf(tmp_path, 'title = "x"\n  img_size = 3\n')
    assert result.exit_code == 2 and "at line 2" in result.output and "indent" in result.output


def test_an_existing_file_is_kept_unless_forced(tmp_path):
    toml = tmp_path / "albumen.toml"
    toml.write_text("# mine\n", encoding="utf-8")
    result, _ = import_conf(tmp_path, 'title = "New"\n')
    assert result.exit_code == 2 and "already exists" in result.output
    assert toml.read_text(encoding="utf-8") == "# mine\n"
    result, _ = import_conf(tmp_path, 'title = "New"\n', "--force")
    assert result.exit_code == 0 and tomllib.loads(toml.read_text(encoding="utf-8"))["title"] == "New"


def test_never_writes_into_the_photo_folder(tmp_path):
    (tmp_path / "pictures").mkdir()
    conf = tmp_path / "sigal.conf.py"
    conf.write_text('source = "pictures"\n', encoding="utf-8")
    result = run_cli("import-sigal", str(conf), "-o", str(tmp_path / "pictures" / "albumen.toml"))
    assert result.exit_code == 2 and "inside the photo folder" in result.output
    assert not (tmp_path / "pictures" / "albumen.toml").exists()


def test_help_has_examples():
    result = run_cli("import-sigal", "--help")
    assert result.exit_code == 0 and "Examples:" in result.output and "albumen import-sigal sigal.conf.py" in result.output


def test_docs_cover_every_sigal_setting_and_plugin():
    """docs/SIGAL.md's table names every setting and bundled plugin of Sigal 2.6.1 the importer knows."""
    from albumen.importers.sigal import PLUGINS

    doc = (Path(__file__).resolve().parents[1] / "docs" / "SIGAL.md").read_text(encoding="utf-8")
    missing = [name for name in [*SIGAL_DEFAULTS, *PLUGINS] if f"`{name}`" not in doc]
    assert missing == []


ARCHIVES = '''\
source = "pictures"
plugins = ["sigal.plugins.zip_gallery", "sigal.plugins.titleregexp", "sigal.plugins.compress_assets"]
zip_gallery = "{album.name}.zip"
zip_media_format = "resized"
titleregexp = {"regexp": [{"search": r"^[0-9-]+ (.*)$", "replace": r"\\1", "count": 1}], "substitute": [["_", " "]]}
compress_assets_options = {"method": "brotli", "suffixes": ["html", "css"]}
'''


def test_zip_gallery_titleregexp_and_compress_assets_become_albumens_plugins_and_build(tmp_path):
    """Sigal's zip_gallery, titleregexp and compress_assets are carried over to the bundled zip, titles and
    compress plugins, and a build with the imported file does what Sigal's did: an archive per album, the
    albums' titles rewritten (not the photos'), Brotli copies of the pages and the CSS only."""
    import brotli

    from conftest import make_jpeg, soup

    make_jpeg(tmp_path / "pictures" / "2024-07-02 Zermatt_walk" / "a.jpg", size=(200, 150))
    (tmp_path / "pictures" / "2024-07-02 Zermatt_walk" / "a.md").write_text("title: 2024-07-02 snow_field\n")
    result, toml = import_conf(tmp_path, ARCHIVES)
    assert result.exit_code == 0, result.output
    data = tomllib.loads(toml.read_text(encoding="utf-8"))
    assert data[PLUGINS_KEY] == ["zip", "titles", "compress"]
    assert data[PLUGIN_TABLE] == {
        "zip": {"source": "largest"},
        "titles": {"rules": [
            {"pattern": "^[0-9-]+ (.*)$", "replace": "\\1", "count": 1, "albums": True, "media": False},
            {"pattern": "_", "replace": " ", "count": 0, "albums": True, "media": False},
        ]},
        "compress": {"formats": ["brotli"], "extensions": ["html", "css"]},
    }
    built = run_cli("build", "-c", str(toml), "-o", str(tmp_path / "site"), "-j", "1")
    assert built.exit_code == 0, built.output
    site = tmp_path / "site"
    album = next(p for p in site.iterdir() if p.name.startswith("2024"))
    assert soup(album / "index.html").select_one("h1").get_text() == "Zermatt walk"
    assert soup(album / "a" / "index.html").select_one("title").get_text().startswith("2024-07-02 snow_field")
    with zipfile.ZipFile(album / "album.zip") as archive:
        assert archive.namelist() == ["a.jpg"]
    assert brotli.decompress((album / "index.html.br").read_bytes()) == (album / "index.html").read_bytes()
    assert (site / "static" / "albumen.css.br").is_file() and not (site / "static" / "albumen.js.br").exists()
    assert not list(site.rglob("*.gz"))


def test_watermark_copyright_and_adjust_are_carried_over_as_albumen_checks_them(tmp_path):
    """A mark beside the new file is carried over as it is; one that Albumen's watermark would refuse
    (outside the file's folder and the photo folder, or not a PNG) drops the plugin, saying how to
    bring it back, and the rest of the file is still written; a mark in the photo folder that is not
    hidden is written with a note (it would be published); braces in Sigal's copyright text are doubled,
    a font that is not there is reported, and one named among the system's fonts is found."""
    plugins = 'plugins = ["sigal.plugins.watermark", "sigal.plugins.copyright", "sigal.plugins.adjust"]\n'
    Image.new("RGBA", (64, 32)).save(tmp_path / "mark.png")
    result, toml = import_conf(tmp_path, plugins + 'watermark = "mark.png"\nwatermark_position = "tile"\n'
                               'copyright = "{c} Ann"\ncopyright_text_font = "no-such-font.ttf"\n'
                               'adjust_options = {"brightness": 0.9, "sharpness": 1.5}\n')
    assert result.exit_code == 0, result.output
    data = tomllib.loads(toml.read_text(encoding="utf-8"))
    assert data[PLUGINS_KEY] == ["watermark", "copyright", "adjust"]
    assert data[PLUGIN_TABLE]["watermark"] == {"image": "mark.png", "position": "tile", "scale": 0.1, "opacity": 1.0}
    assert data[PLUGIN_TABLE]["copyright"]["text"] == "{{c}} Ann"
    assert data[PLUGIN_TABLE]["adjust"] == {"brightness": 0.9, "sharpness": 1.5}
    assert reported(result.output)["copyright_text_font"].startswith("'no-such-font.ttf': no such font file here")
    config = albumen_loads(toml)
    assert [info.name for info in config.loaded_plugins] == ["watermark", "copyright", "adjust"]

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    Image.new("RGBA", (64, 32)).save(outside / "mark.png")
    (tmp_path / "new").mkdir()
    conf = tmp_path / "sigal.conf.py"
    conf.write_text(plugins + 'watermark = "elsewhere/mark.png"\ncopyright = "(c) Ann"\n', encoding="utf-8")
    result = run_cli("import-sigal", str(conf), "-o", str(tmp_path / "new" / "albumen.toml"))
    assert result.exit_code == 0, result.output
    data = tomllib.loads((tmp_path / "new" / "albumen.toml").read_text(encoding="utf-8"))
    assert data[PLUGINS_KEY] == ["copyright"]
    assert reported(result.output)["plugin sigal.plugins.watermark"] == (
        f"the watermark {outside / 'mark.png'} is outside the folder of albumen.toml ({tmp_path / 'new'}) and the "
        "photo folder, where Albumen's watermark must be: copy it beside albumen.toml, then add \"watermark\" to "
        "plugins and [plugin.watermark] image = \"mark.png\" (docs/PLUGINS.md); its position and opacity are not "
        "carried over either")

    Image.new("RGB", (64, 32)).save(tmp_path / "mark.jpg")
    result, toml = import_conf(tmp_path, plugins + 'watermark = "mark.jpg"\n', "--force")
    assert result.exit_code == 0, result.output
    assert reported(result.output)["plugin sigal.plugins.watermark"].startswith(
        f"the watermark {tmp_path / 'mark.jpg'} is a JPEG image, not a PNG: Albumen's watermark plugin lays a PNG")

    (tmp_path / "pictures").mkdir()
    Image.new("RGBA", (64, 32)).save(tmp_path / "pictures" / "logo.png")
    result, toml = import_conf(tmp_path, plugins + 'source = "pictures"\nwatermark = "pictures/logo.png"\n', "--force")
    assert result.exit_code == 0, result.output
    text = toml.read_text(encoding="utf-8").replace("\n# ", " ")
    assert "It is in the photo folder: Albumen publishes it as a photo unless it is hidden" in text
    albumen_loads(toml)

    system = next(Path("/usr/share/fonts").rglob("DejaVuSerif.ttf"), None) if Path("/usr/share/fonts").is_dir() else None
    if system is not None:  # (a font named as Sigal let Pillow find it)
        result, toml = import_conf(tmp_path, plugins + 'copyright = "(c) Ann"\ncopyright_text_font = "DejaVuSerif.ttf"\n',
                                   "--force")
        assert tomllib.loads(toml.read_text(encoding="utf-8"))[PLUGIN_TABLE]["copyright"]["font"] == str(system)
