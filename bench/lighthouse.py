"""Lighthouse (12.2.3, its default mobile preset: a mid-range phone on a slow 4G line, simulated) on the
home, album, stream and photo pages of the demo gallery, with Debian's Chromium.

    python bench/lighthouse.py                       # the demo, built with the default theme
    python bench/lighthouse.py --theme OLD_THEME     # the same with another theme folder (before/after)
    python bench/lighthouse.py --site _build         # an already built site (its first album, photo)
    python bench/lighthouse.py --sample              # a Sigal-like sample of real photos (below)

The sample: the 15 camera photos of ../shared/corpus/real in two albums (the first 8 by name in
Cameras, the others in Phones), Sigal-style sidecars with HTML links and emphasis (the gallery's,
each album's, one photo's) and images.formats = ["jpeg", "webp"]. --theme applies to it too.

Installs Lighthouse once with `npm i -E lighthouse@12.2.3` under the user cache folder. The site is
served by a small local server that compresses text with gzip, as any real host does. Each page is
measured --runs times (default 3); the median of each number is printed as a Markdown table.
Measure on a quiet machine: the load average is printed with the numbers.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

LIGHTHOUSE = "12.2.3"
CHROME = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
FLAGS = "--headless=new --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync --no-first-run"
TEXT = (".html", ".css", ".js", ".json", ".svg", ".xml", ".txt")


def install() -> Path:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "albumen-bench" / f"lighthouse-{LIGHTHOUSE}"
    binary = cache / "node_modules" / ".bin" / "lighthouse"
    if not binary.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "i", "-E", "--prefix", str(cache), "--no-audit", "--no-fund", "--loglevel=error",
                        f"lighthouse@{LIGHTHOUSE}"], check=True)
    return binary


class Handler(http.server.SimpleHTTPRequestHandler):
    """Static files, text gzipped when the browser accepts it (as a real host would serve them)."""

    def log_message(self, *args):
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not self.path.split("?")[0].endswith("/"):
                return super().send_head()  # its redirect to the folder's address
            path = path / "index.html"
        if not (path.suffix in TEXT and path.is_file() and "gzip" in self.headers.get("Accept-Encoding", "")):
            return super().send_head()
        body = gzip.compress(path.read_bytes(), 6)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        return _Body(body)


class _Body:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read(self, *_):
        data, self.data = self.data, b""
        return data

    def close(self):
        pass


def serve(site: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def build_demo(folder: Path, theme: Path | None) -> Path:
    albumen = [sys.executable, "-m", "albumen"]
    subprocess.run([*albumen, "demo", str(folder / "photos")], check=True, capture_output=True)
    config = folder / "albumen.toml"
    config.write_text(f"[theme]\npath = {json.dumps(str(theme))}\n" if theme else "")
    subprocess.run([*albumen, "build", str(folder / "photos"), "-o", str(folder / "site"), "-c", str(config), "-q"],
                   check=True)
    return folder / "site"


REAL = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
SIDECARS = {
    "index.md": "Title: A Sigal-like sample\n\nReal camera photos, sidecars with <em>HTML</em> as Sigal galleries have them.\n",
    "Cameras/index.md": 'Title: Cameras\n\nPhotos from <a href="https://www.exif.org/">exif.org</a> and <em>other</em> <strong>cameras</strong>.\n',
    "Phones/index.md": 'Title: Phones\n\nTaken with phones; see <a href="https://example.org/phones">the list</a>.\n',
    "Cameras/Pentax_K10D.md": 'Title: Pentax\n\nA <em>Pentax</em> K10D, <a href="https://en.wikipedia.org/wiki/Pentax_K10D">on Wikipedia</a>.\n',
}


def build_sample(folder: Path, theme: Path | None) -> Path:
    photos = sorted(p for p in REAL.iterdir() if p.suffix.lower() in (".jpg", ".jpeg"))
    if not photos:
        sys.exit(f"no photos in {REAL} (the shared corpus beside the project)")
    for n, photo in enumerate(photos):
        album = folder / "photos" / ("Cameras" if n < 8 else "Phones")
        album.mkdir(parents=True, exist_ok=True)
        shutil.copy(photo, album / photo.name)
    for name, text in SIDECARS.items():
        (folder / "photos" / name).write_text(text)
    config = folder / "albumen.toml"
    config.write_text('[images]\nformats = ["jpeg", "webp"]\n' + (f"[theme]\npath = {json.dumps(str(theme))}\n" if theme else ""))
    subprocess.run([sys.executable, "-m", "albumen", "build", str(folder / "photos"), "-o", str(folder / "site"), "-c", str(config),
                    "-q"], check=True)
    return folder / "site"


def pages_of(site: Path) -> dict[str, str]:
    from bs4 import BeautifulSoup

    def read(rel: str) -> BeautifulSoup:
        return BeautifulSoup((site / rel / "index.html").read_text(), "html.parser")

    album = read("").select_one(".card a")["href"]
    photo = album + read(album).select_one(".grid a")["href"]
    return {"home": "", "album": album, "stream": "stream/", "photo": photo}


def measure(binary: Path, url: str, out: Path) -> dict:
    env = {**os.environ, "CHROME_PATH": CHROME}
    subprocess.run([str(binary), url, "--quiet", "--output=json", f"--output-path={out}", f"--chrome-flags={FLAGS}",
                    "--only-categories=performance,accessibility,best-practices,seo"], check=True, env=env)
    report = json.loads(out.read_text())
    audits, cats = report["audits"], report["categories"]
    return {
        "performance": round(cats["performance"]["score"] * 100), "accessibility": round(cats["accessibility"]["score"] * 100),
        "best-practices": round(cats["best-practices"]["score"] * 100), "seo": round(cats["seo"]["score"] * 100),
        "LCP s": audits["largest-contentful-paint"]["numericValue"] / 1000, "FCP s": audits["first-contentful-paint"]["numericValue"] / 1000,
        "CLS": audits["cumulative-layout-shift"]["numericValue"], "TBT ms": audits["total-blocking-time"]["numericValue"],
        "KiB": audits["total-byte-weight"]["numericValue"] / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--site", type=Path, help="a built site (default: build the demo)")
    parser.add_argument("--theme", type=Path, help="a theme folder to build the demo (or the sample) with")
    parser.add_argument("--sample", action="store_true", help="build the Sigal-like sample of real photos instead of the demo")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the medians here")
    args = parser.parse_args()
    if not shutil.which(CHROME) and not Path(CHROME).exists():
        sys.exit(f"no Chromium at {CHROME} (apt-get install chromium, or set CHROME_PATH)")
    binary = install()
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site or (build_sample if args.sample else build_demo)(Path(tmp), args.theme)
        server, url = serve(site)
        rows = {}
        try:
            for name, path in pages_of(site).items():
                runs = [measure(binary, url + path, Path(tmp) / f"{name}-{n}.json") for n in range(args.runs)]
                rows[name] = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        finally:
            server.shutdown()
    keys = list(next(iter(rows.values())))
    print(f"load average {os.getloadavg()[0]:.2f}; Lighthouse {LIGHTHOUSE}, mobile preset, median of {args.runs}")
    print("| page | " + " | ".join(keys) + " |")
    print("| --- " * (len(keys) + 1) + "|")
    for name, row in rows.items():
        cells = [f"{v:.0f}" if k in ("performance", "accessibility", "best-practices", "seo", "TBT ms", "KiB")
                 else f"{v:.3f}" if k == "CLS" else f"{v:.2f}" for k, v in row.items()]
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
