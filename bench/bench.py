#!/usr/bin/env python3
"""Albumen vs Sigal benchmark. Not a test: it measures, prints markdown tables and records them.

    bash bench/setup_sigal.sh                    # once: Sigal 2.6.1 in bench/.venv-sigal
    /work/venv/bin/python bench/bench.py all     # every scenario (makes missing corpora first)
    /work/venv/bin/python bench/bench.py full    # one scenario: full | full2048 | nochange | changes
    /work/venv/bin/python bench/bench.py all --quick   # smoke run on small corpora (README untouched)

Each scenario's numbers go to bench/results/SCENARIO.json and, unless --quick or --no-readme, into
the results section of bench/README.md (between the bench-results marker comments), which is
rebuilt from every results file present, so scenarios can be run one at a time. `full` also runs
bench/floor.py, the image work alone with Albumen's libraries, so its table shows how close to the
floor Albumen is and the most any build on these decoders could reach against Sigal here.

What is measured, per command: wall time; CPU time (user + sys) of the whole process tree, from
os.wait4 on the tool's process (which includes every descendant it waited for); the peak RSS of the
biggest single process (its kernel high-water mark VmHWM, read while sampling); and the peak total
RSS and PSS of the process tree, sampled with psutil every 50 ms (RSS counts pages shared between
forked workers once per process; PSS splits them, so it is the honest "memory used" number). The
CPU time the rest of the machine used during each run is recorded too, to flag disturbed numbers.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

try:
    import psutil
except ImportError:  # pragma: no cover
    sys.exit("bench.py needs psutil: pip install -r bench/requirements.txt")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora  # noqa: E402

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results"
WORK = RESULTS / "work"
README = BENCH / "README.md"
SIGAL = BENCH / ".venv-sigal" / "bin" / "sigal"
START, END = "<!-- bench-results:start -->", "<!-- bench-results:end -->"
IMAGE_EXT = {".jpg", ".jpeg", ".webp", ".avif", ".png", ".gif"}
SCENARIOS = ["full", "full2048", "nochange", "changes"]

# Sigal 2.6.1: built-in defaults are img_size (640, 480), thumb_size (200, 150); `sigal init` writes a
# sigal.conf.py with img_size (800, 600) and thumb_size (280, 210) (the galleria theme's sizes), which is
# what a new Sigal user gets. jpg_options default: quality 85, optimize, progressive. Both tools use 85.
SIGAL_QUALITY = 85
SIGAL_IMG, SIGAL_THUMB = (800, 600), (280, 210)
TIMEOUT = 3600


def albumen_cmd() -> list[str]:
    exe = Path(sys.executable).with_name("albumen")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "albumen"]


def compile_bytecode() -> None:
    """Compile Albumen's modules to bytecode, as installing a package does (Sigal's venv has its .pyc).

    The development venv installs Albumen in editable mode, and these machines set
    PYTHONDONTWRITEBYTECODE=1, so without this every run (and every worker it spawns) would compile
    all of Albumen's source again: ~0.1 s of CPU per process that no installed copy pays.
    """
    import compileall
    import importlib.util

    spec = importlib.util.find_spec("albumen")
    if spec is None or not spec.submodule_search_locations:
        return
    for folder in spec.submodule_search_locations:
        compileall.compile_dir(folder, quiet=1)
    if SIGAL.exists():  # the same for Sigal, should its venv lack them
        subprocess.run([str(SIGAL.with_name("python")), "-m", "compileall", "-q",
                        str(next((BENCH / ".venv-sigal" / "lib").glob("python3*/site-packages/sigal")))],
                       check=False, stdout=subprocess.DEVNULL)


def rel(p: Path | str) -> str:
    p = Path(p)
    try:
        return str(p.resolve().relative_to(REPO))
    except ValueError:
        return str(p)


def code_fingerprint() -> str:
    """Names, sizes and mtimes of Albumen's source files: someone may edit src/ while the benchmark runs
    (a rebuild after a code change is no longer a no-change rebuild: derivative names carry a recipe hash)."""
    import hashlib

    h = hashlib.sha1()
    for dirpath, dirs, files in os.walk(REPO / "src" / "albumen"):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            st = os.stat(os.path.join(dirpath, name))
            h.update(f"{dirpath}/{name}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:12]


# ----------------------------------------------------------------------------- measuring


@dataclass
class Run:
    label: str
    tool: str
    cmd: list[str]
    rc: int = 0
    wall: float = 0.0
    cpu_user: float = 0.0
    cpu_sys: float = 0.0
    cpu_sampled: float = 0.0  # sum of the last psutil cpu_times of every process seen (cross-check)
    peak_proc_rss: int = 0
    peak_tree_rss: int = 0
    peak_tree_pss: int = 0
    max_procs: int = 0
    other_cpu: float = 0.0  # CPU seconds the machine spent on anything but this tool during the run
    harness_cpu: float = 0.0  # CPU seconds bench.py itself used meanwhile (mostly the sampler)
    waited_for_quiet: float = 0.0
    load_before: float = 0.0
    out_images: int = 0
    out_image_bytes: int = 0
    out_html: int = 0
    log: str = ""
    log_tail: str = ""
    parsed: dict = field(default_factory=dict)

    @property
    def cpu(self) -> float:
        return self.cpu_user + self.cpu_sys

    @property
    def ok(self) -> bool:
        return self.rc == 0


QUIET = {"max_wait": 60.0}


def wait_quiet(max_wait: float | None = None, threshold: float = 0.15) -> float:
    """Wait (up to max_wait s) until the rest of the machine uses under `threshold` of a core over 1 s.
    Other sessions may share this machine; their load shows up as 'other load' and skews wall times."""
    max_wait = QUIET["max_wait"] if max_wait is None else max_wait
    if max_wait <= 0:
        return 0.0
    t0 = time.perf_counter()
    while True:
        a = _busy(psutil.cpu_times())
        time.sleep(1.0)
        if _busy(psutil.cpu_times()) - a < threshold or time.perf_counter() - t0 >= max_wait:
            return time.perf_counter() - t0


def measure(
    label: str,
    tool: str,
    cmd: list[str],
    *,
    cwd: Path,
    env: dict | None = None,
    log: Path,
    interval: float = 0.05,
    rescan: float = 0.25,
    pss_every: float = 0.2,
) -> Run:
    """Run cmd to completion and measure it (see the module doc). The sampler reads /proc directly:
    RSS and VmHWM every `interval` s, the process tree every `rescan` s and PSS (costlier) every
    `pss_every` s, so that the harness itself stays at a few % of one core."""
    run = Run(label=label, tool=tool, cmd=[str(c) for c in cmd])
    log.parent.mkdir(parents=True, exist_ok=True)
    full_env = dict(os.environ, **(env or {}))
    full_env.pop("FORCE_COLOR", None)
    done = threading.Event()
    cpu_seen: dict[tuple[int, int], float] = {}
    run.waited_for_quiet = wait_quiet()
    run.load_before = os.getloadavg()[0]
    sys0 = psutil.cpu_times()
    self0 = os.times()
    with open(log, "wb") as logf:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            run.cmd,
            cwd=cwd,
            env=full_env,
            stdout=logf,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

        def sample() -> None:
            pids: list[int] = [proc.pid]
            next_scan = next_pss = 0.0
            while not done.is_set():
                now = time.perf_counter()
                if now >= next_scan:
                    pids = _tree(proc.pid, cpu_seen)
                    next_scan = now + rescan
                rss = n = 0
                for pid in pids:
                    m = _rss_hwm(pid)
                    if m is None:
                        continue
                    n += 1
                    rss += m[0]
                    run.peak_proc_rss = max(run.peak_proc_rss, m[0], m[1])
                run.peak_tree_rss = max(run.peak_tree_rss, rss)
                run.max_procs = max(run.max_procs, n)
                if now >= next_pss:
                    run.peak_tree_pss = max(run.peak_tree_pss, sum(_pss(pid) for pid in pids))
                    next_pss = now + pss_every
                done.wait(interval)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        killer = threading.Timer(TIMEOUT, lambda: os.killpg(proc.pid, signal.SIGKILL))
        killer.start()
        _pid, status, ru = os.wait4(proc.pid, 0)
        run.wall = time.perf_counter() - t0
        killer.cancel()
        proc.returncode = run.rc = os.waitstatus_to_exitcode(status)
        done.set()
        sampler.join()
    run.cpu_user, run.cpu_sys = ru.ru_utime, ru.ru_stime
    sys1, self1 = psutil.cpu_times(), os.times()
    busy = _busy(sys1) - _busy(sys0)
    run.harness_cpu = (self1.user + self1.system) - (self0.user + self0.system)
    run.other_cpu = max(0.0, busy - run.cpu - run.harness_cpu)
    run.cpu_sampled = sum(cpu_seen.values())
    # ru.ru_maxrss is not used: Linux carries the harness's own peak RSS into a child across fork/exec.
    run.log = rel(log)
    text = log.read_text(errors="replace")
    run.log_tail = "\n".join(text.strip().splitlines()[-12:])
    run.parsed = parse_log(text)
    return run


_TICK = os.sysconf("SC_CLK_TCK")


def _tree(root: int, cpu_seen: dict) -> list[int]:
    """root and all its descendants, from /proc/*/stat; records each one's CPU seconds in cpu_seen."""
    children: dict[int, list[int]] = {}
    stats: dict[int, list[bytes]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                data = f.read()
        except OSError:
            continue
        fields = data[data.rfind(b")") + 2 :].split()
        pid = int(name)
        stats[pid] = fields
        children.setdefault(int(fields[1]), []).append(pid)
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        if pid not in stats:
            continue
        out.append(pid)
        f = stats[pid]
        # fields after "(comm) ": state ppid ... utime(11) stime(12) ... starttime(19)
        cpu_seen[(pid, int(f[19]))] = (int(f[11]) + int(f[12])) / _TICK
        todo.extend(children.get(pid, ()))
    return out


_PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss_hwm(pid: int) -> tuple[int, int] | None:
    """(RSS, VmHWM) of one process in bytes, from /proc/PID/status (cheap). VmHWM is its peak RSS since
    exec (a forked worker starts from its parent's)."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"VmHWM:"):
                    hwm = int(line.split()[1]) * 1024
                elif line.startswith(b"VmRSS:"):
                    rss = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        return None
    return rss, hwm


def _pss(pid: int) -> int:
    """PSS of one process in bytes, from /proc/PID/smaps_rollup (walks the page tables: ~0.5 ms per 300 MB)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _busy(t) -> float:
    """CPU seconds the whole machine spent working (steal and guest are not ours, iowait is idle)."""
    return t.user + t.nice + t.system + getattr(t, "irq", 0) + getattr(t, "softirq", 0)


def parse_log(text: str) -> dict:
    out: dict = {}
    m = re.search(r"made (\d+) derivatives?(?: of (\d+) (?:photos?|images?))?", text)  # ('images' before 0.1.x's fix)
    if m:
        out["derivatives_made"], out["images_made"] = int(m.group(1)), int(m.group(2) or 0)
    m = re.search(r"processed (\d+) (?:photos?|images?)", text)
    if m:
        out["images_processed"] = int(m.group(1))
    m = re.search(r"built (\d+) albums?, (\d+) photos?, (\d+) videos?, (\d+) skipped in ([\d.]+) s", text)
    if m:
        out.update(
            albums=int(m.group(1)),
            photos=int(m.group(2)),
            videos=int(m.group(3)),
            skipped=int(m.group(4)),
            reported_seconds=float(m.group(5)),
        )
    if "Traceback (most recent call last)" in text:
        out["traceback"] = True
    return out


def _walk_media(out: Path):
    """os.walk of the output without the top-level static/ folder (theme assets of both tools)."""
    for dirpath, dirs, files in os.walk(out):
        if Path(dirpath) == out and "static" in dirs:
            dirs.remove("static")
        yield dirpath, dirs, files


def output_stats(run: Run, out: Path) -> None:
    """Count the derivative images (theme assets under static/ excluded) and pages of an output folder."""
    for dirpath, _dirs, files in _walk_media(out):
        for name in files:
            ext = os.path.splitext(name)[1].lower()
            if ext in IMAGE_EXT:
                run.out_images += 1
                run.out_image_bytes += os.path.getsize(os.path.join(dirpath, name))
            elif ext == ".html":
                run.out_html += 1


def snapshot_images(out: Path) -> dict[str, tuple[int, int]]:
    snap = {}
    for dirpath, _dirs, files in _walk_media(out):
        for name in files:
            if os.path.splitext(name)[1].lower() in IMAGE_EXT:
                p = os.path.join(dirpath, name)
                st = os.stat(p)
                snap[os.path.relpath(p, out)] = (st.st_ino, st.st_mtime_ns)
    return snap


def warm(src: Path) -> None:
    """Read the corpus once so that every measured run reads it from the page cache alike."""
    buf = bytearray(1 << 20)
    for dirpath, _dirs, files in os.walk(src):
        for name in files:
            with open(os.path.join(dirpath, name), "rb", buffering=0) as f:
                while f.readinto(buf):
                    pass


# ----------------------------------------------------------------------------- the two tools


def sigal_conf(
    path: Path,
    img_size: tuple[int, int],
    thumb_size: tuple[int, int] = SIGAL_THUMB,
    quality: int = SIGAL_QUALITY,
) -> Path:
    path.write_text(
        "# What `sigal init` writes (theme, sizes), source/destination given on the command line,\n"
        "# and Sigal's default jpg_options spelled out so the JPEG quality is on record.\n"
        'theme = "galleria"\n'
        f"img_size = {tuple(img_size)}\n"
        f"thumb_size = {tuple(thumb_size)}\n"
        f"jpg_options = {{'quality': {quality}, 'optimize': True, 'progressive': True}}\n"
    )
    return path


def albumen_conf(path: Path, body: str) -> Path:
    path.write_text(body)
    return path


def albumen_toml(sizes: list[int], quality: int, thumb_height: int, extra: str = "") -> str:
    return (
        f"[images]\nsizes = [{', '.join(map(str, sizes))}]\nquality = {quality}\n{extra}"
        f"\n[thumbnails]\nheight = {thumb_height}\n"
    )


class Tools:
    def __init__(self, jobs: int | None):
        self.jobs = jobs

    def sigal(self, label: str, src: Path, out: Path, conf: Path, log: Path, cwd: Path) -> Run:
        cmd = [str(SIGAL), "build", "-q", "-c", str(conf)]
        if self.jobs:
            cmd += ["--ncpu", str(self.jobs)]
        cmd += [str(src), str(out)]
        run = measure(label, "Sigal", cmd, cwd=cwd, log=log)
        output_stats(run, out)
        return run

    def floor(self, label: str, src: Path, out: Path, log: Path, cwd: Path) -> Run:
        """bench/floor.py: only the image work at Sigal's sizes, with Albumen's libraries and steps."""
        cmd = [sys.executable, str(BENCH / "floor.py"), str(src), str(out)]
        if self.jobs:
            cmd += ["--jobs", str(self.jobs)]
        run = measure(label, "Floor", cmd, cwd=cwd, log=log)
        output_stats(run, out)
        return run

    def albumen(
        self,
        label: str,
        src: Path,
        out: Path,
        conf: Path | None,
        cache: Path,
        log: Path,
        cwd: Path,
        flags: tuple[str, ...] = ("-q",),
    ) -> Run:
        cmd = albumen_cmd() + ["build", str(src), "-o", str(out)]
        if conf is not None:
            cmd += ["-c", str(conf)]
        if self.jobs:
            cmd += ["-j", str(self.jobs)]
        cmd += list(flags)
        # A fresh ALBUMEN_CACHE_DIR per cold build; XDG_CACHE_HOME too, in case the variable is not honoured.
        env = {"ALBUMEN_CACHE_DIR": str(cache), "XDG_CACHE_HOME": str(cache / "xdg")}
        run = measure(label, "Albumen", cmd, cwd=cwd, env=env, log=log)
        output_stats(run, out)
        return run


def fresh(path: Path) -> Path:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def report_run(run: Run) -> None:
    status = "ok" if run.ok else f"FAILED rc={run.rc}"
    print(
        f"  {run.tool:8s} {run.label:34s} {run.wall:8.2f} s wall {run.cpu:8.2f} s CPU "
        f"{mib(run.peak_proc_rss):>7s} max proc {mib(run.peak_tree_pss):>7s} tree PSS  "
        f"{run.out_images} images  {status}"
        + (f"  (other load on the machine: {run.other_cpu:.1f} CPU s)" if run.other_cpu > 0.5 else ""),
        flush=True,
    )
    if not run.ok or run.parsed.get("traceback"):
        print("    log: " + run.log + "\n    " + run.log_tail.replace("\n", "\n    "), flush=True)


def mib(n: int) -> str:
    return f"{n / 2**20:.0f} MiB"


# ----------------------------------------------------------------------------- scenarios


@dataclass
class Ctx:
    quick: bool
    repeat: int
    tools: Tools
    c24: Path = Path()
    c24_count: int = 100
    tiny_sizes: tuple[int, ...] = (10_000, 100_000)
    sigal_tiny_max: int = 10_000


def corpus_c24(ctx: Ctx) -> Path:
    c24 = corpora.make_c24()
    if ctx.quick:
        ctx.c24_count = 10
        return corpora.subset_corpus(c24, 10, corpora.CORPORA / "c24-quick10")
    return c24


def scenario_full(ctx: Ctx, name: str = "full") -> dict:
    src = corpus_c24(ctx)
    work = fresh(WORK / name)
    if name == "full":
        scon = sigal_conf(work / "sigal.conf.py", SIGAL_IMG)
        acon = albumen_conf(work / "albumen.toml", albumen_toml([800], SIGAL_QUALITY, SIGAL_THUMB[1]))
        spec = (
            f"Sigal: img_size {SIGAL_IMG}, thumb_size {SIGAL_THUMB} (cropped to fill), JPEG quality "
            f"{SIGAL_QUALITY}, progressive (its default). Albumen: sizes [800] (long edge, like Sigal's box with "
            f"portrait swap), thumbnails height {SIGAL_THUMB[1]} (aspect kept), quality {SIGAL_QUALITY}, baseline "
            f"(its default: images.progressive = false), plus its placeholder. The floor: Albumen's outputs."
        )
    else:
        scon = sigal_conf(work / "sigal.conf.py", (2048, 1536))
        acon = None
        spec = (
            "Sigal: img_size (2048, 1536), thumb_size (280, 210), JPEG quality 85. Albumen: no config, its "
            "defaults: srcset widths 640/1024/1600/2048, thumbnails 320 high, placeholder, JPEG quality 82."
        )
    print(f"\n## {name}: {src.name}, {ctx.repeat} run(s) per tool\n  {spec}", flush=True)
    warm(src)
    runs: list[Run] = []
    # the floor (bench/floor.py: the image work alone) runs beside them at Sigal's sizes
    tools = ("Sigal", "Albumen", "Floor") if name == "full" else ("Sigal", "Albumen")
    for i in range(ctx.repeat):
        for tool in tools:
            d = fresh(work / f"{tool.lower()}-{i}")
            if tool == "Sigal":
                r = ctx.tools.sigal(f"cold #{i + 1}", src, d / "out", scon, d / "log.txt", cwd=d)
            elif tool == "Floor":
                r = ctx.tools.floor(f"cold #{i + 1}", src, d / "out", d / "log.txt", cwd=d)
            else:
                r = ctx.tools.albumen(
                    f"cold #{i + 1}", src, d / "out", acon, d / "cache", d / "log.txt", cwd=d
                )
            report_run(r)
            runs.append(r)
            if i + 1 < ctx.repeat:
                shutil.rmtree(d / "out", ignore_errors=True)
    configs = {"sigal.conf.py": scon.read_text()}
    if acon:
        configs["albumen.toml"] = acon.read_text()
    return {
        "scenario": name,
        "corpus": rel(src),
        "photos": ctx.c24_count,
        "spec": spec,
        "configs": configs,
        "runs": [asdict(r) for r in runs],
    }


def scenario_full2048(ctx: Ctx) -> dict:
    return scenario_full(ctx, "full2048")


def scenario_nochange(ctx: Ctx) -> dict:
    work = fresh(WORK / "nochange")
    scon = sigal_conf(work / "sigal.conf.py", SIGAL_IMG)
    acon = albumen_conf(work / "albumen.toml", albumen_toml([800], SIGAL_QUALITY, SIGAL_THUMB[1]))
    sets = [("c24", corpus_c24(ctx), ctx.c24_count)]
    sizes = (1000, 3000) if ctx.quick else ctx.tiny_sizes
    sets += [(f"tiny-{n}", corpora.make_tiny(n), n) for n in sizes]
    sigal_max = 1000 if ctx.quick else ctx.sigal_tiny_max
    print(
        "\n## nochange: cold build, then a rebuild with nothing changed (same output, same cache)", flush=True
    )
    runs: list[Run] = []
    for key, corpus_src, n in sets:
        warm(corpus_src)
        for tool in ("Sigal", "Albumen"):
            if tool == "Sigal" and key.startswith("tiny") and n > sigal_max:
                continue
            d = fresh(work / f"{key}-{tool.lower()}")
            src = corpus_src
            phases = ["cold", "rebuild"]
            if tool == "Albumen":  # a hard-linked copy: its third build follows one photo's change
                src = d / "photos"
                subprocess.run(["cp", "-al", str(corpus_src), str(src)], check=True)
                phases.append("changed")
            code = code_fingerprint()
            for phase in phases:
                label = f"{key} {n} photos {phase}"
                if phase == "changed":
                    _resave(_first_photo(src))
                before = snapshot_images(d / "out") if phase != "cold" else {}
                if tool == "Sigal":
                    r = ctx.tools.sigal(label, src, d / "out", scon, d / f"log-{phase}.txt", cwd=d)
                else:
                    r = ctx.tools.albumen(
                        label, src, d / "out", acon, d / "cache", d / f"log-{phase}.txt", cwd=d
                    )
                r.parsed.update(corpus=key, n=n, phase=phase)
                if phase != "cold":
                    after = snapshot_images(d / "out")
                    r.parsed["remade_files"] = sum(1 for p, v in after.items() if before.get(p) != v)
                    if tool == "Albumen" and code_fingerprint() != code:
                        r.parsed["code_changed"] = True
                report_run(r)
                if phase == "changed":
                    print(f"    {r.parsed['remade_files']} image files re-made after one photo changed", flush=True)
                elif r.parsed.get("remade_files"):
                    print(
                        f"    {r.parsed['remade_files']} image files were re-made by the no-change rebuild",
                        flush=True,
                    )
                if r.parsed.get("code_changed"):
                    print(
                        "    Albumen's source changed during this pair of builds: the rebuild is not valid",
                        flush=True,
                    )
                runs.append(r)
                if not r.ok:
                    break
            shutil.rmtree(d / "out", ignore_errors=True)
            shutil.rmtree(d / "photos", ignore_errors=True)
    return {
        "scenario": "nochange",
        "configs": {"sigal.conf.py": scon.read_text(), "albumen.toml": acon.read_text()},
        "runs": [asdict(r) for r in runs],
    }


def _first_photo(root: Path) -> Path:
    """The first photo in name order, found without listing a whole 100,000-photo tree."""
    folder = root
    while True:
        entries = sorted(folder.iterdir())
        photos = [p for p in entries if p.suffix.lower() == ".jpg"]
        if photos:
            return photos[0]
        folder = next(p for p in entries if p.is_dir())


def _resave(photo: Path) -> None:
    """Rewrite the photo's bytes: same picture with one pixel nudged, EXIF kept, replaced atomically
    (a new inode, so the hard-linked corpus is untouched)."""
    from PIL import Image

    with Image.open(photo) as im:
        exif = im.info.get("exif", b"")
        im = im.convert("RGB")
        r, g, b = im.getpixel((0, 0))
        im.putpixel((0, 0), ((r + 8) % 256, g, b))
        tmp = photo.with_name(photo.name + ".tmp")
        im.save(tmp, "JPEG", quality=90, exif=exif)
    os.replace(tmp, photo)


def scenario_changes(ctx: Ctx) -> dict:
    corpus = corpus_c24(ctx)
    work = fresh(WORK / "changes")
    src = work / "photos"
    subprocess.run(["cp", "-al", str(corpus), str(src)], check=True)
    (src / "corpus_manifest_0.json").unlink(missing_ok=True)
    photos = sorted(src.rglob("*.jpg"))
    n = len(photos)
    resaved, touched, captioned = photos[0], photos[1], photos[2]
    sidecar = captioned.with_suffix(".md")
    sidecar.write_text("Title: Bench caption one\n\nA photo with a sidecar.\n")
    sizes = [640, 1024, 1600, 2048]
    conf = work / "albumen.toml"
    extra = 'formats = ["jpeg"]\n'
    conf.write_text(albumen_toml(sizes, 82, 320, extra))
    out, cache = work / "out", work / "cache"
    warm(src)
    print(
        f"\n## changes: Albumen rebuilds after one change each ({n} photos, sizes {sizes} + thumbnail)",
        flush=True,
    )

    def build(label: str, expected: int | None) -> dict:
        before = snapshot_images(out) if out.exists() else {}
        r = ctx.tools.albumen(
            label, src, out, conf, cache, work / f"log-{len(steps)}.txt", cwd=work, flags=("-v",)
        )
        after = snapshot_images(out)
        remade = sorted(p for p, v in after.items() if before.get(p) != v)
        removed = sorted(p for p in before if p not in after)
        report_run(r)
        step = {
            "label": label,
            "expected": expected,
            "reported": r.parsed.get("derivatives_made"),
            "remade_files": len(remade),
            "removed_files": len(removed),
            "remade_sample": remade[:8],
            "run": asdict(r),
        }
        got = step["reported"] if step["reported"] is not None else step["remade_files"]
        step["ok"] = r.ok and (expected is None or got == expected)
        print(
            f"    derivatives expected {expected}, reported by albumen {step['reported']}, image files "
            f"(re)written {len(remade)}, removed {len(removed)}",
            flush=True,
        )
        steps.append(step)
        return step

    steps: list[dict] = []
    build("cold build", n * (len(sizes) + 1))
    build("no change", 0)
    _resave(resaved)
    build(f"(a) one photo's bytes rewritten ({resaved.name})", len(sizes) + 1)
    os.utime(touched, ns=(time.time_ns(), time.time_ns() + 10**9))
    build(f"(a') one photo touched, same bytes ({touched.name})", 0)
    sidecar.write_text("Title: Bench caption two\n\nA photo with a sidecar.\n")
    s = build("(b) one sidecar's title edited", 0)
    s["title_in_pages"] = any(
        "Bench caption two" in p.read_text(errors="replace") for p in out.rglob("*.html")
    )
    s["old_title_in_pages"] = any(
        "Bench caption one" in p.read_text(errors="replace") for p in out.rglob("*.html")
    )
    print(
        f"    new title in pages: {s['title_in_pages']}, old title still in pages: {s['old_title_in_pages']}"
    )
    conf.write_text(albumen_toml(sizes, 82, 280, extra))
    s = build("(c) thumbnails height 320 -> 280", n)
    s["thumbs_280_high"] = _count_height(out, 280)
    print(f"    image files 280 px high in the output: {s['thumbs_280_high']}")
    shutil.rmtree(out, ignore_errors=True)
    return {
        "scenario": "changes",
        "corpus": rel(corpus),
        "photos": n,
        "configs": {"albumen.toml (before c)": albumen_toml(sizes, 82, 320, extra)},
        "steps": steps,
    }


def _count_height(out: Path, height: int) -> int:
    from PIL import Image

    k = 0
    for p in out.rglob("*"):
        if p.suffix.lower() in IMAGE_EXT:
            with Image.open(p) as im:
                k += im.size[1] == height
    return k


# ----------------------------------------------------------------------------- tables


def fmt_s(x: float) -> str:
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def best_run(runs: list[dict]) -> dict:
    """The fastest successful run: on a machine other sessions may share, noise only ever adds time."""
    ok = [r for r in runs if r["rc"] == 0] or runs
    return min(ok, key=lambda r: r["wall"])


def status(r: dict) -> str:
    return "" if r["rc"] == 0 else f" **FAILED rc={r['rc']}**"


def table_full(res: dict) -> str:
    lines = [
        "| tool | wall s (best of N) | CPU s (user+sys) | CPU/wall | peak RSS, biggest process | peak RSS, tree | "
        "peak PSS, tree | image files | image MB | other load, CPU s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    med = {}
    for tool in ("Sigal", "Albumen", "Floor"):
        runs = [r for r in res["runs"] if r["tool"] == tool]
        if not runs:
            continue
        r = med[tool] = best_run(runs)
        walls = "all: " + ", ".join(fmt_s(x["wall"]) for x in runs)
        cpu = r["cpu_user"] + r["cpu_sys"]
        lines.append(
            f"| {tool}{status(r)} | {fmt_s(r['wall'])}"
            + (f" ({walls})" if len(runs) > 1 else "")
            + f" | {fmt_s(cpu)} | {cpu / r['wall']:.2f} | {mib(r['peak_proc_rss'])} | "
            f"{mib(max(x['peak_tree_rss'] for x in runs))} | {mib(max(x['peak_tree_pss'] for x in runs))} | "
            f"{r['out_images']} | {r['out_image_bytes'] / 1e6:.1f} | {r.get('other_cpu', 0):.1f} |"
        )
    ok = {tool: m for tool, m in med.items() if m["rc"] == 0}
    if "Sigal" in ok and "Albumen" in ok:
        s, a = ok["Sigal"], ok["Albumen"]
        lines.append("")
        lines.append(
            f"Sigal / Albumen: wall **{s['wall'] / a['wall']:.2f}x**, CPU "
            f"{(s['cpu_user'] + s['cpu_sys']) / (a['cpu_user'] + a['cpu_sys']):.2f}x, "
            f"peak tree PSS {s['peak_tree_pss'] / max(1, a['peak_tree_pss']):.2f}x."
        )
        if "Floor" in ok:
            f = ok["Floor"]
            lines.append(
                f"Floor (`bench/floor.py`: the image work alone, no pages, metadata, hash or cache): "
                f"Sigal / floor {s['wall'] / f['wall']:.2f}x in wall time, the most these decoders allow here; "
                f"Albumen takes {a['wall'] / f['wall']:.2f}x the floor's wall time "
                f"({(a['cpu_user'] + a['cpu_sys']) / (f['cpu_user'] + f['cpu_sys']):.2f}x its CPU)."
            )
        paired = _paired_ratios(res["runs"])
        if paired:
            lines.append(
                "Paired by round (each round runs the tools back to back, so a machine that slows down for a "
                "while slows all of them): " + "; ".join(paired) + "."
            )
    return "\n".join(lines)


def _paired_ratios(runs: list[dict]) -> list[str]:
    """Per-round wall-time ratios (Sigal / Albumen, Sigal / floor) and their medians."""
    rounds: dict[str, dict[str, float]] = {}
    for r in runs:
        if r["rc"] == 0:
            rounds.setdefault(r["label"], {})[r["tool"]] = r["wall"]
    out = []
    for other, name in (("Albumen", "Sigal / Albumen"), ("Floor", "Sigal / floor")):
        ratios = [t["Sigal"] / t[other] for t in rounds.values() if "Sigal" in t and other in t]
        if len(ratios) > 1:
            out.append(
                f"{name} " + ", ".join(f"{x:.2f}" for x in ratios) + f" (median **{statistics.median(ratios):.2f}x**)"
            )
    return out


def table_nochange(res: dict) -> str:
    lines = [
        "| corpus | photos | tool | cold wall s | cold CPU s | cold peak RSS, biggest process | cold peak PSS | "
        "**rebuild wall s** | rebuild CPU s | rebuild peak PSS | image files re-made by the rebuild | "
        "one photo changed: wall s | its peak RSS, biggest process | image files re-made |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    runs = res["runs"]
    seen = []
    for r in runs:
        key = (r["parsed"].get("corpus"), r["tool"])
        if key not in seen:
            seen.append(key)
    notes = []
    for corpus, tool in seen:
        rs = {
            r["parsed"]["phase"]: r for r in runs if (r["parsed"].get("corpus"), r["tool"]) == (corpus, tool)
        }
        c, b = rs.get("cold"), rs.get("rebuild")
        n = (c or b)["parsed"].get("n")
        row = f"| {corpus} | {n:,} | {tool} |"
        row += (
            f" {fmt_s(c['wall'])}{status(c)} | {fmt_s(c['cpu_user'] + c['cpu_sys'])} | {mib(c['peak_proc_rss'])} | "
            f"{mib(c['peak_tree_pss'])} |"
            if c
            else " - | - | - | - |"
        )
        if b and c:
            invalid = " (invalid: code changed)" if b["parsed"].get("code_changed") else ""
            row += (
                f" **{fmt_s(b['wall'])}**{status(b)}{invalid} | {fmt_s(b['cpu_user'] + b['cpu_sys'])} | "
                f"{mib(b['peak_tree_pss'])} | {b['parsed'].get('remade_files', '-')} |"
            )
            if b["parsed"].get("code_changed"):
                notes.append(
                    f"{tool} on {corpus}: Albumen's source changed between the cold build and the rebuild "
                    "(development went on during the run), so that rebuild re-made derivatives; rerun it."
                )
        else:
            row += " - | - | - | - |"
        ch = rs.get("changed")
        row += (
            f" {fmt_s(ch['wall'])}{status(ch)} | {mib(ch['peak_proc_rss'])} | {ch['parsed'].get('remade_files', '-')} |"
            if ch
            else " - | - | - |"
        )
        lines.append(row)
    if any(r["parsed"].get("phase") == "changed" for r in runs):
        notes.append(
            "One photo changed: Albumen's third build, on a hard-linked copy of the corpus, after the first photo "
            "(in name order) was re-saved with one pixel nudged; its derivatives (2 here: an 800 px image and a "
            "thumbnail) are expected to be re-made, and every page that shows the photo re-rendered."
        )
    return "\n".join(lines + ([""] + notes if notes else []))


def table_changes(res: dict) -> str:
    lines = [
        "| step | wall s | CPU s | peak PSS | derivatives expected | reported by albumen | "
        "image files (re)written | stale files removed | as expected |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for s in res["steps"]:
        r = s["run"]
        rep = "-" if s["reported"] is None else str(s["reported"])
        exp = "-" if s["expected"] is None else str(s["expected"])
        lines.append(
            f"| {s['label']}{status(r)} | {fmt_s(r['wall'])} | {fmt_s(r['cpu_user'] + r['cpu_sys'])} | "
            f"{mib(r['peak_tree_pss'])} | {exp} | {rep} | {s['remade_files']} | {s['removed_files']} | "
            f"{'yes' if s['ok'] else '**no**'} |"
        )
    notes = []
    for s in res["steps"]:
        if "title_in_pages" in s:
            notes.append(
                f"After (b) the new title is in the pages: {s['title_in_pages']}; the old one is still "
                f"somewhere: {s['old_title_in_pages']}."
            )
        if "thumbs_280_high" in s:
            notes.append(f"After (c) image files 280 px high in the output: {s['thumbs_280_high']}.")
    return "\n".join(lines + ([""] + notes if notes else []))


def shown_runs(res: dict) -> list[dict]:
    """The runs whose numbers a table shows: the best per tool for full/full2048, else all."""
    if res["scenario"] in ("full", "full2048"):
        tools = {r["tool"] for r in res["runs"]}
        return [best_run([r for r in res["runs"] if r["tool"] == t]) for t in sorted(tools)]
    return list(res.get("runs", [])) + [s["run"] for s in res.get("steps", [])]


def background_note(res: dict) -> str:
    runs = shown_runs(res)
    if not runs:
        return ""
    worst = max(runs, key=lambda r: r.get("other_cpu", 0) / max(r["wall"], 1e-9))
    share = worst.get("other_cpu", 0) / max(worst["wall"] * res["env"]["nproc"], 1e-9)
    text = (
        f"Other load on the machine during the runs shown: at most {share:.0%} of its CPU capacity "
        f"({worst.get('other_cpu', 0):.1f} CPU s during {worst['tool']} {worst['label']})."
    )
    if share > 0.1:
        text += " **Those numbers are disturbed; rerun on a quiet machine.**"
    return text


def render_table(name: str, res: dict) -> str:
    note = background_note(res)
    return TABLES[name](res) + (f"\n\n{note}" if note else "")


TABLES = {"full": table_full, "full2048": table_full, "nochange": table_nochange, "changes": table_changes}
TITLES = {
    "full": "Full cold build, Sigal's sizes (800x600 images, 280x210 thumbnails)",
    "full2048": "Full cold build, Albumen's defaults vs Sigal at 2048x1536",
    "nochange": "No-change rebuild",
    "changes": "Incremental rebuilds (Albumen)",
}


# ----------------------------------------------------------------------------- environment + README


def _out(cmd: list[str], cwd: Path = REPO) -> str:
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def environment() -> dict:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = psutil.virtual_memory().total
    vips = _out(
        [sys.executable, "-c", "import pyvips; print('.'.join(str(pyvips.version(i)) for i in range(3)))"]
    )
    pillow = _out([sys.executable, "-c", "import PIL; print(PIL.__version__)"])
    sig_py = SIGAL.with_name("python")
    sig_pillow = _out([str(sig_py), "-c", "import PIL; print(PIL.__version__)"]) if sig_py.exists() else ""
    commit = _out(["git", "rev-parse", "--short", "HEAD"])
    dirty = bool(_out(["git", "status", "--porcelain", "--", "src"]))
    return {
        "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "nproc": len(os.sched_getaffinity(0)),
        "cpu": cpu,
        "mem_gib": round(mem / 2**30, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "albumen": _out(albumen_cmd() + ["--version"]),
        "albumen_commit": commit + (" + uncommitted changes in src/" if dirty else ""),
        "libvips": vips,
        "pillow_albumen": pillow,
        "sigal": _out([str(SIGAL), "--version"]) if SIGAL.exists() else "not installed",
        "pillow_sigal": sig_pillow,
        "jobs": "default (all cores) for both tools",
    }


def render_results(results: dict[str, dict]) -> str:
    parts = [
        START,
        "",
        "## Results",
        "",
        "_This section is written by `bench/bench.py`; edit the text above the markers instead._",
        "",
    ]
    for name in SCENARIOS:
        res = results.get(name)
        if not res:
            continue
        env = res["env"]
        parts += [
            f"### {TITLES[name]}",
            "",
            f"Run {env['date']} on {env['nproc']} cores ({env['cpu']}, {env['mem_gib']} GiB), Linux "
            f"{env['kernel']}, Python {env['python']}; {env['albumen']} at {env['albumen_commit']} "
            f"(libvips {env['libvips']}, Pillow {env['pillow_albumen']}); {env['sigal']} "
            f"(Pillow {env['pillow_sigal']}). Jobs: {env['jobs']}.",
            "",
            f"Command: `{res['command']}`",
            "",
        ]
        if res.get("spec"):
            parts += [res["spec"], ""]
        if res.get("corpus"):
            parts += [f"Corpus: `{res['corpus']}` ({res.get('photos')} photos).", ""]
        parts += [render_table(name, res), ""]
        cmds = _tool_commands(res)
        if cmds:
            parts += [
                "<details><summary>Exact tool commands and configs</summary>",
                "",
                "```sh",
                *cmds,
                "```",
                "",
            ]
            for fname, text in res.get("configs", {}).items():
                parts += [f"`{fname}`:", "", "```", text.rstrip(), "```", ""]
            parts += ["</details>", ""]
    parts.append(END)
    return "\n".join(parts)


def _tool_commands(res: dict) -> list[str]:
    runs = list(res.get("runs", [])) + [s["run"] for s in res.get("steps", [])]
    seen, cmds = set(), []
    for r in runs:
        cmd = [rel(c) if c.startswith("/") else c for c in r["cmd"]]
        if cmd and Path(cmd[0]).name == "albumen":
            cmd[0] = "albumen"  # the console script of the venv Albumen is installed in
        elif cmd and Path(cmd[0]).name.startswith("python"):
            cmd[0] = "python"  # the venv Albumen is installed in
        prefix = "ALBUMEN_CACHE_DIR=<fresh dir> " if r["tool"] == "Albumen" else ""
        line = prefix + shlex.join(cmd)
        key = re.sub(r"-\d+/", "-N/", line)
        if key not in seen:
            seen.add(key)
            cmds.append(f"# {r['tool']}, {r['label']}\n{line}")
    return cmds


def update_readme(results: dict[str, dict]) -> None:
    text = README.read_text() if README.exists() else "# Benchmarks\n"
    block = render_results(results)
    if START in text and END in text:
        head, rest = text.split(START, 1)
        tail = rest.split(END, 1)[1]
        text = head + block + tail
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    README.write_text(text)


def load_results() -> dict[str, dict]:
    out = {}
    for name in SCENARIOS:
        p = RESULTS / f"{name}.json"
        if p.exists():
            try:
                out[name] = json.loads(p.read_text())
            except ValueError:
                pass
    return out


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "scenario",
        choices=SCENARIOS + ["all", "readme"],
        help="'all' runs every scenario; 'readme' only rewrites the README section from bench/results",
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 10 of the 24 MP photos, 1,000/3,000 tiny ones; results go to "
        "bench/results/quick-*.json and the README is not touched",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="cold runs per tool in full/full2048, alternating tools; the fastest is reported "
        "(default 3, 1 with --quick)",
    )
    ap.add_argument(
        "--jobs", type=int, default=None, help="worker processes for both tools (default: all cores)"
    )
    ap.add_argument("--no-readme", action="store_true", help="do not update bench/README.md")
    ap.add_argument(
        "--quiet-wait",
        type=float,
        default=60.0,
        help="before each run, wait up to this many seconds for the rest of the machine to go "
        "quiet (default 60; 0 to never wait)",
    )
    a = ap.parse_args(argv)

    if a.scenario == "readme":
        update_readme(load_results())
        print(f"updated {rel(README)}")
        return 0
    if not SIGAL.exists():
        print("Sigal is not installed: running bench/setup_sigal.sh", file=sys.stderr)
        subprocess.run(["bash", str(BENCH / "setup_sigal.sh")], check=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    compile_bytecode()
    QUIET["max_wait"] = max(0.0, a.quiet_wait)
    repeat = a.repeat if a.repeat is not None else (1 if a.quick else 3)
    ctx = Ctx(quick=a.quick, repeat=max(1, repeat), tools=Tools(a.jobs))
    names = SCENARIOS if a.scenario == "all" else [a.scenario]
    command = "python bench/bench.py " + " ".join(
        [a.scenario]
        + (["--quick"] if a.quick else [])
        + ([f"--repeat {a.repeat}"] if a.repeat is not None else [])
        + ([f"--jobs {a.jobs}"] if a.jobs else [])
    )
    env = environment()
    print(f"{env['albumen']} ({env['albumen_commit']}), {env['sigal']}; {env['nproc']} cores, {env['cpu']}")
    failed = False
    for name in names:
        t = time.perf_counter()
        res = globals()[f"scenario_{name}"](ctx)
        res.update(env=env, command=command, seconds=round(time.perf_counter() - t, 1))
        (RESULTS / f"{'quick-' if a.quick else ''}{name}.json").write_text(json.dumps(res, indent=1) + "\n")
        print(
            f"\n### {TITLES[name]}{' (quick)' if a.quick else ''}\n\n{render_table(name, res)}\n", flush=True
        )
        runs = res.get("runs", []) + [s["run"] for s in res.get("steps", [])]
        failed |= any(r["rc"] != 0 for r in runs) or any(not s["ok"] for s in res.get("steps", []))
        if not a.quick and not a.no_readme:
            update_readme(load_results())
    shutil.rmtree(WORK, ignore_errors=True)
    if not a.quick and not a.no_readme:
        print(f"results written to {rel(README)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
