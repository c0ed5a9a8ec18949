"""The floor: only the image work of a full build at Sigal's sizes, in the fewest steps the libraries allow.

    python bench/floor.py SRC OUT [--jobs N]

Every JPEG under SRC, one task per photo, in a pool of N forked processes (default: all cores). Per
photo: Pillow decodes it at the smallest DCT scale (1/2, 1/4, 1/8) still covering an 800 px long edge
(libjpeg-turbo's shrink-on-load), libvips resizes it (Lanczos 3) to 800 px and turns it upright after
its EXIF orientation, Pillow encodes it (quality 85, optimized, 4:2:0; baseline as Albumen's default,
or progressive with --progressive, as Sigal writes them); the thumbnail, 210 px high, is made from the
800 px image and encoded the same way (baseline). The same libraries and steps as
Albumen's workers, and nothing else: no metadata beyond the orientation, no content hash, no pages,
no cache, no placeholder, no atomic writes. A thumbnail the size of the image is the same
file, encoded once and written twice, as Albumen does. Freed memory is kept for the next photo, as
Albumen's workers do (without it, page faults cost ~10 ms per photo). `bench.py full` runs it beside Sigal and Albumen, so the
Sigal/floor ratio is the most any tool built on these decoders could reach on this machine.
"""

from __future__ import annotations

import argparse
import io
import multiprocessing
import os
import sys
from pathlib import Path

os.environ.setdefault("VIPS_CONCURRENCY", "1")

LONG_EDGE, THUMB_HEIGHT, QUALITY = 800, 210, 85
PROGRESSIVE = [False]  # set by --progressive before the workers fork


def _start() -> None:
    import ctypes

    import pyvips
    from PIL import Image

    pyvips.cache_set_max(0)
    Image.preinit()
    if sys.platform.startswith("linux"):  # keep freed buffers for the next photo (no page faults)
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-3, 256 << 20)  # M_MMAP_THRESHOLD
        libc.mallopt(-1, 512 << 20)  # M_TRIM_THRESHOLD


def make(task: tuple[str, str]) -> int:
    import pyvips
    from PIL import Image

    src, out = task
    with Image.open(src) as im:
        orientation = im.getexif().get(0x0112, 1)
        scale = LONG_EDGE / max(im.size)
        factor = next((f for f in (8, 4, 2) if 1 / f >= scale), 1)
        if factor > 1:
            im.draft("RGB", (-(-im.width // factor), -(-im.height // factor)))
        im.decodermaxblock = 1 << 20
        im.load()
        image = pyvips.Image.new_from_memory(im.tobytes(), im.width, im.height, 3, "uchar")
    if max(image.width, image.height) > LONG_EDGE:
        image = image.resize(LONG_EDGE / max(image.width, image.height), kernel="lanczos3")
    image = _upright(image.copy_memory(), orientation)
    thumb = image.resize(THUMB_HEIGHT / image.height, kernel="lanczos3") if image.height > THUMB_HEIGHT else image
    stem = os.path.splitext(os.path.basename(src))[0]
    encoded = None
    for suffix, picture in ((".jpg", image), (".thumb.jpg", thumb)):
        if encoded is None or picture is not image or PROGRESSIVE[0]:  # (a thumbnail the image's size: the same file)
            pil = Image.frombuffer("RGB", (picture.width, picture.height), picture.write_to_memory(), "raw", "RGB", 0, 1)
            buf = io.BytesIO()
            pil.save(buf, "JPEG", quality=QUALITY, optimize=True, progressive=PROGRESSIVE[0] and suffix == ".jpg",
                     subsampling=2)
            encoded = buf.getvalue()
        with open(os.path.join(out, stem + suffix), "wb") as f:
            f.write(encoded)
    return 2


def _upright(image, orientation: int):
    steps = {2: ("fliphor",), 3: ("rot180",), 4: ("flipver",), 5: ("rot90", "fliphor"), 6: ("rot90",),
             7: ("rot270", "fliphor"), 8: ("rot270",)}
    for step in steps.get(orientation, ()):
        image = getattr(image, step)()
    return image


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("src", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--progressive", action="store_true",
                    help="progressive JPEGs, as Sigal writes them (default: baseline, as Albumen does by default)")
    ap.add_argument("--chunksize", type=int, default=1,
                    help="photos per task (default 1; bench/tiny.py gives 16, as Albumen batches small photos)")
    a = ap.parse_args(argv)
    PROGRESSIVE[0] = a.progressive
    files = sorted((p for p in a.src.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg")), key=lambda p: -p.stat().st_size)
    tasks = []
    for path in files:  # one output folder per source folder, like a gallery
        folder = a.out / path.parent.relative_to(a.src)
        folder.mkdir(parents=True, exist_ok=True)
        tasks.append((str(path), str(folder)))
    with multiprocessing.get_context("fork").Pool(a.jobs, initializer=_start) as pool:
        made = sum(pool.imap_unordered(make, tasks, chunksize=a.chunksize))
    print(f"made {made} derivatives of {len(files)} images")
    return 0


if __name__ == "__main__":
    sys.exit(main())
