"""Produced images, checked by decoding them: size, orientation, colour, format and metadata."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest
import pyvips
from PIL import Image, ImageCms

from conftest import (
    CORPUS,
    build_site,
    make_jpeg,
    make_png,
    needs_corpus,
    run_cli_bounded,
    soup,
    tree_digest,
    write_config,
)


def outputs(site: Path, page_dir: str) -> dict[str, Path]:
    """Derivatives of one photo, keyed 'thumb', '640w', ... (plus format suffix for non-JPEG)."""
    out = {}
    for f in (site / page_dir).iterdir():
        if f.name == "index.html":
            continue
        parts = f.name.split(".")
        tag, ext = parts[-3], parts[-1]
        out[tag if ext in ("jpg",) else f"{tag}.{ext}"] = f
    return out


def test_orientation_applied_to_pixels(tmp_path):
    src = tmp_path / "p"
    # stored landscape 80x60 with a white block top-left; EXIF 6 means "rotate 90° clockwise to display"
    make_jpeg(src / "rot.jpg", size=(80, 60), orientation=6)
    site = tmp_path / "site"
    build_site(src, site)
    files = outputs(site, "rot")
    with Image.open(files["thumb"]) as im:
        assert im.size == (60, 80)  # portrait
        assert im.getexif().get(0x0112) in (None, 1)
        rgb = im.convert("RGB")
        assert min(rgb.getpixel((im.width - 3, 3))) > 200  # white block now top-right
        assert rgb.getpixel((3, 3))[1] < 100  # red elsewhere
    page = soup(site / "rot" / "index.html").select_one("img.photo-image")
    assert (page["width"], page["height"]) == ("60", "80")


def test_sizes_by_long_edge_and_never_upscaled(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "big.jpg", size=(3000, 2000))
    make_jpeg(src / "tall.jpg", size=(1000, 2500))
    make_jpeg(src / "tiny.jpg", size=(64, 48))
    site = tmp_path / "site"
    build_site(src, site)
    big = {k: Image.open(v).size for k, v in outputs(site, "big").items()}
    assert big == {"thumb": (480, 320), "640w": (640, 427), "1024w": (1024, 683), "1600w": (1600, 1067),
                   "2048w": (2048, 1365)}
    tall = {k: Image.open(v).size for k, v in outputs(site, "tall").items()}
    assert tall == {"thumb": (128, 320), "256w": (256, 640), "410w": (410, 1024), "640w": (640, 1600),
                    "819w": (819, 2048)}  # 2048 px on the long edge at most
    tiny = {k: Image.open(v).size for k, v in outputs(site, "tiny").items()}
    assert tiny == {"thumb": (64, 48), "64w": (64, 48)}
    srcset = soup(site / "big" / "index.html").select_one("img.photo-image")["srcset"]
    assert [part.split()[1] for part in srcset.split(", ")] == ["640w", "1024w", "1600w", "2048w"]


def test_quality_and_size_settings_apply(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "a.jpg", size=(1200, 800))
    low, high = tmp_path / "low", tmp_path / "high"
    build_site(src, low, "-c", str(write_config(tmp_path, "[images]\nquality = 30\nsizes = [500]\n")))
    build_site(src, high, "-c", str(write_config(tmp_path, "[images]\nquality = 95\nsizes = [500]\n[thumbnails]\nheight = 100\n")))
    lo, hi = outputs(low, "a"), outputs(high, "a")
    assert Image.open(lo["500w"]).size == (500, 333)
    assert lo["500w"].stat().st_size < hi["500w"].stat().st_size
    assert Image.open(hi["thumb"]).size == (150, 100)


def test_modern_formats_in_picture_with_jpeg_fallback(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "a.jpg", size=(900, 600))
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\nformats = ["webp", "avif"]\nsizes = [400, 800]\n')))
    files = outputs(site, "a")
    assert Image.open(files["400w.webp"]).format == "WEBP"
    assert Image.open(files["800w.avif"]).format == "AVIF"
    assert Image.open(files["800w.avif"]).size == (800, 533)
    picture = soup(site / "a" / "index.html").select_one(".photo-frame picture")
    types = [s["type"] for s in picture.select("source")]
    assert types == ["image/avif", "image/webp"]
    assert picture.img["src"].endswith(".jpg")


def test_published_images_drop_gps_and_serials_but_keep_credit(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "g.jpg", size=(800, 600), gps=(45.1, 6.1), serial="SN123456", artist="Ann Example",
              copyright="(c) Ann Example", date="2024:01:01 10:00:00")
    site = tmp_path / "site"
    build_site(src, site)
    for f in outputs(site, "g").values():
        exif = Image.open(f).getexif()
        assert not exif.get_ifd(0x8825), f
        assert 0xA431 not in exif.get_ifd(0x8769)
        assert exif.get(0x013B) == "Ann Example"
        assert exif.get(0x8298) == "(c) Ann Example"
        assert b"SN123456" not in f.read_bytes()
    kept = tmp_path / "kept"
    build_site(src, kept, "-c", str(write_config(tmp_path, "[images]\nkeep_metadata = true\n")))
    exif = Image.open(outputs(kept, "g")["640w"]).getexif()
    assert exif.get_ifd(0x8825).get(1) == "N"
    assert exif.get(0x0112) in (None, 1)


def test_originals_are_copied_without_location(tmp_path):
    src = tmp_path / "p"
    original = make_jpeg(src / "IMG_7.JPG", size=(300, 200), gps=(45.1, 6.1), artist="Ann")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\noriginals = "copy"\n')))
    link = soup(site / "img-7" / "index.html").select_one("a.download")
    assert link["download"] == "IMG_7.JPG"
    published = site / "img-7" / link["href"]
    with Image.open(published) as im, Image.open(original) as orig:
        assert not im.getexif().get_ifd(0x8825)
        assert im.getexif().get(0x013B) == "Ann"
        assert im.tobytes() == orig.tobytes()  # same pixels: copied, not re-encoded
    assert Image.open(original).getexif().get_ifd(0x8825)  # the source is untouched


def _iptc(*datasets: tuple[int, bytes]) -> bytes:
    """An APP13 segment: Photoshop resources with an IPTC-IIM block of record-2 datasets."""
    block = b"".join(b"\x1c\x02" + bytes([n]) + len(v).to_bytes(2, "big") + v for n, v in datasets)
    digest = b"8BIM\x04\x25\x00\x00" + (16).to_bytes(4, "big") + bytes(16)
    irb = b"8BIM\x04\x04\x00\x00" + len(block).to_bytes(4, "big") + block + b"\x00" * (len(block) % 2) + digest
    payload = b"Photoshop 3.0\x00" + irb
    return b"\xff\xed" + (len(payload) + 2).to_bytes(2, "big") + payload


def _with_segment(jpeg: Path, segment: bytes) -> None:
    data = jpeg.read_bytes()
    jpeg.write_bytes(data[:2] + segment + data[2:])  # right after SOI


def _published_original(src: Path, tmp_path: Path) -> Path:
    """Build src with download originals on; the one original published."""
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\noriginals = "copy"\n')))
    (published,) = [p for p in site.rglob("*.jpg") if ".original." in p.name]
    return published


def test_originals_keep_only_application_segments_known_to_name_no_place(tmp_path):
    """A maker's own segment (APP4, APP5, ...) may hold anything, a location included: only JFIF, the
    colour profile, Adobe's flag and the cleaned EXIF, XMP and IPTC stay."""
    src = tmp_path / "p"
    original = make_jpeg(src / "a.jpg", size=(120, 80), artist="Ann")
    profile = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    icc = b"ICC_PROFILE\x00\x01\x01" + profile
    _with_segment(original, b"\xff\xe2" + (len(icc) + 2).to_bytes(2, "big") + icc)
    maker = b"MAKER\x00GPS 45.1234N 6.5678E"
    _with_segment(original, b"\xff\xe5" + (len(maker) + 2).to_bytes(2, "big") + maker)
    comment = b"Shot from Pointe 61.0099N"  # a comment is free text too
    _with_segment(original, b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment)
    published = _published_original(src, tmp_path)
    data = published.read_bytes()
    assert b"45.1234N" not in data and b"MAKER" not in data and b"61.0099N" not in data
    with Image.open(published) as im, Image.open(original) as orig:
        assert im.info.get("icc_profile") == profile
        assert im.getexif().get(0x013B) == "Ann"
        assert im.tobytes() == orig.tobytes()


