#!/usr/bin/env python3
"""Incremental builds at scale (issue 24): a synthetic library of tiny photos in albums of realistic
sizes, built cold, rebuilt with nothing changed, then after one photo added, one edited (its bytes),
one caption edited (a sidecar) and one deleted.

Usage (from the repo root, with the Albumen venv):

    python bench/scale.py 100000                      # library in bench/corpora/lib-100000, work in /tmp
    python bench/scale.py 1000000 --work /tmp/s1m     # the same at a million (hours for the cold build)
    python bench/scale.py 10000 --skip-cold           # reuse the work folder's build (output + cache)

The library: year folders (2000-...), each with events whose sizes follow a log-normal law (median
~40 photos, a few of several thousand, some of one or two), two levels deep like most libraries
(`2014/2014-05-03 Lisbon/IMG_0001.jpg`), 5% of the events nested one level more. Each photo is one
of 16 tiny JPEGs (64x48) with its own EXIF date spliced in (see corpora.py): per-photo overhead, not
pixels, is what is measured.

Every step is `albumen build -v` in a process of its own; the numbers are its wall time, its CPU
(user+sys, its workers included: os.wait4), the build process's own peak RSS (ru_maxrss of the
build itself is not separable from its workers', so the parent's VmHWM is read from /proc while it
runs), and the pages it rendered (its summary line). The machine's load average is printed beside.
Results go to stdout and, as JSON, to WORK/results.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import threading
import time
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402

BENCH = Path(__file__).resolve().parent
CONFIG = """url = "https://photos.example.org/"  # feeds and sitemap are written, as on a published site

[images]
sizes = [800]
quality = 85

