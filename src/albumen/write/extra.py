"""Files plugins add besides the pages: archives, compressed copies, assets (see
plugins.hookspecs.albumen_extra_outputs).

Each is recorded in the build cache like every output (so one not given again is removed at the end
of the build) with the key it was made from (so one whose key did not change, and whose file is as
it was written, is neither made nor written again). A failure costs that file, named after its
plugin, never the build.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import PluginError, described
from . import DiskSink

if TYPE_CHECKING:
    from ..cache import BuildCache


class BuildOutputs:
    """Every file of the site this build counts as its own, as a plugin's writer hook sees them:
    images, pages, feeds, static files, and the files plugins before it added (not its own)."""

    def __init__(self, cache: BuildCache, output: Path) -> None:
        self._cache = cache
        self._output = output
        self._hidden: set[str] = set()  # the files of the plugin being called

    def files(self, suffixes: Iterable[str] | None = None) -> Iterator[Any]:
        """OutputInfo of each file (those whose name ends with one of `suffixes`), in name order,
        with the size and modification time it was written with (a file made again has new ones)."""
        from ..plugins.types import OutputInfo

        ends = tuple(suffixes) if suffixes is not None else None
        after = ""
        while rows := self._cache.current_outputs(after):
            for dest_uri, size, mtime_ns in rows:
                if dest_uri in self._hidden or (ends is not None and not dest_uri.endswith(ends)):
                    continue
                yield OutputInfo(dest_uri, size, mtime_ns, dest_uri.split("/", 1)[0] == "p")
            after = rows[-1][0]

    def abs_path(self, dest_uri: str) -> Path:
        """Where a file of the site is (to read it)."""
        path = os.path.normpath(os.path.join(self._output, *dest_uri.split("/")))
        if not path.startswith(str(self._output).rstrip(os.sep) + os.sep):
            raise ValueError(f"{dest_uri!r} is not a path inside the site")
        return Path(path)


def write_extra_outputs(
    plugins: Any, gallery: Any, sink: DiskSink, cache: BuildCache, output: Path, damaged: dict[str, int | None]
) -> None:
    """Ask each plugin for its files and write those that changed. gallery: the plugins' view of the
    gallery (render.hooks.PluginGallery)."""
    if not plugins or not plugins.has("albumen_extra_outputs"):
        return
    outputs = BuildOutputs(cache, output)
    for info, result in plugins.each("albumen_extra_outputs", "its files are not written", gallery=gallery,
                                     outputs=outputs):
        mine: set[str] = set()
        outputs._hidden = mine
        try:
            for item in result or ():
                try:
                    _write_one(info.name, item, sink, cache, output, damaged, mine)
                except PluginError as failure:
                    plugins.warn(failure)
        except Exception as exc:  # noqa: BLE001 - raised while the plugin's iterable was read
            plugins.warn(PluginError(info.name, described(exc)), "its other files are not written")
        outputs._hidden = set()


def _write_one(plugin: str, item: Any, sink: DiskSink, cache: BuildCache, output: Path,
               damaged: dict[str, int | None], mine: set[str]) -> None:
    from ..plugins.types import OutputFile

    if not isinstance(item, OutputFile):
        raise PluginError(plugin, f"albumen_extra_outputs gave {item!r}, not an OutputFile")
    dest = item.dest_uri
    parts = dest.split("/") if isinstance(dest, str) else [""]
    if not dest or dest.startswith("/") or "\\" in dest or any(p in ("", ".", "..") for p in parts):
        raise PluginError(plugin, f"{dest!r} is not a file path relative to the site")
    if (item.data is None) == (item.write is None):
        raise PluginError(plugin, f"{dest}: an OutputFile needs either data or write")
    if item.write is not None and item.key is None:
        raise PluginError(plugin, f"{dest}: an OutputFile made by write needs a key")
    if cache.is_current(dest):
        raise PluginError(plugin, f"{dest} is already a file of the site (a page, an image or another plugin's); not written")
    data = item.data.encode("utf-8") if isinstance(item.data, str) else item.data
    key = "k:" + (item.key if item.key is not None else hashlib.sha256(data).hexdigest())
    mine.add(dest)
    recorded = cache.page_keys([dest]).get(dest)
    path = os.path.join(output, *parts)
    if recorded == key and dest not in damaged and os.path.isfile(path):
        cache.mark_current([dest])  # as the last build made it: neither made nor written again
        return
    cache.reserve_outputs([dest], current=True)  # recorded before written: an interrupted build cleans up
    try:
        if data is not None:
            sink.write(dest, data)
        else:
            sink.write_with(dest, item.write)
    except PluginError:
        raise
    except Exception as exc:  # noqa: BLE001 - the plugin's write failed: the last build's file stays
        raise PluginError(plugin, f"{dest} is not written: {described(exc)}") from exc
    finally:
        cache.stamp_outputs(sink.take_stamps())
    cache.set_page_keys([(dest, key)])
