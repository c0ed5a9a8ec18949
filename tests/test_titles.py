"""The bundled titles plugin: regular-expression rules that rewrite album and media titles."""

from __future__ import annotations

import pytest

from conftest import build_site, make_jpeg, soup, write_config

RULES = """plugins = ["titles"]
[plugin.titles]
rules = [
  { pattern = '^\\d{4}-\\d{2}-\\d{2} ', replace = '', media = false },
  { pattern = '_', replace = ' ' },
  { pattern = '^IMG (\\d+)$', replace = 'Photo \\1', albums = false },
]
"""


@pytest.fixture
def gallery(tmp_path):
    src = tmp_path / "photos"
    make_jpeg(src / "2024-07-02 Zermatt_walk" / "a.jpg", size=(200, 150), date="2024:07:02 10:00:00")
    (src / "2024-07-02 Zermatt_walk" / "a.md").write_text("title: IMG_0042\n")
    make_jpeg(src / "2024-07-02 Zermatt_walk" / "b.jpg", size=(200, 150), date="2024:07:02 11:00:00")
    (src / "2024-07-02 Zermatt_walk" / "b.md").write_text("title: 2024-07-02 dawn\n")
    make_jpeg(src / "2023-01-05 Bern" / "c.jpg", size=(200, 150), date="2023:01:05 10:00:00")
    make_jpeg(src / "2023-01-05 Bern" / "2023-01-05 " / "d.jpg", size=(200, 150))  # a title the rule would empty
    return src


def test_rules_rewrite_titles_everywhere_pages_show_them(gallery, tmp_path):
    """Album titles lose their date prefix and underscores (h1, cards, breadcrumbs, a photo's page, the
    sort by title); media titles get their own rule (albums = false) and not the album one (media =
    false); a title a rule would leave empty stays as it was; URLs keep the folder names."""
    site = tmp_path / "site"
    conf = write_config(tmp_path, RULES + '[sort]\nalbums = "title"\n')
    build_site(gallery, site, "-c", str(conf))
    home = soup(site / "index.html")
    assert [c.select_one(".card-title").get_text() for c in home.select(".card")] == ["Bern", "Zermatt walk"]
    album = soup(site / "2024-07-02-zermatt-walk" / "index.html")
    assert album.select_one("h1").get_text() == "Zermatt walk"
    photo = soup(site / "2024-07-02-zermatt-walk" / "a" / "index.html")
    assert photo.select_one("title").get_text().startswith("Photo 0042 – Zermatt walk")
    assert "Zermatt walk" in photo.select_one(".breadcrumbs").get_text()
    other = soup(site / "2024-07-02-zermatt-walk" / "b" / "index.html")
    assert other.select_one("title").get_text().startswith("2024-07-02 dawn – ")  # media = false for the date rule
    empty = soup(site / "2023-01-05-bern" / "2023-01-05" / "index.html")
    assert empty.select_one("h1").get_text().strip() == "2023-01-05"  # kept: the rule would leave nothing


def test_changing_the_rules_renders_the_pages_again_and_makes_no_image(gallery, tmp_path):
    site = tmp_path / "site"
    conf = write_config(tmp_path, RULES)
    build_site(gallery, site, "-c", str(conf))
    images = {p: p.stat().st_mtime_ns for p in site.rglob("*.jpg")}
    done = build_site(gallery, site, "-c", str(conf))
    assert "wrote 0 files" in done.stdout
    conf.write_text(RULES.replace("replace = ' '", "replace = '-'"))
    done = build_site(gallery, site, "-c", str(conf))
    assert "made 0 derivatives" in done.stdout
    assert {p: p.stat().st_mtime_ns for p in site.rglob("*.jpg")} == images
    assert soup(site / "2024-07-02-zermatt-walk" / "index.html").select_one("h1").get_text() == "Zermatt-walk"
    conf.write_text("")
    build_site(gallery, site, "-c", str(conf))
    assert soup(site / "2024-07-02-zermatt-walk" / "index.html").select_one("h1").get_text() == "2024-07-02 Zermatt_walk"


def test_bad_rules_are_configuration_errors_naming_their_key(tmp_path):
    from albumen.config import load_config
    from albumen.errors import ConfigError

    conf = write_config(tmp_path, """plugins = ["titles"]
[plugin.titles]
rules = [
  { pattern = '(unclosed', replace = '' },
  { pattern = '(a)', replace = '\\2' },
  { patern = 'x' },
  { pattern = 'x', count = -1 },
  { pattern = 'ok', replace = '\\g<1>' },
]
""")
    with pytest.raises(ConfigError) as caught:
        load_config(conf)
    problems = caught.value.problems
    # (what re says of a pattern or a group may be worded differently by another Python)
    assert [p.split(": ", 1)[0] for p in problems] == [
        "plugin.titles.rules[1].pattern", "plugin.titles.rules[2].replace", "plugin.titles.rules[3].patern",
        "plugin.titles.rules[3].pattern", "plugin.titles.rules[4].count", "plugin.titles.rules[5].replace",
    ]
    assert "not a regular expression (missing ), unterminated subpattern" in problems[0] and "'(unclosed'" in problems[0]
    assert "invalid group reference 2" in problems[1] and "invalid group reference 1" in problems[5]
    assert problems[2].endswith("unknown setting; did you mean 'plugin.titles.rules[3].pattern'?")
    assert problems[3:5] == ["plugin.titles.rules[3].pattern: required",
                             "plugin.titles.rules[4].count: expected an integer of at least 0, got an integer (-1)"]
    conf.write_text('plugins = ["titles"]\n[plugin.titles]\nrules = "^x"\n')
    with pytest.raises(ConfigError) as caught:
        load_config(conf)
    assert caught.value.problems == ["plugin.titles.rules: expected a list of tables ([{ ... }, ...]), got a string ('^x')"]