[thumbnails]
height = 210
"""


def plan_library(n: int, seed: int = 24) -> list[tuple[str, int]]:
    """(folder, photo count) of every event, totalling n, in a year/event tree."""
    rng = random.Random(seed)
    sizes: list[int] = []
    while sum(sizes) < n:
        sizes.append(max(1, min(5000, round(math.exp(rng.gauss(math.log(40), 1.1))))))
    sizes[-1] -= sum(sizes) - n
    if sizes[-1] <= 0:
        sizes.pop()
        sizes[-1] += n - sum(sizes)
    per_year = max(1, len(sizes) // 20)
    folders = []
    for i, size in enumerate(sizes):
        year = 2000 + i // per_year
        event = f"{year}/{year}-{1 + i % 12:02d}-{1 + i % 28:02d} Event {i:05d}"
        if rng.random() < 0.05:
            event += f"/Part {1 + i % 3}"
        folders.append((event, size))
    return folders


def _write_event(args: tuple[str, str, int, int]) -> int:
    root, folder, start, count = args
    path = os.path.join(root, folder)
    os.makedirs(path, exist_ok=True)
    for k in range(count):
        i = start + k
        when = corpora.tiny_date(i).encode()
        data = corpora._BLOBS[i % len(corpora._BLOBS)].replace(corpora.PLACEHOLDER, when)
        with open(os.path.join(path, f"IMG_{k + 1:04d}.jpg"), "wb") as f:
            f.write(data)
    return count


def make_library(n: int, out: Path) -> Path:
    done = out.with_name(out.name + ".done")
    if done.is_file() and json.loads(done.read_text()).get("n") == n:
        return out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    t = time.perf_counter()
    chunks, start = [], 0
    for folder, size in plan_library(n):
        chunks.append((str(out), folder, start, size))
        start += size
    with Pool(os.cpu_count() or 1, initializer=corpora._init_worker) as pool:
        assert sum(pool.imap_unordered(_write_event, chunks, chunksize=4)) == n
    done.write_text(json.dumps({"n": n, "events": len(chunks), "seconds": round(time.perf_counter() - t, 1)}) + "\n")
    print(f"{out}: {n} photos in {len(chunks)} events, {time.perf_counter() - t:.1f} s", file=sys.stderr)
    return out


def _peak_rss(pid: int, stop: threading.Event, seen: list[int]) -> None:
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        seen[0] = max(seen[0], int(line.split()[1]))
        except OSError:
            return
        stop.wait(0.05)


def run_build(src: Path, out: Path, conf: Path, cache: Path, label: str) -> dict:
    env = {**os.environ, "ALBUMEN_CACHE_DIR": str(cache)}
    cmd = [sys.executable, "-m", "albumen", "build", str(src), "-o", str(out), "-c", str(conf), "-v"]
    load = os.getloadavg()[0]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    seen, stop = [0], threading.Event()
    sampler = threading.Thread(target=_peak_rss, args=(proc.pid, stop, seen), daemon=True)
    sampler.start()
    text = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    stop.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{label}: exit {proc.returncode}\n{text[-3000:]}")
    found = re.search(r"rendered (\d+|no) pages?", text)
    row = {
        "step": label, "wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "parent_peak_rss_mib": round(seen[0] / 1024), "pages_rendered": int(found.group(1)) if found and found.group(1) != "no" else 0,
        "nothing_changed": "nothing changed" in text, "load_avg_1min_before": round(load, 1),
        "summary": text.strip().splitlines()[-1],
    }
    print(f"{label:28s} wall {row['wall_s']:8.2f} s  cpu {row['cpu_s']:8.2f} s  parent peak RSS "
          f"{row['parent_peak_rss_mib']:5d} MiB  pages rendered {row['pages_rendered']:7d}  load {load:.1f}", flush=True)
    return row


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int)
    ap.add_argument("--work", type=Path, help="work folder (default /tmp/albumen-scale-N)")
    ap.add_argument("--library", type=Path, help="library folder (default bench/corpora/lib-N)")
    ap.add_argument("--skip-cold", action="store_true", help="reuse the work folder's last build")
    args = ap.parse_args(argv)
    work = args.work or Path(f"/tmp/albumen-scale-{args.n}")
    library = make_library(args.n, args.library or BENCH / "corpora" / f"lib-{args.n}")
    src, out, cache, conf = work / "photos", work / "out", work / "cache", work / "albumen.toml"
    rows = []
    if not args.skip_cold:
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        subprocess.run(["cp", "-al", str(library), str(src)], check=True)  # hard links: changes stay here
        conf.write_text(CONFIG)
    # Albumen's bytecode written, as an install does (PYTHONDONTWRITEBYTECODE would have every build
    # compile the modules changed since: ~0.06 s)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(__import__("albumen").__file__).parent)],
                   check=False)
    if not args.skip_cold:
        rows.append(run_build(src, out, conf, cache, "cold build"))
    rows.append(run_build(src, out, conf, cache, "no change"))
    events = plan_library(args.n)
    middle = src / events[len(events) // 2][0]
    photos = sorted(middle.glob("*.jpg"))
    print(f"changes in {middle.relative_to(src)} ({len(photos)} photos)", flush=True)
    # one photo added (a copy of another with its own date: new bytes)
    new = middle / "IMG_new.jpg"
    new.write_bytes(_redated(photos[0].read_bytes(), minutes=7))
    rows.append(run_build(src, out, conf, cache, "one photo added"))
    # one photo's bytes edited (re-dated: its EXIF changes, so do its outputs)
    edited = photos[len(photos) // 2]
    data = _redated(edited.read_bytes(), minutes=1)
    edited.unlink()  # (a hard link to the library: replaced, not written through)
    edited.write_bytes(data)
    rows.append(run_build(src, out, conf, cache, "one photo edited"))
    edited.with_suffix(".md").write_text("Title: A caption written later\n")
    rows.append(run_build(src, out, conf, cache, "one caption added (sidecar)"))
    photos[-1].unlink()
    rows.append(run_build(src, out, conf, cache, "one photo deleted"))
    rows.append(run_build(src, out, conf, cache, "no change"))
    result = {
        "n": args.n, "events": len(events), "changed_album": str(middle.relative_to(src)), "changed_album_photos": len(photos), "machine_cores": os.cpu_count(), "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": subprocess.run(["git", "-C", str(BENCH), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip(),
        "rows": rows,
    }
    (work / "results.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))


def _redated(data: bytes, minutes: int = 0) -> bytes:
    """The same tiny JPEG with another EXIF date (same length: the offsets stay valid)."""
    found = re.search(rb"\d{4}:\d\d:\d\d \d\d:\d\d:\d\d", data)
    when = dt.datetime.strptime(found.group().decode(), "%Y:%m:%d %H:%M:%S") + dt.timedelta(minutes=minutes)
    return data.replace(found.group(), when.strftime("%Y:%m:%d %H:%M:%S").encode())


if __name__ == "__main__":
    main()