def test_originals_keep_no_photoshop_resource_that_could_hold_a_location(tmp_path):
    """APP13 holds more than IPTC: a whole EXIF block (0x0422, with its GPS) or XMP packet (0x0424)
    may ride along. Only resources that cannot name a place stay; the IPTC keeps its caption."""
    from conftest import make_exif

    src = tmp_path / "p"
    original = make_jpeg(src / "a.jpg", size=(120, 80))
    exif_block = make_exif(gps=(48.8594, 2.2943)).tobytes()
    xmp = b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">' \
          b'<rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="48,51.5N"/></rdf:RDF></x:xmpmeta>'

    def resource(number: int, data: bytes) -> bytes:
        return b"8BIM" + number.to_bytes(2, "big") + b"\x00\x00" + len(data).to_bytes(4, "big") + data + b"\x00" * (len(data) % 2)

    caption = b"Sunset over the bay"
    iptc = b"\x1c\x02\x78" + len(caption).to_bytes(2, "big") + caption
    payload = b"Photoshop 3.0\x00" + resource(0x0404, iptc) + resource(0x0422, exif_block) + resource(0x0424, xmp)
    _with_segment(original, b"\xff\xed" + (len(payload) + 2).to_bytes(2, "big") + payload)
    published = _published_original(src, tmp_path)
    data = published.read_bytes()
    assert b"8BIM\x04\x22" not in data and b"8BIM\x04\x24" not in data and b"GPSLatitude" not in data
    assert caption in data
    with Image.open(published) as im, Image.open(original) as orig:
        assert im.tobytes() == orig.tobytes()


def test_originals_lose_the_place_their_iptc_names(tmp_path):
    from PIL import IptcImagePlugin

    src = tmp_path / "p"
    original = make_jpeg(src / "kingston.jpg", size=(90, 60), gps=(44.2, -76.5), artist="Ann")
    # caption (2:120) and copyright (2:116) stay; city (2:90), state (2:95), country (2:101) go
    _with_segment(original, _iptc(
        (120, b"Harbour at dusk"), (90, b"Kingston"), (95, b"Ontario"), (101, b"Canada"), (116, b"(c) Ann"),
    ))
    # a photo whose APP13 cannot be read loses it whole rather than keep a place in it
    broken = make_jpeg(src / "broken.jpg", size=(90, 60))
    bad = b"Photoshop 3.0\x008BIM\x04\x04\x00\x00\x7f\xff\xff\xffSpringfield"  # claims 2 GB of IPTC
    _with_segment(broken, b"\xff\xed" + (len(bad) + 2).to_bytes(2, "big") + bad)
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\noriginals = "copy"\n')))
    published = site / "kingston" / soup(site / "kingston" / "index.html").select_one("a.download")["href"]
    data = published.read_bytes()
    for place in (b"Kingston", b"Ontario", b"Canada"):
        assert place not in data
    with Image.open(published) as im, Image.open(original) as orig:
        iptc = IptcImagePlugin.getiptcinfo(im)
        assert iptc[(2, 120)] == b"Harbour at dusk" and iptc[(2, 116)] == b"(c) Ann"
        assert not im.getexif().get_ifd(0x8825)
        assert im.tobytes() == orig.tobytes()  # copied, not re-encoded
    assert b"8BIM\x04\x25" not in data  # the IPTC digest no longer matched: dropped
    assert b"Kingston" in original.read_bytes()  # the source is untouched
    other = site / "broken" / soup(site / "broken" / "index.html").select_one("a.download")["href"]
    assert b"Springfield" not in other.read_bytes() and b"Photoshop" not in other.read_bytes()
    with Image.open(other) as im:
        assert im.size == (90, 60)


_XMP_WITH_PLACES = """<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
 <rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"
   xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"
   xmlns:exif="http://ns.adobe.com/exif/1.0/" xmlns:Iptc4xmpExt="http://iptc.org/std/Iptc4xmpExt/2008-02-29/"
   xmlns:drone-dji="http://www.dji.com/drone-dji/1.0/"
   photoshop:Credit="Ann &amp; Bo" photoshop:Country="Lesotho" drone-dji:GpsLatitude="+43.29517">
  <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">(c) Ann &lt;ann@example.org&gt;</rdf:li>
   <rdf:li xml:lang="fr">(c) Anne</rdf:li></rdf:Alt></dc:rights>
  <dc:subject><rdf:Bag><rdf:li>harbour</rdf:li><rdf:li>dusk</rdf:li></rdf:Bag></dc:subject>
  <xmp:Rating>4</xmp:Rating>
  <photoshop:City>Marseille</photoshop:City>
  <exif:GPSLatitude>43,17.71N</exif:GPSLatitude>
  <Iptc4xmpExt:LocationCreated><rdf:Bag><rdf:li><rdf:Description>
   <Iptc4xmpExt:City>Vieux-Port</Iptc4xmpExt:City><dc:title>Calanque de Sormiou</dc:title>
  </rdf:Description></rdf:li></rdf:Bag></Iptc4xmpExt:LocationCreated>
 </rdf:Description>
</rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>"""


