"""A copyright notice drawn on the published images, e.g. '© {author} {year}' filled in from each photo's metadata.

It is drawn with DejaVu Sans (bundled with Albumen, under its own free licence) or a TrueType/OpenType font you
give, its height a fraction of each image's, in a colour with an opacity, in a corner or at the middle of an edge.
It marks the display images and video posters; thumbnails and originals only when asked. A photo's notice is
redrawn when what it shows changes (its author, its date...), and only then.
"""

from __future__ import annotations

import functools
import hashlib
import re
import string
from dataclasses import dataclass
from pathlib import Path

from albumen.plugins import ImageFilter, OptionsError, hookimpl, setting

from .marks import POSITIONS, colour_problem, lay_over, made_once, place, rgb, roles

__version__ = "1"  # bumped when the text is drawn differently: the images carrying it are made again

FONT = str(Path(__file__).parent / "fonts" / "DejaVuSans.ttf")
MIN_PIXELS = 6  # smaller text is not drawn (it could not be read)
# the fields the text may name -> the media fact each comes from
FIELDS = {"author": "author", "year": "date", "date": "date", "title": "title", "album": "album_title",
          "copyright": "copyright"}


@dataclass(frozen=True)
class Options:
    text: str = setting("© {author} {year}", "The notice. {author} (the photo's author: its sidecar's, else its Artist "
                        "tag, else the option author), {year} and {date} (when it was taken), {title}, {album} and "
                        "{copyright} (its Copyright tag) are filled in per photo; write {{ and }} for braces. A "
                        "field the photo does not have is left out; a notice left empty is not drawn.")
    author: str = setting("", "The author for {author} when a photo names none.")
    font: str = setting("", "A TrueType or OpenType font file, relative to this file; empty: DejaVu Sans, bundled.",
                        kind="path")
    size: float = setting(0.03, "Height of the text as a fraction of the image's shorter side (0.03: 30 pixels on an "
                          "image 1000 pixels high); smaller when the text would not fit across the image.",
                          min=0.005, max=0.5)
    color: str = setting("#ffffff", "Colour of the text, '#rrggbb'.")
    opacity: float = setting(0.8, "Opacity of the text, from 0 (invisible) to 1.", min=0.0, max=1.0)
    outline: str = setting("", "Colour of a thin outline around the letters, '#rrggbb' (legible on any photo); empty: "
                           "none.")
    position: str = setting("bottom-left", "Where the text goes.", choices=POSITIONS)
    margin: float = setting(0.02, "Space between the text and the image's edges, as a fraction of the image's shorter "
                            "side.", min=0.0, max=0.25)
    thumbnails: bool = setting(False, "Draw it on the thumbnails too (where it is mostly too small to read).")
    originals: bool = setting(False, "Draw it on the downloadable originals too (then published as JPEGs re-encoded "
                              "from the marked pixels, not as copies of your files).")
    private: bool = setting(True, "Draw it on the images of private albums too.")

    def __post_init__(self) -> None:
        problems = [p for p in (_text_problem(self.text), colour_problem("color", self.color),
                                self.outline and colour_problem("outline", self.outline),
                                font_problem(self.font or FONT)) if p]
        if problems:
            raise OptionsError(problems)


def _text_problem(text: str) -> str | None:
    try:
        parts = list(string.Formatter().parse(text))
    except ValueError as exc:
        return f"text: {exc} in {text!r} (write {{{{ and }}}} for a brace)"
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if name not in FIELDS or spec or conversion:
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            return (f"text: unknown field {shown} (the fields are "
                    f"{', '.join('{' + f + '}' for f in FIELDS)}; write {{{{ and }}}} for a brace)")
    return None


def font_problem(path: str) -> str | None:
    from PIL import ImageFont

    try:
        ImageFont.truetype(path, 12)
    except OSError as exc:
        return f"font: {path} is not a TrueType or OpenType font Pillow can use ({exc})"
    return None


