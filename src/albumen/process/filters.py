"""Plugins' functions in a worker process: image filters on the decoded pixels of an output, and the
picture of a media of a plugin's kind (a document's first page).

They come as plain data (specs.FilterCall) and are imported here by name, so they run the same in
workers that were forked, forked from a server or spawned. Pixels are handed over as a Pillow
image, RGB or RGBA, already resized and upright: converted from libvips' only for an output that a
filter applies to. A function that raises fails its media's job, the reason naming the plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ProcessingError, described
from ..scan.kinds import import_function
from .specs import FilterCall, MediaFacts, OutputSpec

# libvips header fields that are the image itself, not metadata to carry over to filtered pixels
_HEADER = {"width", "height", "bands", "format", "coding", "interpretation", "xoffset", "yoffset", "xres", "yres",
           "filename", "vips-loader"}


@dataclass(frozen=True)
class FilterContext:
    """What a filter function is told besides the pixels (see plugins.hookspecs.albumen_image_filters)."""

    plugin: str  # the plugin's name in the config
    options: Any  # its options
    role: str  # 'thumb', 'display', 'original' or 'poster'
    width: int  # the output's size: the image handed over has it, and so must the one returned (the
    height: int  # pixels are filtered once per size and role, then encoded in each format)
    media: MediaFacts  # the facts the filter asked for (others None)


def function(call: FilterCall) -> Callable:
    """The plugin's function, imported once per worker."""
    return import_function(call.function, call.plugin)


def check(filters: Sequence[FilterCall]) -> None:
    """A filter the planner could not get (the plugin's hook raised for this media) fails the job."""
    for call in filters:
        if call.error:
            raise ProcessingError(call.error)


def for_role(filters: Sequence[FilterCall], role: str) -> tuple[FilterCall, ...]:
    return tuple(call for call in filters if role in call.roles)


def apply(calls: Sequence[FilterCall], picture, spec: OutputSpec, role: str):
    """The picture (Pillow) through each filter in turn."""
    image = _rgb(picture)
    for call in calls:
        ctx = FilterContext(call.plugin, call.options, role, spec.width, spec.height, call.media or MediaFacts())
        try:
            out = function(call)(image, ctx)
        except ProcessingError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise ProcessingError(f"plugin {call.plugin}: {described(exc)}"[:300]) from None
        image = _returned(out, call, image.size)
    return image


def filtered(image, picture, spec: OutputSpec, role: str, filters: Sequence[FilterCall]) -> Filtered | None:
    """An output's pixels after the filters of its role; None when none applies. picture: the same pixels
    as Pillow's, when the caller has them."""
    calls = for_role(filters, role)
    if not calls:
        return None
    from . import engine

    return Filtered(apply(calls, picture if picture is not None else engine.to_pillow(image), spec, role), image)


class Filtered:
    """Pixels after the filters: Pillow's, and libvips' only when an encoder asks for them (a JPEG is
    encoded from Pillow's: see engine.encode), with the colour profile and metadata of the image
    they were made from."""

    def __init__(self, picture, like) -> None:
        self.picture = picture
        self.like = like
        self._vips = None

    def encoded(self, spec: OutputSpec, job) -> bytes:
        from . import engine

        if spec.format == "jpeg" and not job.keep_metadata:  # (engine.encode takes only the profile from the image)
            return engine.encode(self.like, spec, job, self.picture)
        if self._vips is None:
            self._vips = to_vips(self.picture, like=self.like)
        return engine.encode(self._vips, spec, job, self.picture)


def to_vips(picture, like=None):
    """A Pillow image (L, LA, RGB or RGBA) as a libvips image, with the metadata of `like` (its colour
    profile, and what keep_metadata keeps)."""
    import pyvips

    bands = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}[picture.mode]
    out = pyvips.Image.new_from_memory(picture.tobytes(), picture.width, picture.height, bands, "uchar")
    out = out.copy(interpretation="b-w" if bands < 3 else "srgb")
    if like is not None:
        for name in like.get_fields():
            if name in _HEADER:
                continue
            try:
                out.set_type(like.get_typeof(name), name, like.get(name))
            except pyvips.Error:
                continue
    return out


def draw(job) -> Any:
    """The picture of a media of a plugin's kind, drawn by the plugin (job.maker), as a libvips image of
    the size the planner was told (job.src_width x job.src_height; other proportions are cropped)."""
    from PIL import Image, ImageOps

    call = job.maker
    ctx = FilterContext(call.plugin, call.options, "thumb", job.src_width, job.src_height, call.media or MediaFacts())
    try:
        picture = function(call)(job.abs_src_path, job.src_width, job.src_height, ctx)
    except ProcessingError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise ProcessingError(f"plugin {call.plugin}: {described(exc)}"[:300]) from None
    if not isinstance(picture, Image.Image):
        raise ProcessingError(f"plugin {call.plugin}: {call.function} returned {type(picture).__name__}, not an image")
    picture = _rgb(picture)
    if picture.size != (job.src_width, job.src_height):
        picture = ImageOps.fit(picture, (job.src_width, job.src_height), Image.Resampling.LANCZOS)
    return to_vips(picture)


def _rgb(picture):
    """RGB or RGBA, what filters are handed."""
    if picture.mode in ("RGB", "RGBA"):
        return picture
    has_alpha = picture.mode in ("LA", "PA", "RGBa", "La") or "transparency" in picture.info
    return picture.convert("RGBA" if has_alpha else "RGB")


def _returned(out, call: FilterCall, size: tuple[int, int]):
    from PIL import Image

    if not isinstance(out, Image.Image):
        raise ProcessingError(f"plugin {call.plugin}: {call.function} returned {type(out).__name__}, not an image")
    if out.size != size:
        raise ProcessingError(
            f"plugin {call.plugin}: {call.function} returned a {out.size[0]}x{out.size[1]} image for a "
            f"{size[0]}x{size[1]} output (a filter keeps the size)"
        )
    if out.mode not in ("L", "LA", "RGB", "RGBA"):
        out = _rgb(out)
    return out
