"""Precompressed copies of the site's text files: `.gz` (made with zopfli, else gzip -9) and `.br`
(Brotli) beside every HTML, CSS, JS, SVG, XML, JSON and VTT file, for servers that serve them
(nginx `gzip_static` and `brotli_static`, Caddy's `precompressed`).

A copy is made again only when its file changed (another size or modification time: a page rewritten
because its bytes changed) and is removed with it. It runs after the other plugins, so their files
(an index in JSON, say) get their copies too. A private album's files get theirs beside them, in its
private folder.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import partial

from albumen.plugins import OutputFile, hookimpl, setting

__version__ = "1"

SUFFIX = {"gzip": ".gz", "brotli": ".br"}


@dataclass(frozen=True)
class Options:
    formats: tuple[str, ...] = setting(
        ["gzip", "brotli"], "Which copies: 'gzip' (.gz) and 'brotli' (.br).", item_choices=("gzip", "brotli"),
    )
    extensions: tuple[str, ...] = setting(
        ["html", "css", "js", "svg", "xml", "json", "vtt"],
        "Extensions of the files to compress (without the dot). Images and videos are compressed already.",
    )
    zopfli: bool = setting(
        True,
        "Make the .gz copies with zopfli: about 3 % smaller than gzip -9 and a hundred times slower to make, "
        "once per file (a file that did not change is not compressed again). false: gzip -9.",
    )
    min_size: int = setting(0, "Leave out files smaller than this many bytes (a server compresses those fast).", min=0)

    def __post_init__(self) -> None:
        if not self.formats:
            raise ValueError("formats: expected 'gzip', 'brotli' or both, got an empty list")
        exts = tuple(e.lstrip(".").lower() for e in self.extensions)
        bad = [e for e in exts if not e or not e.replace("-", "").isalnum() or e in ("gz", "br")]
        if bad or not exts:
            raise ValueError(f"extensions: expected extensions such as 'html', got {list(self.extensions)!r}")
        object.__setattr__(self, "extensions", exts)


@hookimpl
def albumen_options():
    return Options


@hookimpl(trylast=True)  # after the other plugins: their files are compressed too
def albumen_extra_outputs(options: Options, outputs):
    suffixes = tuple(f".{e}" for e in options.extensions)
    for info in outputs.files(suffixes):
        path = outputs.abs_path(info.dest_uri)
        size, mtime_ns = info.size, info.mtime_ns
        if size is None or mtime_ns is None:  # not recorded with its stamps: as it is now
            try:
                st = os.stat(path)
            except OSError:
                continue
            size, mtime_ns = st.st_size, st.st_mtime_ns
        if size < options.min_size:
            continue
        for fmt in options.formats:
            method = ("zopfli" if options.zopfli else "gzip-9") if fmt == "gzip" else "brotli-11"
            yield OutputFile(info.dest_uri + SUFFIX[fmt], write=partial(_compress, str(path), method),
                             key=f"{__version__}:{method}:{size}:{mtime_ns}")


def _compress(path: str, method: str, out) -> None:
    """The file's bytes compressed (deterministic: no name or time in the headers)."""
    with open(path, "rb") as f:
        data = f.read()
    out.write(compress(data, method))


def compress(data: bytes, method: str) -> bytes:
    if method == "zopfli":
        import zopfli.gzip

        return zopfli.gzip.compress(data)
    if method == "gzip-9":
        import gzip

        return gzip.compress(data, compresslevel=9, mtime=0)
    import brotli

    return brotli.compress(data, quality=11, mode=brotli.MODE_TEXT)
