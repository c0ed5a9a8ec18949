"""albumen set-meta: one sidecar written or updated, the rest of it kept byte for byte, read back by
the scanner's own reader; what it cannot read whole and trust is left as it is."""

from __future__ import annotations

import codecs
import os
import stat

import pytest

from albumen.scan.sidecar import meta_text, read_sidecar
from conftest import build_site, make_jpeg, run_cli, soup


def set_meta(*args: str):
    return run_cli("set-meta", *map(str, args))


def meta(path) -> dict:
    sidecar, notes = read_sidecar(str(path), path.name)
    assert notes == []
    return sidecar.meta


def photo(folder, name="beach.jpg"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(b"not read")
    return folder / name


def no_temporary_files(folder) -> bool:
    return not [n for n in os.listdir(folder) if n.startswith(".albumen-tmp-")]


# ------------------------------------------------------------------------------------ which sidecar
def test_a_new_sidecar_is_the_photos_own_and_the_build_shows_it(tmp_path):
    src = tmp_path / "photos"
    make_jpeg(src / "Trips" / "beach.jpg")
    result = set_meta(src / "Trips" / "beach.jpg", "title=The beach at noon", "tags=sea, sand")
    assert result.exit_code == 0, result.output
    assert (src / "Trips" / "beach.md").read_bytes() == b"Title: The beach at noon\nTags: sea, sand\n"  # Sigal's form
    result = set_meta(src / "Trips", "title=Summer trips")
    assert result.exit_code == 0, result.output
    assert (src / "Trips" / "index.md").read_text() == "Title: Summer trips\n"
    build_site(src, tmp_path / "site")
    album = soup(tmp_path / "site" / "trips" / "index.html")
    assert album.find("h1").get_text(strip=True) == "Summer trips"
    page = soup(tmp_path / "site" / "trips" / "beach" / "index.html")
    assert "The beach at noon" in page.find("title").get_text()


def test_the_sidecar_is_found_as_the_scanner_pairs_them(tmp_path):
    folder = tmp_path / "Trips"
    photo(folder, "beach.jpg")
    (folder / "beach.md").write_text("Title: stem\n")
    (folder / "beach.jpg.md").write_text("Title: exact\n")
    assert set_meta(folder / "beach.jpg", "title=New").exit_code == 0
    assert (folder / "beach.jpg.md").read_text() == "Title: New\n"  # photo.jpg.md wins over photo.md
    assert (folder / "beach.md").read_text() == "Title: stem\n"
    # another file named like the photo: a new sidecar names the photo alone
    photo(folder, "sea.jpg")
    photo(folder, "sea.png")
    assert set_meta(folder / "sea.jpg", "title=Sea").exit_code == 0
    assert (folder / "sea.jpg.md").exists() and not (folder / "sea.md").exists()
    # index.jpg's sidecar is never the album's index.md
    photo(folder, "index.jpg")
    assert set_meta(folder / "index.jpg", "title=Index photo").exit_code == 0
    assert (folder / "index.jpg.md").read_text() == "Title: Index photo\n" and not (folder / "index.md").exists()
    # a RAW file beside it is another file of that name too, and an .xmp or a caption is not
    photo(folder, "cliff.jpg")
    (folder / "cliff.xmp").write_text("<x/>")
    assert set_meta(folder / "cliff.jpg", "title=Cliff").exit_code == 0
    assert (folder / "cliff.md").exists()
    # an album's index.md is found whatever its capitals
    (folder / "INDEX.md").write_text("Title: Old\n")
    assert set_meta(folder, "title=New").exit_code == 0
    assert (folder / "INDEX.md").read_text() == "Title: New\n" and not (folder / "index.md").exists()


# ------------------------------------------------------------------------------- kept byte for byte
def test_a_sigal_header_keeps_every_other_byte(tmp_path):
    folder = tmp_path / "Trips"
    folder.mkdir()
    index = folder / "index.md"
    index.write_bytes(b"Title:   Trips\r\nSort: -date\r\nTags: a,\r\n    b\r\n\r\nOur *trips*.\r\nSort: not a key\r\n")
    result = set_meta(folder, "album_sort=-date", "sort=", "title=Voyages d'\u00e9t\u00e9", "tags=")
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("(the sidecar of " + str(folder) + "): album_sort set, sort removed, title set, tags removed")
    assert index.read_bytes() == (
        "Title:   Voyages d'\u00e9t\u00e9\r\nAlbum_sort: -date\r\n\r\nOur *trips*.\r\nSort: not a key\r\n".encode()
    )
    assert meta(index) == {"title": "Voyages d'\u00e9t\u00e9", "album_sort": "-date"}
    # every key removed: the blank line that ended the header goes too, the text stays as it was
    assert set_meta(folder, "title=", "album_sort=").exit_code == 0
    assert index.read_bytes() == b"Our *trips*.\r\nSort: not a key\r\n"


def test_yaml_front_matter_keeps_comments_lists_and_the_body(tmp_path):
    folder = tmp_path / "A"
    photo(folder)
    sidecar = folder / "beach.md"
    sidecar.write_text(
        "---\n"
        "title: Old  # why this title\n"
        "tags:\n"
        "  - sea\n"
        "  - sand\n"
        "\n"
        "# the date below is when we went\n"
        "date: 2024-07-01\n"
        "description: |\n"
        "  Two\n"
        "\n"
        "  paragraphs.\n"
        "---\n"
        "The body, *kept*.\n"
    )
    result = set_meta(folder / "beach.jpg", "title=New: title", "date=", "author=O'Brien", "description=One\n\ntwo")
    assert result.exit_code == 0, result.output
    assert sidecar.read_text() == (
        "---\n"
        'title: "New: title"  # why this title\n'
        "tags:\n"
        "  - sea\n"
        "  - sand\n"
        "\n"
        "# the date below is when we went\n"
        "description: |-\n"
        "  One\n"
        "\n"
        "  two\n"
        "author: O'Brien\n"
        "---\n"
        "The body, *kept*.\n"
    )
    assert meta(sidecar) == {"title": "New: title", "tags": ["sea", "sand"], "description": "One\n\ntwo", "author": "O'Brien"}


def test_toml_front_matter_in_utf16_with_a_bom_and_crlf(tmp_path):
    folder = tmp_path / "A"
    photo(folder)
    sidecar = folder / "beach.md"
    text = '+++\r\ntitle = "Old" # kept\r\ntags = [\r\n  "a",\r\n]\r\n\r\n[extra]\r\nx = 1\r\n+++\r\nCorps du texte\r\n'
    sidecar.write_bytes(codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    sidecar.chmod(0o640)
    result = set_meta(folder / "beach.jpg", 'title=Un "titre" \\ étrange', "private=true", "tags=")
    assert result.exit_code == 0, result.output
    expected = '+++\r\ntitle = \'Un "titre" \\ étrange\' # kept\r\nprivate = true\r\n\r\n[extra]\r\nx = 1\r\n+++\r\nCorps du texte\r\n'
    assert sidecar.read_bytes() == codecs.BOM_UTF16_LE + expected.encode("utf-16-le")
    assert stat.S_IMODE(sidecar.stat().st_mode) == 0o640
    assert meta(sidecar) == {"title": 'Un "titre" \\ étrange', "private": True, "extra": {"x": 1}}
    assert no_temporary_files(folder)


VALUES = [
    "plain", "a: b", "#not a comment", "- not a list", "'quoted'", '"double"', "yes", "null", "~", "*alias",
    "&anchor x", "{flow}", "[1, 2]", "x # y", "2024-07-01", "3.14", "@at", "`tick`", "%percent", "!tag x", "?q",
    "back\\slash", "tab\there", "é ü 日本 🙂", "emoji\u200djoiner", "ends with colon:", "line\u2028break",
    "two\nlines", "para\n\npara", "  lead and trail  ", "a\r\nb",
]


@pytest.mark.parametrize("style", ["sigal", "yaml", "toml", "new"])
def test_values_read_back_through_the_scanners_reader(tmp_path, style):
    folder = tmp_path / "A"
    photo(folder)
    sidecar = folder / "beach.md"
    header = {"sigal": "Title: x\n\nBody\n", "yaml": "---\ntitle: x\n---\nBody\n", "toml": '+++\ntitle = "x"\n+++\nBody\n'}
    for value in VALUES:
        if style in header:
            sidecar.write_text(header[style])
        elif sidecar.exists():
            sidecar.unlink()
        result = set_meta(folder / "beach.jpg", f"title={value}")
        expected = " ".join(value.replace("\r\n", "\n").replace("\u2028", "\n").strip().split(" "))
        if style == "sigal" and "\n" in expected:
            assert result.exit_code == 1 and "several lines" in result.output  # a 'Key: value' line cannot
            assert sidecar.read_text() == header[style]
            continue
        assert result.exit_code == 0, (value, result.output)
        assert meta_text(meta(sidecar), "title") == expected, (value, sidecar.read_text())
        if style in header:
            assert sidecar.read_text().endswith("Body\n")


# ----------------------------------------------------------------------------------------- refusals
@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"---\ntitle: never closed\n\nText\n", "never closed"),
        (b"Title: x\nthis line is prose\n\nText\n", "the header stops at line 2"),
        (b"---\ntitle: [unclosed\n---\nText\n", "invalid YAML front matter"),
        (b"---\n- private: true\n---\nText\n", "not a set of keys"),
        (b"+++\ntitle = \n+++\nText\n", "invalid TOML front matter"),
        ("Title: x\n\nText\n".encode("utf-16-le"), "NUL bytes"),
        (codecs.BOM_UTF8 + b"Title: \xff\n", "not UTF-8 text, as its byte-order mark says"),
        (b"Title: \x81\x8d\n", "not UTF-8 or Windows-1252 text"),
        (b"# Family\nprivate: true\n\nText\n", "kept private to be safe"),  # the reader warns: refused
        (b"Title: x\n\n" + b"a" * (1 << 20), "larger than 1 MiB"),
        # read whole, but in a shape the editor does not edit (a flow mapping): the read-back check refuses
        (b"---\n{title: Old}\n---\nText\n", "cannot make this change safely"),
    ],
)
def test_a_sidecar_it_cannot_read_whole_is_left_as_it_is(tmp_path, content, why):
    folder = tmp_path / "Family"
    folder.mkdir()
    (folder / "index.md").write_bytes(content)
    result = set_meta(folder, "title=Family")
    assert result.exit_code == 1, result.output
    assert why in result.output and "nothing was written" in result.output
    assert (folder / "index.md").read_bytes() == content
    assert no_temporary_files(folder)


