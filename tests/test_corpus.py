"""Every row of ../shared/corpus/hard/MANIFEST.tsv behaves as its expected-behaviour column says.

Where a row offers a choice, the policy chosen (and documented in docs/MEDIA.md) is in POLICY.
"""

from __future__ import annotations

import csv
import html
import io
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageOps, ImageStat

from conftest import CORPUS, crawl, needs_corpus, run_cli, soup, tree_digest

pytestmark = [needs_corpus, pytest.mark.corpus]

HARD = CORPUS / "hard"

# Rows whose expected behaviour offers a choice: the decision, 'processed' or 'skipped'.
POLICY = {
    "corrupt/bitflipped_portrait_1.jpg": "processed",  # decodes, with visible damage
    "corrupt/truncated_end_chunk.png": "processed",  # all pixel rows are present; only the end chunk is cut
    "bombs/decompression_bomb_extents.gif": "processed",  # frames clamped to the canvas
    "formats/exiftool_Photoshop.psd": "skipped",  # not a publishing format: export a JPEG
    "formats/exiftool_XMP.svg": "skipped",
    "formats/heic_hdlr_box_HEIF_named.jpg": "processed",  # recognised as HEIF by content
    "formats/star.avifs": "processed",  # first frame
    "bombs/200MP.heic": "skipped",  # over the default images.max_pixels
}
BROKEN_VIDEOS = {"corrupt/exiftool_QuickTime_broken.mov", "corrupt/truncated_no_moov_generated.mp4"}


