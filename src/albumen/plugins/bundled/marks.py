"""What the bundled plugins that draw on the photos share (watermark, copyright): where a mark goes,
colours, the outputs a mark applies to, and laying a translucent mark over the pixels.

Imported by the workers too: Pillow only inside the functions that draw.
"""

from __future__ import annotations

import re

# where a mark goes: a corner, the middle of an edge, or the centre
POSITIONS = ("bottom-right", "bottom-left", "top-right", "top-left", "bottom", "top", "center")


def colour_problem(name: str, value: str) -> str | None:
    """Why an option is not a '#rrggbb' colour, or None."""
    if re.fullmatch(r"#[0-9a-fA-F]{6}", value):
        return None
    return f"{name}: expected a colour as '#rrggbb' (e.g. '#ffffff'), got {value!r}"


def rgb(value: str) -> tuple[int, int, int]:
    return int(value[1:3], 16), int(value[3:5], 16), int(value[5:7], 16)


def roles(thumbnails: bool, originals: bool) -> tuple[str, ...]:
    """The outputs a mark applies to: the display images (every size and format: the photo's page, the
    viewer, the larger sizes of album covers and the image shared on social sites) and a video's
    poster; the thumbnails and the downloadable original only when asked."""
    return ("display", "poster", *(("thumb",) if thumbnails else ()), *(("original",) if originals else ()))


def made_once(options, make):
    """make(options), once per loaded config: the planner asks for the filter of each photo, and a config
    loaded again (a server's, after an edit) is a new options object, made again."""
    made = options.__dict__.get("_filter")
    if made is None:
        made = make(options)
        object.__setattr__(options, "_filter", made)  # (not a field: neither compared nor in the recipe)
    return made


def place(size: tuple[int, int], box: tuple[int, int], position: str, margin: int) -> tuple[int, int]:
    """The top-left corner of a box of `size` put at `position` in an image of `box`, `margin` pixels
    from the edges it is near."""
    w, h = size
    width, height = box
    x = {"left": margin, "right": width - w - margin}.get(position.rpartition("-")[2], (width - w) // 2)
    y = {"top": margin, "bottom": height - h - margin}.get(position.partition("-")[0], (height - h) // 2)
    return x, y


def lay_over(image, mark, at: tuple[int, int]):
    """The image with an RGBA mark composited over it at `at` (the mark inside the image), in the
    image's own mode: only the pixels under the mark are converted and blended."""
    from PIL import Image

    x, y = at
    box = (x, y, x + mark.width, y + mark.height)
    region = image.crop(box)
    base = region if region.mode == "RGBA" else region.convert("RGBA")
    blended = Image.alpha_composite(base, mark)
    out = image.copy()
    out.paste(blended if image.mode == "RGBA" else blended.convert(image.mode), box)
    return out


def faded(mark, opacity: float):
    """An RGBA mark with its alpha multiplied by opacity."""
    if opacity >= 1:
        return mark
    out = mark.copy()
    out.putalpha(mark.getchannel("A").point(lambda a: round(a * opacity)))
    return out
