#!/usr/bin/env python3
"""Hosting numbers (issue 23): `albumen watch` latency and `albumen deploy` request counts.

    python bench/host.py CORPUS [--runs 20] [--work DIR]

CORPUS: a photo folder, e.g. the 100-photo corpus of the shared generator:
    python ../shared/bench/make_corpus.py /tmp/host-bench/c12-100 --count 100 --size 12mp --seed 1

1. Watch latency: `albumen watch CORPUS -o OUT` runs in a process of its own (default settings:
   600 ms debounce, a file must stay unchanged 1 s before it is read); --runs times, a new photo
   (a corpus photo with other pixels, made beforehand) is moved into an album of the corpus in one
   rename, and the time until its page is on disk is taken. Median, min and max are printed.
2. Deploy requests: the built site is deployed to a real S3 server on loopback (Ceph RGW started
   with ../shared/s3/start_rgw.sh): a first deploy, one with nothing changed, and one after one
   photo changed and the site was rebuilt; the HTTP requests each made (boto3's, retries
   included) and what it uploaded and deleted.

The photos added are removed from the corpus at the end. Writes results as JSON to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"


def _jpegs(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.rglob("*.jpg") if not p.name.startswith("."))


def _variant(photo: Path, target: Path, n: int) -> None:
    """Another photo: the corpus photo with a band of its pixels changed (new content, new names)."""
    from PIL import Image

    with Image.open(photo) as img:
        exif = img.info.get("exif", b"")
        img = img.convert("RGB")
        band = Image.new("RGB", (img.width, max(8, img.height // 50)), (n * 12 % 256, 80, 200))
        img.paste(band, (0, (n * 97) % (img.height - band.height)))
        img.save(target, "JPEG", quality=90, exif=exif)


def _page_of(out: Path, corpus: Path, photo: Path) -> Path:
    from albumen.process.names import slugify

    rel = photo.relative_to(corpus)
    parts = [slugify(p) for p in rel.parent.parts] + [slugify(rel.stem)]
    return out.joinpath(*parts, "index.html")


def watch_latency(corpus: Path, work: Path, runs: int) -> dict:
    out = work / "site"  # built by the deploy part first: the watch starts from a built site
    photos = _jpegs(corpus)
    album = photos[0].parent
    staging = work / "staging"
    staging.mkdir(exist_ok=True)
    made = []
    for i in range(runs):
        target = staging / f"ARRIVAL_{i:03d}.jpg"
        _variant(photos[i % len(photos)], target, i)
        made.append(target)
    log_path = work / "watch.log"
    log = log_path.open("w")
    proc = subprocess.Popen([sys.executable, "-m", "albumen", "watch", str(corpus), "-o", str(out)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    latencies, arrived = [], []
    try:
        deadline = time.time() + 1800
        while "built in " not in log_path.read_text() and time.time() < deadline:
            time.sleep(0.2)
        if "built in " not in log_path.read_text():
            raise SystemExit(f"the first build did not finish:\n{log_path.read_text()[-2000:]}")
        time.sleep(2)
        for target in made:
            lines = log_path.read_text().count("\n")
            dest = album / target.name
            page = _page_of(out, corpus, dest)
            start = time.perf_counter()
            os.rename(target, dest)  # the photo arrives, whole, at once
            arrived.append(dest)
            while not page.is_file():
                time.sleep(0.005)
            latencies.append(time.perf_counter() - start)
            # the rebuild's line is written once it ends: wait for it, so the next photo finds it idle
            while log_path.read_text().count("\n") == lines:
                time.sleep(0.05)
            time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        log.close()
        for dest in arrived:
            dest.unlink(missing_ok=True)
    return {"runs": len(latencies), "median_s": round(statistics.median(latencies), 3),
            "min_s": round(min(latencies), 3), "max_s": round(max(latencies), 3),
            "all_s": [round(x, 3) for x in latencies], "album": str(album.relative_to(corpus)),
            "log_tail": log_path.read_text().splitlines()[-3:]}


def _start_rgw(folder: Path) -> dict:
    script = SHARED / "s3" / "start_rgw.sh"
    env = dict(os.environ, PORT="7491", AK="BENCHKEY", SK="bench-secret", MEMSTORE_BYTES=str(3 << 30))
    done = subprocess.run(["bash", str(script), str(folder)], env=env, capture_output=True, text=True, timeout=180)
    if "RGW up" not in done.stdout:
        raise SystemExit(f"the S3 server did not start: {done.stderr[-1000:]}")
    return {"AWS_ENDPOINT_URL": "http://127.0.0.1:7491", "AWS_ACCESS_KEY_ID": "BENCHKEY",
            "AWS_SECRET_ACCESS_KEY": "bench-secret", "AWS_DEFAULT_REGION": "us-east-1"}


def _stop_rgw(folder: Path) -> None:
    for pid_file in (folder / "run").glob("*.pid"):
        try:
            os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            pass


def _build(corpus: Path, out: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "albumen", "build", str(corpus), "-o", str(out), "-q"], check=True)
    return time.perf_counter() - start


def deploy_requests(corpus: Path, work: Path) -> dict:
    out = work / "site"
    result = {"cold_build_s": round(_build(corpus, out), 1)}
    rgw = work / "rgw"
    os.environ.update(_start_rgw(rgw))
    changed = None
    try:
        import boto3

        from albumen.host.deploy import deploy

        boto3.client("s3").create_bucket(Bucket="bench-photos")
        dest = "s3://bench-photos/site"

        def run(name: str) -> None:
            report = deploy(out, dest)
            result[name] = {"requests": report.requests, "uploaded": report.uploaded, "deleted": report.deleted,
                            "unchanged": report.unchanged, "uploaded_bytes": report.uploaded_bytes}

        run("first")
        result["files"] = sum(1 for p in out.rglob("*") if p.is_file())
        run("no_change")
        changed = _jpegs(corpus)[1]
        backup = work / "backup.jpg"
        shutil.copy2(changed, backup)
        _variant(backup, changed, 99)
        result["rebuild_s"] = round(_build(corpus, out), 1)
        run("one_photo_changed")
    finally:
        if changed is not None:
            shutil.copy2(work / "backup.jpg", changed)
        _stop_rgw(rgw)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--work", type=Path, help="scratch folder (default: a new temporary one)")
    ap.add_argument("--skip-watch", action="store_true")
    ap.add_argument("--skip-deploy", action="store_true")
    a = ap.parse_args()
    work = a.work or Path(tempfile.mkdtemp(prefix="albumen-host-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("ALBUMEN_CACHE_DIR", str(work / "cache"))
    os.environ.setdefault("ALBUMEN_HOME", str(work / "home"))
    corpus = a.corpus.resolve()
    results = {"corpus": str(corpus), "photos": len(_jpegs(corpus)), "cpus": os.cpu_count(),
               "load_before": [round(x, 2) for x in os.getloadavg()]}
    if not a.skip_deploy:
        results["deploy"] = deploy_requests(corpus, work)
    if not a.skip_watch:
        results["watch"] = watch_latency(corpus, work, a.runs)
    results["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
