#!/usr/bin/env python3
"""Albumen's image jobs on Dask (docs/CLUSTER.md) against the local pool, on one machine.

    python bench/cluster.py CORPUS [--count N] [--rounds R]

Cold builds (empty output, empty cache) of the first N photos of CORPUS (hard-linked into a folder
of their own), with Albumen's default config, one after the other in each round:

  pool        albumen build -j 2                       (the local pool: the default)
  local2      albumen build --scheduler local:2        (a LocalCluster started and closed by the build)
  cluster1    albumen build --scheduler tcp://...      (a `dask scheduler` and 1 `dask worker`
  cluster2                                              --nthreads 1, started before; then 2 workers)

Wall time, and CPU time (user + sys) of the build and of every process that worked for it: the
pool's workers and a LocalCluster's (descendants the build waited for), the external workers'
(measured with psutil around each build). The load average before and after each run is kept.
Every build's output must be the same, file for file, as the pool's (checked). Prints a Markdown
table for bench/README.md and writes bench/results/cluster.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ALBUMEN = [sys.executable, "-m", "albumen"]
DASK = [sys.executable, "-m", "dask"]


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}


def photos(corpus: Path, count: int, into: Path) -> int:
    found = sorted(p for p in corpus.rglob("*.jpg"))[:count]
    for path in found:
        target = into / path.relative_to(corpus)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(path, target)
    return len(found)


def tree_cpu(pids: list[int]) -> float:
    """user + sys seconds of these processes and their children now alive."""
    total = 0.0
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            for p in [proc, *proc.children(recursive=True)]:
                t = p.cpu_times()
                total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


class Cluster:
    def __init__(self, folder: Path) -> None:
        self.folder, self.workers = folder, []
        file = folder / "scheduler.json"
        self.scheduler = self._start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                     "--scheduler-file", str(file))
        while not file.exists() or not file.read_text().strip():
            time.sleep(0.1)
        time.sleep(0.2)
        self.address = json.loads(file.read_text())["address"]

    def _start(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen([*DASK, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)

    def add_worker(self) -> None:
        from distributed import Client

        name = f"w{len(self.workers) + 1}"
        self.workers.append(self._start("worker", self.address, "--nthreads", "1", "--no-dashboard", "--name", name,
                                        "--local-directory", str(self.folder / name)))
        with Client(self.address, set_as_default=False) as client:
            client.wait_for_workers(len(self.workers), timeout=120)

    def stop(self) -> None:
        for proc in [*self.workers, self.scheduler]:
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in [*self.workers, self.scheduler]:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def run(src: Path, work: Path, name: str, extra: list[str], external: list[int]) -> dict:
    out, cache = work / f"out-{name}", work / f"cache-{name}"
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "ALBUMEN_CACHE_DIR": str(cache)}
    load_before = os.getloadavg()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    outside = tree_cpu(external)
    started = time.perf_counter()
    done = subprocess.run([*ALBUMEN, "build", str(src), "-o", str(out), "-q", *extra], env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - children.ru_utime) + (after.ru_stime - children.ru_stime) + tree_cpu(external) - outside
    if done.returncode != 0:
        raise SystemExit(f"{name}: exit {done.returncode}\n{done.stderr}")
    return {"scenario": name, "wall": round(wall, 2), "cpu": round(cpu, 2), "load_before": load_before,
            "load_after": os.getloadavg(), "summary": done.stdout.strip().splitlines()[-1], "out": str(out)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="albumen-bench-cluster-"))
    src = work / "photos"
    count = photos(args.corpus, args.count, src)
    cluster = Cluster(work)
    results: list[dict] = []
    try:
        for round_ in range(args.rounds):
            for workers in (1, 2):
                while len(cluster.workers) < workers:
                    cluster.add_worker()
                pids = [w.pid for w in cluster.workers]
                if workers == 1:
                    results.append(run(src, work, "pool", ["-j", "2"], []))
                    results.append(run(src, work, "local2", ["--scheduler", "local:2"], []))
                results.append(run(src, work, f"cluster{workers}", ["--scheduler", cluster.address], pids))
                print(json.dumps(results[-1]), flush=True)
            if round_ + 1 < args.rounds:  # the next round starts with one worker again
                for proc in cluster.workers:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait()
                cluster.workers.clear()
                time.sleep(3)
        reference = tree(work / "out-pool")
        for name in ("local2", "cluster1", "cluster2"):
            assert tree(work / f"out-{name}") == reference, f"{name}: not the pool's files"
    finally:
        cluster.stop()
    best = {}
    for r in results:
        if r["scenario"] not in best or r["wall"] < best[r["scenario"]]["wall"]:
            best[r["scenario"]] = r
    pool = best["pool"]
    print(f"\n{count} photos, {args.rounds} rounds, best wall time of each (all runs in bench/results/cluster.json)\n")
    print("| executor | wall s | photos/s | CPU s (all processes) | wall vs pool | CPU vs pool | load avg before → after |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in ("pool", "local2", "cluster1", "cluster2"):
        r = best[name]
        print(f"| {name} | {r['wall']:.1f} | {count / r['wall']:.2f} | {r['cpu']:.1f} | {r['wall'] / pool['wall']:.2f}x "
              f"| {r['cpu'] / pool['cpu']:.2f}x | {r['load_before'][0]:.1f} → {r['load_after'][0]:.1f} |")
    Path("bench/results").mkdir(parents=True, exist_ok=True)
    Path("bench/results/cluster.json").write_text(json.dumps({"count": count, "runs": results}, indent=1))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
