"""Shared helpers: tiny images made on the spot, a build runner, and a site crawler."""

from __future__ import annotations

import errno
import hashlib
import os
import posixpath
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner
from PIL import Image

from albumen.cli import main

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"

needs_corpus = pytest.mark.skipif(
    not (CORPUS / "hard" / "MANIFEST.tsv").is_file(),
    reason=f"the shared test corpus is not at {CORPUS} (CI has it beside the project)",
)


def make_exif(
    date: datetime | str | None = None,
    offset: str | None = None,
    orientation: int | None = None,
    make: str | None = None,
    model: str | None = None,
    description: str | None = None,
    artist: str | None = None,
    copyright: str | None = None,
    gps: tuple[float, float] | None = None,
    serial: str | None = None,
    subsec: str | None = None,
    offset_time: str | None = None,
) -> Image.Exif:
    exif = Image.Exif()
    if orientation:
        exif[0x0112] = orientation
    if make:
        exif[0x010F] = make
    if model:
        exif[0x0110] = model
    if description:
        exif[0x010E] = description
    if artist:
        exif[0x013B] = artist
    if copyright:
        exif[0x8298] = copyright
    sub = exif.get_ifd(0x8769)
    if date:
        sub[0x9003] = date if isinstance(date, str) else date.strftime("%Y:%m:%d %H:%M:%S")
    if offset:
        sub[0x9011] = offset
    if offset_time:
        sub[0x9010] = offset_time  # OffsetTime, which some cameras write instead of OffsetTimeOriginal
    if subsec is not None:
        sub[0x9291] = subsec
    if serial:
        sub[0xA431] = serial
    if gps:
        lat, lon = gps

        def dms(value: float):
            value = abs(value)
            d = int(value)
            m = int((value - d) * 60)
            s = round(((value - d) * 60 - m) * 60, 4)
            return (float(d), float(m), float(s))

        g = exif.get_ifd(0x8825)
        g[1] = "N" if lat >= 0 else "S"
        g[2] = dms(lat)
        g[3] = "E" if lon >= 0 else "W"
        g[4] = dms(lon)
    return exif


