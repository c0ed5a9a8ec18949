"""Brightness, contrast, colour and sharpness of the published images (Sigal's adjust_options), for the whole gallery and per album (in index.md: adjust_brightness: 1.2, say).

Each factor is Pillow's ImageEnhance's: 1.0 leaves the image as it is, less lowers it, more raises it (brightness
1.1 is 10 % brighter; colour 0 is black and white). An album's index.md may set its own factors with the keys
adjust_brightness, adjust_contrast, adjust_color and adjust_sharpness (for that album only, not its sub-albums).
It applies to the display images, video posters and thumbnails, the originals only when asked; factors that are
all 1.0 change nothing and re-make nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from albumen.plugins import ImageFilter, hookimpl, setting

from .marks import roles

__version__ = "2"  # bumped when the factors are applied differently: the adjusted images are made again
# 2: brightness and contrast as one lookup table (within three levels of 1)

FACTORS = ("color", "brightness", "contrast", "sharpness")  # applied in this order (as Sigal's pilkit does)
MAX_FACTOR = 10.0
META_PREFIX = "adjust_"  # index.md: adjust_brightness: 1.2


@dataclass(frozen=True)
class Options:
    brightness: float = setting(1.0, "Brightness: 1.0 as it is, 0.9 darker, 1.1 brighter.", min=0.0, max=MAX_FACTOR)
    contrast: float = setting(1.0, "Contrast: 1.0 as it is, 0 flat grey, more for more contrast.", min=0.0,
                              max=MAX_FACTOR)
    color: float = setting(1.0, "Colour saturation: 1.0 as it is, 0 black and white, more for more vivid colours.",
                           min=0.0, max=MAX_FACTOR)
    sharpness: float = setting(1.0, "Sharpness: 1.0 as it is, less to soften, 2.0 sharper.", min=0.0, max=MAX_FACTOR)
    thumbnails: bool = setting(True, "Adjust the thumbnails too (as the images they open).")
    originals: bool = setting(False, "Adjust the downloadable originals too (then published as JPEGs re-encoded from "
                              "the adjusted pixels, not as copies of your files).")
    private: bool = setting(True, "Adjust the images of private albums too.")


@hookimpl
def albumen_options():
    return Options


@hookimpl
def albumen_image_filters(options: Options, media):
    if media.private and not options.private:
        return None
    factors = {name: getattr(options, name) for name in FACTORS}
    meta = media.album_meta or {}
    for name in FACTORS:
        if META_PREFIX + name in meta:
            factors[name] = album_factor(meta, name, media.album)
    if all(value == 1.0 for value in factors.values()):
        return None  # nothing to change: the images are named as without the plugin
    return ImageFilter(f"{__name__}:draw", roles=roles(options.thumbnails, options.originals), options=factors)


def album_factor(meta, name: str, album: str | None) -> float:
    """A factor an album's index.md sets. One that is not a number fails the album's photos, the reason
    naming the key (a typo must not pass for 'as it is')."""
    value = meta[META_PREFIX + name]
    number = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            number = None
    if number is None or not math.isfinite(number) or not 0 <= number <= MAX_FACTOR:
        where = f"{album}/index.md" if album else "index.md"
        raise ValueError(f"{where}: {META_PREFIX}{name}: expected a number from 0 to {MAX_FACTOR:g} "
                         f"(1.0 leaves the image as it is), got {str(value)[:40]!r}")
    return number


# -- in the workers ------------------------------------------------------------------------------


def draw(image, ctx):
    """The image with its factors applied (Pillow, RGB or RGBA; transparency kept).

    In pilkit's order (colour, brightness, contrast, sharpness), colour and sharpness as Pillow's
    ImageEnhance does them, brightness and contrast as one lookup table: one pass over the pixels
    instead of two blends, the contrast's pivot (the mean grey) read from the histogram; within three
    levels of Sigal's images (the last truncation falls a level apart now and then)."""
    from PIL import ImageEnhance

    o = ctx.options
    alpha = image.getchannel("A") if image.mode == "RGBA" else None
    out = image.convert("RGB") if alpha is not None else image
    if o["color"] != 1.0:
        out = ImageEnhance.Color(out).enhance(o["color"])
    if o["brightness"] != 1.0 or o["contrast"] != 1.0:
        out = out.point(_levels(out.histogram(), o["brightness"], o["contrast"]) * 3)
    if o["sharpness"] != 1.0:
        out = ImageEnhance.Sharpness(out).enhance(o["sharpness"])
    if out is image:
        out = image.copy()
    if alpha is not None:
        out = out.convert("RGBA")
        out.putalpha(alpha)
    return out


def _levels(histogram: list[int], brightness: float, contrast: float) -> list[int]:
    """The table taking a level through Pillow's Brightness then Contrast (their blends truncate)."""
    bright = [_clip(level * brightness) for level in range(256)]
    total = sum(histogram[:256]) or 1
    means = [sum(bright[level] * count for level, count in enumerate(histogram[256 * band : 256 * band + 256])) / total
             for band in range(3)]
    grey = int(0.299 * means[0] + 0.587 * means[1] + 0.114 * means[2] + 0.5)  # the mean of the image's L
    return [_clip(grey + (level - grey) * contrast) for level in bright]


def _clip(value: float) -> int:
    return 0 if value <= 0 else 255 if value >= 255 else int(value)