@hookimpl
def albumen_options():
    return Options


@hookimpl
def albumen_image_filters(options: Options, media):
    if media.private and not options.private:
        return None
    return made_once(options, _filter)


def _filter(options: Options) -> ImageFilter:
    named = {name for _, name, _, _ in string.Formatter().parse(options.text) if name}
    facts = tuple(sorted({FIELDS[name] for name in named}))  # only these are part of a photo's recipe
    drawn = {"text": options.text, "author": options.author, "font": options.font or FONT, "size": options.size,
             "color": options.color, "opacity": options.opacity, "outline": options.outline,
             "position": options.position, "margin": options.margin}
    if not options.font:  # the bundled font is Albumen's: its version names it (not where it is installed)
        drawn["font"] = "bundled"
    else:  # a worker that drew with the font before it was replaced does not keep the old one
        with open(options.font, "rb") as file:
            drawn["font_digest"] = hashlib.file_digest(file, "sha256").hexdigest()
    return ImageFilter(f"{__name__}:draw", roles=roles(options.thumbnails, options.originals), facts=facts,
                       options=drawn)


def notice(template: str, media, author: str = "") -> str:
    """The text for one photo: its fields filled in, those it lacks left out (with the spaces around them)."""
    date = media.date or ""
    values = {"author": media.author or author, "year": date[:4], "date": date[:10], "title": media.title or "",
              "album": media.album_title or "", "copyright": media.copyright or ""}
    text = template.format_map({name: (values[name] or "").strip() for name in FIELDS})
    text = re.sub(r"\s+", " ", text).strip()
    return text if any(c.isalnum() for c in text) else ""


# -- in the workers ------------------------------------------------------------------------------


def draw(image, ctx):
    """The image with its notice (Pillow, RGB or RGBA, same size and mode)."""
    from PIL import Image, ImageDraw

    o = ctx.options
    text = notice(o["text"], ctx.media, o["author"])
    width, height = image.size
    margin = round(o["margin"] * min(width, height))
    pixels = round(o["size"] * min(width, height))
    if not text or pixels < MIN_PIXELS:
        return image
    font = (FONT, "") if o["font"] == "bundled" else (o["font"], o["font_digest"])
    box = _box(font, pixels, text)
    room = width - 2 * margin
    if box[2] - box[0] > room:  # narrower, to fit across the image
        pixels = int(pixels * room / (box[2] - box[0]))
        if pixels < MIN_PIXELS:
            return image
        box = _box(font, pixels, text)
    stroke = max(1, pixels // 16) if o["outline"] else 0
    left, top, right, bottom = box[0] - stroke, box[1] - stroke, box[2] + stroke, box[3] + stroke
    layer = Image.new("RGBA", (right - left, bottom - top), (0, 0, 0, 0))
    alpha = round(255 * o["opacity"])
    ImageDraw.Draw(layer).text(
        (-left, -top), text, font=_font(font, pixels), fill=(*rgb(o["color"]), alpha),
        stroke_width=stroke, stroke_fill=(*rgb(o["outline"]), alpha) if stroke else None,
    )
    at = place(layer.size, image.size, o["position"], margin)
    at = (min(max(at[0], 0), max(0, width - layer.width)), min(max(at[1], 0), max(0, height - layer.height)))
    if layer.width > width or layer.height > height:
        layer = layer.crop((0, 0, min(layer.width, width), min(layer.height, height)))
    return lay_over(image, layer, at)


@functools.lru_cache(maxsize=16)
def _font(font: tuple[str, str], pixels: int):
    """font: (its file, the digest of its content when it is not the bundled one: part of the key)."""
    from PIL import ImageFont

    return ImageFont.truetype(font[0], pixels)


@functools.lru_cache(maxsize=256)
def _box(font: tuple[str, str], pixels: int, text: str) -> tuple[int, int, int, int]:
    return tuple(int(v) for v in _font(font, pixels).getbbox(text))
