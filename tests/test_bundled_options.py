"""The bundled pixel plugins' options (checked when the config is loaded, every problem at once, the
watermark's file confined to the config's folder or the photo folder the config names) and their drawing functions on
their own: where a mark goes for each position, what a notice says, which factors an album sets."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from albumen.config import load_config
from albumen.errors import ConfigError
from albumen.plugins import FilterContext, MediaFacts
from albumen.plugins.bundled import adjust, copyright, watermark
from conftest import make_jpeg, run_cli, write_config


def _mark(path: Path, size=(100, 50), fmt="PNG") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGBA" if fmt == "PNG" else "RGB", size, (255, 0, 255)).save(path, fmt)
    return path


def _problems(conf: Path) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config(conf)
    return caught.value.problems


def test_every_problem_of_the_three_plugins_is_told_at_once_and_nothing_is_written(tmp_path):
    (tmp_path / "outside").mkdir()
    _mark(tmp_path / "outside" / "mark.png")
    conf = write_config(tmp_path, """plugins = ["watermark", "copyright", "adjust"]
[plugin.watermark]
image = "../outside/mark.png"
opacity = 2
postion = "center"
[plugin.copyright]
text = "© {autor} {year}"
color = "white"
outline = "#00000"
[plugin.adjust]
brightness = -1
sharpness = "more"
""")
    assert _problems(conf) == [
        "plugin.watermark.opacity: expected a number from 0.0 to 1.0, got an integer (2)",
        "plugin.watermark.postion: unknown setting; did you mean 'plugin.watermark.position'?",
        f"plugin.watermark.image: {tmp_path / 'outside' / 'mark.png'} is outside the config's folder ({tmp_path / 'cfg'})",
        "plugin.copyright.text: unknown field {autor} (the fields are {author}, {year}, {date}, {title}, {album}, "
        "{copyright}; write {{ and }} for a brace)",
        "plugin.copyright.color: expected a colour as '#rrggbb' (e.g. '#ffffff'), got 'white'",
        "plugin.copyright.outline: expected a colour as '#rrggbb' (e.g. '#ffffff'), got '#00000'",
        "plugin.adjust.brightness: expected a number from 0.0 to 10.0, got an integer (-1)",
        "plugin.adjust.sharpness: expected a number from 0.0 to 10.0, got a string ('more')",
    ]
    src = tmp_path / "photos"
    make_jpeg(src / "a.jpg")
    site = tmp_path / "site"
    result = run_cli("build", str(src), "-o", str(site), "-c", str(conf))
    assert result.exit_code == 2 and "8 problems in" in result.output, result.output
    assert not site.exists()


def test_the_watermark_must_be_a_png_in_the_config_folder_or_the_photo_folder(tmp_path):
    """Links are followed before the check (a link beside the config to a file elsewhere is refused); a
    file in the photo folder the config names is accepted; a JPEG named .png, a missing file and no
    image at all are refused."""
    cfg = tmp_path / "cfg"
    elsewhere = _mark(tmp_path / "elsewhere" / "mark.png")
    cfg.mkdir()
    os.symlink(elsewhere, cfg / "link.png")
    base = 'plugins = ["watermark"]\n[plugin.watermark]\n'
    conf = write_config(tmp_path, base + 'image = "link.png"\n')
    assert _problems(conf) == [f"plugin.watermark.image: {elsewhere} is outside the config's folder ({cfg})"]

    photos = tmp_path / "photos"
    _mark(photos / ".mark.png")
    conf.write_text(f'source = "../photos"\n{base}image = "../photos/.mark.png"\n')
    assert load_config(conf).config.loaded_plugins[0].options.image == str(photos / ".mark.png")
    conf.write_text(f'{base}image = "../photos/.mark.png"\n')  # (the command line's photo folder is not known)
    assert _problems(conf) == [f"plugin.watermark.image: {photos / '.mark.png'} is outside the config's folder ({cfg})"]
    conf.write_text(f'source = "../photos"\n{base}image = "{elsewhere}"\n')
    assert _problems(conf) == [f"plugin.watermark.image: {elsewhere} is outside the config's folder or the photo "
                               f"folder ({cfg}, {photos})"]

    _mark(cfg / "photo.png", fmt="JPEG")
    conf.write_text(base + 'image = "photo.png"\n')
    assert _problems(conf) == [f"plugin.watermark.image: {cfg / 'photo.png'} is a JPEG image, not a PNG"]
    conf.write_text(base + 'image = "none.png"\n')
    assert _problems(conf) == [f"plugin.watermark.image: file not found: {cfg / 'none.png'}"]
    conf.write_text(base)
    assert _problems(conf) == ["plugin.watermark.image: required: the PNG to lay over the images, e.g. "
                               "image = \"watermark.png\""]


def _ctx(options, media=None, size=(400, 300)) -> FilterContext:
    return FilterContext("test", options, "display", size[0], size[1], media or MediaFacts())


def _changed_box(before: Image.Image, after: Image.Image) -> tuple[int, int, int, int]:
    diff = np.abs(np.asarray(after, dtype=np.int16) - np.asarray(before, dtype=np.int16)).sum(axis=2) > 0
    ys, xs = np.nonzero(diff)
    return int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1


@pytest.mark.parametrize(("position", "box"), [
    ("top-left", (12, 12, 92, 52)), ("top-right", (308, 12, 388, 52)), ("bottom-left", (12, 248, 92, 288)),
    ("bottom-right", (308, 248, 388, 288)), ("top", (160, 12, 240, 52)), ("bottom", (160, 248, 240, 288)),
    ("center", (160, 130, 240, 170)),
])
def test_the_mark_goes_where_its_position_says(tmp_path, position, box):
    """A mark 20 % of a 400x300 image's width (80x40), 4 % of its height (12 px) from the edges it is near."""
    path = _mark(tmp_path / "m.png")
    image = Image.new("RGB", (400, 300), (10, 20, 30))
    options = {"image": str(path), "digest": _digest(path), "position": position, "scale": 0.2, "opacity": 1.0,
               "margin": 0.04}
    out = watermark.draw(image, _ctx(options))
    assert out.mode == "RGB" and out.size == image.size
    assert _changed_box(image, out) == box
    assert out.getpixel(((box[0] + box[2]) // 2, (box[1] + box[3]) // 2)) == (255, 0, 255)


def test_a_mark_too_big_for_the_image_is_kept_inside_its_margins_and_a_changed_file_is_refused(tmp_path):
    path = _mark(tmp_path / "m.png", size=(50, 100))  # tall: at the full width it would be twice the height
    image = Image.new("RGBA", (200, 100), (0, 0, 0, 0))
    options = {"image": str(path), "digest": _digest(path), "position": "center", "scale": 1.0, "opacity": 0.5,
               "margin": 0.1}
    out = watermark.draw(image, _ctx(options, size=image.size))
    assert out.mode == "RGBA" and _changed_box(image.convert("RGB"), out.convert("RGB")) == (80, 10, 120, 90)
    assert out.getpixel((100, 50))[3] == 128  # half the opacity, over a transparent image
    _mark(path, size=(60, 100))
    with pytest.raises(ValueError, match="changed during the build"):
        watermark.draw(image, _ctx({**options, "digest": _digest(path)[::-1]}))


def _digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_notice_says_what_the_photo_has_and_leaves_out_what_it_lacks():
    full = MediaFacts(author="Ann Lee", date="2021-07-02T10:00:00", title="Harbour", album_title="Brest",
                      copyright="CC BY 4.0")
    assert copyright.notice("© {author} {year}", full) == "© Ann Lee 2021"
    assert copyright.notice("{title} ({album}, {date}) {copyright}", full) == "Harbour (Brest, 2021-07-02) CC BY 4.0"
    assert copyright.notice("© {author} {year}", MediaFacts(date="2019-01-01")) == "© 2019"
    assert copyright.notice("© {author} {year}", MediaFacts(), author="Studio") == "© Studio"
    assert copyright.notice("© {author} {year}", MediaFacts()) == ""  # nothing but the sign: not drawn
    assert copyright.notice("{{{author}}}", MediaFacts(author="x")) == "{x}"


def test_the_notice_is_drawn_with_the_bundled_font_only_where_it_fits():
    options = {"text": "© {author}", "author": "", "font": "bundled", "size": 0.1, "color": "#ffffff",
               "opacity": 1.0, "outline": "", "position": "top-right", "margin": 0.05}
    image = Image.new("RGB", (400, 300), (0, 0, 0))
    out = copyright.draw(image, _ctx(options, MediaFacts(author="Ann")))
    left, top, right, bottom = _changed_box(image, out)
    assert 200 < left and right <= 400 - 15 and top >= 15 and bottom < 15 + 30 + 4  # 30 px high, top right
    assert copyright.draw(image, _ctx(options, MediaFacts())) is image  # an empty notice: nothing drawn
    assert copyright.draw(image, _ctx({**options, "size": 0.01}, MediaFacts(author="Ann"))) is image  # 3 px: unreadable
    long = copyright.draw(image, _ctx(options, MediaFacts(author="A very long name indeed, longer than the image")))
    left, _, right, _ = _changed_box(image, long)
    assert left >= 15 and right <= 385  # made smaller to fit across, within the margins
    assert Path(copyright.FONT).is_file() and (Path(copyright.FONT).parent / "LICENSE-DejaVu.txt").is_file()
    given = {**options, "font": copyright.FONT, "font_digest": "d"}  # a font given by path: the same letters
    assert copyright.draw(image, _ctx(given, MediaFacts(author="Ann"))).tobytes() == out.tobytes()


def test_a_given_font_is_checked_and_counts_by_its_content(tmp_path):
    import shutil

    cfg = tmp_path / "cfg"
    cfg.mkdir()
    shutil.copy(copyright.FONT, cfg / "mine.ttf")
    (cfg / "broken.ttf").write_bytes(b"not a font")
    conf = write_config(tmp_path, 'plugins = ["copyright"]\n[plugin.copyright]\nfont = "broken.ttf"\n')
    assert _problems(conf)[0].startswith(f"plugin.copyright.font: {cfg / 'broken.ttf'} is not a TrueType or OpenType font")
    conf.write_text('plugins = ["copyright"]\n[plugin.copyright]\nfont = "mine.ttf"\n')
    options = load_config(conf).config.loaded_plugins[0].options
    made = copyright.albumen_image_filters(options, MediaFacts(private=False))
    assert made.options["font"] == str(cfg / "mine.ttf") and made.options["font_digest"] == _digest(cfg / "mine.ttf")
    assert made.facts == ("author", "date") and made.roles == ("display", "poster")


def test_adjust_takes_an_albums_factors_and_does_nothing_when_all_are_one():
    options = adjust.Options(contrast=1.2)
    meta = {"adjust_brightness": "0.8", "adjust_color": 0}
    made = adjust.albumen_image_filters(options, MediaFacts(album="Trips", album_meta=meta, private=False))
    assert made.options == {"color": 0.0, "brightness": 0.8, "contrast": 1.2, "sharpness": 1.0}
    assert made.roles == ("display", "poster", "thumb")
    assert adjust.albumen_image_filters(adjust.Options(), MediaFacts(album_meta={}, private=False)) is None
    undone = {"adjust_contrast": "1"}
    assert adjust.albumen_image_filters(options, MediaFacts(album_meta=undone, private=False)) is None
    assert adjust.albumen_image_filters(adjust.Options(private=False, contrast=2.0), MediaFacts(private=True)) is None
    with pytest.raises(ValueError, match=r"^Trips/index.md: adjust_brightness: expected a number from 0 to 10"):
        adjust.albumen_image_filters(options, MediaFacts(album="Trips", album_meta={"adjust_brightness": "11"}))
    grey = Image.new("RGBA", (20, 10), (200, 100, 50, 128))
    out = adjust.draw(grey, _ctx({"color": 0.0, "brightness": 1.0, "contrast": 1.0, "sharpness": 1.0}))
    r, g, b, a = out.getpixel((5, 5))
    assert r == g == b and a == 128  # black and white, transparency kept


def test_the_guides_examples_load(tmp_path):
    """Each example of docs/PLUGINS.md's bundled pixel plugins, and README's, is a config Albumen loads
    (with a watermark.png beside it)."""
    import re

    from conftest import REPO

    guide = (REPO / "docs" / "PLUGINS.md").read_text(encoding="utf-8")
    section = guide.split("## The bundled pixel plugins", 1)[1].split("\n## ", 1)[0]
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    examples = re.findall(r"```toml\n(.*?)```", section, re.S)
    examples += [e for e in re.findall(r"```toml\n(.*?)```", readme, re.S) if "[plugin.watermark]" in e]
    assert len(examples) == 4
    _mark(tmp_path / "cfg" / "watermark.png")
    for text in examples:
        loaded = load_config(write_config(tmp_path, text)).config.loaded_plugins
        assert {info.name for info in loaded} <= {"watermark", "copyright", "adjust"} and loaded
    meta = re.search(r"```markdown\n---\n(.*?)---\n```", section, re.S).group(1)
    album = dict(line.split(": ", 1) for line in meta.splitlines())
    made = adjust.albumen_image_filters(adjust.Options(), MediaFacts(album="Night", album_meta=album, private=False))
    assert made.options["brightness"] == 1.3 and made.options["color"] == 1.2


@pytest.mark.parametrize("factors", [
    {"color": 1.1, "brightness": 1.05, "contrast": 1.1, "sharpness": 1.2},
    {"color": 2.0, "brightness": 1.0, "contrast": 2.0, "sharpness": 0.5},
    {"color": 1.0, "brightness": 1.4, "contrast": 0.7, "sharpness": 1.0},
])
def test_adjust_gives_sigals_pixels_within_three_levels(factors):
    """Sigal's adjust (pilkit): ImageEnhance's Color, Brightness, Contrast and Sharpness in turn; Albumen
    makes brightness and contrast one lookup table, and must not drift from what Sigal published."""
    from PIL import ImageEnhance

    rng = np.random.default_rng(7)
    ramp = np.linspace(0, 255, 320)[None, :, None] * np.array([1.0, 0.6, 0.3])
    pixels = np.clip(ramp + rng.normal(0, 25, (240, 320, 3)), 0, 255).astype(np.uint8)
    image = Image.fromarray(pixels, "RGB")
    sigal = image
    for name in ("Color", "Brightness", "Contrast", "Sharpness"):
        if factors[name.lower()] != 1.0:
            sigal = getattr(ImageEnhance, name)(sigal).enhance(factors[name.lower()])
    ours = adjust.draw(image, _ctx(factors, size=image.size))
    diff = np.abs(np.asarray(ours, dtype=np.int16) - np.asarray(sigal, dtype=np.int16))
    assert diff.max() <= 3 and diff.mean() < 0.1, (diff.max(), diff.mean())