def test_links_fifos_and_sidecars_given_as_photos_are_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "index.md").write_text("Title: Outside\n")
    (outside / "elsewhere.jpg").write_bytes(b"x")
    folder = tmp_path / "photos" / "A"
    photo(folder)
    (folder / "beach.md").symlink_to(outside / "index.md")
    result = set_meta(folder / "beach.jpg", "title=X")
    assert result.exit_code == 1 and "symbolic link" in result.output
    assert (outside / "index.md").read_text() == "Title: Outside\n" and (folder / "beach.md").is_symlink()
    (tmp_path / "photos" / "Link").symlink_to(outside)
    result = set_meta(tmp_path / "photos" / "Link", "title=X")
    assert result.exit_code == 2 and "symbolic link to the folder" in result.output
    (folder / "far.jpg").symlink_to(outside / "elsewhere.jpg")
    result = set_meta(folder / "far.jpg", "title=X")
    assert result.exit_code == 2 and "in another folder" in result.output
    assert sorted(os.listdir(outside)) == ["elsewhere.jpg", "index.md"]
    os.mkfifo(folder / "pipe.jpg")
    result = set_meta(folder / "pipe.jpg", "title=X")
    assert result.exit_code == 2 and "not a photo or a folder" in result.output
    os.mkfifo(folder / "index.md")
    result = set_meta(folder, "title=X")  # would hang if it were opened
    assert result.exit_code == 1 and "not a regular file" in result.output
    (folder / "notes.md").write_text("Title: notes\n")
    result = set_meta(folder / "notes.md", "title=X")
    assert result.exit_code == 2 and "a sidecar itself" in result.output
    assert set_meta(tmp_path / "nothing.jpg", "title=X").exit_code == 2
    assert set_meta(folder / "beach.jpg", "title").exit_code == 2  # not key=value
    assert set_meta(folder / "beach.jpg", "tít le=x").exit_code == 2
    assert set_meta(folder / "beach.jpg", "private=maybe").exit_code == 2


