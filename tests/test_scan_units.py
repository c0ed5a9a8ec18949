"""Pure pieces of the scan: content sniffing, dates, sidecar parsing, natural order."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta, timezone

import pytest

from albumen.scan.arrange import natural_key, sort_items
from albumen.scan.dates import date_from_filename, parse_date_value, parse_exif_datetime
from albumen.scan.sidecar import meta_bool, meta_list, meta_text, parse_sidecar_text, render_markdown
from albumen.scan.sniff import sniff_bytes

JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 60
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 56


def ftyp(major: bytes, *compatible: bytes) -> bytes:
    body = major + b"\x00\x00\x00\x00" + b"".join(compatible)
    return (8 + len(body)).to_bytes(4, "big") + b"ftyp" + body + b"\x00" * 16


def test_sniff_by_content_not_extension():
    assert sniff_bytes(JPEG, ".png").format == "jpeg"
    assert sniff_bytes(PNG, ".JPG").format == "png"
    assert sniff_bytes(ftyp(b"heic", b"mif1", b"heic"), ".jpg").format == "heif"
    assert sniff_bytes(ftyp(b"avif", b"mif1", b"avif"), ".avif").format == "avif"
    assert sniff_bytes(ftyp(b"mif1", b"avif", b"miaf"), ".avif").format == "avif"
    assert sniff_bytes(ftyp(b"isom", b"iso2", b"mp41"), ".mp4").kind == "video"
    assert sniff_bytes(ftyp(b"qt  "), ".MOV").kind == "video"
    assert sniff_bytes(b"\x1a\x45\xdf\xa3" + b"\x00" * 60, ".webm").kind == "video"
    assert sniff_bytes(JPEG, "").kind == "image"  # no extension at all


def test_sniff_reports_media_lookalikes_and_ignores_the_rest():
    assert sniff_bytes(b"hello world, not a picture", ".jpg").kind == "broken"
    assert sniff_bytes(b"", ".jpg").reason == "empty file (0 bytes)"
    assert sniff_bytes(b"", ".txt").kind is None
    assert sniff_bytes(b"hello", ".txt").kind is None
    assert sniff_bytes(b"<?xml version='1.0'?><x:xmpmeta/>", ".xmp").kind is None
    assert sniff_bytes(b"II*\x00" + b"\x00" * 60, ".NEF").kind == "raw"
    assert sniff_bytes(b"8BPS" + b"\x00" * 60, ".psd").reason == "unsupported format: Photoshop document"


def test_exif_dates_keep_offsets_and_refuse_placeholders():
    assert parse_exif_datetime("2024:07:01 12:34:56", "+02:00") == datetime(
        2024, 7, 1, 12, 34, 56, tzinfo=timezone(timedelta(hours=2))
    )
    assert parse_exif_datetime("2024:07:01 12:34:56").tzinfo is None
    assert parse_exif_datetime("0000:00:00 00:00:00") is None
    assert parse_exif_datetime("    :  :     :  :  ") is None
    assert parse_exif_datetime("2024:02:30 10:00:00") is None


def test_exif_sub_seconds_are_a_decimal_fraction():
    def at(subsec):
        value = parse_exif_datetime("2024:07:01 12:34:56", subsec=subsec)
        return value.microsecond if value else None

    assert at("9") == 900_000 and at("10") == 100_000 and at("07") == 70_000 and at("123") == 123_000
    assert at(" 5  ") == 500_000 and at("5\x00") == 500_000  # padded
    assert at("1234567") == 123_456  # finer than a microsecond: cut
    assert at(None) == at("") == at("abc") == at("-5") == at("1.5") == at("²") == 0  # absent or garbage: ignored
    with_offset = parse_exif_datetime("2024:07:01 12:34:56", "+02:00", "25")
    assert with_offset == datetime(2024, 7, 1, 12, 34, 56, 250_000, tzinfo=timezone(timedelta(hours=2)))


def test_dates_from_file_names():
    assert date_from_filename("IMG_20240701_123456") == datetime(2024, 7, 1, 12, 34, 56)
    assert date_from_filename("PXL_20231224_181502123") == datetime(2023, 12, 24, 18, 15, 2)
    assert date_from_filename("2024-07-01 12.34.56") == datetime(2024, 7, 1, 12, 34, 56)
    assert date_from_filename("IMG-20240701-WA0001") == datetime(2024, 7, 1)
    assert date_from_filename("DSC_1234") is None
    assert date_from_filename("IMG_20241301_000000") is None


def test_sidecar_dates():
    assert parse_date_value("2024-07-01") == datetime(2024, 7, 1)
    assert parse_date_value("2024-07-01 10:30") == datetime(2024, 7, 1, 10, 30)
    assert parse_date_value("2024-07-01T10:30:00Z").utcoffset() == timedelta(0)
    assert parse_date_value("not a date") is None
    # YAML's other timestamp spellings keep their zone and fraction (front matter keeps dates as text)
    spaced = parse_date_value("2001-12-14 21:59:43.10 -5")
    assert spaced == datetime(2001, 12, 14, 21, 59, 43, 100000, tzinfo=timezone(timedelta(hours=-5)))
    assert parse_date_value(2024) == datetime(2024, 1, 1) == parse_date_value("2024")  # `date: 2024` is an int
    assert parse_date_value("2024-02-30 10:00:00 +1") is None and parse_date_value(True) is None


def test_sigal_style_header():
    meta, body = parse_sidecar_text("Title: Summer\nTags: sea,\n    sun\nPrivate: true\n\nHello *world*\n")
    assert meta["title"] == "Summer"
    assert meta_list(meta, "tags") == ("sea", "sun")
    assert meta_bool(meta, "private") is True
    assert body.strip() == "Hello *world*"


def test_yaml_front_matter():
    meta, body = parse_sidecar_text("---\ntitle: Trip\ndate: 2024-07-01\ntags: [a, b]\n---\nBody text\n")
    assert meta["title"] == "Trip"
    assert parse_date_value(meta["date"]) == datetime(2024, 7, 1)
    assert meta_list(meta, "tags") == ("a", "b")
    assert body == "Body text\n"


def test_broken_yaml_is_reported_not_fatal():
    notes: list[str] = []
    meta, _ = parse_sidecar_text("---\ntitle: [unclosed\n---\nbody\n", "a.md", notes)
    assert meta == {}
    assert notes and "a.md: invalid YAML front matter ignored" in notes[0]


def test_yaml_aliases_are_refused_and_header_values_are_cut_into_text_cheaply():
    notes: list[str] = []
    meta, body = parse_sidecar_text("---\na: &a [x, y]\ntitle: *a\n---\nbody\n", "a.md", notes)
    assert meta == {} and body == "body\n"
    assert notes == ["a.md: invalid YAML front matter ignored (aliases (*a) are not allowed in a sidecar header)"]
    assert parse_sidecar_text("---\ntitle: &a Trip\n---\n")[0] == {"title": "Trip"}  # an anchor alone is harmless
    row = ["lolololol"] * 10
    huge = [[[row] * 1000] * 1000]  # shared lists: 10**7 strings to walk, 10**8 bytes as text
    assert len(meta_text({"title": huge}, "title") or "") <= 10_000
    assert len(meta_list({"tags": huge}, "tags")) == 1
    assert meta_text({"title": ["a", ["b", "c"]]}, "title") == "a b c"


def test_headers_read_tolerantly_and_private_marks_outside_a_whole_header_fail_closed():
    from albumen.scan.sidecar import marks_private

    for text in ("\n \n---\nprivate: true\n---\n", "--- \nprivate: true\n...\t\n", "Title: x\nPrivate : true\n",
                 "   private: true\n", "+++\nprivate = true\n+++\n"):
        notes: list[str] = []
        assert meta_bool(parse_sidecar_text(text, "a.md", notes)[0], "private") is True, text
        assert notes == [], text
    for text in ("---\nprivate: true\n", "Title: x\nprose\nPrivate: yes\n", "Some prose.\n\n'private' = 1\n",
                 "    private: family\n"):
        notes = []
        assert parse_sidecar_text(text, "a.md", notes)[0]["private"] is True, text
        assert len(notes) == 1 and "kept private to be safe" in notes[0], text
    for text in ("---\n\u200bprivate: true\n---\n", "---\n\u200bprivate: [true\n---\n", "\u2060private: true\n"):
        assert marks_private(parse_sidecar_text(text, "a.md", [])[0]), text  # an invisible character before the key
    assert parse_sidecar_text("---\ntitle: 👩\u200d👧\n---\n")[0] == {"title": "👩\u200d👧"}  # values keep theirs
    for text in ("Title: x\n\nprivate: true\n", "---\ntitle: x\n---\nprivate: true\n", "Title: x\nprose\nprivate: no\n"):
        notes = []
        meta, body = parse_sidecar_text(text, "a.md", notes)
        assert meta_bool(meta, "private") is not True and notes == [], text  # the body is prose


def test_markdown_keeps_only_sanitized_html():
    html = render_markdown('**bold** and [x](javascript:alert(1)) <em onclick="x()">em</em> <script>alert(1)</script>')
    assert "<script" not in html and "alert(1)</" not in html and "onclick" not in html
    assert 'href="javascript' not in html
    assert "<strong>bold</strong>" in html and "<em>em</em>" in html


def test_natural_order():
    names = ["IMG_10.jpg", "img_2.jpg", "IMG_1.jpg", "a.jpg"]
    assert sorted(names, key=natural_key) == ["a.jpg", "IMG_1.jpg", "img_2.jpg", "IMG_10.jpg"]


def test_sort_keeps_missing_values_last_both_ways():
    class Item:
        def __init__(self, name, value):
            self.name, self.value = name, value

    def key(field, item):
        return (item.value is None, item.value or 0, item.name)

    items = [Item("a", 2), Item("b", None), Item("c", 1)]
    assert [i.name for i in sort_items(items, "v", key)] == ["c", "a", "b"]
    assert [i.name for i in sort_items(items, "-v", key)] == ["a", "c", "b"]


def test_equal_metadata_is_one_shared_object_whether_read_or_cached(tmp_path):
    """A library's photos mostly share a camera and a size: the scan keeps one copy of each, both
    for files read now and for records from the cache (memory at 100,000 photos)."""
    from albumen.cache import BuildCache
    from albumen.config import Config
    from albumen.scan import scan_source
    from conftest import make_jpeg

    src = tmp_path / "photos"
    for i in range(3):
        make_jpeg(src / "a" / f"p{i}.jpg", size=(80, 60), make="Fuji", model="X-T5", date=f"2024:05:0{i + 1} 10:00:00")
    make_jpeg(src / "b" / "other.jpg", size=(60, 80), make="Canon", model="R6")
    for cache in (BuildCache(tmp_path / "c"), BuildCache(tmp_path / "c")):  # read, then cached
        gallery = scan_source(str(src), Config(), cache)
        cache.close()
        fuji = [gallery.media[f"a/p{i}.jpg"] for i in range(3)]
        assert all(m.info is fuji[0].info for m in fuji)
        assert all(m.embedded.camera is fuji[0].embedded.camera for m in fuji)
        assert fuji[0].embedded.camera.make == "Fuji" and fuji[0].info.width == 80
        assert len({m.embedded.date for m in fuji}) == 3  # their own dates stay their own
        other = gallery.media["b/other.jpg"]
        assert other.info is not fuji[0].info and other.embedded.camera.model == "R6"


def test_cached_records_unpickle_to_equal_values():
    """Records come back from the cache through a quicker __setstate__ (see model._quick_setstate)."""
    import pickle

    from albumen.model import GPS, Camera, EmbeddedMetadata, MediaInfo, Sidecar

    values = [
        EmbeddedMetadata(title="t", keywords=("a", "b"), rating=3, date=datetime(2024, 1, 2, tzinfo=UTC),
                         date_source="exif", camera=Camera(make="X", iso=200), gps=GPS(1.5, -2.5, 30.0), names_place=True),
        MediaInfo("image", "jpeg", 10, 20, orientation=6, colour="p3"),
        Sidecar("a.md", {"title": "x"}, "<p>x</p>"),
    ]
    for value in values:
        again = pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        assert again == value and type(again) is type(value)
    assert hash(pickle.loads(pickle.dumps(values[0]))) == hash(values[0])
    broken = pickle.dumps(values[1]).replace(b"p3", b"p4")
    assert pickle.loads(broken).colour == "p4"  # values land in their own fields


def test_one_instant_in_two_time_zones_stays_two_local_times(tmp_path):
    """Sharing equal metadata must not merge dates that are the same instant at different offsets
    (aware datetimes compare equal across offsets)."""
    from albumen.config import Config
    from albumen.scan import scan_source
    from conftest import make_jpeg

    src = tmp_path / "photos"
    make_jpeg(src / "a.jpg", make="Fuji", model="X", date="2024:05:01 12:00:00", offset="+02:00")
    make_jpeg(src / "b.jpg", make="Fuji", model="X", date="2024:05:01 10:00:00", offset="+00:00")
    gallery = scan_source(str(src), Config())
    a, b = gallery.media["a.jpg"], gallery.media["b.jpg"]
    assert a.embedded.date == b.embedded.date  # one instant
    assert (a.embedded.date.hour, b.embedded.date.hour) == (12, 10)
    assert a.embedded.camera is b.embedded.camera  # the camera is still shared


def test_a_sidecar_reads_the_same_in_any_unicode_encoding_and_with_any_line_break(tmp_path):
    """A photo's sidecar saved as UTF-16 by Windows tools was read as Windows-1252 (its title the
    byte-order mark and NULs), and with an old Mac's \\r line endings, U+2028 or NEL its title ran on
    over the following lines."""
    from albumen.scan.sidecar import NotText, read_sidecar

    text = "Title: Sunset\nTags: sea, sun\n\nA *warm* evening.\n"
    crlf = text.replace("\n", "\r\n")
    variants = {
        "utf8bom": ("\ufeff" + text).encode(), "utf16le": ("\ufeff" + crlf).encode("utf-16-le"),
        "utf16be": ("\ufeff" + text).encode("utf-16-be"), "utf32le": ("\ufeff" + text).encode("utf-32-le"),
        "utf32be": ("\ufeff" + text).encode("utf-32-be"), "cr": text.replace("\n", "\r").encode(),
        "crlf": crlf.encode(), "u2028": text.replace("\n", "\u2028").encode(), "nel": text.replace("\n", "\x85").encode(),
        "mixed": "Title: Sunset\r\nTags: sea, sun\r\u2029A *warm* evening.\n".encode(),
    }
    for name, raw in variants.items():
        path = tmp_path / f"{name}.md"
        path.write_bytes(raw)
        sidecar, notes = read_sidecar(str(path), "a.md")
        assert sidecar.meta == {"title": "Sunset", "tags": "sea, sun"}, name
        assert sidecar.body_html == "<p>A <em>warm</em> evening.</p>" and notes == [], name
    path = tmp_path / "nobom.md"
    path.write_bytes(text.encode("utf-16-le"))  # no byte-order mark: which encoding it is cannot be told
    with pytest.raises(NotText):
        read_sidecar(str(path), "a.md")


def test_a_sidecar_cut_at_1_mib_inside_a_character_is_still_utf8(tmp_path):
    from albumen.scan.sidecar import read_sidecar

    head = "Title: Café\n\n"
    body = "x" * (1024 * 1024 - len(head.encode()) - 1) + "é" * 10  # the limit falls inside the first é
    path = tmp_path / "a.md"
    path.write_text(head + body, encoding="utf-8")
    sidecar, notes = read_sidecar(str(path), "a.md")
    assert sidecar.meta["title"] == "Café"
    assert not any("UTF-8" in n for n in notes) and any("larger than 1 MiB" in n for n in notes)


def test_untagged_adobe_rgb_is_told_by_exif_colour_space_and_interop_index(tmp_path):
    from PIL import Image, ImageCms

    from albumen.scan.metadata import read_image

    def colour_of(name, space=None, index=None, mode="RGB", icc=None):
        exif = Image.Exif()
        if space is not None:
            exif.get_ifd(0x8769)[0xA001] = space
        if index is not None:
            exif.get_ifd(0x8769)[0xA005] = {0x0001: index}
        path = tmp_path / name
        extra = {"icc_profile": icc} if icc else {}
        Image.new(mode, (16, 16), 90).save(path, "JPEG", exif=exif.tobytes(), **extra)
        return read_image(str(path), "jpeg", 10**8)[0].colour

    srgb_icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    assert colour_of("a.jpg", 0xFFFF, "R03") == "adobergb"
    assert colour_of("_MG_1.jpg", 2) == "adobergb"  # ColorSpace 2: non-standard, exiftool's "Adobe RGB"
    assert colour_of("b.jpg", 0xFFFF, "R98") == "srgb"
    assert colour_of("c.jpg", 1, "R03") == "srgb"  # ColorSpace says sRGB
    assert colour_of("_MG_2.jpg", 0xFFFF) == "srgb"  # no index (and the DCF '_' name is not read)
    assert colour_of("d.jpg") == "srgb"
    assert colour_of("e.jpg", 0xFFFF, "R03", icc=srgb_icc) == "srgb"  # an embedded profile wins
    assert colour_of("f.jpg", 0xFFFF, "R03", mode="L") == "srgb"  # grey: no primaries to convert


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_swapped_in_after_the_walk_is_refused_not_waited_on(tmp_path):
    """The walk keeps regular files only; a worker reading one later must not block if it became a FIFO."""
    import threading

    from albumen.scan import read_media_file

    fifo = tmp_path / "photo.jpg"
    os.mkfifo(fifo)
    result = []
    reader = threading.Thread(target=lambda: result.append(read_media_file(str(fifo), "photo.jpg", 10**8)), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert not reader.is_alive(), "reading a FIFO blocked"
    assert result[0].kind == "broken" and "not a regular file" in result[0].reason


def _stream_order_before(gallery, limit=0):
    """stream_order as it was (every media sorted by album and name, then by date), with names alike in
    natural order told apart as written: the reference."""
    from albumen.scan.arrange import newest_first

    groups = {}
    for media in gallery.public_media():
        groups.setdefault(media.album_uri, []).append(media)
    items = []
    for album_uri in sorted(groups, key=lambda uri: (natural_key(uri), uri)):
        group = groups.pop(album_uri)
        group.sort(key=lambda m: (natural_key(m.name), m.name))
        items.extend(group)
    items.sort(key=newest_first, reverse=True)
    uris = [m.src_uri for m in items]
    return uris[:limit] if limit else uris


def test_stream_order_sorts_names_only_among_ties_and_agrees_with_the_whole_sort():
    """stream_order looks at albums and names only among media of one date (a burst, the undated):
    the same order as sorting every media by album and name first, on 400 random galleries full of
    ties (equal dates, undated media, names and albums alike in natural order: 'a1'/'a01', 'B'/'b')."""
    import random

    from albumen.model import Album, EmbeddedMetadata, Gallery, Media, MediaInfo
    from albumen.scan.arrange import stream_order

    rng = random.Random(24)
    info = MediaInfo("image", "jpeg", 10, 10)
    dates = [None, *(datetime(2020, 1, d, tzinfo=UTC) for d in range(1, 4)), datetime(2020, 1, 1, 1, tzinfo=timezone(timedelta(hours=1)))]
    for n in range(400):
        gallery = Gallery()
        names = ["a", "a1", "a01", "A2", "b", "B", "b10", "b9", "x y", "ä"]
        albums = [""] + sorted({"/".join(rng.choice(names) for _ in range(rng.randint(1, 2))) for _ in range(rng.randint(1, 6))})
        for uri in albums:
            gallery.albums[uri] = Album(src_uri=uri, name=uri.rpartition("/")[2], title=uri)
        for uri in albums[1:]:  # linked from the top (walk_albums follows children)
            gallery.albums[""].children.append(uri)
        for i in range(rng.randint(0, 40)):
            album = rng.choice(albums)
            name = f"{rng.choice(names)}{rng.choice(['', '1', '01', '2'])}.{i}.jpg" if rng.random() < 0.9 else f"{rng.choice(names)}.jpg"
            src = f"{album}/{name}" if album else name
            if src in gallery.media:
                continue
            gallery.media[src] = Media(src, album, name, 1, 1, "", info, EmbeddedMetadata(), date=rng.choice(dates))
            gallery.albums[album].media.append(src)
        for limit in (0, 1, 5):
            assert stream_order(gallery, limit) == _stream_order_before(gallery, limit), (n, limit)


def test_media_sorted_by_date_as_sort_items_sorts_them():
    """arrange.sort_media sorts by date without a Python key function an item: the order sort_items
    gives, on 3,000 random lists (undated media, equal instants in other zones, names alike in natural
    order, both directions, and other orders, which it hands to sort_items)."""
    import random

    from albumen.model import EmbeddedMetadata, Media, MediaInfo
    from albumen.scan.arrange import _media_sort_key, sort_media

    rng = random.Random(5)
    info = MediaInfo("image", "jpeg", 10, 10)
    dates = [None, datetime(2020, 1, 1, tzinfo=UTC), datetime(2020, 1, 1, 1, tzinfo=timezone(timedelta(hours=1))),
             datetime(2021, 5, 1, tzinfo=UTC), datetime(2019, 5, 1, tzinfo=UTC)]
    for _ in range(3000):
        items = [Media(f"a/{i}", "a", f"{rng.choice(['IMG', 'img', 'x'])}{rng.choice(['1', '01', '2', '10', ''])}.jpg",
                       1, 1, "", info, EmbeddedMetadata(), date=rng.choice(dates), title=rng.choice([None, "b", "A"]))
                 for i in range(rng.randint(0, 12))]
        for spec in ("date", "-date", "name", "-title"):
            assert sort_media(items, spec) == sort_items(items, spec, _media_sort_key), spec


def test_walk_through_folder_descriptors_lists_what_paths_list_and_closes_them(tmp_path, monkeypatch):
    """walk_source lists each folder through a descriptor of it (fstatat by name: listing._BY_FD). It must say
    exactly what the walk by paths says, links (to files, folders, index.md, outside, broken) and
    hidden or ignored files included; a folder it cannot open or list is a warning, the others are
    listed; and no descriptor stays open, whichever way a folder ends."""
    import errno

    from albumen.scan import listing, walk

    if not listing._BY_FD:
        pytest.skip("this system cannot list a folder through a descriptor")
    src = tmp_path / "photos"
    (src / "2020" / "Trip" / "deep").mkdir(parents=True)
    (src / "Locked").mkdir()
    (src / "Broken").mkdir()
    (src / "Locked" / "a.jpg").write_bytes(b"x")
    (src / "Broken" / "b.jpg").write_bytes(b"x")
    for rel, data in [("2020/Trip/IMG_1.jpg", b"one"), ("2020/Trip/deep/IMG_2.jpg", b"two!"), ("2020/Trip/index.md", b"# T"),
                      ("2020/.hidden.jpg", b"h"), ("2020/skip.tmp", b"s"), ("top.jpg", b"top"), ("2020/Trip/Index.MD", b"x")]:
        (src / rel).write_bytes(data)
    (src / "2020" / "link.jpg").symlink_to(src / "top.jpg")
    (src / "2020" / "TripLink").symlink_to(src / "2020" / "Trip")
    (src / "2020" / "out.jpg").symlink_to(tmp_path)
    (src / "2020" / "gone.jpg").symlink_to(src / "nothing.jpg")
    (src / "index.md").symlink_to(src / "2020" / "Trip" / "index.md")
    real_open, real_scandir = os.open, os.scandir
    opened: list[int] = []

    def refusing_open(path, flags, *args, **kwargs):
        if str(path).endswith("Locked"):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        fd = real_open(path, flags, *args, **kwargs)
        if str(path).endswith("Broken"):
            opened.append(fd)
        return fd

    def refusing_scandir(path="."):
        if path in opened:  # opened, then cannot be listed: its descriptor must still be closed
            raise OSError(errno.EIO, "Input/output error")
        return real_scandir(path)

    def walked(by_fd: bool):
        monkeypatch.setattr(listing, "_BY_FD", by_fd)
        report = walk.WalkReport()
        listings = [(lst.src_uri, lst.abs_path, lst.real_uri, list(lst.files))
                    for lst in walk.walk_source(str(src), ("*.tmp",), report)]
        return listings, report.warnings, [(k.src_uri, k.real_uri, k.folder, k.walked_as) for k in report.links]

    by_path = walked(False)
    fds = len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else None
    by_fd = walked(True)
    assert by_fd == by_path
    assert {entry.name for _, _, _, files in by_fd[0] for entry in files} >= {"IMG_1.jpg", "IMG_2.jpg", "link.jpg", "top.jpg"}
    monkeypatch.setattr(listing.os, "open", refusing_open)
    monkeypatch.setattr(listing.os, "scandir", refusing_scandir)
    listings, warnings, _ = walked(True)
    monkeypatch.undo()
    assert "Locked: cannot list folder (Permission denied)" in warnings
    assert "Broken: cannot list folder (Input/output error)" in warnings
    assert opened  # (the folder was opened before it could not be listed)
    assert {uri for uri, *_ in listings} == {uri for uri, *_ in by_path[0]} - {"Locked", "Broken"}
    if fds is not None:
        assert len(os.listdir("/proc/self/fd")) == fds


def _walked(src, ignore=(), pool=None, packed=None):
    """What the walk says of each folder: its text (listing_text, before and after its files are all made
    into entries), every file, its count; packed: told how many folders came as a worker's text."""
    from albumen.scan.walk import WalkReport, listing_text, walk_source

    report = WalkReport()
    listings = []
    for lst in walk_source(str(src), ignore, report, pool):
        text, count = listing_text(lst), lst.file_count()
        if packed is not None and lst.runs is not None:
            packed.append(lst.src_uri)
        listings.append((lst.src_uri, lst.abs_path, lst.real_uri, list(lst.all_files()), text, listing_text(lst), count))
        assert text == listings[-1][5] and count == len(lst.files) and lst.runs is None
    links = [(k.src_uri, k.real_uri, k.folder, k.walked_as) for k in report.links]
    return listings, report.warnings, links, report.marks


