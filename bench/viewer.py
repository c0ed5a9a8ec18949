#!/usr/bin/env python3
"""The viewer on a phone: a 5,000-photo album in Debian's Chromium with 4x CPU throttling.

    python bench/viewer.py            # builds bench/results/viewer/ and prints a table
    python bench/viewer.py --count 5000 --runs 5

What it measures, per page (first page of the album, a middle page, a photo page, the stream):
HTML bytes (raw and gzipped), DOMContentLoaded and load times, Largest Contentful Paint and the
cumulative layout shift, with a 390x844 phone viewport at device scale 3 and the CPU slowed 4x
(Chrome DevTools' "low-end mobile" setting), served from a local HTTP server (no network
throttling: the HTML and image sizes are reported instead). It also prints the gzipped size of the
theme's JavaScript and CSS. This is a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import io
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
OUT = BENCH / "results" / "viewer"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def make_album(folder: Path, count: int) -> None:
    """`count` small camera-like JPEGs (600x400, distinct colours, EXIF dates) in one album."""
    from PIL import Image

    marker = folder / ".count"
    if marker.exists() and marker.read_text() == str(count):
        return
    album = folder / "Big album"
    album.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        img = Image.new("RGB", (600, 400), ((i * 37) % 256, (i * 91) % 256, (i * 53) % 256))
        exif = Image.Exif()
        exif.get_ifd(0x8769)[0x9003] = (
            f"2024:{1 + i // 500 % 12:02d}:{1 + i // 20 % 28:02d} 12:{i // 60 % 60:02d}:{i % 60:02d}"
        )
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=70, exif=exif.tobytes())
        (album / f"IMG_{i:05d}.jpg").write_bytes(buf.getvalue())
    marker.write_text(str(count))


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def measure(page, cdp, url: str) -> dict:
    page.goto("about:blank")
    page.add_init_script(
        "window.__cls = 0; window.__lcp = 0;"
        "new PerformanceObserver(l => { for (const e of l.getEntries()) if (!e.hadRecentInput) window.__cls += e.value; })"
        ".observe({type: 'layout-shift', buffered: true});"
        "new PerformanceObserver(l => { for (const e of l.getEntries()) window.__lcp = e.startTime; })"
        ".observe({type: 'largest-contentful-paint', buffered: true});"
    )
    cdp.send("Network.clearBrowserCache")
    page.goto(url, wait_until="load")
    page.wait_for_timeout(500)
    return page.evaluate(
        "() => { const n = performance.getEntriesByType('navigation')[0];"
        " return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd, lcp: window.__lcp, cls: window.__cls,"
        " images: document.images.length}; }"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    source = OUT / "photos"
    site = OUT / "site"
    t0 = time.perf_counter()
    make_album(source, args.count)
    env = dict(os.environ, ALBUMEN_CACHE_DIR=str(OUT / "cache"))
    subprocess.run(
        [sys.executable, "-m", "albumen", "build", str(source), "-o", str(site), "-q"], check=True, env=env
    )
    print(f"corpus and build: {time.perf_counter() - t0:.0f} s")
    handler = functools.partial(Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    pages = {
        "album, page 1": "big-album/",
        f"album, page {args.count // 400 + 1}": f"big-album/page/{args.count // 400 + 1}/",
        "photo page": "big-album/img-02500/" if args.count > 2500 else "big-album/img-00001/",
        "stream, page 1": "stream/",
    }
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        context = browser.new_context(
            viewport={"width": 390, "height": 844}, device_scale_factor=3, is_mobile=True, has_touch=True
        )
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
        for label, path in pages.items():
            html = (site / path / "index.html").read_bytes()
            runs = [measure(page, cdp, base + path) for _ in range(args.runs)]
            rows.append(
                {
                    "page": label,
                    "html_kb": len(html) / 1024,
                    "html_gz_kb": len(gzip.compress(html, 9)) / 1024,
                    "dcl_ms": statistics.median(r["dcl"] for r in runs),
                    "load_ms": statistics.median(r["load"] for r in runs),
                    "lcp_ms": statistics.median(r["lcp"] for r in runs),
                    "cls": max(r["cls"] for r in runs),
                    "images": runs[0]["images"],
                }
            )
        browser.close()
    server.shutdown()
    static = site / "static"
    js_css = sum(len(gzip.compress((static / n).read_bytes(), 9)) for n in ("albumen.js", "albumen.css"))
    print(
        f"\n{args.count} photos in one album; Chromium {browser.version if hasattr(browser, 'version') else ''}, "
        f"390x844 @3x, CPU throttled 4x, median of {args.runs} cold loads from a local server\n"
    )
    print(
        "| page | HTML KiB | HTML gzip KiB | <img> | DOMContentLoaded ms | load ms | LCP ms | CLS (worst) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['page']} | {r['html_kb']:.0f} | {r['html_gz_kb']:.1f} | {r['images']} | {r['dcl_ms']:.0f} | "
            f"{r['load_ms']:.0f} | {r['lcp_ms']:.0f} | {r['cls']:.3f} |"
        )
    print(f"\ntheme JavaScript + CSS, gzipped: {js_css / 1024:.1f} KiB")
    (OUT / "viewer.json").write_text(json.dumps({"rows": rows, "js_css_gzip": js_css}, indent=2))


if __name__ == "__main__":
    main()