def make_jpeg(path: Path, size=(64, 48), color=(200, 40, 40), exif: Image.Exif | None = None, **kwargs) -> Path:
    """A tiny JPEG; a coloured block in the top-left quarter makes orientation checkable."""
    path.parent.mkdir(parents=True, exist_ok=True)
    img = Image.new("RGB", size, color)
    corner = Image.new("RGB", (max(1, size[0] // 4), max(1, size[1] // 4)), (255, 255, 255))
    img.paste(corner, (0, 0))
    if exif is None and kwargs:
        exif = make_exif(**kwargs)
    params = {"quality": 92}
    if exif is not None:
        params["exif"] = exif.tobytes()
    img.save(path, "JPEG", **params)
    return path


def make_png(path: Path, size=(40, 30), color=(30, 120, 200, 255), mode="RGBA") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new(mode, size, color if mode == "RGBA" else color[:3]).save(path, "PNG")
    return path


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str
    output: str


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None) -> Result:
    """Run `albumen ARGS` in this process (files are still read and images made by worker processes)."""
    runner = CliRunner()
    old = Path.cwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        result = runner.invoke(main, list(args), env=env, catch_exceptions=False)
    finally:
        os.chdir(old)
    return Result(result.exit_code, result.stdout, result.stderr, result.output)


def refuse_reading(monkeypatch, module, folder: str) -> None:
    """Files in folders named `folder` cannot be opened through module.open_regular (Permission
    denied), as after chmod 000, which does not stop root (who runs CI). For builds run in this process."""
    real = module.open_regular

    def refused(abs_path: str):
        if Path(abs_path).parent.name == folder:
            raise PermissionError(errno.EACCES, "Permission denied", abs_path)
        return real(abs_path)

    monkeypatch.setattr(module, "open_regular", refused)


def run_cli_bounded(*args: str, timeout: float = 120, memory: int = 3 << 30) -> Result:
    """Run `albumen ARGS` in a process of its own with a time limit and an address-space limit
    (POSIX), for tests of inputs that once hung a build or ate all memory: a regression fails the
    test (a timeout, or a MemoryError and a non-zero exit) instead of stalling the suite or the machine."""
    import subprocess
    import sys

    def limit() -> None:  # pragma: no cover - runs in the child
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    done = subprocess.run(
        [sys.executable, "-m", "albumen", *args], capture_output=True, text=True, timeout=timeout,
        preexec_fn=limit if os.name == "posix" else None, stdin=subprocess.DEVNULL,
    )
    return Result(done.returncode, done.stdout, done.stderr, done.stdout + done.stderr)


def is_text(data: bytes) -> bool:
    """Whether a file reads as UTF-8 text (a page, a feed, JSON); compressed images and ciphertext do not."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def may_hold(word: bytes, data: bytes) -> bool:
    """Whether a leak scan looks for `word` in `data`: a word under 6 bytes only in text, since any 3
    random bytes of a compressed image or of ciphertext are b'qqq' once in 16 MiB."""
    return len(word) >= 6 or is_text(data)


def build_site(src: Path, out: Path, *extra: str, cwd: Path | None = None, expect: int = 0) -> Result:
    result = run_cli("build", str(src), "-o", str(out), "-j", "1", *extra, cwd=cwd)
    assert result.exit_code == expect, result.output
    return result


def video_gallery(tmp_path: Path) -> tuple[Path, Path]:
    """Photos and three videos that take a build a few seconds to encode (re-encoded with x264's
    'slower' preset, not copied), so that a test can act while the build is making them, and whose
    outputs are the same bytes in every build. Returns the photo folder and the config."""
    src = tmp_path / "photos"
    for i in range(3):
        make_video(src / "Clips" / f"clip{i}.mp4", seconds=4, size=(640, 360))
    for i in range(6):
        make_jpeg(src / "Photos" / f"p{i}.jpg", size=(1200, 800), color=(i * 40, 100, 50))
    return src, write_config(tmp_path, '[videos]\nremux = false\npreset = "slower"\n')


def start_build(src: Path, site: Path, *extra: str, jobs: int = 2):
    """`albumen build` in a process (and process group) of its own, its output captured."""
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-m", "albumen", "build", str(src), "-o", str(site), "-j", str(jobs), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )


def making_videos(site: Path, proc, timeout: float = 120) -> Path:
    """Wait until the build writes a video (a temporary .mp4 with something in it); returns that file."""
    import time

    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        for tmp in site.rglob(".albumen-tmp-*.mp4"):
            try:
                if tmp.stat().st_size:
                    return tmp
            except OSError:
                pass
        time.sleep(0.02)
    raise AssertionError(f"the build never got to its videos (exit status {proc.poll()})")


def write_config(tmp_path: Path, text: str) -> Path:
    """An albumen.toml in a folder of its own (so relative paths in it resolve there)."""
    path = tmp_path / "cfg" / "albumen.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def tree_digest(root: Path) -> dict[str, tuple[str, int]]:
    """Every file under root -> (sha256, mode); also records folders, so any write is noticed."""
    out: dict[str, tuple[str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            p = Path(dirpath) / name
            out[str(p.relative_to(root)) + "/"] = ("dir", p.lstat().st_mode)
        for name in filenames:
            p = Path(dirpath) / name
            if p.is_symlink():
                out[str(p.relative_to(root))] = ("link:" + os.readlink(p), 0)
                continue
            out[str(p.relative_to(root))] = (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mode)
    return out


def soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


_SRCSET_SPLIT = re.compile(r",\s+")


def page_refs(html_soup: BeautifulSoup) -> list[str]:
    """Every local reference a page makes: links, images, sources, scripts, styles."""
    refs: list[str] = []
    for tag in html_soup.find_all(True):
        for attr in ("href", "src", "poster"):
            value = tag.get(attr)
            if value:
                refs.append(value)
        srcset = tag.get("srcset")
        if srcset:
            refs.extend(part.strip().split(" ")[0] for part in _SRCSET_SPLIT.split(srcset.strip()))
        style = tag.get("style") or ""
        refs.extend(re.findall(r"url\(([^)]+)\)", style))
    return [r for r in refs if not urlsplit(r).scheme and not r.startswith("//") and r != "#"]


@dataclass
class Crawl:
    pages: set[str] = field(default_factory=set)  # output-relative paths of HTML pages reached
    files: set[str] = field(default_factory=set)  # every local file referenced
    broken: list[tuple[str, str]] = field(default_factory=list)  # (page, reference)


def resolve_ref(root: Path, page_rel: str, ref: str) -> str:
    ref = urldefrag(ref)[0].split("?")[0]
    if not ref:  # '#id' or '?query': this very page
        return page_rel
    base = posixpath.dirname(page_rel)
    target = posixpath.normpath(posixpath.join(base, unquote(ref))) if ref else page_rel
    if ref.endswith("/") or ref in ("", ".", "./") or (root / target).is_dir():
        target = posixpath.join(target, "index.html") if target != "." else "index.html"
    return target.lstrip("./") if target.startswith("./") else target


def crawl(root: Path, start: str = "index.html") -> Crawl:
    """Follow every local link from the start page; report references to missing files, and links
    to an anchor (page.html#id, #id) that the page they lead to does not have."""
    result = Crawl()
    queue = [start]
    ids: dict[str, set[str]] = {}

    def anchors(page: str) -> set[str]:
        if page not in ids:
            ids[page] = {t.get("id") or t.get("name") for t in soup(root / page).select("[id], a[name]")}
        return ids[page]

    while queue:
        page = queue.pop()
        if page in result.pages:
            continue
        result.pages.add(page)
        for ref in page_refs(soup(root / page)):
            target = resolve_ref(root, page, ref)
            if target.startswith("..") or not (root / target).is_file():
                result.broken.append((page, ref))
                continue
            fragment = unquote(urldefrag(ref)[1])
            if fragment and target.endswith(".html") and fragment not in anchors(target):
                result.broken.append((page, ref))
            result.files.add(target)
            if target.endswith(".html") and target not in result.pages:
                queue.append(target)
    return result


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory, monkeypatch) -> Path:
    """Every test gets its own build-cache root, never the user's cache folder."""
    root = tmp_path_factory.mktemp("albumen-cache")
    monkeypatch.setenv("ALBUMEN_CACHE_DIR", str(root))
    return root


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch) -> Path:
    """Every test gets its own Albumen home (secret, rotations); ALBUMEN_SECRET is unset."""
    home = tmp_path_factory.mktemp("albumen-home")
    monkeypatch.setenv("ALBUMEN_HOME", str(home))
    monkeypatch.delenv("ALBUMEN_SECRET", raising=False)
    return home


def make_video(
    path: Path,
    seconds: float = 1.0,
    size: tuple[int, int] = (160, 120),
    fps: int = 25,
    black: int = 0,
    audio: bool = True,
    rotation: int = 0,
    codec: str = "libx264",
    fmt: str = "mp4",
    metadata: dict[str, str] | None = None,
    faststart: bool = False,
    noise: bool = False,
) -> Path:
    """A tiny real video made with PyAV: `black` black frames first, then orange; a 440 Hz tone.
    faststart: an MP4's index before its data (as phones and Albumen write them). noise: random
    pixels in every frame instead, which no encoder makes quickly (a video that is slow to transcode
    on any machine)."""
    import fractions
    import math
    import struct

    import av

    path.parent.mkdir(parents=True, exist_ok=True)
    out = av.open(str(path), "w", format=fmt, options={"movflags": "+faststart"} if faststart else {})
    out.metadata.update(metadata or {})
    video = out.add_stream(codec, rate=fps)
    video.width, video.height = size
    video.pix_fmt = "yuv420p"
    if rotation:
        video.set_display_rotation(rotation)
    sound = None
    if audio:
        sound = out.add_stream("aac", rate=48000)
        sound.layout = "stereo"
    w, h = size
    for i in range(int(seconds * fps)):
        frame = av.VideoFrame(w, h, "rgb24")
        if noise:
            pixels = os.urandom(w * h * 3)
        elif i < black:
            pixels = bytes(3) * (w * h)
        else:  # orange, with a white block in the top-left quarter (to check orientation)
            row = bytes((255, 255, 255)) * (w // 4) + bytes((230, 120, 20)) * (w - w // 4)
            pixels = row * (h // 4) + bytes((230, 120, 20)) * (w * (h - h // 4))
        frame.planes[0].update(pixels)
        frame = frame.reformat(format="yuv420p")
        frame.pts, frame.time_base = i, fractions.Fraction(1, fps)
        for packet in video.encode(frame):
            out.mux(packet)
    for packet in video.encode(None):
        out.mux(packet)
    if sound is not None:
        t = 0
        while t < int(48000 * seconds):
            data = struct.pack("<1024f", *(0.2 * math.sin(2 * math.pi * 440 * (t + k) / 48000) for k in range(1024)))
            chunk = av.AudioFrame(format="fltp", layout="stereo", samples=1024)
            chunk.planes[0].update(data)
            chunk.planes[1].update(data)
            chunk.sample_rate, chunk.pts, chunk.time_base = 48000, t, fractions.Fraction(1, 48000)
            for packet in sound.encode(chunk):
                out.mux(packet)
            t += 1024
        for packet in sound.encode(None):
            out.mux(packet)
    out.close()
    return path


# -- plugins installed for a build run in a process of its own ---------------------------------

PLUGINS_GUIDE = REPO / "docs" / "PLUGINS.md"


def example_plugin_files() -> dict[str, str]:
    """The files of docs/PLUGINS.md's complete example plugin, by path in its package folder: what the
    guide shows is what the tests install."""
    text = PLUGINS_GUIDE.read_text(encoding="utf-8")
    found = re.findall(r"\*\*`albumen-tint/([^`]+)`\*\*\n\n```[a-z]*\n(.*?)```", text, re.S)
    return dict(found)


def install_plugin(where: Path, files: dict[str, str]) -> Path:
    """Install a plugin package into the folder `where` (to put on PYTHONPATH) as pip would for what
    Albumen looks at: the package's files, and a NAME-VERSION.dist-info folder with its metadata and
    the entry points its pyproject.toml declares, which importlib.metadata finds as an installed
    distribution (the real entry-point lookup, without pip's minute per install)."""
    import tomllib

    project = tomllib.loads(files["pyproject.toml"])["project"]
    for rel, text in files.items():
        if rel != "pyproject.toml":
            (where / rel).parent.mkdir(parents=True, exist_ok=True)
            (where / rel).write_text(text, encoding="utf-8")
    dist = where / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    lines = []
    for group, entries in project.get("entry-points", {}).items():
        lines += [f"[{group}]", *(f"{name} = {value}" for name, value in entries.items()), ""]
    (dist / "entry_points.txt").write_text("\n".join(lines))
    return where


START_METHOD_CLI = """
import json, os, sys

import albumen.pool as pool

methods = []
real = pool._start_method


def chosen():
    methods.append(os.environ.get("ALBUMEN_TEST_START") or real())
    return methods[-1]


pool._start_method = chosen

if __name__ == "__main__":
    from albumen.cli import main

    sys.argv = ["albumen", *sys.argv[1:]]
    try:
        main()
    finally:
        print("start methods:", json.dumps(sorted(set(methods))), file=sys.stderr)
"""


def albumen_process(tmp_path: Path, *args: str, pythonpath: Path | None = None, start: str | None = None,
                    timeout: float = 300):
    """`albumen ARGS` in a process of its own, with `pythonpath` (installed plugins) and its workers
    started by `start` ('fork', 'forkserver', 'spawn'; default: as Albumen chooses). Its stderr ends
    with the start methods used."""
    import subprocess
    import sys

    script = tmp_path / "albumen_started.py"
    script.write_text(START_METHOD_CLI, encoding="utf-8")
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH", "")]))
    env.pop("ALBUMEN_TEST_START", None)
    if start:
        env["ALBUMEN_TEST_START"] = start
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, env=env,
                          timeout=timeout, stdin=subprocess.DEVNULL)


LONG_WORD = "Supercalifragilisticexpialidocious" * 3
LONG_URL = "https://example.org/" + "a-very-long-path-segment/" * 8 + "?query=" + "x" * 60
ALBUM = "Ünïcode album whose name is far too long for a phone " + LONG_WORD[:60]


def hostile_gallery(src: Path) -> None:
    """A gallery that tries the theme: long names and URLs, Sigal-style HTML in sidecars, a 95x48 logo, repeated slugs, main.jpg."""
    (src).mkdir(parents=True)
    (src / "index.md").write_text(f"Title: Hostile gallery\n\nA home page description with {LONG_URL} in it.\n")
    album = src / ALBUM
    make_jpeg(album / "wide.jpg", size=(1200, 800), color=(30, 90, 160), date="2024:05:01 10:00:00")
    make_jpeg(album / "tall.jpg", size=(800, 1200), color=(160, 90, 30), date="2024:05:01 11:00:00")
    make_png(album / "logo.png", size=(95, 48), color=(220, 40, 90, 255))
    make_jpeg(album / "main.jpg", size=(900, 600), color=(40, 140, 60), date="2024:05:02 09:00:00")
    make_jpeg(album / "IMG_0001.jpg", size=(3000, 500), color=(90, 90, 90), date="2024:05:03 09:00:00")
    (album / "index.md").write_text(
        f"Title: {ALBUM} {LONG_WORD}\n\n"
        f'<p>See <a href="{LONG_URL}">the <em>long</em> link</a> and <strong>this</strong>.</p>\n\n'
        f"{LONG_URL}\n\n### A heading of the sidecar\n\n{LONG_WORD}\n\n"
        "<script>alert(1)</script><img src=x onerror=alert(1)>\n"
    )
    (album / "wide.md").write_text(f"Title: {LONG_WORD}\n\nA caption with *emphasis* and {LONG_URL}.\n")
    make_jpeg(src / "Other" / "IMG_0001.jpg", size=(1024, 768), color=(200, 200, 40), date="2023:01:01 12:00:00")
    make_jpeg(src / "Other" / "small.jpg", size=(240, 160), color=(20, 20, 200), date="2023:01:02 12:00:00")
    make_jpeg(src / "Third" / "only.jpg", size=(1600, 1067), color=(100, 20, 120), date="2022:06:01 12:00:00")
