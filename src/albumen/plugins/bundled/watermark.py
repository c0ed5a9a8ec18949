"""A watermark: a PNG laid over the published images, in a corner, at the centre or tiled, scaled with each image, with an opacity.

It marks the display images (every size and format, so also the larger images of album covers and the image shared
on social sites) and video posters; thumbnails and originals only when asked; never the images of private albums
unless asked. The PNG is read when the config is loaded (it must be in the config's folder or the photo folder),
and its content is part of the name of every image it marks: a new mark, or a new opacity, re-makes exactly those.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

from albumen.plugins import ImageFilter, OptionsError, hookimpl, setting

from .marks import POSITIONS, faded, lay_over, made_once, place, roles

__version__ = "1"  # bumped when the mark is drawn differently: the marked images are made again

MAX_SIDE = 8000  # a mark is scaled down to a fraction of a photo: a larger one is a mistake (or a bomb)


@dataclass(frozen=True)
class Options:
    image: str = setting(
        "", "The mark: a PNG, transparent where the photo shows through, relative to this file. It must be in this "
        "file's folder or the photo folder named by `source` (hide it there, e.g. '.watermark.png', or it is "
        "published as a photo).", kind="path", inside=True,
    )
    position: str = setting("bottom-right", "Where the mark goes: a corner, the middle of an edge, the centre, or "
                            "'tile' (repeated over the whole image).", choices=(*POSITIONS, "tile"))
    scale: float = setting(0.2, "Width of the mark as a fraction of the image's width (0.2: a fifth), kept inside the "
                           "image with its margin; with 'tile', the width of each tile.", min=0.01, max=1.0)
    opacity: float = setting(0.5, "Opacity of the mark, from 0 (invisible) to 1 (as the PNG is).", min=0.0, max=1.0)
    margin: float = setting(0.02, "Space between the mark and the image's edges, as a fraction of the image's shorter "
                            "side; with 'tile', the space between the tiles.", min=0.0, max=0.25)
    thumbnails: bool = setting(False, "Mark the thumbnails too (small: a mark there is mostly noise).")
    originals: bool = setting(False, "Mark the downloadable originals too (then published as JPEGs re-encoded from "
                              "the marked pixels, not as copies of your files).")
    private: bool = setting(False, "Mark the images of private albums too (by default, those shared by a private link "
                            "are left as they are).")

    def __post_init__(self) -> None:
        problems = []
        if not self.image:
            problems.append("image: required: the PNG to lay over the images, e.g. image = \"watermark.png\"")
        else:
            problem = image_problem(self.image)
            if problem:
                problems.append(f"image: {problem}")
        if problems:
            raise OptionsError(problems)


def image_problem(path: str) -> str | None:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            if im.format != "PNG":
                return f"{path} is a {im.format} image, not a PNG"
            if max(im.size) > MAX_SIDE:
                return f"{path} is {im.width}x{im.height}: at most {MAX_SIDE} pixels a side (it is scaled down anyway)"
            im.load()
    except UnidentifiedImageError:
        return f"{path} is not an image (a PNG was expected)"
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        return f"{path} cannot be read: {exc}"
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
    """The filter; the PNG's digest lets a worker check that the file it reads is the one planned."""
    with open(options.image, "rb") as file:
        digest = hashlib.file_digest(file, "sha256").hexdigest()
    # what the drawing reads: `thumbnails`, `originals` and `private` only say where it applies
    drawn = {"image": options.image, "digest": digest, "position": options.position, "scale": options.scale,
             "opacity": options.opacity, "margin": options.margin}
    return ImageFilter(f"{__name__}:draw", roles=roles(options.thumbnails, options.originals), options=drawn)


# -- in the workers ------------------------------------------------------------------------------


def draw(image, ctx):
    """The image with the mark over it (Pillow, RGB or RGBA, same size and mode)."""
    from PIL import Image

    o = ctx.options
    width, height = image.size
    mark = _mark(o["image"], o["digest"])
    margin = round(o["margin"] * min(width, height))
    w = max(1, round(o["scale"] * width))
    h = max(1, round(mark.height * w / mark.width))
    if o["position"] == "tile":
        tile = _scaled(o["image"], o["digest"], w, h, o["opacity"])
        row = Image.new("RGBA", (width, h), (0, 0, 0, 0))  # tiles do not overlap: pasted, a row at a time
        for x in range(0, width, w + margin):
            row.paste(tile, (x, 0))
        layer = Image.new("RGBA", image.size, (0, 0, 0, 0))
        for y in range(0, height, h + margin):
            layer.paste(row, (0, y))
        return lay_over(image, layer, (0, 0))
    room_w, room_h = max(1, width - 2 * margin), max(1, height - 2 * margin)
    if w > room_w or h > room_h:  # kept inside the image, within its margins
        fit = min(room_w / w, room_h / h)
        w, h = max(1, int(w * fit)), max(1, int(h * fit))
    return lay_over(image, _scaled(o["image"], o["digest"], w, h, o["opacity"]), place((w, h), image.size, o["position"], margin))


@functools.lru_cache(maxsize=2)
def _mark(path: str, digest: str):
    """The PNG as RGBA, read once per worker; refused when it is not the file the build planned with."""
    from PIL import Image

    with open(path, "rb") as file:
        data = file.read()
    if hashlib.sha256(data).hexdigest() != digest:
        raise ValueError(f"the watermark {path} changed during the build (build again)")
    import io

    with Image.open(io.BytesIO(data)) as im:
        return im.convert("RGBA")


@functools.lru_cache(maxsize=32)
def _scaled(path: str, digest: str, w: int, h: int, opacity: float):
    """The mark at w x h with its opacity (sizes repeat from photo to photo: made once each per worker)."""
    from PIL import Image

    mark = _mark(path, digest)
    if mark.size != (w, h):
        mark = mark.resize((w, h), Image.Resampling.LANCZOS)  # (Pillow resizes RGBA premultiplied)
    return faded(mark, opacity)