def _tree_of_every_case(src):
    """Years of events, and the cases the walk treats apart: hidden, ignored and .nomedia folders and
    files, links to folders and files (inside, outside, broken, to a folder listed again), index.md files."""
    for year in range(2001, 2007):
        for event in range(3):
            folder = src / str(year) / f"{year}-0{event + 1} Event"
            folder.mkdir(parents=True)
            for i in range(4):
                (folder / f"IMG_{i}.jpg").write_bytes(b"x" * (i + year))
            (folder / "notes.tmp").write_bytes(b"t")
    (src / "2003" / "2003-02 Event" / "Été à Noël 1.jpg").write_bytes(b"e")  # (a plain file's name in UTF-8)
    (src / "2002" / "2002-01 Event" / "index.md").write_text("---\nprivate: true\n---\n")
    (src / "2003" / ".git" / "objects").mkdir(parents=True)
    (src / "2003" / ".git" / "objects" / "a.jpg").write_bytes(b"g")
    (src / "2004" / "skipped" / "deep").mkdir(parents=True)
    (src / "2004" / "skipped" / "deep" / "s.jpg").write_bytes(b"s")
    (src / "2005" / "Hidden" / "below").mkdir(parents=True)
    (src / "2005" / "Hidden" / ".nomedia").write_text("")
    (src / "2005" / "Hidden" / "below" / "h.jpg").write_bytes(b"h")
    (src / "2006" / "Partly").mkdir()
    (src / "2006" / "Partly" / ".nomedia").write_text("gone.jpg\nSub\n")
    (src / "2006" / "Partly" / "gone.jpg").write_bytes(b"g")
    (src / "2006" / "Partly" / "kept.jpg").write_bytes(b"k")
    (src / "2006" / "Partly" / "Sub").mkdir()
    (src / "2006" / "Partly" / "Sub" / "x.jpg").write_bytes(b"x")
    (src / "2006" / "Partly" / "Other").mkdir()
    (src / "2006" / "Partly" / "Other" / "y.jpg").write_bytes(b"y")
    (src / "2006" / "Link to 2001").symlink_to(src / "2001")
    (src / "2006" / "Link to hidden").symlink_to(src / "2005" / "Hidden" / "below")
    (src / "2003" / "link.jpg").symlink_to(src / "2001" / "2001-01 Event" / "IMG_0.jpg")
    (src / "2003" / "outside.jpg").symlink_to(src.parent)
    (src / "2003" / "broken.jpg").symlink_to(src / "nothing.jpg")
    (src / "2004" / "index.md").symlink_to(src / "2002" / "2002-01 Event" / "index.md")


