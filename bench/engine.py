"""Which library does which step: per-photo CPU time of each candidate, on the same photos.

    python bench/engine.py [--count 30] [--corpus bench/corpora/c24-100]

Steps measured, one core, CPU time (user + sys) per 24 MP photo, photos read from the page cache:
decode at the scale a 800 px output needs (1/4), Lanczos resize 1500 -> 800 px, JPEG encode of the
800 px image (quality 85, optimized, progressive), and the content hash of the whole file. Candidates
alternate photo by photo so that machine noise hits both alike. Prints a Markdown table; the choice
Albumen made is the faster column (see "Engine choice" in bench/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import resource
import sys
from pathlib import Path

os.environ.setdefault("VIPS_CONCURRENCY", "1")


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=30)
    parser.add_argument("--corpus", default=str(Path(__file__).parent / "corpora" / "c24-100"))
    args = parser.parse_args()
    files = sorted(str(p) for p in Path(args.corpus).rglob("*.jpg"))[: args.count]
    if not files:
        print(f"no JPEGs under {args.corpus}: run bash bench/make_corpora.sh first", file=sys.stderr)
        return 2
    import pyvips
    import xxhash
    from PIL import Image

    from albumen.pool import _keep_freed_memory

    _keep_freed_memory()  # as in Albumen's workers: no page faults from fresh buffers
    pyvips.cache_set_max(0)
    for path in files:  # page cache
        Path(path).read_bytes()
    times: dict[tuple[str, str], float] = {}

    def timed(step: str, who: str, fn):
        start = cpu()
        result = fn()
        times[(step, who)] = times.get((step, who), 0.0) + cpu() - start
        return result

    def pillow_decode(path: str):
        with Image.open(path) as im:
            im.draft("RGB", (-(-im.width // 4), -(-im.height // 4)))
            im.load()
            return pyvips.Image.new_from_memory(im.tobytes(), im.width, im.height, 3, "uchar").copy(
                interpretation="srgb"
            )

    def file_hash(path: str, algorithm) -> str:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, algorithm).hexdigest()

    for path in files:
        timed("decode at 1/4 (6000x4000 -> 1500x1000)", "libvips", lambda: pyvips.Image.new_from_file(
            path, access="sequential", shrink=4, fail_on="truncated").copy_memory())
        decoded = timed("decode at 1/4 (6000x4000 -> 1500x1000)", "Pillow", lambda: pillow_decode(path))
        pil_decoded = Image.frombuffer("RGB", (decoded.width, decoded.height), decoded.write_to_memory(), "raw", "RGB", 0, 1)
        scale = 800 / max(decoded.width, decoded.height)
        size = (round(decoded.width * scale), round(decoded.height * scale))
        small = timed("Lanczos resize 1500 -> 800 px", "libvips",
                      lambda: decoded.resize(scale, kernel="lanczos3").copy_memory())
        timed("Lanczos resize 1500 -> 800 px", "Pillow", lambda: pil_decoded.resize(size, Image.LANCZOS))
        pil_small = Image.frombuffer("RGB", (small.width, small.height), small.write_to_memory(), "raw", "RGB", 0, 1)

        def pillow_jpeg():
            out = io.BytesIO()
            pil_small.save(out, "JPEG", quality=85, optimize=True, progressive=True, subsampling=2)
            return out.getvalue()

        timed("JPEG encode 800 px (q85, optimized, progressive)", "libvips", lambda: small.jpegsave_buffer(
            Q=85, optimize_coding=True, interlace=True, subsample_mode="auto", keep="none"))
        timed("JPEG encode 800 px (q85, optimized, progressive)", "Pillow", pillow_jpeg)
        timed("content hash of the file (~7 MB)", "SHA-256", lambda: file_hash(path, "sha256"))
        timed("content hash of the file (~7 MB)", "XXH3-128", lambda: file_hash(path, xxhash.xxh3_128))

    steps = list(dict.fromkeys(step for step, _ in times))
    print(f"Per photo, ms of CPU, mean of {len(files)} photos from `{args.corpus}`:\n")
    print("| step | candidates | chosen |")
    print("|---|---|---|")
    for step in steps:
        entries = sorted((t / len(files) * 1000, who) for (s, who), t in times.items() if s == step)
        text = ", ".join(f"{who} {ms:.1f}" for ms, who in entries)
        print(f"| {step} | {text} | {entries[0][1]} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