def test_originals_keep_their_xmp_but_no_place_in_it(tmp_path):
    """Rights, keywords, rating and credit stay in the download; a place, GPS, a structure (a location)
    and a property of a namespace Albumen does not know go, wherever they were written."""
    from defusedxml import ElementTree

    src = tmp_path / "p"
    original = make_jpeg(src / "port.jpg", size=(90, 60))
    xmp = b"http://ns.adobe.com/xap/1.0/\x00" + _XMP_WITH_PLACES.encode()
    extended = b"http://ns.adobe.com/xmp/extension/\x00" + b"0" * 32 + bytes(8) + b"<photoshop:City>Marseille"
    for payload in (extended, xmp):
        _with_segment(original, b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload)
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\noriginals = "copy"\n')))
    published = site / "port" / soup(site / "port" / "index.html").select_one("a.download")["href"]
    data = published.read_bytes()
    for place in (b"Marseille", b"Lesotho", b"43,17", b"43.29", b"Vieux-Port", b"Sormiou", b"dji", b"LocationCreated"):
        assert place not in data
    with Image.open(published) as im, Image.open(original) as orig:
        assert im.tobytes() == orig.tobytes()  # copied, not re-encoded
        packet = im.info["xmp"]
    rdf = "{http://www.w3.org/1999/02/22-rdf-syntax-ns#}"
    (desc,) = ElementTree.fromstring(packet).iter(f"{rdf}Description")
    props = {child.tag.split("}")[1]: child for child in desc}
    assert [(li.get("{http://www.w3.org/XML/1998/namespace}lang"), li.text) for li in props["rights"].iter(f"{rdf}li")] == [
        ("x-default", "(c) Ann <ann@example.org>"), ("fr", "(c) Anne")]
    assert [li.text for li in props["subject"].iter(f"{rdf}li")] == ["harbour", "dusk"]
    assert props["Rating"].text == "4" and props["Credit"].text == "Ann & Bo"
    assert props["Credit"].tag == "{http://ns.adobe.com/photoshop/1.0/}Credit"
    assert set(props) == {"rights", "subject", "Rating", "Credit"}
    assert packet.startswith(b'<?xpacket begin="\xef\xbb\xbf" id="W5M0MpCehiHzreSzNTczkc9d"?>')
    assert packet.endswith(b'<?xpacket end="w"?>')
    kept = tmp_path / "kept"
    build_site(src, kept, "-c", str(write_config(tmp_path, '[images]\noriginals = "copy"\nkeep_metadata = true\n')))
    kept_original = kept / "port" / soup(kept / "port" / "index.html").select_one("a.download")["href"]
    assert kept_original.read_bytes() == original.read_bytes()  # keep_metadata: the file as it is


def test_an_unreadable_or_placeonly_xmp_is_dropped_whole():
    from albumen.process.worker import strip_jpeg_location

    buf = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buf, "JPEG")
    jpeg = buf.getvalue()
    rdf = '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
    for packet in (
        rdf + '<rdf:Description xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/"><photoshop:Credit>Ann',  # cut
        rdf + '<rdf:Description xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:GPSLatitude="43,17.71N"/>'
        "</rdf:RDF></x:xmpmeta>",
        # an allowlisted name holding a structure is not copied: what it holds is not checked
        rdf + '<rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator rdf:parseType="Resource">'
        '<dc:title>Marseille</dc:title></dc:creator></rdf:Description></rdf:RDF></x:xmpmeta>',
    ):
        payload = b"http://ns.adobe.com/xap/1.0/\x00" + packet.encode()
        out = strip_jpeg_location(jpeg[:2] + b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload + jpeg[2:])
        assert out == jpeg


def test_a_png_whose_xmp_names_a_place_is_published_without_it(tmp_path):
    from PIL import PngImagePlugin

    src = tmp_path / "p"
    src.mkdir()
    xmp = (
        '<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
        '<rdf:Description xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" photoshop:City="Kingston"/>'
        "</rdf:RDF></x:xmpmeta>"
    )
    info = PngImagePlugin.PngInfo()
    info.add_itxt("XML:com.adobe.xmp", xmp)
    Image.new("RGB", (40, 30), (20, 90, 200)).save(src / "map.png", pnginfo=info)
    Image.new("RGB", (40, 30), (20, 90, 200)).save(src / "plain.png")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\noriginals = "copy"\n')))
    placed = site / "map" / soup(site / "map" / "index.html").select_one("a.download")["href"]
    plain = site / "plain" / soup(site / "plain" / "index.html").select_one("a.download")["href"]
    assert b"Kingston" not in placed.read_bytes()
    with Image.open(placed) as im:
        assert im.format == "JPEG" and im.size == (40, 30)
    assert plain.read_bytes() == (src / "plain.png").read_bytes()  # nothing to remove: the file as it is


@needs_corpus
@pytest.mark.parametrize("name", ["DSCN0010.jpg", "iphone6_hdr_YES.jpg", "nikon_d70s_gps_87_OSError.jpg"])
def test_corpus_originals_lose_gps_and_keep_the_rest_of_their_exif_byte_for_byte(tmp_path, name):
    """Camera originals with GPS and maker notes: the GPS IFD is emptied where it lies, so everything
    else in the EXIF (maker notes hold offsets that a rewrite would break) is the camera's own."""
    src = tmp_path / "p"
    src.mkdir()
    source = src / name
    source.write_bytes((CORPUS / "real" / name).read_bytes())
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\noriginals = "copy"\n')))
    (published,) = [p for p in site.rglob("*.jpg") if ".original." in p.name]
    data, before = published.read_bytes(), source.read_bytes()
    exif_at, sos = _exif_and_scan(before)
    published_at, _ = _exif_and_scan(data)
    assert data[published_at + 2 : published_at + 4] == before[exif_at + 2 : exif_at + 4]  # same length: nothing moved
    with Image.open(published) as im, Image.open(source) as orig:
        exif, exif_before = im.getexif(), orig.getexif()
        assert exif_before.get_ifd(0x8825) and not exif.get_ifd(0x8825)
        assert {k: v for k, v in exif.items() if k != 0x8825} == {k: v for k, v in exif_before.items() if k != 0x8825}
        assert exif.get_ifd(0x8769) == exif_before.get_ifd(0x8769)  # maker note included
        assert im.tobytes() == orig.tobytes()
    assert data.endswith(before[sos:])  # the image data, untouched


def _exif_and_scan(jpeg: bytes) -> tuple[int, int]:
    """Where the JPEG's EXIF segment starts, and where its image data starts."""
    i, exif = 2, -1
    while jpeg[i] == 0xFF and jpeg[i + 1] != 0xDA:
        if jpeg[i + 1] == 0xE1 and jpeg[i + 4 : i + 10] == b"Exif\x00\x00" and exif < 0:
            exif = i
        i += 2 + int.from_bytes(jpeg[i + 2 : i + 4], "big")
    return exif, i


_PAGE_NAMES = {"index.html", "404.html"}
_MEDIA_EXTENSIONS = {".jpg", ".png", ".gif", ".webp", ".avif", ".tif", ".bmp", ".heic", ".mp4", ".webm", ".vtt"}


def test_originals_take_their_extension_from_their_format_never_their_name(tmp_path):
    """Media are recognised by content: a JPEG named x.html with a script in its comment was published
    as x.original.HASH.html, a page of the gallery's origin (and y.php a script on a PHP host)."""
    src = tmp_path / "p"
    src.mkdir()
    script = b"<html><script>window.pwned=1</script>"
    Image.new("RGB", (60, 40), (200, 40, 40)).save(src / "x.html", "JPEG", comment=script)
    Image.new("P", (60, 40), 3).save(src / "y.php", "GIF", comment=script)
    Image.new("RGB", (60, 40), (20, 40, 200)).save(src / "z.shtml", "JPEG", comment=script)
    make_jpeg(src / "plain.jpeg")
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\noriginals = "copy"\n')))
    expected = {"x": ("jpg", "x.jpg"), "y": ("gif", "y.gif"), "z": ("jpg", "z.jpg"), "plain": ("jpg", "plain.jpeg")}
    for slug, (ext, download) in expected.items():
        link = soup(site / slug / "index.html").select_one("a.download")
        assert link["href"].endswith(f".original.{link['href'].split('.')[-2]}.{ext}"), link["href"]
        assert link["download"] == download
        if ext == "gif":  # the file as it was, but named for what it is (a JPEG's comment is dropped too)
            assert script in (site / slug / link["href"]).read_bytes()
    for path in site.rglob("*"):
        if path.is_file() and path.relative_to(site).parts[0] != "static":
            rel = path.relative_to(site)
            if path.suffix == ".html":
                assert path.name in _PAGE_NAMES, rel
            elif path.suffix not in (".xml", ".txt", ".json"):
                assert path.suffix in _MEDIA_EXTENSIONS, rel