def test_the_walk_alone_keeps_plain_files_as_text_past_pack_from(tmp_path, monkeypatch):
    """Past PACK_FROM files listed, the walk's own process keeps the plain files of the folders it lists
    as text (listing.pack), as the workers send them (a first build of a million files): every folder
    says what it says with each file an entry, but those with a .nomedia, which are listed as entries."""
    import albumen.scan.walk as walk

    src = tmp_path / "photos"
    _tree_of_every_case(src)
    ignore = ("*.tmp", "skipped")
    alone = _walked(src, ignore)
    monkeypatch.setattr(walk, "PACK_FROM", 5)
    packed: list[str] = []
    assert _walked(src, ignore, packed=packed) == alone
    assert "2002/2002-01 Event" in packed and "2003/2003-02 Event" in packed and "2006/Partly" not in packed
    assert "" not in packed and "2001/2001-01 Event" not in packed  # (the first 5 files: entries)


def test_walk_with_the_workers_listing_folders_lists_what_the_walk_alone_lists(tmp_path):
    """walk_source(pool=...) has the workers list each tree of folders (list_tree) while it makes the
    listings: it must give exactly what the walk alone gives, on a tree of every case, with a real
    pool; with tasks that fail (their folders listed by the walk itself); and leave no task running."""
    from albumen.pool import TaskFailed, WorkerPool
    from albumen.scan.listing import pack

    src = tmp_path / "photos"
    _tree_of_every_case(src)
    ignore = ("*.tmp", "skipped")
    alone = _walked(src, ignore)
    assert {uri for uri, *_ in alone[0]} >= {"2001/2001-01 Event", "2006/Partly/Other", "2006/Link to hidden"}
    assert not {"2003/.git", "2004/skipped", "2005/Hidden", "2006/Partly/Sub"} & {uri for uri, *_ in alone[0]}
    with WorkerPool(2) as pool:
        packed: list[str] = []
        assert _walked(src, ignore, pool, packed) == alone
        # the workers' folders came as text (listing.Packed), but those with a .nomedia
        assert "2002/2002-01 Event" in packed and "2006/Partly" not in packed and "2003" in packed  # (2001: the walk's own)
        assert _walked(src, ignore, pool) == alone  # (the same pool again: nothing left of the last walk)

    class Inline:
        """Runs list_tree here, in the walk's order, failing every other tree."""

        def __init__(self):
            self.asked: list[str] = []

        def run(self, fn, items, ahead=2):
            for n, item in enumerate(items):
                self.asked.append(item[1])
                yield item, (TaskFailed("the worker crashed") if n % 2 else fn(item))

    inline = Inline()
    assert _walked(src, ignore, inline) == alone
    assert len(inline.asked) >= 5 and "2001" not in inline.asked  # (the first tree is the walk's own)

    class PacksEverything(Inline):
        """As if a .nomedia was made after a worker listed its folder: every folder comes packed."""

        def run(self, fn, items, ahead=2):
            for item, found in super().run(fn, items, ahead):
                if isinstance(found, dict):
                    found = {path: pack(raw) if isinstance(raw, list) else raw for path, raw in found.items()}
                yield item, found

    assert _walked(src, ignore, PacksEverything()) == alone  # (the walk lists such a folder itself)


def test_media_takes_its_fields_as_before_its_rest_was_kept_apart():
    """model.Media keeps what few passes read in `rest`, but is made as before: the file's facts and
    info are required, every field is read and set as its own, and dataclasses.replace gives a media
    with the fields asked changed and its own rest (not the other's)."""
    from dataclasses import replace

    from albumen.model import EmbeddedMetadata, Media, MediaInfo

    with pytest.raises(TypeError, match="size, mtime_ns, content_hash, info, embedded"):
        Media("a/x.jpg", "a", "x.jpg")
    media = Media("a/x.jpg", "a", "x.jpg", 10, 20, "h", MediaInfo("image", "jpeg", 4, 3), EmbeddedMetadata(), tags=("t",))
    other = replace(media, embedded=EmbeddedMetadata(artist="Ann"))
    other.alt = "alt"
    assert (other.size, other.tags, other.embedded.artist, other.info) == (10, ("t",), "Ann", media.info)
    assert media.alt is None and media.embedded.artist is None and other != media
