"""Media kinds of plugins (documents, say): which files they claim, and reading one in a worker.

A file whose content is not a photo or a video, and whose extension a kind claims, is read by the
kind's plugin function, imported by name in the worker (see plugins.hookspecs.albumen_media_kinds).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..errors import ProcessingError, described
from ..model import EmbeddedMetadata, MediaInfo

CORE_KINDS = (None, "image", "video", "raw", "unsupported", "broken")  # what the scan's own sniffing says


@dataclass(frozen=True, slots=True)
class KindReader:
    """A plugin media kind, as the workers that read files get it: plain data."""

    plugin: str
    name: str  # the kind ('document')
    extensions: tuple[str, ...]  # lower case, with their dot
    read: str  # 'package.module:function'
    options: Any = None
    recipe: str = ""  # the plugin's recipe and the kind's version: a record read by another is read again


@dataclass(frozen=True)
class KindContext:
    """What a kind's `read` is told besides the file."""

    plugin: str
    options: Any


_FUNCTIONS: dict[str, Callable] = {}


def import_function(path: str, plugin: str) -> Callable:
    """A plugin's function by its 'package.module:function' path, imported once per process."""
    found = _FUNCTIONS.get(path)
    if found is None:
        module, _, name = path.partition(":")
        try:
            found = importlib.import_module(module)
            for part in name.split("."):
                found = getattr(found, part)
        except Exception as exc:  # noqa: BLE001 - the plugin's import failure fails this file only
            raise ProcessingError(f"plugin {plugin}: cannot import {path}: {described(exc)}") from None
        _FUNCTIONS[path] = found
    return found


def claiming(readers: Sequence[KindReader], name: str) -> KindReader | None:
    """The kind that claims a file name by its extension (the first, in the order plugins run)."""
    ext = os.path.splitext(name)[1].lower()
    return next((r for r in readers if ext and ext in r.extensions), None)


def expected_recipe(readers: Sequence[KindReader], name: str) -> str:
    """The recipe a cached record of this file must have been read with when its content is not a photo
    or a video: the claiming kind's, '' when none claims it."""
    reader = claiming(readers, name)
    return reader.recipe if reader is not None else ""


def read_kind(abs_path: str, reader: KindReader, record_type: type, hash_file: Callable[[str], str]):
    """One file read by its kind's plugin: a FileRecord of that kind, one of no kind (the plugin said
    the file is not of its kind: ignored), or 'broken' with the plugin named (it raised)."""
    ctx = KindContext(reader.plugin, reader.options)
    try:
        info = import_function(reader.read, reader.plugin)(abs_path, ctx)
        if info is None:
            return record_type(None, None, kind_recipe=reader.recipe)
        width, height = int(info.width), int(info.height)
        if width < 1 or height < 1:
            raise ValueError(f"a picture of {width}x{height} pixels")
        date = info.date
        if isinstance(date, str):
            date = datetime.fromisoformat(date)
        if date is not None and not isinstance(date, datetime):
            raise ValueError(f"date {date!r} is not a datetime or an ISO 8601 string")
        embedded = EmbeddedMetadata(
            title=_text(info.title), description=_text(info.description), date=date,
            date_source="plugin" if date is not None else None, artist=_text(info.author),
        )
        media_info = MediaInfo(kind=reader.name, format=reader.name, width=width, height=height)
        return record_type(reader.name, reader.name, hash_file(abs_path), media_info, embedded, kind_recipe=reader.recipe)
    except ProcessingError as exc:
        return record_type("broken", reader.name, reason=exc.message, kind_recipe=reader.recipe)
    except Exception as exc:  # noqa: BLE001 - the plugin's failure fails this file only, named after it
        return record_type("broken", reader.name, reason=f"plugin {reader.plugin}: {described(exc)}"[:300],
                           kind_recipe=reader.recipe)


def _text(value: Any) -> str | None:
    return str(value).strip() or None if value is not None else None