_SECRET_SECONDS = 56789  # the GPS latitude's seconds, x 1000: 56.789"
_SECRET_DATUM = "ZQXDATUM"


def _exif(gps: bool) -> bytes:
    from PIL.TiffImagePlugin import IFDRational

    exif = Image.Exif()
    exif[0x013B] = "Ann"
    if gps:
        place = exif.get_ifd(0x8825)
        place[1] = "N"
        place[2] = (IFDRational(12, 1), IFDRational(34, 1), IFDRational(_SECRET_SECONDS, 1000))
        place[0x12] = _SECRET_DATUM
    return exif.tobytes()


def _jpeg(colour, exif: bytes) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 48), colour).save(buf, "JPEG", quality=90, exif=exif)
    return buf.getvalue()


def _hidden_location(kind: str, path: Path) -> None:
    """A JPEG whose location the marker walk used to miss: behind a junk byte or fill bytes before the
    EXIF, in an MPO's second frame, or in a JPEG appended after the first one's end."""
    if kind in ("junk", "fill"):
        data = _jpeg((200, 40, 40), _exif(gps=True))
        at = data.index(b"\xff\xe1")  # the EXIF, after the JFIF segment
        path.write_bytes(data[:at] + (b"\x00" if kind == "junk" else b"\xff\xff\xff") + data[at:])
    elif kind == "mpo":
        first, second = Image.new("RGB", (64, 48), (200, 40, 40)), Image.new("RGB", (64, 48), (10, 200, 40))
        second.encoderinfo = {"exif": _exif(gps=True)}
        first.save(path, "MPO", save_all=True, append_images=[second], exif=_exif(gps=False))
        with Image.open(path) as im:
            assert im.format == "MPO" and im.n_frames == 2
            im.seek(1)
            assert im.getexif().get_ifd(0x8825)
    else:
        path.write_bytes(_jpeg((200, 40, 40), _exif(gps=False)) + _jpeg((10, 200, 40), _exif(gps=True)))


@pytest.mark.parametrize("kind", ["junk", "fill", "mpo", "appended"])
def test_originals_lose_a_location_hidden_from_a_simple_marker_walk(tmp_path, kind):
    from PIL import ImageSequence

    src = tmp_path / "p"
    src.mkdir()
    source = src / f"{kind}.{'mpo' if kind == 'mpo' else 'jpg'}"
    _hidden_location(kind, source)
    assert _SECRET_DATUM.encode() in source.read_bytes()
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\noriginals = "copy"\n')))
    link = soup(site / kind / "index.html").select_one("a.download")
    assert link["href"].endswith(".jpg") and link["download"] == f"{kind}.jpg"
    data = (site / kind / link["href"]).read_bytes()
    assert _SECRET_DATUM.encode() not in data
    for order in ("big", "little"):
        assert _SECRET_SECONDS.to_bytes(4, order) + (1000).to_bytes(4, order) not in data
    with Image.open(io.BytesIO(data)) as im, Image.open(source) as orig:
        assert im.format == "JPEG"  # an MPO's other frames are gone, and its index of them
        for frame in ImageSequence.Iterator(im):
            assert not frame.getexif().get_ifd(0x8825)
        assert im.getexif().get(0x013B) == "Ann"
        assert im.tobytes() == orig.tobytes()  # the first frame's pixels, copied as they were


def test_a_jpeg_structure_that_cannot_be_followed_is_not_copied():
    from albumen.process.worker import strip_jpeg_location

    good = _jpeg((200, 40, 40), _exif(gps=True))
    at = good.index(b"\xff\xe1")
    assert strip_jpeg_location(good) is not None
    assert strip_jpeg_location(good[:at] + b"\xff\xe1\xff\xff" + good[at + 4 :]) is None  # runs past the end
    assert strip_jpeg_location(good[:at] + b"\xff\xd8" + good[at:]) is None  # a second image start
    assert strip_jpeg_location(good[:at]) is None  # no image data at all
    truncated = good[: len(good) - 10]  # cut inside the scan: kept up to there, location gone
    assert _SECRET_DATUM.encode() not in strip_jpeg_location(truncated)


def test_an_original_whose_structure_cannot_be_followed_is_published_from_its_pixels(tmp_path):
    """Decodable, but a segment after the scan claims to run past the end: the walk cannot be sure
    where a location might be, so the original is made from the pixels, without metadata."""
    src = tmp_path / "p"
    src.mkdir()
    good = _jpeg((200, 40, 40), _exif(gps=True))
    (src / "odd.jpg").write_bytes(good[:-2] + b"\xff\xe1\xff\xff" + _SECRET_DATUM.encode())
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\noriginals = "copy"\n')))
    data = (site / "odd" / soup(site / "odd" / "index.html").select_one("a.download")["href"]).read_bytes()
    assert _SECRET_DATUM.encode() not in data
    with Image.open(io.BytesIO(data)) as im:
        assert im.format == "JPEG" and im.size == (64, 48)
        assert not im.getexif().get_ifd(0x8825)


@needs_corpus
def test_corpus_iptc_places_never_reach_a_published_original(tmp_path):
    src = tmp_path / "p"
    src.mkdir()
    for name in ("exiftool_IPTC.jpg", "exiftool_PhotoMechanic.jpg"):
        (src / name).write_bytes((CORPUS / "hard" / "metadata" / name).read_bytes())
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\noriginals = "copy"\n')))
    originals = [p for p in site.rglob("*.jpg") if ".original." in p.name]
    assert len(originals) == 2
    for path in originals:
        assert b"ingston" not in path.read_bytes()  # both files name Kingston (one as "kingston")


def test_display_p3_is_kept_and_other_profiles_become_srgb(tmp_path):
    src = tmp_path / "p"
    src.mkdir()
    base = pyvips.Image.black(120, 80).new_from_image([200, 40, 40]).copy(interpretation="srgb").cast("uchar")
    base.icc_transform("p3").jpegsave(str(src / "p3.jpg"), Q=95, keep="icc")
    # A non-sRGB profile that is not P3: libvips' built-in CMYK, as a CMYK JPEG
    base.icc_transform("cmyk").jpegsave(str(src / "cmyk.jpg"), Q=95, keep="icc")
    site = tmp_path / "site"
    build_site(src, site)
    with Image.open(outputs(site, "p3")["thumb"]) as im:
        icc = im.info.get("icc_profile")
        assert icc, "P3 profile dropped"
        assert "P3" in ImageCms.ImageCmsProfile(io.BytesIO(icc)).profile.profile_description
    with Image.open(outputs(site, "cmyk")["thumb"]) as im:
        assert im.mode == "RGB"
        assert not im.info.get("icc_profile")
        r, g, b = im.getpixel((60, 40))
        assert r > 150 and g < 110 and b < 110  # still red after conversion to sRGB