def test_windows_1252_stays_windows_1252(tmp_path):
    folder = tmp_path / "A"
    photo(folder)
    sidecar = folder / "beach.md"
    sidecar.write_bytes("Title: Caf\u00e9\n\nCr\u00e8me br\u00fbl\u00e9e \u2013 \u20ac5\n".encode("cp1252"))
    assert set_meta(folder / "beach.jpg", "title=No\u00ebl").exit_code == 0
    assert sidecar.read_bytes() == "Title: No\u00ebl\n\nCr\u00e8me br\u00fbl\u00e9e \u2013 \u20ac5\n".encode("cp1252")
    result = set_meta(folder / "beach.jpg", "title=\u65e5\u672c")  # not in Windows-1252
    assert result.exit_code == 1 and "save it as UTF-8" in result.output
    assert sidecar.read_bytes().startswith(b"Title: No\xebl\n")


def test_dry_run_shows_the_diff_and_writes_nothing(tmp_path):
    folder = tmp_path / "A"
    photo(folder)
    sidecar = folder / "beach.md"
    sidecar.write_bytes(b"Title: Old\r\n\r\nText\r\n")
    before = sidecar.stat()
    result = set_meta(folder / "beach.jpg", "title=New", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "-Title: Old\n+Title: New\n" in result.output and "(kept: CRLF line endings)" in result.output
    assert "dry run: nothing written" in result.output
    assert sidecar.read_bytes() == b"Title: Old\r\n\r\nText\r\n" and sidecar.stat().st_mtime_ns == before.st_mtime_ns
    result = set_meta(folder / "beach.jpg", "title=Old")
    assert "already says so; nothing written" in result.output and sidecar.stat().st_mtime_ns == before.st_mtime_ns
    result = set_meta(folder / "sea.jpg", "title=x", "--dry-run")
    assert result.exit_code == 2  # no such photo
    photo(folder, "sea.jpg")
    result = set_meta(folder / "sea.jpg", "title=Sea", "--dry-run")
    assert "--- /dev/null" in result.output and "+Title: Sea" in result.output and not (folder / "sea.md").exists()


def test_a_headerless_sidecar_gets_a_header_and_keeps_its_text(tmp_path):
    folder = tmp_path / "A"
    photo(folder)
    sidecar = folder / "beach.md"
    sidecar.write_bytes(b"\nJust a description,\nover two lines.")
    assert set_meta(folder / "beach.jpg", "title=Beach").exit_code == 0
    assert sidecar.read_bytes() == b"Title: Beach\n\n\nJust a description,\nover two lines."
    assert set_meta(folder / "beach.jpg", "author=Me").exit_code == 0
    assert sidecar.read_bytes() == b"Title: Beach\nAuthor: Me\n\n\nJust a description,\nover two lines."
    photo(folder, "sea.jpg")
    assert set_meta(folder / "sea.jpg", "description=One\n\nTwo").exit_code == 0
    assert (folder / "sea.md").read_text() == "---\ndescription: |-\n  One\n\n  Two\n---\n"


def test_help_has_examples():
    result = run_cli("set-meta", "--help")
    assert result.exit_code == 0 and "Examples:" in result.output and "albumen set-meta Trips/beach.jpg" in result.output
