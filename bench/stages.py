#!/usr/bin/env python3
"""Where one build's time goes: `albumen build ARGS` in this process, with a timer around each stage
and each heavy cache call, printed (seconds, largest first) to stderr when the build ends.

    python bench/stages.py build PHOTOS -o SITE -c albumen.toml

In-process timers, not a profiler: the build runs at its own speed (cProfile inflates it ~1.5x).
Used for the one-photo rebuilds of 100,000 and 1,000,000 photos in bench/README.md.
"""

from __future__ import annotations

import functools
import sys
import time

TIMES: dict[str, float] = {}
STAGES = ["walk_source", "fingerprint", "scan_source", "plan_site", "make_renderer", "remaining_jobs", "render_pages",
          "remove_stale_outputs"]
CACHE_CALLS = ["add_outputs", "keep_placeholders", "folders_without_index", "mark_current", "claim_pages",
               "claim_recorded", "stale_outputs", "forget_other_pages", "put_folders", "reserve_outputs"]


def timed(function, name: str, listed: bool = False):
    @functools.wraps(function)
    def run(*args, **kwargs):
        start = time.perf_counter()
        try:
            result = function(*args, **kwargs)
            return list(result) if listed else result  # (a generator's time is its walk's)
        finally:
            TIMES[name] = TIMES.get(name, 0.0) + time.perf_counter() - start
    return run


def main() -> None:
    import albumen.build as build
    import albumen.cache as cache

    for name in STAGES:
        setattr(build, name, timed(getattr(build, name), name, listed=name == "walk_source"))
    for name in CACHE_CALLS:
        setattr(cache.BuildCache, name, timed(getattr(cache.BuildCache, name), name))
    from albumen.cli import main as cli

    sys.argv = ["albumen", *sys.argv[1:]]
    start = time.perf_counter()
    try:
        cli(standalone_mode=False)
    finally:
        total = time.perf_counter() - start
        print(" ".join(f"{k}={v:.2f}" for k, v in sorted(TIMES.items(), key=lambda kv: -kv[1])), f"total={total:.2f}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
