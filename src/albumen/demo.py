"""`albumen demo DIR`: a small photo tree drawn on the spot, so the demo needs no downloads.

Landscapes, city lights and abstracts drawn with Pillow, with EXIF dates and
cameras, a portrait stored sideways (EXIF orientation 6), a PNG with
transparency, a panorama, Markdown sidecars in both header styles and nested
albums. Deterministic: the same files every time.
"""

from __future__ import annotations

import os
import random
from datetime import datetime, timedelta
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter

W, H = 1800, 1200
MARKER = ".albumen-demo"  # hidden, so builds ignore it

ALBUMS = [
    ("Mountains", datetime(2024, 7, 2, 6, 40), "landscape", 6),
    ("City at night", datetime(2024, 11, 15, 19, 5), "city", 5),
    ("Travels/2023 Iceland", datetime(2023, 8, 12, 10, 0), "landscape", 4),
    ("Travels/2024 Provence", datetime(2024, 6, 21, 17, 30), "fields", 5),
    ("Abstract", datetime(2022, 3, 3, 12, 0), "abstract", 4),
]

SIDECARS = {
    "index.md": "Title: Albumen demo gallery\n\nA gallery drawn by `albumen demo`: every picture here was generated on the spot.\n",
    "Mountains/index.md": "---\ntitle: Mountains at dawn\nlocation: Écrins, France\n---\n\nEarly light over the ridges. *Drawn, not photographed.*\n",
    "Mountains/IMG_0001.md": "Title: First light\nTags: sunrise, ridge\n\nThe sun clears the eastern ridge at 6:40.\n",
    "Travels/index.md": "Title: Travels\n\nTrips, one album per journey.\n",
    "Travels/2024 Provence/index.md": "Title: Provence in June\nSort: -date\n\nLavender fields, newest first.\n",
    "City at night/IMG_0009.md": "---\ntitle: Neon & rain <after midnight>\ndate: 2024-11-16T00:30:00+01:00\n---\nA title with characters that must be escaped.\n",
}


def _gradient(top: tuple[int, int, int], bottom: tuple[int, int, int], size=(W, H)) -> Image.Image:
    mask = Image.linear_gradient("L").resize(size)
    return Image.composite(Image.new("RGB", size, bottom), Image.new("RGB", size, top), mask)


