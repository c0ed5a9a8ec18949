"""Config validation: every problem at once, with key, expectation and a did-you-mean hint."""

from __future__ import annotations

import codecs

import pytest

from albumen.config import load_config, validate_config
from albumen.errors import ConfigError


def problems_of(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        validate_config(data, path="albumen.toml")
    return info.value.problems


def test_defaults_need_no_file(tmp_path):
    loaded = load_config(cwd=tmp_path)
    assert loaded.path is None
    assert loaded.config.images.formats == ("jpeg",)
    assert loaded.config.thumbnails.style == "justified"


def test_unknown_keys_get_did_you_mean_hints():
    problems = problems_of({"titel": "x", "images": {"qualty": 80}, "quality": 80})
    assert "titel: unknown setting; did you mean 'title'?" in problems
    assert "images.qualty: unknown setting; did you mean 'images.quality'?" in problems
    assert "quality: unknown setting; did you mean 'images.quality'?" in problems


def test_all_problems_reported_at_once_with_expectations():
    problems = problems_of(
        {
            "url": "ftp://example.org",
            "timezone": "Mars/Olympus",
            "language": "de",
            "images": {"quality": 101, "formats": ["jpeg", "gif"], "sizes": [], "keep_metadata": "yes"},
            "thumbnails": {"style": "round"},
            "sort": {"media": "- date"},
        }
    )
    assert problems == [
        "url: expected an absolute http(s) address such as 'https://photos.example.org/', got 'ftp://example.org'",
        "timezone: expected a time zone name such as 'Europe/Paris' or 'UTC', got 'Mars/Olympus'",
        "language: expected one of 'en', 'fr', got a string ('de')",
        "images.quality: expected an integer from 1 to 100, got an integer (101)",
        "images.formats: 'gif' is not one of jpeg, webp, avif",
        "images.sizes: expected at least one size, got a list ([])",
        "images.keep_metadata: expected true or false, got a string ('yes')",
        "thumbnails.style: expected one of 'justified', 'square', got a string ('round')",
        "sort.media: expected 'date', 'name', 'title' or a sidecar key, optionally prefixed by '-', got '- date'",
    ]


def test_booleans_are_not_integers():
    assert problems_of({"images": {"quality": True}}) == [
        "images.quality: expected an integer from 1 to 100, got a boolean (True)"
    ]


def test_section_must_be_a_table():
    assert problems_of({"images": 3}) == ["images: expected a table ([images]), got an integer (3)"]


def test_url_gets_trailing_slash():
    assert validate_config({"url": "https://photos.example.org/trips"}).url == "https://photos.example.org/trips/"


def test_invalid_toml_names_file_and_position(tmp_path):
    path = tmp_path / "albumen.toml"
    path.write_text('title = "unterminated\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(cwd=tmp_path)
    text = str(info.value)
    assert str(path) in text and "invalid TOML" in text and "line 1" in text


def test_relative_paths_resolve_against_the_config_folder(tmp_path):
    folder = tmp_path / "conf"
    folder.mkdir()
    (folder / "albumen.toml").write_text('source = "photos"\noutput = "../site"\n', encoding="utf-8")
    loaded = load_config(folder / "albumen.toml", cwd=tmp_path)
    assert loaded.resolve(loaded.config.source) == (folder / "photos").resolve()
    assert loaded.resolve(loaded.config.output) == (tmp_path / "site").resolve()


def test_config_only_looked_for_in_current_directory(tmp_path):
    (tmp_path / "albumen.toml").write_text('title = "Parent"\n', encoding="utf-8")
    child = tmp_path / "child"
    child.mkdir()
    assert load_config(cwd=child).config.title == ""
    assert load_config(cwd=tmp_path).config.title == "Parent"


def test_overrides_apply_after_validation_rules(tmp_path):
    loaded = load_config(cwd=tmp_path, overrides={"images.quality": 70})
    assert loaded.config.images.quality == 70
    with pytest.raises(ConfigError):
        load_config(cwd=tmp_path, overrides={"images.quality": 0})


def test_settings_doc_is_generated_from_the_declarations():
    from pathlib import Path

    from albumen.config.docs import settings_markdown

    doc = Path(__file__).resolve().parents[1] / "docs" / "SETTINGS.md"
    assert doc.read_text(encoding="utf-8") == settings_markdown(), (
        "docs/SETTINGS.md is stale: python -m albumen.config.docs > docs/SETTINGS.md"
    )


def test_the_folders_and_programs_a_config_names_are_checked_together(tmp_path):
    """A missing theme, a cache folder inside the photos and a wrong ffmpeg: one run names all three
    (it took a run for each), and nothing is written."""
    from conftest import make_jpeg, run_cli

    src, out = tmp_path / "photos", tmp_path / "out"
    make_jpeg(src / "a.jpg")
    conf = tmp_path / "albumen.toml"
    conf.write_text(f'theme = "no-such-theme"\ncache_dir = "{src / "cache"}"\n[videos]\nffmpeg = "/nonexistent/ffmpeg"\n')
    result = run_cli("build", str(src), "-o", str(out), "-c", str(conf))
    assert result.exit_code == 2
    assert "3 problems:" in result.stderr
    assert f"theme folder not found: {tmp_path / 'no-such-theme'}" in result.stderr
    assert "is inside the photo folder or the output" in result.stderr
    assert "videos.ffmpeg: /nonexistent/ffmpeg is not an executable file" in result.stderr
    assert not out.exists() and sorted(p.name for p in src.iterdir()) == ["a.jpg"]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_a_config_saved_with_a_byte_order_mark_is_read(tmp_path, encoding):
    """Notepad saves UTF-8 with a byte-order mark, PowerShell's '>' writes UTF-16 with one: the file
    was refused as 'invalid TOML' (or 'not UTF-8')."""
    text = 'title = "Été"\nprivate = ["Family"]\n'
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = codecs.BOM_UTF16_BE + data
    (tmp_path / "albumen.toml").write_bytes(data)
    loaded = load_config(cwd=tmp_path)
    assert loaded.config.title == "Été" and loaded.config.private == ("Family",)


def test_the_theme_table_and_its_short_form():
    """[theme] holds the theme's folder, its colour scheme and accent; `theme = "folder"` (the one
    form before the table) still names the folder."""
    assert validate_config({"theme": "my-theme"}).theme.path == "my-theme"
    config = validate_config({"theme": {"path": "t", "scheme": "dark", "accent": "#C0392b"}})
    assert (config.theme.path, config.theme.scheme, config.theme.accent) == ("t", "dark", "#C0392b")
    assert validate_config({}).theme.scheme == "auto" and validate_config({}).theme.accent == ""
    assert problems_of({"theme": {"scheme": "sepia", "accent": "red", "colour": "#fff"}}) == [
        "theme.scheme: expected one of 'auto', 'light', 'dark', got a string ('sepia')",
        "theme.accent: expected a colour written '#rrggbb' (such as '#c0392b'), got 'red'",
        "theme.colour: unknown setting",
    ]
    for bad in ("#fff", "#12345g", "c0392b", "#c0392b "):
        assert problems_of({"theme": {"accent": bad}}) == [
            f"theme.accent: expected a colour written '#rrggbb' (such as '#c0392b'), got {bad!r}"]


def test_an_accent_is_made_readable_on_light_and_dark_pages():
    from albumen.render.colours import DARK_PAGE, LIGHT_PAGE, accent_style, contrast, readable_on

    assert accent_style("") == ""
    assert readable_on("#0b63c7", LIGHT_PAGE) == "#0b63c7"  # readable already: kept
    for accent in ("#ffcc00", "#ffffff", "#000000", "#c0392b", "#7cb7ff", "#2ecc71"):
        light, dark = readable_on(accent, LIGHT_PAGE), readable_on(accent, DARK_PAGE)
        assert contrast(light, LIGHT_PAGE) >= 4.5 and contrast(dark, DARK_PAGE) >= 4.5, accent
        assert accent_style(accent) == f"--al:{light};--ad:{dark}"
