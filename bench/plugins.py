"""What the bundled plugins cost: cold builds of a small camera-like corpus with each of watermark,
copyright and adjust (and the three together), zip, and watermark with zip (the issue's pair), against
the same build without plugins.

    python bench/plugins.py                      # 24 photos of 24 MP, 3 rounds, interleaved
    python bench/plugins.py --count 4 --rounds 1 # a smoke run
    python bench/plugins.py --only none zip "watermark + zip"   # some of the configurations

The corpus is made by the shared generator (../shared/bench/make_corpus.py, --seed 1) into
bench/corpora/c24-N unless it is there. Every build starts from an empty output folder and an empty
cache; builds of the configurations alternate, round after round, so that a change in the machine's
load falls on all of them alike. CPU time is user+sys of the build and its workers (what the plugins
cost), wall time is shown beside it, and the load average before and after: on a shared machine wall
times mean little. Results go to bench/results/plugins.json and are printed as a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared" / "bench" / "make_corpus.py"

ADJUST = "brightness = 1.05\ncontrast = 1.1\ncolor = 1.1\nsharpness = 1.2\n"
CONFIGS = {
    "none": "",
    "watermark": 'plugins = ["watermark"]\n[plugin.watermark]\nimage = "watermark.png"\n',
    "copyright": 'plugins = ["copyright"]\n[plugin.copyright]\nauthor = "Bench"\noutline = "#000000"\n',
    "adjust": 'plugins = ["adjust"]\n[plugin.adjust]\n' + ADJUST,
    "all three": 'plugins = ["adjust", "watermark", "copyright"]\n[plugin.watermark]\nimage = "watermark.png"\n'
                 '[plugin.copyright]\nauthor = "Bench"\noutline = "#000000"\n[plugin.adjust]\n' + ADJUST,
    "zip": 'plugins = ["zip"]\n',
    "watermark + zip": 'plugins = ["watermark", "zip"]\n[plugin.watermark]\nimage = "watermark.png"\n',
}


def make_corpus(folder: Path, count: int, size: str) -> None:
    if (folder / ".complete").is_file():
        return
    if not SHARED.is_file():
        sys.exit(f"the shared corpus generator is not at {SHARED}")
    subprocess.run([sys.executable, str(SHARED), str(folder), "--count", str(count), "--size", size, "--seed", "1",
                    "--jobs", "2"], check=True)
    (folder / ".complete").write_text("")


def write_configs(root: Path) -> dict[str, Path]:
    """One folder per configuration, each with the watermark (a 600x150 translucent badge)."""
    from PIL import Image, ImageDraw

    mark = Image.new("RGBA", (600, 150), (0, 0, 0, 0))
    draw = ImageDraw.Draw(mark)
    draw.rounded_rectangle((0, 0, 599, 149), radius=30, fill=(255, 255, 255, 160), outline=(0, 0, 0, 200), width=6)
    draw.text((40, 40), "ALBUMEN BENCH", fill=(0, 0, 0, 230), font_size=64)
    paths = {}
    for name, text in CONFIGS.items():
        folder = root / name.replace(" ", "-")
        folder.mkdir(parents=True, exist_ok=True)
        mark.save(folder / "watermark.png")
        (folder / "albumen.toml").write_text(text, encoding="utf-8")
        paths[name] = folder / "albumen.toml"
    return paths


def build(corpus: Path, conf: Path, jobs: int) -> dict:
    """One cold build: (CPU s of the build and its workers, wall s, files written)."""
    with tempfile.TemporaryDirectory(prefix="albumen-bench-plugins-") as tmp:
        env = dict(os.environ, ALBUMEN_CACHE_DIR=str(Path(tmp) / "cache"), XDG_CACHE_HOME=str(Path(tmp) / "xdg"))
        out = Path(tmp) / "site"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        args = [sys.executable, "-m", "albumen", "build", str(corpus), "-o", str(out), "-c", str(conf), "-q"]
        if jobs:
            args += ["-j", str(jobs)]
        done = subprocess.run(args, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"build failed ({conf}):\n{done.stdout}\n{done.stderr}")
        files = sum(1 for p in out.rglob("*") if p.is_file())
        shutil.rmtree(out)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu": round(cpu, 2), "wall": round(wall, 2), "files": files}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--size", default="24mp")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=0, help="worker processes (default: all cores)")
    ap.add_argument("--only", nargs="+", choices=list(CONFIGS), help="these configurations ('none' is always run)")
    opts = ap.parse_args()

    corpus = HERE / "corpora" / f"c{opts.size.removesuffix('mp')}-{opts.count}"
    make_corpus(corpus, opts.count, opts.size)
    results_dir = HERE / "results"
    confs = write_configs(results_dir / "plugins-configs")
    if opts.only:
        confs = {name: conf for name, conf in confs.items() if name == "none" or name in opts.only}
    load_before = os.getloadavg()
    runs: dict[str, list[dict]] = {name: [] for name in confs}
    for round_no in range(opts.rounds):
        for name, conf in confs.items():
            run = build(corpus, conf, opts.jobs)
            runs[name].append(run)
            print(f"round {round_no + 1}: {name:10} cpu {run['cpu']:7.2f} s  wall {run['wall']:6.2f} s  "
                  f"load {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    base = statistics.median(r["cpu"] for r in runs["none"])
    rows = []
    for name, items in runs.items():
        cpu = statistics.median(r["cpu"] for r in items)
        wall = statistics.median(r["wall"] for r in items)
        rows.append({"config": name, "cpu_median": cpu, "wall_median": wall, "ratio": round(cpu / base, 3),
                     "runs": items})
    report = {"corpus": str(corpus.relative_to(HERE.parent)), "count": opts.count, "size": opts.size,
              "rounds": opts.rounds, "jobs": opts.jobs or os.cpu_count(), "load_before": load_before,
              "load_after": load_after, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "command": " ".join(["python", "bench/plugins.py", *sys.argv[1:]]), "results": rows}
    results_dir.mkdir(exist_ok=True)
    name = "plugins" + ("-" + "-".join(sorted(n.replace(" + ", "+") for n in opts.only)) if opts.only else "")
    (results_dir / f"{name}.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    print(f"| plugins | CPU s (user+sys), median of {opts.rounds} | ratio to none | wall s, median | runs (CPU s) |")
    print("|---|---:|---:|---:|---|")
    for row in rows:
        each = ", ".join(f"{r['cpu']:.2f}" for r in row["runs"])
        print(f"| {row['config']} | {row['cpu_median']:.2f} | {row['ratio']:.2f}x | {row['wall_median']:.1f} | {each} |")
    print(f"\nload average (1, 5, 15 min) before: {', '.join(f'{v:.1f}' for v in load_before)}; after: "
          f"{', '.join(f'{v:.1f}' for v in load_after)}")


if __name__ == "__main__":
    main()