def dcf_exif(space: int = 0xFFFF, index: str | None = "R03", artist: str | None = None) -> bytes:
    """EXIF as a camera set to Adobe RGB writes it: ColorSpace 'Uncalibrated', InteropIndex 'R03'.

    The Interop IFD goes inside the Exif IFD as a dict: Pillow drops one set with get_ifd(0xA005).
    """
    exif = Image.Exif()
    if artist:
        exif[0x013B] = artist
    sub = exif.get_ifd(0x8769)
    sub[0xA001] = space
    if index:
        sub[0xA005] = {0x0001: index}
    data = exif.tobytes()
    back = Image.Exif()
    back.load(data)
    assert back.get_ifd(0x8769)[0xA001] == space and back.get_ifd(0xA005).get(0x0001) == index
    return data


# A mid-saturation green: in Adobe RGB it lies outside sRGB, so converted it becomes pure-er green
ADOBE_GREEN = (100, 180, 100)


def centre(path: Path) -> tuple[int, ...]:
    with Image.open(path) as im:
        return im.convert("RGB").getpixel((im.width // 2, im.height // 2))


def test_adobe_rgb_profile_parses_and_converts_as_adobe_rgb():
    from albumen.process.icc import adobe_rgb_profile

    profile = ImageCms.ImageCmsProfile(io.BytesIO(adobe_rgb_profile()))
    assert profile.profile.profile_description == "Compatible with Adobe RGB (1998)"
    assert profile.profile.xcolor_space.strip() == "RGB"
    to_srgb = ImageCms.buildTransform(profile, ImageCms.createProfile("sRGB"), "RGB", "RGB")

    def convert(rgb):
        return ImageCms.applyTransform(Image.new("RGB", (1, 1), rgb), to_srgb).getpixel((0, 0))

    r, g, b = convert((0, 255, 0))
    assert r < 10 and g > 245 and b < 10  # Adobe's green is beyond sRGB's: clipped to its green
    grey = convert((128, 128, 128))
    assert max(grey) - min(grey) <= 1 and abs(grey[0] - 128) <= 2
    # worked by hand (Adobe RGB -> XYZ -> sRGB matrices, gamma 2.2 in): about (0, 181, 94)
    assert all(abs(x - y) <= 2 for x, y in zip(convert(ADOBE_GREEN), (0, 181, 94), strict=True))


def test_untagged_adobe_rgb_jpeg_is_converted_to_srgb(tmp_path):
    """A camera set to Adobe RGB writes no profile, only EXIF ColorSpace 0xFFFF + InteropIndex R03."""
    src = tmp_path / "p"
    src.mkdir()
    solid = Image.new("RGB", (120, 80), ADOBE_GREEN)
    solid.save(src / "adobe.jpg", quality=95, exif=dcf_exif(artist="Ann Example"))
    solid.save(src / "control.jpg", quality=95)
    solid.save(src / "r98.jpg", quality=95, exif=dcf_exif(space=1, index="R98"))
    solid.save(src / "uncalibrated.jpg", quality=95, exif=dcf_exif(index=None))  # no R03: not assumed
    srgb_icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    solid.save(src / "tagged.jpg", quality=95, exif=dcf_exif(), icc_profile=srgb_icc)  # the profile wins
    site = tmp_path / "site"
    build_site(src, site)
    control = centre(outputs(site, "control")["thumb"])
    assert all(abs(x - y) <= 3 for x, y in zip(control, ADOBE_GREEN, strict=True))
    for name in ("r98", "uncalibrated", "tagged"):
        for f in outputs(site, name).values():
            assert all(abs(x - y) <= 2 for x, y in zip(centre(f), control, strict=True)), (name, f.name)
    for f in outputs(site, "adobe").values():
        r, g, b = centre(f)
        assert r < 15 and abs(g - 181) <= 3 and abs(b - 94) <= 4, (f.name, (r, g, b))  # more saturated
        with Image.open(f) as im:
            assert not im.info.get("icc_profile")  # converted to sRGB: no Adobe profile published
            exif = im.getexif()
            assert exif.get(0x013B) == "Ann Example"  # credits still kept, the rest still stripped
            assert not exif.get_ifd(0x8769) and not exif.get_ifd(0xA005)


def test_kept_metadata_no_longer_says_adobe_rgb_after_conversion(tmp_path):
    src = tmp_path / "p"
    src.mkdir()
    Image.new("RGB", (120, 80), ADOBE_GREEN).save(src / "adobe.jpg", quality=95, exif=dcf_exif())
    site = tmp_path / "site"
    build_site(src, site, "-c", str(write_config(tmp_path, "[images]\nkeep_metadata = true\n")))
    for f in outputs(site, "adobe").values():
        r, g, b = centre(f)
        assert r < 15 and abs(g - 181) <= 3 and abs(b - 94) <= 4, (f.name, (r, g, b))
        with Image.open(f) as im:
            exif = im.getexif()
            assert exif.get_ifd(0x8769).get(0xA001) == 1  # sRGB pixels: a DCF reader must not take them
            assert exif.get_ifd(0xA005).get(0x0001) == "R98"  # for Adobe RGB a second time


def test_transparency_is_flattened_on_white_for_jpeg(tmp_path):
    src = tmp_path / "p"
    make_png(src / "clear.png", size=(50, 40), color=(0, 0, 0, 0))
    site = tmp_path / "site"
    build_site(src, site)
    with Image.open(outputs(site, "clear")["thumb"]) as im:
        assert im.mode == "RGB" and min(im.getpixel((25, 20))) > 245


def test_panoramas_keep_their_detail(tmp_path):
    """Sized by the long edge alone, a 3600x150 panorama would be 2048x85 at most: less than its
    thumbnail, and nothing to see when zoomed. It gets the pixels of a 3:1 image of each size."""
    src = tmp_path / "p"
    make_jpeg(src / "pano.jpg", size=(3600, 150))
    make_jpeg(src / "column.jpg", size=(120, 2880))
    make_jpeg(src / "wide.jpg", size=(3000, 1000))  # 3:1 exactly: by its long edge, like any photo
    site = tmp_path / "site"
    build_site(src, site)
    pano = {k: Image.open(v).size for k, v in outputs(site, "pano").items()}
    assert pano == {"thumb": (450, 150), "1810w": (1810, 75), "2896w": (2896, 121), "3600w": (3600, 150)}
    column = {k: Image.open(v).size for k, v in outputs(site, "column").items()}
    assert column == {"thumb": (107, 320), "75w": (75, 1810), "120w": (120, 2880)}
    wide = {k: Image.open(v).size for k, v in outputs(site, "wide").items()}
    assert wide == {"thumb": (960, 320), "640w": (640, 213), "1024w": (1024, 341), "1600w": (1600, 533),
                    "2048w": (2048, 683)}
    image = soup(site / "pano" / "index.html").select_one("img.photo-image")
    widths = [part.split()[1] for part in image["srcset"].split(", ")]
    assert widths == ["1810w", "2896w", "3600w"]
    for part in image["srcset"].split(", "):
        assert (site / "pano" / part.split()[0]).is_file()


def test_grid_tiles_offer_only_images_that_fill_them_sharply(tmp_path):
    """A panorama's tile is its 3:1 thumbnail: its 24:1 display images would be scaled up three times
    to cover it. A 3:2 photo may still fill a square tile."""
    src = tmp_path / "p"
    make_jpeg(src / "pano.jpg", size=(7200, 300))
    make_jpeg(src / "norm.jpg", size=(3000, 2000))
    site = tmp_path / "site"
    build_site(src, site)
    tiles = {li["id"].removeprefix("m-"): li.select_one("img")["srcset"] for li in soup(site / "index.html").select(".grid li")}
    assert [part.split()[1] for part in tiles["pano"].split(", ")] == ["900w"]
    assert [part.split()[1] for part in tiles["norm"].split(", ")] == ["480w", "640w", "1024w", "1600w", "2048w"]
    square = tmp_path / "square"
    build_site(src, square, "-c", str(write_config(tmp_path, '[thumbnails]\nstyle = "square"\n')))
    tiles = {li["id"].removeprefix("m-"): li.select_one("img")["srcset"] for li in soup(square / "index.html").select(".grid li")}
    assert len(tiles["norm"].split(", ")) == 5


def test_no_published_side_exceeds_webp_limit():
    from albumen.process.plan import MAX_SIDE, display_geometry

    sizes = display_geometry(200_000, 500, (640, 1024, 1600, 2048))
    assert max(w for w, _ in sizes) == MAX_SIDE == 16383
    assert display_geometry(20_000, 15_000, (16384,)) == [(16383, 12287)]


def test_square_thumbnails_and_extreme_aspects(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "wide.jpg", size=(2400, 100))
    make_jpeg(src / "strip.jpg", size=(30, 600))
    site = tmp_path / "site"
    build_site(src, site)
    assert Image.open(outputs(site, "wide")["thumb"]).size == (300, 100)  # capped at 3:1
    assert Image.open(outputs(site, "strip")["thumb"]).size == (30, 90)
    square = tmp_path / "square"
    build_site(src, square, "-c", str(write_config(tmp_path, '[thumbnails]\nstyle = "square"\nheight = 64\n')))
    assert Image.open(outputs(square, "wide")["thumb"]).size == (64, 64)
    assert Image.open(outputs(square, "strip")["thumb"]).size == (30, 30)
    assert "grid-square" in soup(square / "index.html").body["class"]


def test_animated_gif_stays_animated(tmp_path):
    src = tmp_path / "p"
    src.mkdir()
    frames = [Image.new("RGB", (60, 40), (i * 60, 255 - i * 60, 0)) for i in range(4)]
    frames[0].save(src / "anim.gif", save_all=True, append_images=frames[1:], duration=100, loop=0)
    site = tmp_path / "site"
    build_site(src, site)
    files = outputs(site, "anim")
    with Image.open(files["60w.gif"]) as im:
        assert im.n_frames == 4 and im.size == (60, 40)
    assert Image.open(files["thumb"]).format == "JPEG"


def test_an_animation_too_big_to_resize_is_published_as_a_still(tmp_path):
    """A tiny GIF can hold thousands of frames on a huge canvas (the reviewer's 92 KB file: 4,000 frames
    of 3000x3000 kept a worker busy for many minutes). All its frames together may hold 4 x
    images.max_pixels; beyond, its first frame is published, and the build says so."""
    src = tmp_path / "p"
    src.mkdir()
    frames = [Image.new("RGB", (60, 40), (i * 50, 255 - i * 50, 0)) for i in range(5)]
    frames[0].save(src / "anim.gif", save_all=True, append_images=frames[1:], duration=100, loop=0)
    frames[0].save(src / "short.gif", save_all=True, append_images=frames[1:4], duration=100, loop=0)
    site = tmp_path / "site"
    config = write_config(tmp_path, "[images]\nmax_pixels = 2400\n")  # one 60x40 frame: 4 frames fit, not 5
    result = build_site(src, site, "-c", str(config))
    assert "anim.gif: an animation of 5 frames of 60x40 is too big to resize" in result.output
    assert "short.gif" not in result.output
    files = outputs(site, "anim")
    assert set(files) == {"thumb", "60w"}
    with Image.open(files["60w"]) as im:
        assert im.format == "JPEG" and im.size == (60, 40)
    with Image.open(outputs(site, "short")["60w.gif"]) as im:
        assert im.n_frames == 4


def _pixel_steps_gif(path: Path, side: int, count: int) -> None:
    """A GIF of count frames of side x side, each one pixel on from the last: a few bytes a frame in the
    file, side x side x 4 bytes once decoded."""
    blank = Image.new("P", (side, side), 0)
    blank.putpalette([v for i in range(256) for v in (i, 255 - i, 7 * i % 256)])
    frames = []
    for n in range(count):
        frames.append(blank.copy())
        frames[-1].putpixel((n % side, n // side % side), 1 + n % 255)
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=20, loop=0)


def test_an_animation_of_too_many_frames_is_published_as_a_still(tmp_path):
    """A 1.6 MB GIF of 71,000 frames of 100x100 holds fewer pixels than 4 x images.max_pixels, yet a
    worker took ten minutes and 2.2 GB to resize its frames: an animation of more than images.max_frames
    frames (1,000 by default) is published as its first frame, with a warning. Built in a process of
    its own with time and memory limits, so that a regression fails instead of stalling the suite."""
    src = tmp_path / "p"
    src.mkdir()
    _pixel_steps_gif(src / "long.gif", 16, 1500)
    _pixel_steps_gif(src / "short.gif", 16, 3)
    site = tmp_path / "site"
    result = run_cli_bounded("build", str(src), "-o", str(site), "-j", "1", timeout=120)
    assert result.exit_code == 0, result.output
    assert ("long.gif: an animation of 1,500 frames is longer than images.max_frames (1,000): published as a"
            " still image, its first frame") in result.output
    assert "short.gif" not in result.output
    files = outputs(site, "long")
    assert set(files) == {"thumb", "16w"}
    with Image.open(files["16w"]) as im:
        assert im.format == "JPEG" and im.size == (16, 16)
    with Image.open(outputs(site, "short")["16w.gif"]) as im:
        assert im.n_frames == 3
    # the limit is a setting
    config = write_config(tmp_path, "[images]\nmax_frames = 2\n")
    result = run_cli_bounded("build", str(src), "-o", str(site), "-j", "1", "-c", str(config), timeout=120)
    assert result.exit_code == 0, result.output
    assert "short.gif: an animation of 3 frames is longer than images.max_frames (2)" in result.output
    assert set(outputs(site, "short")) == {"thumb", "16w"}


_ANIMATION_JOB = """
import sys
from albumen.process import engine, worker  # loaded before the measure
from albumen.process.specs import ImageJob, OutputSpec

def peak_kib():  # of this process since it started (ru_maxrss would count the parent's before exec)
    with open("/proc/self/status") as f:
        return int(next(line for line in f if line.startswith("VmHWM:")).split()[1])

path, out, side, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
outputs = (OutputSpec("", "a.gif", "display", side, side, "gif", 80, animated=True),
           OutputSpec("", "a.webp", "display", side // 2, side // 2, "webp", 80, animated=True))
job = ImageJob("a.gif", path, out, "gif", 1, "srgb", side, side, count, outputs, outputs)
before = peak_kib()
result = worker.run_job(job)
print(result.ok, peak_kib() - before, result.error)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_worker_holds_a_few_frames_of_an_animation_not_all(tmp_path):
    """The frames of an animation are decoded, resized and encoded as the encoder asks for them: a
    worker decoded them all into memory first, 4 bytes a pixel of every frame until the job ended
    (2.2 GB for a GIF of 71,000 frames of 100x100). In a process of its own, a job making a GIF and a
    WebP of 120 frames of 500x500 (114 MB decoded) grows its peak memory by less than a third of that
    (by ~16 MB, as for 60 frames; by ~130 MB with the frames in memory)."""
    import subprocess

    side, count = 500, 120
    _pixel_steps_gif(tmp_path / "source.gif", side, count)
    out = tmp_path / "out"
    out.mkdir()
    done = subprocess.run(
        [sys.executable, "-c", _ANIMATION_JOB, str(tmp_path / "source.gif"), str(out), str(side), str(count)],
        capture_output=True, text=True, timeout=120,
    )
    ok, grown_kib, error = done.stdout.split(maxsplit=2)
    assert ok == "True", (error, done.stderr)
    with Image.open(out / "a.gif") as im, Image.open(out / "a.webp") as small:
        assert im.n_frames == count and small.size == (side // 2, side // 2) and small.is_animated
    assert int(grown_kib) * 1024 < side * side * 4 * count / 3, f"{int(grown_kib) // 1024} MB"


def _detailed(size: tuple[int, int]) -> Image.Image:
    """A picture with detail at every scale: two ways of making a small copy of it give other pixels."""
    bands = [Image.effect_noise((size[0] // 6 + 1, size[1] // 6 + 1), 90).resize(size, Image.Resampling.BICUBIC)
             for _ in range(3)]
    return Image.merge("RGB", bands)


@pytest.mark.parametrize("keep", [False, True], ids=["pillow-decoder", "libvips-decoder"])
def test_a_derivative_made_alone_has_the_bytes_of_a_whole_build(tmp_path, isolated_cache, keep):
    """A derivative's name carries its recipe's hash, so it may be cached forever: the same name must
    always mean the same bytes, whatever else its job made. A whole build is made, then each derivative
    of each photo is deleted and made again alone (as after a deleted file or a killed build), and
    each placeholder is taken again from its thumbnail file: every file of the site comes back byte for
    byte, and every placeholder. A thumbnail or a small size made alone was decoded at 1/8 (the whole
    build: 1/2) or resized from the decoded image instead of from a larger size: other bytes under the
    same name (a mean difference of ~1.2 per pixel on camera photos), and another placeholder. JPEGs
    are decoded by Pillow, or by libvips when all metadata is kept."""
    import shutil
    import sqlite3
    from contextlib import closing

    src = tmp_path / "p"
    src.mkdir()
    _detailed((2400, 1600)).save(src / "big.jpg", quality=90)  # decoded smaller in the DCT domain
    turned = Image.Exif()
    turned[0x0112] = 6
    _detailed((1200, 900)).save(src / "turned.jpg", quality=90, exif=turned.tobytes())
    alpha = _detailed((600, 400)).convert("RGBA")
    alpha.putalpha(Image.linear_gradient("L").resize((600, 400)))
    alpha.save(src / "alpha.png")
    frames = [_detailed((200, 150)).quantize(64) for _ in range(3)]
    frames[0].save(src / "anim.gif", save_all=True, append_images=frames[1:], duration=100, loop=0)
    heic = CORPUS / "hard" / "formats" / "spring_1440x960.heic"  # decoded by Pillow, when the corpus is here
    if heic.is_file():
        shutil.copy(heic, src / "spring.heic")
    site = tmp_path / "site"
    config = write_config(tmp_path, f'[images]\nkeep_metadata = {str(keep).lower()}\nsizes = [240, 600]\n'
                                    'formats = ["webp"]\n[thumbnails]\nheight = 100\n')
    build_site(src, site, "-c", str(config))
    cache = next(isolated_cache.rglob("cache.sqlite"))

    def placeholders() -> dict[str, tuple[str, str]]:
        with closing(sqlite3.connect(cache)) as db:
            return {name: (colour, uri) for name, colour, uri in db.execute("SELECT * FROM placeholders")}

    def rebuild(step: str) -> None:
        (src / f"{step}.txt").write_text("a change in the folder: the build looks for missing files")
        build_site(src, site, "-c", str(config))
        now = tree_digest(site)
        assert {k for k in whole.keys() | now.keys() if whole.get(k) != now.get(k)} == set(), step
        assert placeholders() == first, step

    whole, first = tree_digest(site), placeholders()
    assert len(first) == (5 if heic.is_file() else 4)
    made = {slug: sorted(outputs(site, slug).values()) for slug in ("big", "turned", "alpha", "anim", "spring")
            if (site / slug).is_dir()}
    # the thumbnail, 240 and 600 px, each in JPEG and WebP; the animation's thumbnails and its GIF and WebP
    assert len(made["big"]) == 6 and len(made["anim"]) == 4
    for n in range(max(len(files) for files in made.values())):
        for files in made.values():  # one derivative of each photo: each photo's job makes it alone
            if n < len(files):
                files[n].unlink()
        rebuild(f"round-{n}")
    with closing(sqlite3.connect(cache)) as db, db:  # the placeholders alone, from the thumbnails' files
        db.execute("DELETE FROM placeholders")
    rebuild("placeholders")


def test_decompression_bomb_limit_is_configurable(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "big.jpg", size=(400, 300))
    make_jpeg(src / "ok.jpg", size=(40, 30))
    site = tmp_path / "site"
    result = build_site(src, site, "-c", str(write_config(tmp_path, "[images]\nmax_pixels = 10000\n")))
    assert ("skipped: big.jpg: the header claims 120,000 pixels, over the limit of 10,000 pixels "
            "(images.max_pixels): refused as a possible decompression bomb") in result.stderr


def test_placeholders_are_inlined(tmp_path):
    src = tmp_path / "p"
    make_jpeg(src / "a.jpg", size=(720, 480), color=(10, 200, 10))  # a small image (under 480 px high) gets a plain tile
    site = tmp_path / "site"
    build_site(src, site)
    tile = soup(site / "index.html").select_one(".grid li")
    style = tile["style"]
    colour = style.split("background-color:")[1].split(";")[0]
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    assert g > 150 and r < 100
    uri = style.split("url(")[1].split(")")[0]
    assert uri.startswith("data:image/png;base64,") and len(uri) < 600
    import base64

    with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as im:
        assert max(im.size) <= 8


def test_only_the_first_tiles_of_a_page_inline_a_blurred_placeholder(tmp_path):
    """Below about two screens a lazy thumbnail is fetched before it scrolls into view: its colour is
    enough there, and the page stays small."""
    src = tmp_path / "p"
    for i in range(40):
        make_jpeg(src / f"p{i:02d}.jpg", size=(720, 480), color=(200, 10 + 5 * i, 10))
    site = tmp_path / "site"
    build_site(src, site)
    tiles = soup(site / "index.html").select(".grid li")
    assert len(tiles) == 40
    blurred = ["url(data:image/png;base64," in tile["style"] for tile in tiles]
    assert blurred == [True] * 36 + [False] * 4
    assert all("background-color:#" in tile["style"] for tile in tiles)


@pytest.mark.parametrize("mode, colour, expected", [
    ("RGBA", (200, 0, 0, 0), (255, 255, 255)),  # transparent: shown on white
    ("LA", (40, 255), (40, 40, 40)),
    ("L", 120, (120, 120, 120)),
])
def test_placeholder_colour_for_alpha_and_grey(tmp_path, mode, colour, expected):
    src = tmp_path / "p"
    src.mkdir()
    Image.new(mode, (720, 480), colour).save(src / "a.png")
    site = tmp_path / "site"
    build_site(src, site)
    style = soup(site / "index.html").select_one(".grid li")["style"]
    value = style.split("background-color:")[1].split(";")[0]
    got = tuple(int(value[i : i + 2], 16) for i in (1, 3, 5))
    assert all(abs(a - b) <= 2 for a, b in zip(got, expected, strict=True)), (got, expected)


@pytest.mark.parametrize("orientation", [2, 3, 4, 5, 7, 8])
def test_every_orientation_matches_pillow(tmp_path, orientation):
    from PIL import ImageChops, ImageOps, ImageStat

    src = tmp_path / "p"
    path = make_jpeg(src / "o.jpg", size=(96, 64), orientation=orientation)
    site = tmp_path / "site"
    build_site(src, site)
    produced = Image.open(outputs(site, "o")["96w" if orientation < 5 else "64w"]).convert("RGB")
    expected = ImageOps.exif_transpose(Image.open(path)).convert("RGB")
    assert produced.size == expected.size
    assert max(ImageStat.Stat(ImageChops.difference(produced, expected)).mean) < 8


def _raw_exif_text(path: Path, tag: int, ifd: int | None = None) -> bytes:
    """A text tag's stored bytes (Pillow hands them back decoded as Latin-1)."""
    with Image.open(path) as im:
        exif = im.getexif()
        value = (exif.get_ifd(ifd) if ifd else exif).get(tag)
    return value.encode("latin-1") if isinstance(value, str) else value


def test_utf8_exif_text_reads_and_publishes_intact(tmp_path):
    """Cameras and editors write EXIF text as UTF-8: 'Café in Zürich' was shown as 'CafÃ© in ZÃ¼rich',
    and a '©' in Copyright became '?' in every published image and '??' in download originals."""
    from conftest import make_exif

    src, site = tmp_path / "p", tmp_path / "site"
    exif = make_exif(date="2024:01:01 10:00:00")
    exif[0x010E] = "Café in Zürich".encode()
    exif[0x013B] = "Zoë Müller".encode()
    exif[0x8298] = "© 2024 Zoë Müller".encode()
    make_jpeg(src / "a.jpg", size=(900, 600), exif=exif)
    latin = make_exif(date="2024:01:02 10:00:00")
    latin[0x010E] = "Plain Latin-1 café".encode("latin-1")  # not UTF-8 (older software): read as Latin-1
    make_jpeg(src / "b.jpg", size=(900, 600), exif=latin)
    build_site(src, site, "-c", str(write_config(tmp_path, '[images]\noriginals = "copy"\n')))
    page = soup(site / "a" / "index.html")
    text = page.get_text(" ")
    assert "Café in Zürich" in text and "Zoë Müller" in text and "Ã" not in text
    assert page.select_one("img")["alt"] == "Café in Zürich"
    assert "Plain Latin-1 café" in soup(site / "b" / "index.html").get_text(" ")
    published = [p for p in (site / "a").glob("*.jpg") if ".original." not in p.name]
    assert published
    for image in published:
        assert _raw_exif_text(image, 0x8298).rstrip(b"\0") == "© 2024 Zoë Müller".encode()
        assert _raw_exif_text(image, 0x013B).rstrip(b"\0") == "Zoë Müller".encode()
    original = site / "a" / soup(site / "a" / "index.html").select_one("a.download")["href"]
    assert _raw_exif_text(original, 0x8298).rstrip(b"\0") == "© 2024 Zoë Müller".encode()
    assert _raw_exif_text(original, 0x010E).rstrip(b"\0") == "Café in Zürich".encode()


def test_camera_values_are_shown_as_cameras_show_them_and_impossible_ones_left_out(tmp_path):
    """0.4 s showed as '1/2 s' and 10/13 s as '1/1 s'; a corrupt ExposureTime (4294967295 s) and
    FNumber (0.64) were shown as they were (the APEX values beside them are used instead); ISO
    65535 hides a higher ISOSpeed; a date in 2099 sorted first in the stream."""
    from PIL.TiffImagePlugin import IFDRational as Fraction

    from conftest import make_exif

    src, site = tmp_path / "p", tmp_path / "site"
    cases = {
        "a": {0x829A: Fraction(4, 10), 0x829D: 2.8, 0x920A: Fraction(108125, 10000), 0x8827: 200},
        "b": {0x829A: Fraction(10, 13), 0x829D: 5.6, 0x8827: 65535, 0x8830: 2, 0x8833: 204800},
        "c": {0x829A: 4294967295.0, 0x829D: Fraction(64, 100), 0x9201: 9.5, 0x9202: 8.0},
    }
    for name, tags in cases.items():
        exif = make_exif(date="2024:05:01 10:00:00", make="Canon", model="EOS R5")
        sub = exif.get_ifd(0x8769)
        sub.update(tags)
        make_jpeg(src / f"{name}.jpg", size=(300, 200), exif=exif)
    make_jpeg(src / "future.jpg", size=(300, 200), date="2099:01:01 10:00:00")
    result = build_site(src, site)
    assert "future.jpg: EXIF date 2099-01-01 is in the future; ignored" in result.output

    def shown(slug: str) -> dict[str, str]:
        page = soup(site / slug / "index.html")
        return {dt.get_text(strip=True): dd.get_text(strip=True) for dt, dd in zip(page.select("dt"), page.select("dd"), strict=False)}

    a, b, c = shown("a"), shown("b"), shown("c")
    assert a["Exposure"] == "1/2.5 s" and a["Aperture"] == "f/2.8" and a["Focal length"].startswith("10.8 mm")
    assert b["Exposure"] == "1/1.3 s" and b["ISO"] == "204800"  # beside its label (it read 'ISO / ISO 204800')
    assert a["ISO"] == "200"
    # the viewer shows the facts on one line, without labels: the number keeps its name there
    items = json.loads(soup(site / "index.html").select_one("#albumen-items").string)
    line = next(item["c"] for item in items if item["n"] == 2)  # b.jpg
    assert line == "Canon EOS R5 · 1/1.3 s · f/5.6 · ISO 204800", line
    assert c["Exposure"] == "1/724 s" and c["Aperture"] == "f/16"
    assert soup(site / "future" / "index.html").select_one(".photo-meta time") is None  # undated, as it is
