#!/usr/bin/env python3
"""Benchmark corpora: the shared 24 MP generator and a fast generator of trees of tiny JPEGs.

Usage (from the repo root, with the Albumen venv: it needs numpy and Pillow):

    python bench/corpora.py c24                 # bench/corpora/c24-100: 100 x 24 MP, seed 1
    python bench/corpora.py tiny 10000          # bench/corpora/tiny-10000
    python bench/corpora.py all                 # c24 + tiny 10000 + tiny 100000
    python bench/corpora.py c24 --reuse /tmp/bc/c24   # hard-link an identical corpus made earlier

Every corpus is written next to a `NAME.done` file (outside the photo tree) that records how it was
made; a corpus with a matching .done file is left as it is, so rerunning is cheap.

The 24 MP corpus is exactly
    python ../shared/bench/make_corpus.py bench/corpora/c24-100 --count 100 --size 24mp --seed 1 --jobs 2
run from the repo root (the script lives in shared/, beside the repo).

The tiny corpora are N camera-like JPEGs of 64x48 pixels, each with its own EXIF DateTimeOriginal,
in nested folders of 100 files (`aNNN/bNNNNN/IMG_NNNNNNN.jpg`, 25 leaf folders per top folder). To
write 100,000 files in seconds, 16 small pictures are encoded once with a placeholder date, and each
file is one of them with the placeholder bytes replaced by its own date (same length, so the EXIF
offsets stay valid): every file is a valid, distinct JPEG.
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import os
import shutil
import subprocess
import sys
import time
from multiprocessing import Pool
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
CORPORA = BENCH / "corpora"
MAKE_CORPUS = Path("..") / "shared" / "bench" / "make_corpus.py"  # relative to the repo root
C24_ARGS = ["--count", "100", "--size", "24mp", "--seed", "1", "--jobs", "2"]
C24_EXPECT = {
    "count": 100,
    "size": "24mp",
    "seed": 1,
    "quality": 90,
    "subsampling": "4:2:0",
    "detail": 2.2,
    "per_album": 12,
    "start": 0,
}
DEFAULT_REUSE = Path("/tmp/bc/c24")

PER_FOLDER = 100
FOLDERS_PER_TOP = 25
PLACEHOLDER = b"2000:01:01 00:00:00"
TINY_VERSION = 1


def _done(path: Path) -> Path:
    return path.with_name(path.name + ".done")


def _read_done(path: Path) -> dict | None:
    try:
        return json.loads(_done(path).read_text())
    except (OSError, ValueError):
        return None


def _write_done(path: Path, info: dict) -> None:
    _done(path).write_text(json.dumps(info, indent=1) + "\n")


# --------------------------------------------------------------------------- 24 MP corpus


def _manifest_ok(root: Path) -> bool:
    """True when root holds a complete make_corpus.py corpus made with the seed-1 100 x 24 MP arguments."""
    try:
        man = json.loads((root / "corpus_manifest_0.json").read_text())
    except (OSError, ValueError):
        return False
    args = man.get("args", {})
    if any(args.get(k) != v for k, v in C24_EXPECT.items()):
        return False
    files = man.get("files") or []
    if len(files) != 100:
        return False
    for f in files:
        p = root / f["path"]
        try:
            if p.stat().st_size != f["bytes"]:
                return False
        except OSError:
            return False
    return True


def make_c24(reuse: Path | None = DEFAULT_REUSE, out: Path | None = None) -> Path:
    out = out or CORPORA / "c24-100"
    done = _read_done(out)
    if done and done.get("kind") == "c24" and _manifest_ok(out):
        print(f"{out.relative_to(REPO)}: present ({done.get('how')})", file=sys.stderr)
        return out
    if out.exists():
        shutil.rmtree(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if reuse is not None and reuse.exists() and _manifest_ok(reuse):
        # Same arguments give byte-identical files (make_corpus.py is deterministic), so an earlier run
        # can be hard-linked (or copied across file systems) instead of spending ~75 s on 2 cores.
        try:
            subprocess.run(["cp", "-al", str(reuse), str(out)], check=True)
            how = f"hard-linked from {reuse} (same make_corpus.py arguments, verified by its manifest)"
        except subprocess.CalledProcessError:
            shutil.rmtree(out, ignore_errors=True)
            shutil.copytree(reuse, out)
            how = f"copied from {reuse} (same make_corpus.py arguments, verified by its manifest)"
    else:
        script = REPO / MAKE_CORPUS
        if not script.exists():
            sys.exit(f"error: {MAKE_CORPUS} not found relative to {REPO} (shared/ must sit beside the repo)")
        cmd = [sys.executable, str(MAKE_CORPUS), str(out.relative_to(REPO)), *C24_ARGS]
        print("+ " + " ".join(cmd), file=sys.stderr)
        t = time.perf_counter()
        subprocess.run(cmd, check=True, cwd=REPO)
        how = (
            f"generated: {' '.join(['python', str(MAKE_CORPUS), str(out.relative_to(REPO)), *C24_ARGS])} "
            f"in {time.perf_counter() - t:.0f} s"
        )
    if not _manifest_ok(out):
        sys.exit(f"error: {out} does not hold the expected 100 x 24 MP corpus")
    _write_done(out, {"kind": "c24", "how": how, "args": C24_EXPECT})
    print(f"{out.relative_to(REPO)}: {how}", file=sys.stderr)
    return out


def subset_corpus(src: Path, n: int, out: Path) -> Path:
    """Hard-link the first n photos (sorted paths) of src into out: the --quick stand-in for the 24 MP corpus."""
    done = _read_done(out)
    if done and done.get("kind") == "subset" and done.get("n") == n and done.get("src") == str(src):
        return out
    if out.exists():
        shutil.rmtree(out)
    photos = sorted(p for p in src.rglob("*.jpg"))[:n]
    for p in photos:
        dest = out / p.relative_to(src)
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(p, dest)
        except OSError:
            shutil.copy2(p, dest)
    _write_done(out, {"kind": "subset", "n": n, "src": str(src)})
    return out


# --------------------------------------------------------------------------- tiny corpus


def _tiny_blobs(count: int = 16) -> list[bytes]:
    """`count` distinct 64x48 JPEGs whose EXIF dates are PLACEHOLDER (3 times: DateTime, Original, Digitized)."""
    import numpy as np
    from PIL import Image

    blobs = []
    for k in range(count):
        rng = np.random.default_rng([7, k])
        y, x = np.mgrid[0:48, 0:64].astype(np.float32)
        c0, c1 = rng.uniform(20, 235, 3), rng.uniform(20, 235, 3)
        t = (y / 47.0)[..., None]
        img = c0 * (1 - t) + c1 * t + rng.normal(0, 12, (48, 64, 3))
        img += 40 * np.sin(x / rng.uniform(3, 9))[..., None]
        im = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8), "RGB")
        ex = Image.Exif()
        ex[0x010F] = "BenchCam"
        ex[0x0110] = f"Tiny {k % 4}"
        ex[0x0112] = 1
        ex[0x0132] = PLACEHOLDER.decode()
        sub = ex.get_ifd(0x8769)
        sub[0x9003] = PLACEHOLDER.decode()
        sub[0x9004] = PLACEHOLDER.decode()
        buf = io.BytesIO()
        im.save(buf, "JPEG", quality=85, exif=ex.tobytes())
        blob = buf.getvalue()
        if blob.count(PLACEHOLDER) != 3:
            raise RuntimeError(
                f"tiny blob {k}: expected the placeholder date 3 times, found {blob.count(PLACEHOLDER)}"
            )
        blobs.append(blob)
    return blobs


_BLOBS: list[bytes] = []
_BASE = dt.datetime(2012, 1, 1, 8, 0, 0)
_SPAN = int((dt.datetime(2025, 12, 31) - _BASE).total_seconds()) // 60  # minutes: no date in the future


def tiny_date(i: int) -> str:
    """Photo i's EXIF date: 37 minutes after photo i-1 (a few photos a day, every date distinct), from
    2012 to the end of 2025, then from 2012 again a second later, and so on. (Before, a million photos
    went on to 2082: 787,703 of them had a date in the future, which Albumen ignores with a warning.)"""
    minutes = 37 * i
    when = _BASE + dt.timedelta(minutes=minutes % _SPAN, seconds=minutes // _SPAN)
    return when.strftime("%Y:%m:%d %H:%M:%S")


def _init_worker() -> None:
    global _BLOBS
    _BLOBS = _tiny_blobs()


def _tiny_path(root: str, i: int) -> str:
    folder = i // PER_FOLDER
    return os.path.join(root, f"a{folder // FOLDERS_PER_TOP:03d}", f"b{folder:05d}", f"IMG_{i:07d}.jpg")


def _write_folder(args: tuple[str, int, int]) -> int:
    root, start, stop = args
    os.makedirs(os.path.dirname(_tiny_path(root, start)), exist_ok=True)
    for i in range(start, stop):
        when = tiny_date(i).encode()
        data = _BLOBS[i % len(_BLOBS)].replace(PLACEHOLDER, when)
        with open(_tiny_path(root, i), "wb") as f:
            f.write(data)
    return stop - start


def make_tiny(n: int, out: Path | None = None, jobs: int = 0) -> Path:
    out = out or CORPORA / f"tiny-{n}"
    done = _read_done(out)
    if done and done.get("kind") == "tiny" and done.get("n") == n and done.get("version") == TINY_VERSION:
        print(f"{out.relative_to(REPO)}: present", file=sys.stderr)
        return out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    t = time.perf_counter()
    chunks = [(str(out), s, min(n, s + PER_FOLDER)) for s in range(0, n, PER_FOLDER)]
    with Pool(jobs or os.cpu_count() or 1, initializer=_init_worker) as pool:
        written = sum(pool.imap_unordered(_write_folder, chunks, chunksize=8))
    assert written == n
    _check_tiny(out, n)
    secs = time.perf_counter() - t
    _write_done(
        out,
        {
            "kind": "tiny",
            "n": n,
            "version": TINY_VERSION,
            "seconds": round(secs, 1),
            "how": f"python bench/corpora.py tiny {n}",
        },
    )
    print(f"{out.relative_to(REPO)}: {n} tiny JPEGs in {len(chunks)} folders, {secs:.1f} s", file=sys.stderr)
    return out


def _check_tiny(root: Path, n: int) -> None:
    from PIL import Image

    for i in sorted({0, 1, n // 2, n - 1}):
        with Image.open(_tiny_path(str(root), i)) as im:
            im.load()
            when = im.getexif().get_ifd(0x8769).get(0x9003)
            expect = tiny_date(i)
            if im.size != (64, 48) or when != expect:
                raise RuntimeError(f"tiny corpus check failed for #{i}: size {im.size}, date {when!r}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["c24", "tiny", "all"])
    ap.add_argument("n", nargs="*", type=int, help="sizes of tiny corpora (default 10000 100000)")
    ap.add_argument(
        "--reuse",
        type=Path,
        default=DEFAULT_REUSE,
        help="an existing seed-1 100 x 24 MP corpus to hard-link instead of generating "
        f"(used only when its manifest matches; default {DEFAULT_REUSE})",
    )
    ap.add_argument("--no-reuse", action="store_true", help="always run make_corpus.py")
    a = ap.parse_args(argv)
    if a.what in ("c24", "all"):
        make_c24(None if a.no_reuse else a.reuse)
    if a.what in ("tiny", "all"):
        for n in a.n or [10_000, 100_000]:
            make_tiny(n)


if __name__ == "__main__":
    main()
