"""The bundled zip plugin: one archive per album, and the stored-ZIP writer under it (write/archive.py)."""

from __future__ import annotations

import io
import os
import re
import zipfile
from datetime import datetime
from pathlib import Path

import pytest
from PIL import Image

from conftest import build_site, make_jpeg, make_video, soup, write_config

ZIP = 'plugins = ["zip"]\n'


def _stamps(site: Path, pattern: str = "*") -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(site)): (p.stat().st_ino, p.stat().st_mtime_ns) for p in site.rglob(pattern) if p.is_file()}


def _centre(data: bytes) -> tuple[int, ...]:
    with Image.open(io.BytesIO(data)) as im:
        rgb = im.convert("RGB")
        return rgb.getpixel((rgb.width // 2, rgb.height // 2))


def _near(a, b, tolerance: int = 10) -> bool:
    return all(abs(x - y) <= tolerance for x, y in zip(a, b, strict=True))


# -- the writer ------------------------------------------------------------------------------------


def _members(tmp_path: Path):
    from albumen.write.archive import Member

    out = []
    for n, (name, size) in enumerate([("a.jpg", 1000), ("été b.jpg", 300), ("c.mp4", 5000)]):
        path = tmp_path / f"m{n}"
        path.write_bytes(os.urandom(size))
        out.append(Member(name, str(path), size, datetime(2024, 7, 2, 10, 11, 12) if n != 1 else None))
    return out


@pytest.mark.parametrize("limits", [None, (500, 0xFFFF), (500, 2)], ids=["plain", "zip64-sizes", "zip64-count"])
def test_the_archive_writer_stores_members_streaming_and_knows_its_size(tmp_path, monkeypatch, limits):
    """Members stored as they are, in order, with their names (UTF-8) and times; the size archive_size
    gives is the size written; ZIP64 records where a size, offset or count needs them (the limits
    lowered here: 4 GiB files are not made in a test), read back by zipfile; the same members give the
    same bytes."""
    from albumen.write import archive

    if limits:
        monkeypatch.setattr(archive, "LIMIT", limits[0])
        monkeypatch.setattr(archive, "COUNT_LIMIT", limits[1])
    members = _members(tmp_path)
    written = []
    for _ in range(2):
        out = io.BytesIO()
        archive.write_archive(members, out)
        written.append(out.getvalue())
    assert written[0] == written[1]
    assert len(written[0]) == archive.archive_size(members)
    with zipfile.ZipFile(io.BytesIO(written[0])) as z:
        assert z.testzip() is None
        infos = z.infolist()
        assert [i.filename for i in infos] == ["a.jpg", "été b.jpg", "c.mp4"]
        assert {i.compress_type for i in infos} == {zipfile.ZIP_STORED}
        assert [i.date_time for i in infos] == [(2024, 7, 2, 10, 11, 12), (1980, 1, 1, 0, 0, 0), (2024, 7, 2, 10, 11, 12)]
        assert all(z.read(m.name) == Path(m.path).read_bytes() for m in members)
        assert all((i.external_attr >> 16) == 0o100644 for i in infos)
    if limits:
        assert b"PK\x06\x06" in written[0]  # the ZIP64 end of central directory


def test_a_member_that_changed_size_fails_the_archive(tmp_path):
    from albumen.write.archive import write_archive

    members = _members(tmp_path)
    Path(members[1].path).write_bytes(b"longer" * 100)
    with pytest.raises(OSError, match="is not of the size it had"):
        write_archive(members, io.BytesIO())


def test_entry_names_are_safe_and_unique_whatever_the_case():
    from albumen.plugins.bundled.zip import Names, size_text

    names = Names()
    got = [names.unique(n) for n in ["a.jpg", "A.JPG", "a (2).jpg", "back\\slash:.jpg", "../up.jpg", ".hidden", "noext",
                                     "NOEXT"]]
    assert got == ["a.jpg", "A (2).JPG", "a (2) (2).jpg", "back_slash_.jpg", "_up.jpg", "hidden", "noext", "NOEXT (2)"]
    assert size_text(999) == "999 B" and size_text(1_536) == "1.5 kB" and size_text(12_345_678) == "12.3 MB"
    assert size_text(12_345_678, "fr") == "12,3 Mo" and size_text(345_000_000) == "345 MB"


# -- the plugin --------------------------------------------------------------------------------


COLOURS = {"a": (200, 40, 40), "A": (40, 200, 40), "odd": (40, 40, 200)}


@pytest.fixture
def gallery(tmp_path) -> Path:
    src = tmp_path / "photos"
    make_jpeg(src / "Alps" / "a.jpg", size=(300, 400), color=COLOURS["a"], date="2024:07:01 09:00:00")
    make_jpeg(src / "Alps" / "A.JPG", size=(400, 300), color=COLOURS["A"], date="2024:07:02 10:11:12")
    make_jpeg(src / "Alps" / "back\\slash.jpg", size=(320, 240), color=COLOURS["odd"], date="2024:07:03 08:00:00")
    make_jpeg(src / "Alps" / "Secret Qzx" / "hidden-qzx.jpg", size=(200, 150), color=(90, 90, 90))
    (src / "Alps" / "Secret Qzx" / "index.md").write_text("private: true\n")
    make_jpeg(src / "Plain" / "p.jpg", size=(200, 150))
    (src / "Plain" / "index.md").write_text("title: Plain\nzip: false\n")
    make_jpeg(src / "top.jpg", size=(200, 150), date="2024:01:01 10:00:00")
    return src


def _entries(path: Path) -> list[zipfile.ZipInfo]:
    with zipfile.ZipFile(path) as z:
        assert z.testzip() is None
        return z.infolist()


def test_each_album_gets_an_archive_of_its_own_photos_linked_with_its_size(gallery, tmp_path):
    """Entries in the album's order, under the photos' file names (made unique whatever the case, and
    safe), each the largest published image stored as it is and dated when taken; the album page links
    it with its size; a private album's archive is in its own folder and no public one holds its photos;
    'zip: false' in index.md: no archive, no link."""
    from albumen.plugins.bundled.zip import size_text

    site = tmp_path / "site"
    build_site(gallery, site, "-c", str(write_config(tmp_path, ZIP)))
    archive = site / "alps" / "album.zip"
    infos = _entries(archive)
    assert [i.filename for i in infos] == ["a.jpg", "A (2).JPG", "back_slash.jpg"]
    assert {i.compress_type for i in infos} == {zipfile.ZIP_STORED}
    assert [i.date_time for i in infos] == [(2024, 7, 1, 9, 0, 0), (2024, 7, 2, 10, 11, 12), (2024, 7, 3, 8, 0, 0)]
    published = {p.read_bytes() for p in (site / "alps").glob("*/*.jpg") if re.search(r"\.\d+w\.", p.name)}  # display
    with zipfile.ZipFile(archive) as z:
        data = [z.read(i) for i in infos]
    assert set(data) == published and len(published) == 3  # the published images, byte for byte
    for got, colour in zip(data, (COLOURS["a"], COLOURS["A"], COLOURS["odd"]), strict=True):
        assert _near(_centre(got), colour), (_centre(got), colour)
    link = soup(site / "alps" / "index.html").select_one(".album-download a")
    assert link["href"] == "album.zip" and link["download"] == "Alps.zip" and link["type"] == "application/zip"
    size_shown = soup(site / "alps" / "index.html").select_one(".album-download-size").get_text()
    assert size_shown == f"(ZIP, {size_text(archive.stat().st_size)})"
    assert [i.filename for i in _entries(site / "album.zip")] == ["top.jpg"]  # the home album's own photos
    private = list((site / "p").glob("*/album.zip"))
    assert len(private) == 1 and [i.filename for i in _entries(private[0])] == ["hidden-qzx.jpg"]
    assert soup(private[0].parent / "index.html").select_one(".album-download a")["href"] == "album.zip"
    for path in site.rglob("*.zip"):
        if path not in private:
            assert b"qzx" not in path.read_bytes().lower()
    assert not (site / "plain" / "album.zip").exists()
    assert soup(site / "plain" / "index.html").select_one(".album-download") is None


def test_an_unchanged_album_keeps_its_archive_and_the_bytes_are_the_same_in_any_build(gallery, tmp_path):
    """A second build with nothing changed writes nothing; a change elsewhere rewrites only that album's
    archive; a build into another folder makes the same bytes; 'zip: false' removes the archive and
    its link, and an album removed from the photos takes its archive with it."""
    site = tmp_path / "site"
    conf = write_config(tmp_path, ZIP)
    build_site(gallery, site, "-c", str(conf))
    everything = _stamps(site)
    done = build_site(gallery, site, "-c", str(conf))
    assert "wrote 0 files" in done.stdout and _stamps(site) == everything

    make_jpeg(gallery / "extra.jpg", size=(200, 150), date="2024:01:02 10:00:00")
    build_site(gallery, site, "-c", str(conf))
    zips = _stamps(site, "*.zip")
    assert zips["alps/album.zip"] == everything["alps/album.zip"]  # not written again
    assert zips["album.zip"] != everything["album.zip"]
    assert [i.filename for i in _entries(site / "album.zip")] == ["top.jpg", "extra.jpg"]

    other = tmp_path / "other"
    build_site(gallery, other, "-c", str(conf))
    for name in ("album.zip", "alps/album.zip"):
        assert (other / name).read_bytes() == (site / name).read_bytes()

    (gallery / "Alps" / "index.md").write_text("zip: false\n")
    build_site(gallery, site, "-c", str(conf))
    assert not (site / "alps" / "album.zip").exists()
    assert soup(site / "alps" / "index.html").select_one(".album-download") is None
    (gallery / "Alps" / "index.md").unlink()
    build_site(gallery, site, "-c", str(conf))
    assert (site / "alps" / "album.zip").read_bytes() == (other / "alps" / "album.zip").read_bytes()
    for path in (gallery / "Alps").rglob("*"):
        if path.is_file():
            path.unlink()
    build_site(gallery, site, "-c", str(conf))
    assert not (site / "alps").exists() and not list(site.glob("p/*/album.zip"))


def test_the_source_option_remakes_the_archives_and_no_image(gallery, tmp_path):
    """source = 'originals' puts the published originals (images.originals = 'copy') in the archives:
    the archives are made again, no image is."""
    site = tmp_path / "site"
    conf = write_config(tmp_path, ZIP + '[images]\noriginals = "copy"\n')
    build_site(gallery, site, "-c", str(conf))
    images = _stamps(site, "*.jpg")
    before = _stamps(site, "*.zip")
    conf.write_text(ZIP + '[plugin.zip]\nsource = "originals"\n[images]\noriginals = "copy"\n')
    done = build_site(gallery, site, "-c", str(conf))
    assert "made 0 derivatives" in done.stdout, done.stdout
    assert _stamps(site, "*.jpg") == images
    after = _stamps(site, "*.zip")
    assert set(after) == set(before) and all(after[k] != before[k] for k in after)
    originals = {p.read_bytes() for p in (site / "alps").glob("*/*.original.*.jpg")}
    with zipfile.ZipFile(site / "alps" / "album.zip") as z:
        assert {z.read(i) for i in z.infolist()} == originals and len(originals) == 3


def test_a_video_is_archived_as_its_mp4_and_every_page_of_an_album_links_the_archive(tmp_path):
    """A video's entry is its published MP4 (named after it, '.mp4'), beside the photos in the album's
    order; an album of several pages links its archive, with the same size, from each of them."""
    from albumen.plugins.bundled.zip import size_text

    src = tmp_path / "photos"
    make_jpeg(src / "Trip" / "a.jpg", size=(300, 200), date="2024:07:01 09:00:00")
    make_video(src / "Trip" / "clip.mov", fmt="mov", metadata={"creation_time": "2024-07-02T09:00:00Z"})
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, ZIP + "[pages]\npage_size = 1\n")))
    archive = site / "trip" / "album.zip"
    with zipfile.ZipFile(archive) as z:
        assert z.namelist() == ["a.jpg", "clip.mp4"]
        (mp4,) = list((site / "trip").glob("clip/*.mp4"))
        assert z.read("clip.mp4") == mp4.read_bytes()
    shown = f"(ZIP, {size_text(archive.stat().st_size)})"
    for page in (site / "trip" / "index.html", site / "trip" / "page" / "2" / "index.html"):
        assert soup(page).select_one(".album-download-size").get_text() == shown, page
        assert (page.parent / soup(page).select_one(".album-download a")["href"]).resolve() == archive.resolve()
