"""A plain border drawn inside the edge of the published images (a small example of an image filter).

The image keeps its size: the border covers its outermost pixels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from albumen.plugins import ImageFilter, hookimpl, setting

__version__ = "1"  # bumped when the border is drawn differently: the framed images are made again


@dataclass(frozen=True)
class Options:
    width: int = setting(8, "Width of the border in pixels.", min=1, max=500)
    colour: str = setting("#ffffff", "Colour of the border, as '#rrggbb'.")
    thumbnails: bool = setting(False, "Frame the thumbnails too (the display images and video posters always are).")

    def __post_init__(self) -> None:
        if not re.fullmatch(r"#[0-9a-fA-F]{6}", self.colour):
            raise ValueError(f"colour: expected '#rrggbb', got {self.colour!r}")


@hookimpl
def albumen_options():
    return Options


@hookimpl
def albumen_image_filters(options: Options):
    roles = ("display", "poster", *(("thumb",) if options.thumbnails else ()))
    return ImageFilter(draw, roles=roles)


def draw(image, ctx):
    """Runs in the worker processes, on each framed output's pixels (Pillow, RGB or RGBA)."""
    from PIL import ImageDraw

    options: Options = ctx.options
    width = min(options.width, max(1, min(image.size) // 4))  # a thumbnail-sized image keeps its middle
    colour = tuple(int(options.colour[i : i + 2], 16) for i in (1, 3, 5))
    out = image.copy()
    ImageDraw.Draw(out).rectangle((0, 0, out.width - 1, out.height - 1), outline=colour + (255,)[: len(out.getbands()) - 3],
                                  width=width)
    return out