def manifest_rows() -> list[dict]:
    if not (HARD / "MANIFEST.tsv").is_file():
        return []
    with open(HARD / "MANIFEST.tsv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def expected_outcome(row: dict) -> str:
    name = row["file"]
    if name in POLICY:
        return POLICY[name]
    if name in BROKEN_VIDEOS:
        return "skipped"
    behaviour = row["expected behaviour"].strip().strip('"').lower()
    if behaviour.startswith(("reject", "skip")):
        return "skipped"
    if behaviour.startswith("process"):
        return "processed"
    raise AssertionError(f"no policy for {name}: {behaviour}")


@pytest.fixture(scope="module")
def corpus_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("corpus") / "site"
    before = tree_digest(HARD)
    result = run_cli("build", str(HARD), "-o", str(out), "-j", "2")
    assert result.exit_code == 0, result.output
    assert tree_digest(HARD) == before, "the corpus folder was modified"
    skipped = {}
    for line in result.stderr.splitlines():
        if line.startswith("skipped: "):
            uri, _, reason = line[len("skipped: ") :].partition(": ")
            skipped[uri] = reason
    pages = {}
    for page in out.rglob("index.html"):
        tag = soup(page).select_one("article.photo")
        if tag is not None:
            pages[page.parent] = page
    return out, skipped, result


@pytest.mark.parametrize("row", manifest_rows(), ids=lambda r: r["file"])
def test_manifest_row(corpus_site, row):
    site, skipped, _ = corpus_site
    name = row["file"]
    outcome = expected_outcome(row)
    if outcome == "skipped":
        assert name in skipped, f"{name} should be skipped with a reason"
        assert skipped[name].strip(), "a reason is given"
        return
    assert name not in skipped, f"{name} was skipped: {skipped.get(name)}"
    folder = _find_media_folder(site, name)
    thumbs = list(folder.glob("*.thumb.*.jpg"))
    assert len(thumbs) == 1, folder
    with Image.open(thumbs[0]) as thumb:
        assert thumb.width >= 1 and thumb.height >= 1
        assert 1 / 3.01 <= thumb.width / thumb.height <= 3.01


_DIRS: dict[str, str] = {}


def _find_media_folder(site: Path, src_uri: str) -> Path:
    """The output folder of a source file, as the planner named it (slugs are tested on their own)."""
    if not _DIRS:
        from albumen.config import Config
        from albumen.process.names import assign_dirs
        from albumen.scan import scan_source

        _, media_dirs, _ = assign_dirs(scan_source(str(HARD), Config()), "ascii")
        _DIRS.update(media_dirs)
    folder = site / _DIRS[src_uri]
    assert (folder / "index.html").is_file(), f"no page for {src_uri}"
    return folder


def _reference(path: Path) -> Image.Image:
    import pillow_heif

    pillow_heif.register_heif_opener()
    from PIL import ImageCms

    with Image.open(path) as im:
        upright = ImageOps.exif_transpose(im).convert("RGB")
        icc = im.info.get("icc_profile")
    if icc:  # the pipeline converts other profiles to sRGB; so does the reference
        profile = ImageCms.ImageCmsProfile(io.BytesIO(icc))
        if "srgb" not in profile.profile.profile_description.lower():
            upright = ImageCms.profileToProfile(
                upright, profile, ImageCms.createProfile("sRGB"), renderingIntent=ImageCms.Intent.PERCEPTUAL
            )
    return upright


ORIENTATION_ROWS = [r for r in manifest_rows() if r["file"].startswith("orientation/")]


@pytest.mark.parametrize("row", ORIENTATION_ROWS, ids=lambda r: r["file"])
def test_orientation_rows_match_pillows_upright_reference(corpus_site, row):
    site, _, _ = corpus_site
    folder = _find_media_folder(site, row["file"])
    largest = max(folder.glob("*w.*.jpg"), key=lambda p: Image.open(p).width)
    produced = Image.open(largest).convert("RGB")
    expected = _reference(HARD / row["file"])
    assert produced.size == expected.size, row["expected behaviour"]
    diff = ImageStat.Stat(ImageChops.difference(produced, expected)).mean
    assert max(diff) < 12, f"pixels differ from the upright reference by {diff}"


def test_portrait_canon_comes_out_portrait(corpus_site):
    site, _, _ = corpus_site
    folder = _find_media_folder(site, "orientation/canon_hdr_NO_orient6.jpg")
    thumb = Image.open(next(folder.glob("*.thumb.*.jpg")))
    assert thumb.height > thumb.width


def test_sixteen_bit_grey_keeps_its_grey_levels(corpus_site):
    site, _, _ = corpus_site
    folder = _find_media_folder(site, "formats/pngsuite_basn0g16.png")
    produced = Image.open(next(folder.glob("*.thumb.*.jpg"))).convert("L")
    source = Image.open(HARD / "formats/pngsuite_basn0g16.png")
    expected = source.point(lambda v: v / 257).convert("L")
    assert abs(ImageStat.Stat(produced).mean[0] - ImageStat.Stat(expected).mean[0]) < 4
    assert ImageStat.Stat(produced).mean[0] < 250  # not clipped to white


def test_palette_transparency_is_not_black(corpus_site):
    site, _, _ = corpus_site
    for name in ("formats/p_trns_single.png", "formats/transparent.png", "formats/pngsuite_ftbwn3p08.png"):
        folder = _find_media_folder(site, name)
        with Image.open(HARD / name) as src:
            rgba = src.convert("RGBA")
        produced = Image.open(next(folder.glob("*.thumb.*.jpg"))).convert("RGB")
        scale_x, scale_y = produced.width / rgba.width, produced.height / rgba.height
        for y in range(0, rgba.height, max(1, rgba.height // 8)):
            for x in range(0, rgba.width, max(1, rgba.width // 8)):
                if rgba.getpixel((x, y))[3] == 0:
                    px = produced.getpixel((min(produced.width - 1, int(x * scale_x)), min(produced.height - 1, int(y * scale_y))))
                    assert min(px) > 200, f"{name}: transparent pixel at {x},{y} came out {px}"


def test_big_icc_profile_is_not_copied_into_derivatives(corpus_site):
    site, _, _ = corpus_site
    folder = _find_media_folder(site, "metadata/icc_profile_big.jpg")
    for f in folder.glob("*.jpg"):
        assert f.stat().st_size < 120_000, f
        assert not Image.open(f).info.get("icc_profile")


def test_rejected_files_name_their_reason(corpus_site):
    _, skipped, _ = corpus_site
    assert "12-bit" in skipped["formats/ljt_monkey12_12bit.jpg"]
    assert "decompression bomb" in skipped["bombs/bomb_jpeg_sof_65000x65000.jpg"]
    assert "decompression bomb" in skipped["bombs/decompression_bomb.gif"]
    assert "decompression bomb" in skipped["bombs/200MP.heic"]
    assert "empty file" in skipped["corrupt/zero_bytes.jpg"]
    assert "truncated" in skipped["corrupt/truncated_jpeg.jpg"]
    assert "RAW" in skipped["formats/sony_alpha_a7iii_raw_image.ARW"]
    assert "not a valid JPG" in skipped["corrupt/text_named.jpg"]


def test_corpus_site_has_no_broken_links_and_escapes_captions(corpus_site):
    site, _, _ = corpus_site
    assert crawl(site).broken == []
    folder = _find_media_folder(site, "metadata/Samsung_Digimax_i50_MP3.jpg")
    text = (folder / "index.html").read_text()
    assert "<Digimax" not in text and html.escape("<Digimax") in text


def test_metadata_rows_are_read(tmp_path):
    from albumen.scan.metadata import read_image

    _, meta, _ = read_image(str(HARD / "metadata/exiftool_GPS.jpg"), "jpeg", 10**9)
    assert meta.gps is not None
    assert meta.gps.latitude == pytest.approx(54.98967, abs=1e-4) and meta.gps.longitude == pytest.approx(-1.91417, abs=1e-4)
    _, meta, _ = read_image(str(HARD / "metadata/exiftool_XMP.jpg"), "jpeg", 10**9)
    assert meta.description == "UTF-16 (big-endian) encoded XMP" and "XMP" in meta.keywords
    _, meta, _ = read_image(str(HARD / "metadata/exiftool_IPTC.jpg"), "jpeg", 10**9)
    assert meta.description == "A witty caption" and meta.keywords == ("ExifTool", "Test", "IPTC")
    _, base, _ = read_image(str(CORPUS / "real/DSCN0010.jpg"), "jpeg", 10**9)
    _, prog, _ = read_image(str(HARD / "formats/progressive_DSCN0010_generated.jpg"), "jpeg", 10**9)
    assert (prog.date, prog.camera, prog.gps) == (base.date, base.camera, base.gps)


def test_a_decoder_warning_is_one_warning_of_the_build_not_raw_library_output(tmp_path):
    """Pillow warns (UserWarning) about a malformed MPO header both when the scan reads the file and
    when a worker decodes it: the user sees Albumen's one warning line, never Python's warning text."""
    import os
    import shutil
    import subprocess
    import sys

    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(HARD / "corrupt" / "sugarshack_bad_mpo_header.jpg", src / "a.jpg")
    done = subprocess.run(
        [sys.executable, "-m", "albumen", "build", str(src), "-o", str(tmp_path / "out"), "-j", "1"],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "ALBUMEN_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout + done.stderr
    assert "warning: a.jpg: Image appears to be a malformed MPO file" in text
    assert "UserWarning" not in text and "warnings.warn" not in text, text
