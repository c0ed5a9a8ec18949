#!/usr/bin/env python3
"""Password albums (issue 22): what encryption costs a build, and how long a visitor waits.

    python bench/password.py                # 60 photos, 3 builds of each kind, 5 unlocks
    python bench/password.py --count 60 --runs 3 --unlocks 5

1. The build: the same album of `count` camera-like JPEGs (2400x1600) built cold (empty output and
   cache) as a plain private album and as a password album, alternately, `runs` times each; wall
   time and CPU time (user+sys of the build's processes). The ratio is the cost of sealing.
2. The browser: the password album served from a local HTTP server (127.0.0.1, a secure context),
   opened in Debian's Chromium; from the click on "Open" to the key unwrapped (PBKDF2, 600,000
   iterations), to the album drawn (the manifest fetched and decrypted), and to the first thumbnail
   decrypted and shown. A fresh browser context each time (nothing cached, nothing remembered).

This is a benchmark, not a test: nothing here runs under pytest. Write the machine's load average
next to the numbers (it prints it).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import io
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PASSWORD = "correct horse battery staple"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def make_album(folder: Path, count: int) -> None:
    from PIL import Image, ImageDraw

    album = folder / "Family"
    album.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        img = Image.new("RGB", (2400, 1600), ((i * 37) % 256, (i * 91) % 256, (i * 53) % 256))
        draw = ImageDraw.Draw(img)
        for k in range(40):  # some detail, so that JPEGs have camera-like sizes
            draw.ellipse((k * 57 % 2300, k * 131 % 1500, k * 57 % 2300 + 90 + i, k * 131 % 1500 + 70 + k),
                         fill=((k * 13 + i) % 256, (k * 29) % 256, (k * 7 + i * 3) % 256))
        exif = Image.Exif()
        exif.get_ifd(0x8769)[0x9003] = f"2024:05:{1 + i % 28:02d} 12:00:{i % 60:02d}"
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=90, exif=exif)
        (album / f"IMG_{i:04d}.jpg").write_bytes(buf.getvalue())


def build(src: Path, out: Path, home: Path, cache: Path, password: bool) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of a cold build."""
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "ALBUMEN_HOME": str(home), "ALBUMEN_CACHE_DIR": str(cache)}
    env.pop("ALBUMEN_PASSWORD_FAMILY", None)
    (src / "Family" / "index.md").write_text("private: true\n")
    if password:
        env["ALBUMEN_PASSWORD_FAMILY"] = PASSWORD
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "albumen", "build", str(src), "-o", str(out)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def unlock_times(site: Path, runs: int) -> list[dict]:
    from playwright.sync_api import sync_playwright

    folder = next(site.glob("p/*/sealed.json")).parent.name

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/p/{folder}/"
    out = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            for _ in range(runs):
                context = browser.new_context(viewport={"width": 1280, "height": 800})
                page = context.new_page()
                page.goto(url)
                page.wait_for_selector("html[data-sealed-state=locked]")
                page.fill("#sealed-password", PASSWORD)
                page.click(".sealed-lock button")
                page.wait_for_function("window.sealedTimes && window.sealedTimes.first", timeout=60000)
                t = page.evaluate("window.sealedTimes")
                out.append({k: t[k] - t["submit"] for k in ("unwrapped", "open", "first")})
                context.close()
            browser.close()
    finally:
        server.shutdown()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--unlocks", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="albumen-bench-password-"))
    try:
        src = work / "photos"
        make_album(src, args.count)
        home = work / "home"
        times: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        for _ in range(args.runs):
            for password in (False, True):
                times[password].append(build(src, work / "site", home, work / "cache", password))
        print(f"load average before the browser runs: {os.getloadavg()}")
        unlocks = unlock_times(work / "site", args.unlocks)  # the last build is the password album's
        print(f"load average after: {os.getloadavg()}")
        for password, label in ((False, "private album"), (True, "password album")):
            walls = [w for w, _ in times[password]]
            cpus = [c for _, c in times[password]]
            print(f"build, {label}: wall median {statistics.median(walls):.2f} s {[round(w, 2) for w in walls]}, "
                  f"CPU median {statistics.median(cpus):.2f} s {[round(c, 2) for c in cpus]}")
        ratio_wall = statistics.median(w for w, _ in times[True]) / statistics.median(w for w, _ in times[False])
        ratio_cpu = statistics.median(c for _, c in times[True]) / statistics.median(c for _, c in times[False])
        print(f"password / private: wall x{ratio_wall:.3f}, CPU x{ratio_cpu:.3f}")
        for key in ("unwrapped", "open", "first"):
            values = [u[key] for u in unlocks]
            print(f"unlock -> {key}: median {statistics.median(values):.0f} ms {[round(v) for v in values]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
