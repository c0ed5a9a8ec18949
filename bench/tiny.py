#!/usr/bin/env python3
"""Per-photo overhead (issue 24): a full build of N small photos, Albumen against Sigal 2.6.1, in the
same run on the same machine.

Usage (from the repo root, with the Albumen venv; Sigal comes from bench/setup_sigal.sh):

    python bench/tiny.py 10000                  # library bench/corpora/small-10000, 3 rounds
    python bench/tiny.py 2000 --rounds 1        # iterate on a smaller library
    python bench/tiny.py 10000 --only albumen   # one tool (or several: albumen,base)
    python bench/tiny.py 2000 --albumen-src ../other-tree/src   # another Albumen tree (PYTHONPATH)
    python bench/tiny.py 10000 --base-src /tmp/base/src         # and an older tree too, interleaved
                                                                # (git archive COMMIT src | tar -x -C /tmp/base)
    python bench/tiny.py 10000 --floor --work /dev/shm/tinyw    # and bench/floor.py too: the ceiling of the ratio

The library: year/event folders as in bench/scale.py (log-normal event sizes, median ~40 photos,
seed 24, none over a fifth of the library), each photo one of 32 JPEGs of 64 to 320 px on the long edge (landscape and portrait,
seeded), with its own EXIF date spliced in (see corpora.py): every file is distinct and valid, and the
pixels are few, so what is measured is what a tool does per photo besides pixels.

Both tools get the `nochange` settings of bench.py: Sigal what `sigal init` writes (800x600 images,
280x210 thumbnails, quality 85), Albumen `sizes = [800]`, `quality = 85`, 210 px high thumbnails; both
use every core. Each round builds with each tool into an empty output (and an empty cache for
Albumen), tools alternating; every output of the last round is removed first, and the disk let settle
(`sync`, 3 s) before each build is timed. Reported per build: wall time, and CPU time split into the build
process itself and its children (its workers), user and system: the tool runs in a wrapper that
records its own getrusage when it exits, the children are the rest of os.wait4's total. The load
average (1 min) before each build is printed beside it. Results to stdout and WORK/results.json.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402
import scale  # noqa: E402

BENCH = Path(__file__).resolve().parent
SIGAL_PY = BENCH / ".venv-sigal" / "bin" / "python"
ALBUMEN_TOML = "[images]\nsizes = [800]\nquality = 85\n\n[thumbnails]\nheight = 210\n"
SIGAL_CONF = (
    'theme = "galleria"\nimg_size = (800, 600)\nthumb_size = (280, 210)\n'
    "jpg_options = {'quality': 85, 'optimize': True, 'progressive': True}\n"
)
# Runs a tool's command line in this process and, at exit, writes the process's own CPU time
# (its children's is the rest of what os.wait4 reports).
WRAPPER = """
import atexit, json, resource, runpy, sys
out, module = sys.argv[1], sys.argv[2]
def _dump():
    s = resource.getrusage(resource.RUSAGE_SELF)
    with open(out, "w") as f:
        json.dump({"user": s.ru_utime, "sys": s.ru_stime}, f)
atexit.register(_dump)
sys.argv = [module] + sys.argv[3:]
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""
VERSION = 2


def _blobs(count: int = 32, seed: int = 24) -> list[bytes]:
    """`count` JPEGs of 64-320 px on the long edge (a quarter portrait) with corpora.PLACEHOLDER as dates."""
    import numpy as np
    from PIL import Image

    rng = random.Random(seed)
    blobs = []
    for k in range(count):
        long, ratio = rng.randint(64, 320), rng.choice([4 / 3, 3 / 2, 1.0, 16 / 9])
        w, h = long, max(16, round(long / ratio))
        if k % 4 == 3:
            w, h = h, w
        g = np.random.default_rng([seed, k])
        y, x = np.mgrid[0:h, 0:w].astype(np.float32)
        c0, c1 = g.uniform(20, 235, 3), g.uniform(20, 235, 3)
        t = (y / max(1, h - 1))[..., None]
        img = c0 * (1 - t) + c1 * t + g.normal(0, 12, (h, w, 3)) + 40 * np.sin(x / g.uniform(3, 9))[..., None]
        im = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8), "RGB")
        ex = Image.Exif()
        ex[0x010F], ex[0x0110], ex[0x0112], ex[0x0132] = "BenchCam", f"Small {k % 4}", 1, corpora.PLACEHOLDER.decode()
        sub = ex.get_ifd(0x8769)
        sub[0x9003] = sub[0x9004] = corpora.PLACEHOLDER.decode()
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=85, exif=ex.tobytes())
        assert buf.getvalue().count(corpora.PLACEHOLDER) == 3
        blobs.append(buf.getvalue())
    return blobs


