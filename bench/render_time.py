#!/usr/bin/env python3
"""The render stage's time per page (issue 24): the median milliseconds a photo page and an album page
take to render (the theme's templates, their links and translations, from the page's views to its
bytes), on a generated library of small photos.

Usage (from the repo root, with the Albumen venv):

    python bench/render_time.py 2000                          # bench/corpora/small-2000, 3 rounds
    python bench/render_time.py 2000 --base-src /tmp/old/src  # an older tree too, interleaved
                                                              # (git archive COMMIT src | tar -x -C /tmp/old)
    python bench/render_time.py 2000 --profile /tmp/render.pstats   # one cProfile'd round (the build process)

The library is bench/tiny.py's (year/event albums, 64-320 px JPEGs). Each tree builds it once, cold,
with tiny.py's Albumen config; then, every round, every .html file of the output is deleted and the
tree builds again into the same output and cache, in a fresh process: nothing is left to scan or make,
so the build is the page writer alone on the machine, and every page is rendered again. Each call of
SiteRenderer.render is timed, wall (perf_counter) and CPU (thread_time, the steadier on a shared
machine); reported per template: the medians, the mean and the count, and the render stage's wall and CPU time (render_pages: listing the pages, their views and
keys, rendering and writing them). Trees alternate within a round. The load average (1 min) is printed
before each build.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

BENCH = Path(__file__).resolve().parent


def child(out: str, cache: str, library: str, config: str, profile: str | None) -> None:
    """One build in this process with every page render timed; prints the timings as JSON."""
    import albumen.build
    from albumen.cli import main as cli_main
    from albumen.render.pages import SiteRenderer

    times: dict[str, list[tuple[float, float]]] = {}
    stage: dict[str, float] = {}
    render = SiteRenderer.render
    clock, cpu_clock = time.perf_counter, time.thread_time

    def timed_render(self, task):
        t, c = clock(), cpu_clock()
        page = render(self, task)
        c, t = cpu_clock() - c, clock() - t
        times.setdefault(task.template or "(text)", []).append((t, c))
        return page

    render_pages = albumen.build.render_pages

    def timed_stage(*args, **kwargs):
        t, c = time.perf_counter(), time.process_time()
        gc_before = dict(collecting)
        try:
            return render_pages(*args, **kwargs)
        finally:
            stage["wall_s"] = time.perf_counter() - t
            stage["cpu_s"] = time.process_time() - c
            stage["gc_s"] = collecting["s"] - gc_before["s"]  # the cyclic garbage collector's part
            stage["gc_runs"] = collecting["n"] - gc_before["n"]
            stage["gc_full_runs"] = collecting["gen2"] - gc_before["gen2"]

    import gc

    collecting = {"s": 0.0, "n": 0, "gen2": 0, "since": 0.0}

    def gc_timer(phase, info):
        if phase == "start":
            collecting["since"] = clock()
        else:
            collecting["s"] += clock() - collecting["since"]
            collecting["n"] += 1
            collecting["gen2"] += info["generation"] == 2

    gc.callbacks.append(gc_timer)
    SiteRenderer.render = timed_render
    albumen.build.render_pages = timed_stage
    os.environ["ALBUMEN_CACHE_DIR"] = cache
    argv = ["build", library, "-o", out, "-c", config, "-q"]
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    try:
        cli_main(argv, standalone_mode=False)
    finally:
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile)
    print(json.dumps({"times": times, "stage": stage}))


def _delete_pages(out: Path) -> int:
    count = 0
    for path in out.rglob("*.html"):
        path.unlink()
        count += 1
    return count


def _summary(times: dict[str, list[list[float]]]) -> dict[str, dict]:
    out = {}
    for name, pairs in sorted(times.items()):
        wall, cpu = [p[0] for p in pairs], [p[1] for p in pairs]
        out[name] = {"median_ms": round(statistics.median(wall) * 1000, 4), "mean_ms": round(statistics.fmean(wall) * 1000, 4),
                     "cpu_median_ms": round(statistics.median(cpu) * 1000, 4), "count": len(pairs)}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", type=Path, help="work folder (default /tmp/albumen-render-N)")
    ap.add_argument("--library", type=Path, help="library folder (default bench/corpora/small-N)")
    ap.add_argument("--albumen-src", type=Path, default=BENCH.parent / "src",
                    help="the Albumen source tree to measure (PYTHONPATH; default: this repo's src/)")
    ap.add_argument("--base-src", type=Path, help="another Albumen source tree, measured too as 'base' in every round")
    ap.add_argument("--profile", type=Path, help="one round of the first tree under cProfile, its stats to this file")
    args = ap.parse_args(argv)
    import tiny

    work = (args.work or Path(f"/tmp/albumen-render-{args.n}")).resolve()
    library = tiny.make_library(args.n, (args.library or BENCH / "corpora" / f"small-{args.n}").resolve())
    work.mkdir(parents=True, exist_ok=True)
    config = work / "albumen.toml"
    config.write_text(tiny.ALBUMEN_TOML)
    trees = {"albumen": args.albumen_src, **({"base": args.base_src} if args.base_src else {})}
    envs = {}
    for tool, src in trees.items():
        env = envs[tool] = {**os.environ, "PYTHONPATH": str(src.resolve())}
        # bytecode, as an installed package has (these machines set PYTHONDONTWRITEBYTECODE)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=False, env=env)
        out, cache = work / f"out-{tool}", work / f"cache-{tool}"
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "albumen", "build", str(library), "-o", str(out), "-c", str(config), "-q"],
                       env={**env, "ALBUMEN_CACHE_DIR": str(cache)}, check=True, stdout=subprocess.DEVNULL)
        print(f"{tool}: cold build {time.perf_counter() - t:.1f} s", file=sys.stderr)
    rounds = 1 if args.profile else args.rounds
    rows = []
    for r in range(rounds):
        for tool in trees:
            out, cache = work / f"out-{tool}", work / f"cache-{tool}"
            deleted = _delete_pages(out)
            load = os.getloadavg()[0]
            cmd = [sys.executable, __file__, "--child", str(out), str(cache), str(library), str(config)]
            if args.profile:
                cmd.append(str(args.profile.resolve()))
            done = subprocess.run(cmd, env=envs[tool], capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{tool}: exit {done.returncode}\n{done.stderr[-3000:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            summary = _summary(result["times"])
            row = {"tool": tool, "round": r + 1, "pages_deleted": deleted, "load_before": round(load, 2),
                   "load_after": round(os.getloadavg()[0], 2), "stage": result["stage"], "templates": summary}
            rows.append(row)
            media, album = summary.get("media.html", {}), summary.get("album.html", {})
            print(f"{tool:8s} #{r + 1}  photo page {media.get('median_ms', 0):.3f} ms median"
                  f" ({media.get('cpu_median_ms', 0):.3f} CPU, {media.get('count', 0)} pages),"
                  f" album page {album.get('median_ms', 0):.3f} ({album.get('cpu_median_ms', 0):.3f} CPU, {album.get('count', 0)});"
                  f" render stage {result['stage'].get('wall_s', 0):.2f} s wall, {result['stage'].get('cpu_s', 0):.2f} s CPU"
                  f" (GC {result['stage'].get('gc_s', 0):.2f} s, {result['stage'].get('gc_full_runs', 0)} full runs)"
                  f"  load {row['load_before']} -> {row['load_after']}", flush=True)
            if args.profile:
                break
    if rows and not args.profile:
        for tool in trees:
            mine = [x for x in rows if x["tool"] == tool]
            for name in ("media.html", "album.html"):
                for kind in ("median_ms", "cpu_median_ms"):
                    values = [x["templates"][name][kind] for x in mine if name in x["templates"]]
                    if values:
                        print(f"{tool:8s} {name} {'CPU' if kind.startswith('cpu') else 'wall'}: median of the rounds'"
                              f" medians {statistics.median(values):.3f} ms (rounds: {', '.join(f'{v:.3f}' for v in values)})")
            stage = [x["stage"]["cpu_s"] for x in mine]
            print(f"{tool:8s} render stage CPU s: {', '.join(f'{v:.2f}' for v in stage)}")
    (work / "results.json").write_text(json.dumps({"n": args.n, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(*sys.argv[2:6], sys.argv[6] if len(sys.argv) > 6 else None)
    else:
        main()