def _landscape(rng: random.Random) -> Image.Image:
    sky_top = (rng.randint(20, 80), rng.randint(60, 130), rng.randint(150, 230))
    sky_bottom = (rng.randint(220, 255), rng.randint(150, 210), rng.randint(100, 170))
    img = _gradient(sky_top, sky_bottom)
    draw = ImageDraw.Draw(img)
    sx, sy, r = rng.randint(200, W - 200), rng.randint(150, H // 2), rng.randint(50, 110)
    draw.ellipse((sx - r, sy - r, sx + r, sy + r), fill=(255, 236, 180))
    for layer in range(4):
        base = H // 2 + layer * H // 9
        shade = 40 + layer * 28
        colour = (shade // 2, shade, shade + 30 - layer * 10)
        points = [(0, H)]
        x = 0
        while x <= W:
            points.append((x, base - rng.randint(0, 260 - layer * 50)))
            x += rng.randint(80, 220)
        points += [(W, base), (W, H)]
        draw.polygon(points, fill=colour)
    return img.filter(ImageFilter.GaussianBlur(1.2))


def _city(rng: random.Random) -> Image.Image:
    img = _gradient((8, 10, 30), (40, 30, 70))
    draw = ImageDraw.Draw(img)
    x = 0
    while x < W:
        w, h = rng.randint(60, 180), rng.randint(200, 800)
        draw.rectangle((x, H - h, x + w, H), fill=(15, 15, 25))
        for wy in range(H - h + 20, H - 20, 34):
            for wx in range(x + 10, x + w - 16, 26):
                if rng.random() < 0.45:
                    draw.rectangle((wx, wy, wx + 12, wy + 18), fill=rng.choice([(255, 210, 120), (180, 220, 255), (255, 120, 160)]))
        x += w + rng.randint(4, 30)
    return img.filter(ImageFilter.GaussianBlur(0.8))


def _fields(rng: random.Random) -> Image.Image:
    img = _gradient((110, 160, 230), (230, 225, 250))
    draw = ImageDraw.Draw(img)
    horizon = rng.randint(H // 3, H // 2)
    draw.rectangle((0, horizon, W, H), fill=(90, 70, 140))
    for row in range(0, 40):
        y = horizon + int((row / 40) ** 1.8 * (H - horizon))
        colour = (120 + rng.randint(-20, 20), 80 + rng.randint(-15, 15), 170 + rng.randint(-20, 20))
        draw.line((0, y, W, y + rng.randint(-8, 8)), fill=colour, width=max(2, row // 2))
    draw.ellipse((W * 0.7, horizon - 180, W * 0.7 + 160, horizon - 20), fill=(40, 90, 40))
    return img.filter(ImageFilter.GaussianBlur(1.0))


def _abstract(rng: random.Random, size=(W, H), alpha: bool = False) -> Image.Image:
    img = Image.new("RGBA" if alpha else "RGB", size, (0, 0, 0, 0) if alpha else (240, 238, 230))
    draw = ImageDraw.Draw(img)
    for _ in range(26):
        r = rng.randint(40, 260)
        x, y = rng.randint(0, size[0]), rng.randint(0, size[1])
        colour = (rng.randint(0, 255), rng.randint(0, 255), rng.randint(0, 255), rng.randint(150, 255))
        draw.ellipse((x - r, y - r, x + r, y + r), fill=colour if alpha else colour[:3])
    return img


DRAW = {"landscape": _landscape, "city": _city, "fields": _fields, "abstract": _abstract}
CAMERAS = [("FUJIFILM", "X-T5", "XF16-55mmF2.8 R LM WR"), ("Canon", "Canon EOS R6", "RF24-105mm F4 L IS USM"),
           ("Apple", "iPhone 15 Pro", "iPhone 15 Pro back camera 6.765mm f/1.78")]


def _exif(rng: random.Random, when: datetime, orientation: int = 1) -> bytes:
    make, model, lens = rng.choice(CAMERAS)
    exif = Image.Exif()
    exif[0x010F] = make
    exif[0x0110] = model
    exif[0x0112] = orientation
    exif[0x013B] = "Albumen Demo"
    exif[0x8298] = "CC0 - drawn by albumen demo"
    sub = exif.get_ifd(0x8769)
    sub[0x9003] = when.strftime("%Y:%m:%d %H:%M:%S")
    sub[0x9011] = "+02:00"
    sub[0x829A] = rng.choice([1 / 250, 1 / 60, 1 / 1000, 1 / 30])
    sub[0x829D] = rng.choice([2.8, 4.0, 5.6, 8.0])
    sub[0x8827] = rng.choice([100, 200, 400, 1600])
    sub[0x920A] = rng.choice([23.0, 35.0, 50.0])
    sub[0xA434] = lens
    return exif.tobytes()


def _free(path: Path) -> bool:
    """Never overwrite: a file already there (perhaps a real photo or sidecar) is left alone."""
    return not path.exists()


def write_demo(directory: Path) -> int:
    """Write the demo tree; returns the number of files written. Existing files are never replaced."""
    rng = random.Random(20240702)
    directory.mkdir(parents=True, exist_ok=True)
    count = 0
    number = 1
    for album, start, kind, n in ALBUMS:
        folder = directory / album
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(n):
            when = start + timedelta(minutes=17 * i + rng.randint(0, 9))
            name = f"IMG_{number:04d}.jpg"
            number += 1
            if kind == "abstract" and i == 1:
                img = _abstract(rng, (900, 900), alpha=True)
                if not _free(folder / "circles.png"):
                    continue
                img.save(folder / "circles.png")
                stamp = when.timestamp()
                os.utime(folder / "circles.png", (stamp, stamp))  # no EXIF in this PNG: undated (but with file_dates)
                count += 1
                continue
            if kind == "abstract" and i == 2:
                pano = _abstract(rng, (3600, 700))
                if not _free(folder / f"PANO_{when:%Y%m%d_%H%M%S}.jpg"):
                    continue
                pano.save(folder / f"PANO_{when:%Y%m%d_%H%M%S}.jpg", quality=85)  # date from the file name
                count += 1
                continue
            img = DRAW[kind](rng)
            orientation = 1
            if album == "Travels/2024 Provence" and i == 2:
                img = img.crop((300, 0, 1100, 1200)).rotate(90, expand=True)  # stored sideways, EXIF says 6
                orientation = 6
            if not _free(folder / name):
                continue
            img.save(folder / name, quality=88, exif=_exif(rng, when, orientation))
            count += 1
        if album == "City at night" and _free(folder / "notes.txt"):
            (folder / "notes.txt").write_text("Not a photo: ignored and counted.\n", encoding="utf-8")
            count += 1
    for rel, text in SIDECARS.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not _free(path):
            continue
        path.write_text(text, encoding="utf-8")
        count += 1
    (directory / MARKER).write_text("written by albumen demo\n", encoding="utf-8")
    return count