def _init() -> None:
    corpora._BLOBS[:] = _blobs()


def plan_library(n: int, seed: int = 24) -> list[tuple[str, int]]:
    """bench/scale.py's year/event folders, the largest event at most a fifth of the library: a small
    library for iterating keeps albums of the sizes a large one has (its ~40 in the middle)."""
    rng = random.Random(seed)
    sizes: list[int] = []
    while sum(sizes) < n:
        sizes.append(max(1, min(5000, n // 5, round(math.exp(rng.gauss(math.log(40), 1.1))))))
    sizes[-1] -= sum(sizes) - n
    per_year = max(1, len(sizes) // 20)
    return [(f"{2000 + i // per_year}/{2000 + i // per_year}-{1 + i % 12:02d}-{1 + i % 28:02d} Event {i:05d}", size)
            for i, size in enumerate(sizes) if size > 0]


def _settle(quiet: float = 3.0, most: float = 120.0) -> float:
    """Let what the last build and the removals wrote (and discarded) reach the disk before a build is
    timed: `sync`, then wait until no disk has written or discarded anything for `quiet` seconds (at
    most `most`); returns the seconds waited. Until 2026-12-06 each tool's last output was removed just
    before its own build, which put the removal's writes on it. This does not remove the variance seen
    on this machine (root file system mounted with `discard`) after many files were made and removed:
    the disk is idle when the build starts, and Albumen's workers' system time for the same 10,000
    photos still ranges from 2.2 to 19.5 s (its output, a folder and three files a photo, is larger
    than Sigal's, two files a photo): see bench/README.md."""
    def activity() -> tuple[int, ...]:
        try:
            rows = [line.split() for line in Path("/proc/diskstats").read_text().splitlines()]
        except OSError:
            return ()
        # writes completed, I/Os in progress, discards completed (when the kernel counts them)
        return tuple(int(r[i]) for r in rows for i in (7, 11, 14) if len(r) > 14)

    start = time.monotonic()
    os.sync()
    last, since = activity(), time.monotonic()
    while time.monotonic() - since < quiet and time.monotonic() - start < most:
        time.sleep(0.5)
        now = activity()
        if now != last:
            last, since = now, time.monotonic()
    return time.monotonic() - start


def make_library(n: int, out: Path) -> Path:
    done = out.with_name(out.name + ".done")
    if done.is_file() and json.loads(done.read_text()) == {"n": n, "version": VERSION}:
        return out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    chunks, start = [], 0
    for folder, size in plan_library(n):
        chunks.append((str(out), folder, start, size))
        start += size
    with Pool(os.cpu_count() or 1, initializer=_init) as pool:
        assert sum(pool.imap_unordered(scale._write_event, chunks, chunksize=4)) == n
    done.write_text(json.dumps({"n": n, "version": VERSION}))
    print(f"{out}: {n} photos in {len(chunks)} events", file=sys.stderr)
    return out


def run(tool: str, cmd: list[str], env: dict, work: Path, label: str) -> dict:
    own = work / "own-cpu.json"
    own.unlink(missing_ok=True)
    python, module, args = cmd[0], cmd[1], cmd[2:]
    load = os.getloadavg()[0]
    t = time.perf_counter()
    proc = subprocess.Popen([python, "-c", WRAPPER, str(own), module, *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    text = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"{label}: exit {os.waitstatus_to_exitcode(status)}\n{text[-3000:]}")
    parent = json.loads(own.read_text())
    row = {
        "tool": tool, "label": label, "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "parent_user_s": round(parent["user"], 2), "parent_sys_s": round(parent["sys"], 2),
        "children_user_s": round(usage.ru_utime - parent["user"], 2),
        "children_sys_s": round(usage.ru_stime - parent["sys"], 2),
        "load_before": round(load, 1), "load_after": round(os.getloadavg()[0], 1),
        "last_line": text.strip().splitlines()[-1] if text.strip() else "",
    }
    print(f"{label:18s} wall {row['wall_s']:7.2f} s  cpu {row['cpu_s']:7.2f} s (parent {row['parent_user_s']:.2f} u "
          f"+ {row['parent_sys_s']:.2f} s, children {row['children_user_s']:.2f} u + {row['children_sys_s']:.2f} s)"
          f"  load {row['load_before']} -> {row['load_after']}", flush=True)
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", help="the tools to run, comma-separated: sigal,albumen,base")
    ap.add_argument("--work", type=Path, help="work folder (default /tmp/albumen-tiny-N)")
    ap.add_argument("--library", type=Path, help="library folder (default bench/corpora/small-N)")
    ap.add_argument("--albumen-src", type=Path, help="an Albumen source tree to build with (PYTHONPATH)")
    ap.add_argument("--base-src", type=Path, help="another Albumen source tree, built too as 'base' in every round")
    ap.add_argument("--floor", action="store_true",
                    help="run bench/floor.py too in every round: the image work alone, the most any tool on "
                         "these libraries could reach (Sigal / floor is the ceiling of the ratio)")
    args = ap.parse_args(argv)
    work = (args.work or Path(f"/tmp/albumen-tiny-{args.n}")).resolve()
    library = make_library(args.n, (args.library or BENCH / "corpora" / f"small-{args.n}").resolve())
    work.mkdir(parents=True, exist_ok=True)
    (work / "albumen.toml").write_text(ALBUMEN_TOML)
    (work / "sigal.conf.py").write_text(SIGAL_CONF)
    env = {**os.environ}
    if args.albumen_src:
        env["PYTHONPATH"] = str(args.albumen_src.resolve())
    envs = {"sigal": env, "albumen": env}
    if args.base_src:
        envs["base"] = {**os.environ, "PYTHONPATH": str(args.base_src.resolve())}
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(args.base_src)], check=False)
    envs["floor"] = {**os.environ, "PYTHONPATH": str(BENCH)}
    tools = [t for t in ("sigal", "albumen", "base", "floor")
             if t in envs and (args.only is None or t in args.only.split(",")) and (t != "floor" or args.floor)]
    if "sigal" in tools and not SIGAL_PY.exists():
        subprocess.run(["bash", str(BENCH / "setup_sigal.sh")], check=True)
    # bytecode, as an installed package has (these machines set PYTHONDONTWRITEBYTECODE)
    src = args.albumen_src or Path(__import__("albumen").__file__).parent
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=False, env=env)
    if "sigal" in tools:
        subprocess.run([str(SIGAL_PY), "-m", "compileall", "-q", "-x", "tests",
                        str(next((BENCH / ".venv-sigal" / "lib").glob("python3*/site-packages")))], check=False,
                       stdout=subprocess.DEVNULL)
    for path in library.rglob("*.jpg"):  # in the page cache for both
        path.read_bytes()
    rows = []
    for r in range(args.rounds):
        for tool in tools:  # every tool's last output removed before any is timed (see _settle)
            shutil.rmtree(work / f"out-{tool}", ignore_errors=True)
            shutil.rmtree(work / f"cache-{tool}", ignore_errors=True)
        for tool in tools:
            out, cache = work / f"out-{tool}", work / f"cache-{tool}"
            waited = _settle()
            print(f"(disk settled in {waited:.1f} s)", file=sys.stderr)
            if tool == "sigal":
                cmd = [str(SIGAL_PY), "sigal", "build", "-q", "-c", str(work / "sigal.conf.py"), str(library), str(out)]
            elif tool == "floor":  # (bench/floor.py: the image work alone, batched as Albumen batches small photos)
                cmd = [sys.executable, "floor", str(library), str(out), "--chunksize", "16"]
            else:
                cmd = [sys.executable, "albumen", "build", str(library), "-o", str(out), "-c",
                       str(work / "albumen.toml"), "-q"]
            rows.append(run(tool, cmd, {**envs[tool], "ALBUMEN_CACHE_DIR": str(cache)}, work, f"{tool} #{r + 1}"))
    result = {"n": args.n, "events": len(plan_library(args.n)), "cores": os.cpu_count(),
              "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "commit": subprocess.run(["git", "-C", str(BENCH), "rev-parse", "--short", "HEAD"],
                                       capture_output=True, text=True).stdout.strip(), "rows": rows}
    sigal = [x for x in rows if x["tool"] == "sigal"]
    for tool in [t for t in tools if t != "sigal"] if sigal else []:
        mine = [x for x in rows if x["tool"] == tool]
        pairs = [[round(s["wall_s"] / a["wall_s"], 2), round(s["cpu_s"] / a["cpu_s"], 2)] for s, a in zip(sigal, mine, strict=True)]
        best = [round(min(x["wall_s"] for x in sigal) / min(x["wall_s"] for x in mine), 2),
                round(min(x["cpu_s"] for x in sigal) / min(x["cpu_s"] for x in mine), 2)]
        result[f"sigal_over_{tool}"] = {"best_wall_best_cpu": best, "per_round_wall_cpu": pairs}
        print(f"Sigal / {tool}: wall {best[0]}x, CPU {best[1]}x (best of each); per round (wall, CPU): {pairs}")
    (work / "results.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
