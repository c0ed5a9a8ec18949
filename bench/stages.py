#!/usr/bin/env python3
"""Where one build's time goes: `albumen build ARGS` in this process, with a timer around each stage
and each heavy cache call, printed (seconds, largest first) to stderr when the build ends.

    python bench/stages.py build PHOTOS -o SITE -c albumen.toml

In-process timers, not a profiler: the build runs at its own speed (cProfile inflates it ~1.5x).
The peak RSS of the process after each stage follows, and where the build was each time it rose by
50 MiB (sampled every 0.1 s).
Used for the one-photo rebuilds of 100,000 and 1,000,000 photos in bench/README.md.
"""

from __future__ import annotations

import functools
import resource
import sys
import threading
import time

TIMES: dict[str, float] = {}
PEAKS: list[tuple[str, int]] = []  # (stage, the process's peak RSS in MiB when it ended), in order
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
            if name in STAGES:
                PEAKS.append((name, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024))
    return run


def watch_peak(main_thread: int, rises: list[str], stop: threading.Event) -> None:
    """Every 0.1 s: when the peak RSS grew by 50 MiB or more, where the build's thread was then (its
    innermost frames in Albumen's code)."""
    last = 0
    while not stop.wait(0.1):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        if peak - last >= 50:
            last = peak
            frame, where = sys._current_frames().get(main_thread), []
            while frame is not None and len(where) < 3:
                if "albumen" in frame.f_code.co_filename:
                    where.append(f"{frame.f_code.co_name}:{frame.f_lineno}")
                frame = frame.f_back
            rises.append(f"{peak} MiB at {'<'.join(where) or '?'}")


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
    rises: list[str] = []
    stop = threading.Event()
    threading.Thread(target=watch_peak, args=(threading.get_ident(), rises, stop), daemon=True).start()
    try:
        cli(standalone_mode=False)
    finally:
        stop.set()
        total = time.perf_counter() - start
        print(" ".join(f"{k}={v:.2f}" for k, v in sorted(TIMES.items(), key=lambda kv: -kv[1])), f"total={total:.2f}",
              file=sys.stderr)
        print("peak RSS after each stage (MiB):", " ".join(f"{k}={v}" for k, v in PEAKS), file=sys.stderr)
        print("peak RSS rising:", "; ".join(rises), file=sys.stderr)


if __name__ == "__main__":
    main()
