"""What plugins return to Albumen's hooks (see hookspecs): plain values, checked when received."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

ROLES = ("thumb", "display", "original", "poster")
FACTS = ("src_uri", "name", "kind", "album", "album_title", "title", "author", "copyright", "date", "private",
         "width", "height")


class OptionsError(ValueError):
    """Raised by a plugin's options class (its __post_init__) with every problem it found, each told
    as its own line of the configuration error ('image: not a PNG', 'font: ...'), so that a user sees
    them all at once. Each problem starts with the option's name."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class ImageFilter:
    """A function run on the pixels of some of a media's outputs, in the worker processes.

    function: 'package.module:function' (or the module-level function itself), called as
    function(image, ctx) with a Pillow image (mode RGB or RGBA, already resized to the output's size
    and upright) and a FilterContext; it returns the image to encode, of the same size (RGB, RGBA, L
    or LA). roles: which outputs ('thumb', 'display', 'original', 'poster' of a video). facts: the
    MediaFacts fields the function reads (ctx.media); only those reach the worker and the recipe.
    options: what the function gets as ctx.options, plain values, and what of the options is part of
    the recipe (default: all the plugin's options): an option that only says where the filter
    applies then re-makes nothing it does not touch. version: the filter's own version, bumped when
    it draws differently (the plugin's version counts too)."""

    function: str | Callable
    roles: tuple[str, ...] = ("display",)
    facts: tuple[str, ...] = ()
    options: Any = None
    version: str = ""


@dataclass(frozen=True)
class KindInfo:
    """What a media kind's `read` tells of one file: the size of its picture (the thumbnail's
    proportions are planned from it before it is drawn) and what it says of itself."""

    width: int
    height: int
    title: str | None = None
    description: str | None = None  # plain text
    date: Any = None  # a datetime (naive: the site's time zone) or an ISO 8601 string
    author: str | None = None


@dataclass(frozen=True)
class MediaKind:
    """A kind of file that is neither a photo nor a video, published as a tile with a download link.

    name: a word ('document'), shown nowhere; label: its type as tiles show it ('PDF'); extensions:
    the file names it claims ('.pdf'), looked at only for files whose content is not a photo or a
    video; ext: the extension it is published under (never the file's own: default the first of
    extensions); mime: its media type. read and thumbnail: 'package.module:function' (see
    hookspecs.albumen_media_kinds), run in the workers. version: bumped when read or thumbnail
    changes what it gives (the files are read again, the thumbnails made again). options: what read
    and thumbnail get as ctx.options, and what of the options is part of the kind's recipe (default:
    all the plugin's options): an option that does not change how this kind is read or drawn (which
    extensions another kind claims) then reads and draws nothing again."""

    name: str
    label: str
    extensions: tuple[str, ...]
    read: str | Callable
    thumbnail: str | Callable
    ext: str = ""
    mime: str = "application/octet-stream"
    version: str = ""
    options: Any = None


@dataclass(frozen=True)
class ExtraPage:
    """A page a plugin adds (see hookspecs.albumen_extra_pages).

    dest_uri: its file, relative to the site ('tags/index.html', 'p/<token>/map/index.html').
    Either content (the whole file, str or bytes) or template (a template name) with context (the
    variables it sees besides `site` and `page`). title: the page's title (its PageView). key:
    what the page shows, as text that changes when it does (default: its content, or the repr of
    its context): a page whose key did not change is not rendered again. sitemap: listed in
    sitemap.xml (never for a private page)."""

    dest_uri: str
    template: str | None = None
    context: Mapping[str, Any] = field(default_factory=dict)
    content: str | bytes | None = None
    title: str = ""
    key: str | None = None
    sitemap: bool = True


@dataclass(frozen=True)
class OutputFile:
    """A file a plugin adds (see hookspecs.albumen_extra_outputs).

    dest_uri: its path relative to the site. Either data (the bytes, or text written as UTF-8) or
    write (a function given a binary file to write into, for files too big to hold in memory; it is
    called only when the file is to be made). key: what the file is made from, as text that changes
    when it does (for an archive, the names and stamps of its members): when it is the same as at
    the last build and the file is still as written, nothing is made. Default: the data itself
    (write needs a key)."""

    dest_uri: str
    data: bytes | str | None = None
    write: Callable[[IO[bytes]], None] | None = None
    key: str | None = None


@dataclass(frozen=True)
class OutputInfo:
    """One file of the site (see BuildOutputs.files): where, and the size and modification time it
    was written with (None when not known). private: below a private album's folder."""

    dest_uri: str
    size: int | None
    mtime_ns: int | None
    private: bool
