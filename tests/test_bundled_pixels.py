"""The bundled pixel plugins (watermark, copyright, adjust) in real builds: on real photos, the mark is
where it was asked, the notice in its corner only, the adjustment in the expected direction; private
albums untouched unless asked; an option re-makes exactly the images it touches; forked and spawned
workers make the same site."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import CORPUS, albumen_process, build_site, make_exif, make_jpeg, tree_digest, write_config

REAL = CORPUS / "real"
needs_real = pytest.mark.skipif(not (REAL / "MANIFEST.tsv").is_file(),
                                reason=f"the shared corpus of real photos is not at {REAL} (CI has it beside the project)")
MAGENTA = (255, 0, 255)
SIZES = "[images]\nsizes = [320, 640]\n"


def _mark(path: Path, size=(100, 50)) -> Path:
    """A mark whose left half is opaque magenta and right half transparent."""
    im = Image.new("RGBA", size, (0, 0, 0, 0))
    im.paste(Image.new("RGBA", (size[0] // 2, size[1]), (*MAGENTA, 255)), (0, 0))
    path.parent.mkdir(parents=True, exist_ok=True)
    im.save(path, "PNG")
    return path


def _real_gallery(src: Path) -> Path:
    """Two real photos in a public album, one in a private one."""
    (src / "Trip").mkdir(parents=True)
    shutil.copy(REAL / "DSCN0010.jpg", src / "Trip" / "a.jpg")  # 640x480, no Copyright tag
    shutil.copy(REAL / "exiforg_fujifilm-dx10.jpg", src / "Trip" / "b.jpg")  # 1024x768, Copyright 'J P Bowen'
    (src / "Secret").mkdir()
    shutil.copy(REAL / "DSCN0021.jpg", src / "Secret" / "c.jpg")
    (src / "Secret" / "index.md").write_text("private: true\n")
    return src


def _pixels(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.int16)


def _one(folder: Path, pattern: str) -> Path:
    found = list(folder.glob(pattern))
    assert len(found) == 1, (folder, pattern, sorted(p.name for p in folder.iterdir()))
    return found[0]


def _private_folder(site: Path, name: str) -> Path:
    return _one(site / "p", f"*/{name}")


def _names(site: Path) -> set[str]:
    return {str(p.relative_to(site)) for p in site.rglob("*.jpg")}


def _stamps(site: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(site)): (p.stat().st_ino, p.stat().st_mtime_ns) for p in site.rglob("*") if p.is_file()}


def _build(src: Path, site: Path, conf: Path, expect: int = 0):
    return build_site(src, site, "-c", str(conf), "-v", expect=expect)


@needs_real
def test_watermark_is_where_it_was_asked_on_real_photos_and_nowhere_else(tmp_path):
    """A mark 25 % of the width, 5 % from the bottom-right edges: its opaque half is magenta on every
    display size, its transparent half shows the photo, and the rest of the photo is as without the
    plugin; thumbnails, originals and the private album's images are the plugin-less ones (same names).
    Half the opacity gives half the colour; changing it re-makes exactly the marked images, and a build
    with nothing changed writes nothing."""
    src = _real_gallery(tmp_path / "photos")
    _mark(tmp_path / "cfg" / "mark.png")
    plain = tmp_path / "plain"
    _build(src, plain, write_config(tmp_path, SIZES))
    conf = write_config(tmp_path, 'plugins = ["watermark"]\n[plugin.watermark]\nimage = "mark.png"\n'
                        'position = "bottom-right"\nscale = 0.25\nopacity = 1.0\nmargin = 0.05\n' + SIZES)
    site = tmp_path / "site"
    _build(src, site, conf)

    for photo, sizes in (("a", (320, 640)), ("b", (320, 640))):
        for width in sizes:
            marked = _pixels(_one(site / "trip" / photo, f"{photo}.{width}w.*.jpg"))
            before = _pixels(_one(plain / "trip" / photo, f"{photo}.{width}w.*.jpg"))
            height = marked.shape[0]
            w = round(0.25 * width)
            h = round(w / 2)
            margin = round(0.05 * min(width, height))
            x, y = width - w - margin, height - h - margin
            opaque = marked[y + 4 : y + h - 4, x + 4 : x + w // 2 - 4]
            assert np.abs(opaque - MAGENTA).max() < 40, (photo, width, opaque.mean(axis=(0, 1)))
            clear = marked[y + 4 : y + h - 4, x + w // 2 + 4 : x + w - 4] - before[y + 4 : y + h - 4, x + w // 2 + 4 : x + w - 4]
            assert np.abs(clear).mean() < 3, (photo, width)
            outside = np.abs(marked - before)
            outside[max(0, y - 8) : y + h + 8, max(0, x - 8) : x + w + 8] = 0
            assert outside.mean() < 1.0 and (outside.sum(axis=2) > 60).sum() < 10, (photo, width)
    unmarked = {n for n in _names(site) if ".thumb." in n or ".original." in n or n.startswith("p/")}
    assert unmarked and unmarked <= _names(plain)  # the same files as without the plugin
    assert not {n for n in _names(site) if "w." in n and not n.startswith("p/")} & _names(plain)

    stamps = _stamps(site)
    done = _build(src, site, conf)
    assert "nothing changed" in done.stdout and _stamps(site) == stamps

    conf.write_text(conf.read_text().replace("opacity = 1.0", "opacity = 0.5"))
    done = _build(src, site, conf)
    assert "made 4 derivatives of 2 photos" in done.stdout, done.stdout  # 2 sizes of 2 public photos
    assert {n for n in _names(site) if n in unmarked} == unmarked
    marked = _pixels(_one(site / "trip" / "a", "a.640w.*.jpg"))
    before = _pixels(_one(plain / "trip" / "a", "a.640w.*.jpg"))
    box = np.s_[376 + 4 : 376 + 80 - 4, 456 + 4 : 456 + 80 - 4]  # the opaque half: x 456 = 640 - 160 - 24, y 376
    half = (np.array(MAGENTA) + before[box]) / 2
    assert np.abs(marked[box] - half).mean() < 12


def test_a_tiled_mark_covers_the_whole_image(tmp_path):
    """position = 'tile': tiles a tenth of the width, edge to edge: half of every tile is magenta, so
    half the image, the top-left corner and the bottom-right region alike."""
    src = tmp_path / "photos"
    make_jpeg(src / "A" / "grey.jpg", size=(640, 480), color=(128, 128, 128))
    _mark(tmp_path / "cfg" / "mark.png")
    conf = write_config(tmp_path, 'plugins = ["watermark"]\n[plugin.watermark]\nimage = "mark.png"\nposition = "tile"\n'
                        'scale = 0.1\nopacity = 1.0\nmargin = 0.0\n' + SIZES)
    site = tmp_path / "site"
    _build(src, site, conf)
    px = _pixels(_one(site / "a" / "grey", "grey.640w.*.jpg"))
    magenta = (np.abs(px - MAGENTA).max(axis=2) < 60)
    assert 0.45 < magenta.mean() < 0.55, magenta.mean()
    assert magenta[2:30, 2:30].all() and not magenta[2:30, 34:62].any()  # a tile 64x32: its left half
    assert magenta[450:478, 578:606].all()  # the last row and column of tiles too


def test_private_albums_are_not_marked_unless_asked(tmp_path):
    """By default the watermark leaves a private album's images as a build without it makes them (same
    names, same pixels); with private = true they are marked too."""
    src = tmp_path / "photos"
    make_jpeg(src / "Public" / "p.jpg", size=(400, 300), color=(20, 120, 40))
    make_jpeg(src / "Family" / "f.jpg", size=(400, 300), color=(20, 120, 40))
    (src / "Family" / "index.md").write_text("private: true\n")
    _mark(tmp_path / "cfg" / "mark.png")
    plain = tmp_path / "plain"
    _build(src, plain, write_config(tmp_path, ""))
    base = 'plugins = ["watermark"]\n[plugin.watermark]\nimage = "mark.png"\nopacity = 1.0\nscale = 0.5\nposition = "center"\n'
    conf = write_config(tmp_path, base)
    site = tmp_path / "site"
    _build(src, site, conf)
    private = {n for n in _names(site) if n.startswith("p/")}
    assert len(private) == 2 and private <= _names(plain)  # display, thumbnail
    public = _pixels(_one(site / "public" / "p", "p.400w.*.jpg"))
    assert np.abs(public[150, 150] - MAGENTA).max() < 40  # the centre's left half

    conf.write_text(base + "private = true\n")
    _build(src, site, conf)
    display = _one(_private_folder(site, "f"), "f.400w.*.jpg")
    assert np.abs(_pixels(display)[150, 150] - MAGENTA).max() < 40
    assert not {n for n in _names(site) if n.startswith("p/") and "400w" in n} & _names(plain)


@needs_real
def test_copyright_notice_is_drawn_in_its_corner_only_and_filled_from_the_photo(tmp_path):
    """The notice changes pixels in the bottom-left corner only, over a band as high as asked; a photo
    without the field it names is left as it is; the notice is redrawn when its field changes (a
    sidecar's author) and not when another fact does (a title)."""
    src = _real_gallery(tmp_path / "photos")
    plain = tmp_path / "plain"
    _build(src, plain, write_config(tmp_path, SIZES))
    conf = write_config(tmp_path, 'plugins = ["copyright"]\n[plugin.copyright]\ntext = "© {copyright} {year}"\n'
                        'size = 0.06\ncolor = "#ffffff"\noutline = "#000000"\nopacity = 1.0\nmargin = 0.02\n'
                        'position = "bottom-left"\n' + SIZES)
    site = tmp_path / "site"
    _build(src, site, conf)

    marked = _pixels(_one(site / "trip" / "b", "b.640w.*.jpg"))
    before = _pixels(_one(plain / "trip" / "b", "b.640w.*.jpg"))
    changed = np.abs(marked - before).sum(axis=2) > 60
    ys, xs = np.nonzero(changed)
    assert changed.sum() > 500, changed.sum()  # '© J P Bowen 2001' in white, outlined
    assert xs.min() >= 8 and xs.max() < 640 // 2 + 40  # from the left margin, over part of the width
    assert ys.min() >= 480 - 10 - round(0.06 * 480) * 1.4 and ys.max() <= 480 - 6  # a band at the bottom
    white = (marked[changed] > 230).all(axis=1).sum()
    assert white > 100  # the letters themselves

    a = _pixels(_one(site / "trip" / "a", "a.640w.*.jpg"))  # no Copyright tag: '© 2008' (a year only)
    a0 = _pixels(_one(plain / "trip" / "a", "a.640w.*.jpg"))
    a_changed = np.abs(a - a0).sum(axis=2) > 60
    assert a_changed.sum() > 50 and np.nonzero(a_changed)[1].max() < xs.max() * 0.6  # a shorter notice

    names = _names(site)
    (src / "Trip" / "b.md").write_text("title: Harbour\nauthor: Ann\n")  # facts the notice does not show
    _build(src, site, conf)
    assert _names(site) == names
    (src / "Trip" / "b.md").write_text("title: Harbour\nauthor: Ann\ndate: 2020-05-01\n")  # its {year}
    done = _build(src, site, conf)
    # b's two sizes; and a, the older photo now, is the album's cover: its two card images
    assert "made 4 derivatives of 2 photos" in done.stdout, done.stdout
    assert {n.rpartition(".")[0].rpartition(".")[0] for n in _names(site) - names} == {
        "trip/b/b.320w", "trip/b/b.640w", "trip/a/a.cover400", "trip/a/a.cover640"}


@needs_real
def test_adjust_moves_mean_brightness_the_asked_way_per_gallery_and_per_album(tmp_path):
    """brightness 1.3 for the gallery brightens every image; an album's index.md darkens its own
    (adjust_brightness: 0.6) and another's takes the colour out (adjust_color: 0); one that is not a number
    fails that album's photos, naming the key."""
    src = tmp_path / "photos"
    for album in ("Bright", "Dark", "Grey"):
        shutil.copy(REAL / "DSCN0010.jpg", (src / album).mkdir(parents=True) or src / album / "x.jpg")
    (src / "Dark" / "index.md").write_text("adjust_brightness: 0.6\n")
    (src / "Grey" / "index.md").write_text("---\nadjust_color: 0\n---\n")
    plain = tmp_path / "plain"
    _build(src, plain, write_config(tmp_path, SIZES))
    conf = write_config(tmp_path, 'plugins = ["adjust"]\n[plugin.adjust]\nbrightness = 1.3\n' + SIZES)
    site = tmp_path / "site"
    _build(src, site, conf)

    def mean(folder: Path, role: str = "640w") -> float:
        return float(_pixels(_one(folder, f"x.{role}.*.jpg")).mean())

    base = mean(plain / "bright" / "x")
    assert mean(site / "bright" / "x") > base * 1.15
    assert mean(site / "bright" / "x", "thumb") > mean(plain / "bright" / "x", "thumb") * 1.15  # thumbnails too
    assert mean(site / "dark" / "x") < base * 0.75
    grey = _pixels(_one(site / "grey" / "x", "x.640w.*.jpg"))
    assert np.abs(grey[..., 0] - grey[..., 1]).mean() < 3 and np.abs(grey[..., 1] - grey[..., 2]).mean() < 3
    assert abs(grey.mean() - base * 1.3) < base * 0.15  # (the gallery's brightness still applies there)

    (src / "Dark" / "index.md").write_text("adjust_brightness: dim\n")
    done = _build(src, site, conf)
    assert ("skipped: Dark/x.jpg: plugin adjust: ValueError: Dark/index.md: adjust_brightness: expected a number "
            "from 0 to 10 (1.0 leaves the image as it is), got 'dim'") in done.output, done.output


def _all_three(tmp_path: Path) -> Path:
    _mark(tmp_path / "cfg" / "mark.png")
    return write_config(tmp_path, 'plugins = ["adjust", "watermark", "copyright"]\n'
                        '[plugin.watermark]\nimage = "mark.png"\nopacity = 0.7\nthumbnails = true\n'
                        '[plugin.copyright]\nauthor = "Ann"\nsize = 0.08\n'
                        '[plugin.adjust]\ncontrast = 1.2\n[images]\nsizes = [320, 640]\nformats = ["jpeg", "webp"]\n')


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers are Linux's")
def test_forked_and_spawned_workers_make_the_same_marked_site(tmp_path):
    """The three plugins' functions are imported by name in each worker: spawned workers (macOS,
    Windows) make the same files, byte for byte, as forked ones, marks included."""
    src = tmp_path / "photos"
    make_jpeg(src / "A" / "one.jpg", size=(640, 480), color=(60, 90, 160), exif=make_exif(artist="Bob", date="2021:05:01 10:00:00"))
    make_jpeg(src / "A" / "two.jpg", size=(480, 640), color=(160, 90, 60))
    conf = _all_three(tmp_path)
    sites = {}
    for start in ("fork", "spawn"):
        site = sites[start] = tmp_path / f"site-{start}"
        done = albumen_process(tmp_path, "build", str(src), "-o", str(site), "-c", str(conf), start=start)
        assert done.returncode == 0, done.stdout + done.stderr
        assert f'start methods: ["{start}"]' in done.stderr, done.stderr
    assert tree_digest(sites["fork"]) == tree_digest(sites["spawn"])
    for name in ("one.640w.*.jpg", "one.640w.*.webp", "one.thumb.*.jpg"):
        px = _pixels(_one(sites["spawn"] / "a" / "one", name))
        assert (np.abs(px - MAGENTA).max(axis=2) < 90).sum() > 20, name  # the mark (at 0.7), in every format


def test_the_same_gallery_built_from_another_folder_gets_the_same_names(tmp_path):
    """A path option counts by its file's content, not by where the file is: the config and its mark
    moved elsewhere name every image the same (a site built on another machine is the same site)."""
    src = tmp_path / "photos"
    make_jpeg(src / "A" / "one.jpg", size=(400, 300), color=(60, 90, 160))
    conf = _all_three(tmp_path)
    moved = tmp_path / "elsewhere" / "deeper"
    shutil.copytree(conf.parent, moved)
    _build(src, tmp_path / "site1", conf)
    _build(src, tmp_path / "site2", moved / "albumen.toml")
    assert _names(tmp_path / "site1") == _names(tmp_path / "site2")
    _mark(moved / "mark.png", size=(100, 40))  # another mark: the marked images get other names
    _build(src, tmp_path / "site2", moved / "albumen.toml")
    assert _names(tmp_path / "site1") != _names(tmp_path / "site2")


def test_a_videos_poster_is_marked_and_its_stream_is_not(tmp_path):
    """A video's poster is a display image: watermarked; its stream is the one a build without the
    plugin makes (same name)."""
    from conftest import make_video

    src = tmp_path / "photos"
    make_video(src / "Clips" / "clip.mp4", seconds=1, size=(320, 240))
    _mark(tmp_path / "cfg" / "mark.png")
    plain = tmp_path / "plain"
    _build(src, plain, write_config(tmp_path, ""))
    conf = write_config(tmp_path, 'plugins = ["watermark"]\n[plugin.watermark]\nimage = "mark.png"\nopacity = 1.0\n'
                        'scale = 0.5\nposition = "center"\n')
    site = tmp_path / "site"
    _build(src, site, conf)
    poster = _pixels(_one(site / "clips" / "clip", "*.poster.*.jpg"))
    h, w = poster.shape[:2]
    assert np.abs(poster[h // 2, w // 2 - w // 8] - MAGENTA).max() < 40  # the mark's opaque half, left of centre
    stream = {p.name for p in (site / "clips" / "clip").glob("*.mp4")}
    assert stream and stream == {p.name for p in (plain / "clips" / "clip").glob("*.mp4")}
