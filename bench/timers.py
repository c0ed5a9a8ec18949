#!/usr/bin/env python3
"""`albumen ARGS` in this process with a timer around each named function, printed (seconds, summed
over calls) to stderr when it exits. Finer than bench/stages.py, which times the build's stages.

    python bench/timers.py "albumen.scan.snapshots:load,albumen.cache:BuildCache.get_folder,albumen.render.stream:stream_tasks*" \\
        build PHOTOS -o SITE -c albumen.toml -q

Each name is `module:function` or `module:Class.method`, replaced where that module holds it: a
function imported by name elsewhere is timed only where the module named looks it up. A trailing `*`
marks a generator, listed inside the timer (its time is that of its whole walk). Used for the
one-photo rebuilds of 100,000 and 1,000,000 photos in bench/README.md.
"""

from __future__ import annotations

import atexit
import functools
import importlib
import sys
import time

TIMES: dict[str, float] = {}


def wrap(modname: str, attr: str, listed: bool = False) -> None:
    owner = importlib.import_module(modname)
    *path, name = attr.split(".")
    for part in path:
        owner = getattr(owner, part)
    function = getattr(owner, name)

    @functools.wraps(function)
    def run(*args, **kwargs):
        start = time.perf_counter()
        try:
            result = function(*args, **kwargs)
            return list(result) if listed else result
        finally:
            TIMES[attr] = TIMES.get(attr, 0.0) + time.perf_counter() - start

    setattr(owner, name, run)


def main() -> None:
    for spec in sys.argv[1].split(","):
        module, attr = spec.split(":")
        wrap(module, attr.rstrip("*"), attr.endswith("*"))
    atexit.register(lambda: print(" ".join(f"{k}={v:.3f}" for k, v in TIMES.items()), file=sys.stderr))
    from albumen.cli import main as albumen

    sys.argv = ["albumen", *sys.argv[2:]]
    albumen()


if __name__ == "__main__":
    main()
