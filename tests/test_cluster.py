"""Image and video jobs on a Dask cluster (process.cluster, process.remote): the same files as the
local pool, a worker killed mid-build, a photo that kills its workers, another Albumen on a worker.

One `dask scheduler` and two `dask worker` processes (with their nannies) on 127.0.0.1 serve the
whole module. Their workers load PRELOAD, which plays a slow decoder (photos named slow*) and one
that crashes its process (photos named poison*) and a slow disk (outputs named slow*, whose
temporary file is there a while)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

from conftest import (
    crawl,
    example_plugin_files,
    install_plugin,
    make_jpeg,
    make_png,
    make_video,
    tree_digest,
    write_config,
)

pytest.importorskip("distributed", reason="needs albumen[dask] (dask.distributed)")
pytestmark = pytest.mark.xdist_group("dask")  # one cluster for the module (scripts/test.sh: --dist loadgroup)

PRELOAD = """
import os, time

import albumen.fsutil as fsutil
import albumen.process.worker as worker

real = worker.__dict__.setdefault("real_make_outputs", worker._make_outputs)  # dask may run this file twice
real_write = worker.__dict__.setdefault("real_write_atomic", worker.write_atomic)


def planted(job, written):
    if os.path.basename(job.abs_src_path).startswith("poison"):
        os._exit(3)  # what a decoder bug meeting a hostile file does to its process
    return real(job, written)


def slow_write(abs_path, data):
    folder, name = os.path.split(abs_path)
    if not name.startswith("slow"):
        return real_write(abs_path, data)
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f"{fsutil.TMP_PREFIX}{os.getpid()}-slow-{name[:40]}")
    with open(tmp, "wb") as f:
        f.write(data[: len(data) // 2])  # half the file written, then a slow disk
    time.sleep(0.2)
    os.unlink(tmp)
    return real_write(abs_path, data)


worker._make_outputs = planted
worker.write_atomic = slow_write
"""


class Cluster:
    """A scheduler and named workers, each worker in a process group of its own (nanny and worker
    process: killing the group is a host gone)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.preload = folder / "planted.py"
        self.preload.write_text(PRELOAD)
        self.procs: dict[str, subprocess.Popen] = {}
        try:
            self._start_all(folder / "scheduler.json")
        except BaseException:  # nothing is left running
            self.stop()
            raise

    def _start_all(self, scheduler_file: Path) -> None:
        self.procs["scheduler"] = self._start(
            "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(scheduler_file),
        )
        deadline = time.time() + 60
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            assert time.time() < deadline and self.procs["scheduler"].poll() is None, "the scheduler did not start"
            time.sleep(0.1)
        time.sleep(0.1)
        self.address = json.loads(scheduler_file.read_text())["address"]
        for name in ("w1", "w2"):
            self.start_worker(name)
        self.wait_for(2)

    def _start(self, role: str, *args: str, name: str | None = None) -> subprocess.Popen:
        """A process that ends with this one, however it ends (a test run killed skips the fixture's
        teardown): SIGTERM when the test process dies, and else the scheduler ends when idle for five
        minutes and a worker when its scheduler is gone for one."""
        log = open(self.folder / f"{name or role}.log", "ab")  # noqa: SIM115 - closed with the process
        ends = ["--idle-timeout", "300"] if role == "scheduler" else ["--death-timeout", "60"]
        return subprocess.Popen([sys.executable, "-m", "dask", role, *args, *ends], stdout=log, stderr=log,
                                stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_die_with_us)

    def start_worker(self, name: str) -> None:
        self.procs[name] = self._start(
            "worker", self.address, "--name", name, "--nthreads", "1", "--no-dashboard", "--preload", str(self.preload),
            "--local-directory", str(self.folder / name), name=name,
        )

    def wait_for(self, workers: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=30, set_as_default=False) as client:
            client.wait_for_workers(workers, timeout=90)

    def kill(self, name: str) -> None:
        os.killpg(self.procs[name].pid, signal.SIGKILL)
        self.procs[name].wait()

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def _die_with_us() -> None:  # pragma: no cover - runs in the child, between fork and exec
    import ctypes

    ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    running = Cluster(tmp_path_factory.mktemp("dask"))
    yield running
    running.stop()


def albumen(*args: str, env: dict | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "albumen", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, env=env)


def check_images(site: Path) -> int:
    """Every image of the site decodes whole; no temporary file is left. Returns how many."""
    assert not [p for p in site.rglob("*") if p.name.startswith(".albumen-tmp")]
    images = [p for ext in ("jpg", "webp", "gif") for p in site.rglob(f"*.{ext}")]
    for path in images:
        with Image.open(path) as im:
            im.load()
    return len(images)


def animated_gif(path: Path) -> None:
    frames = [Image.new("RGB", (60, 40), (40 * i, 100, 200 - 40 * i)) for i in range(4)]
    path.parent.mkdir(parents=True, exist_ok=True)
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=100, loop=0)


def test_a_local_cluster_makes_the_same_site_as_the_local_pool(tmp_path):
    """--scheduler local:2: photos small (sent in batches) and large, an animated GIF, a PNG with
    alpha, a video with its poster, WebP beside JPEG, a bundled plugin's filter and an installed one's
    (imported by name in the Dask workers): the same files, byte for byte, as the local pool's."""
    src = tmp_path / "photos"
    for i in range(5):
        make_jpeg(src / "Small" / f"s{i}.jpg", size=(160 + 20 * i, 120), color=(40 * i, 90, 160))
    make_jpeg(src / "large.jpg", size=(1400, 900), color=(200, 120, 30))
    make_png(src / "Small" / "alpha.png", size=(80, 60))
    animated_gif(src / "moving.gif")
    make_video(src / "Clips" / "clip.mp4", seconds=1, size=(160, 120))
    plugins = install_plugin(tmp_path / "site-packages", example_plugin_files())
    conf = write_config(tmp_path, 'plugins = ["frame", "tint"]\n[plugin.frame]\nwidth = 3\n'
                        '[plugin.tint]\ncolour = "#ff0000"\nstrength = 0.5\n[images]\nformats = ["jpeg", "webp"]\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(plugins), os.environ.get("PYTHONPATH")]))}
    pool = albumen("build", str(src), "-o", str(tmp_path / "pool"), "-c", str(conf), "-j", "2", env=env)
    assert pool.returncode == 0, pool.stderr
    dask = albumen("build", str(src), "-o", str(tmp_path / "dask"), "-c", str(conf), "--scheduler", "local:2", env=env)
    assert dask.returncode == 0, dask.stderr
    assert "images made on the Dask cluster at local:2" in dask.stdout and "up to 2 workers" in dask.stdout, dask.stdout
    assert "skipped" not in dask.stderr, dask.stderr
    made = tree_digest(tmp_path / "dask")
    assert made == tree_digest(tmp_path / "pool")
    assert check_images(tmp_path / "dask") >= 25 and any(name.endswith(".mp4") for name in made)
    display = next((tmp_path / "dask" / "small" / "s0").glob("s0.*w.*.jpg"))
    with Image.open(display) as im:  # a white border (frame), then everything tinted half red (tint)
        rgb = im.convert("RGB")
        centre, corner = rgb.getpixel((rgb.width // 2, rgb.height // 2)), rgb.getpixel((0, 0))
    assert all(abs(a - b) <= 8 for a, b in zip(centre, (127, 45, 80), strict=True)), centre  # from (0, 90, 160)
    assert all(abs(a - b) <= 8 for a, b in zip(corner, (255, 127, 127), strict=True)), corner


def test_a_build_through_a_dask_scheduler_and_two_workers(cluster, tmp_path):
    src = tmp_path / "photos"
    for i in range(6):
        make_jpeg(src / "A" / f"p{i}.jpg", size=(200, 150), color=(30 * i, 60, 90))
    make_jpeg(src / "big.jpg", size=(1300, 1000))
    site = tmp_path / "site"
    done = albumen("build", str(src), "-o", str(site), "--scheduler", cluster.address)
    assert done.returncode == 0, done.stderr
    assert f"images made on the Dask cluster at {cluster.address}" in done.stdout, done.stdout
    assert "7 photos" in done.stdout and "0 skipped" in done.stdout
    assert check_images(site) >= 7 * 2 and len(list(site.rglob("*.thumb.*.jpg"))) == 7 and crawl(site).broken == []
    local = albumen("build", str(src), "-o", str(tmp_path / "local"))
    assert local.returncode == 0 and tree_digest(site) == tree_digest(tmp_path / "local")

    def _page_faults_reusing_memory() -> int:
        """Page faults of this thread to fill a 48 MiB buffer just freed: none when the allocator kept
        it, as the local pool's workers do (pool._keep_freed_memory); ~12,000 under the nanny's
        MALLOC_TRIM_THRESHOLD_."""
        import resource

        def fill() -> int:
            before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
            data = bytearray(48 << 20)
            data[:: 1 << 12] = b"\1" * len(range(0, 48 << 20, 1 << 12))
            del data
            return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before

        fill()
        return fill()

    from distributed import Client

    with Client(cluster.address, timeout=30, set_as_default=False) as client:  # (a nested function travels by value)
        faults = client.run(_page_faults_reusing_memory)
        environ = client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
    # the workers made images: the nanny's setting is undone in both (and in the ffmpeg they start)
    assert len(faults) == 2 and all(n < 1000 for n in faults.values()), faults
    assert set(environ.values()) == {None}, environ


def test_a_worker_killed_mid_build_costs_a_retry_not_the_build(cluster, tmp_path):
    src = tmp_path / "photos"
    for i in range(10):  # over a megapixel: a task each, so that both workers are busy
        make_jpeg(src / f"slow{i:02}.jpg", size=(1100, 950), color=(15 * i, 80, 120))
    site = tmp_path / "site"
    build = subprocess.Popen(
        [sys.executable, "-m", "albumen", "build", str(src), "-o", str(site), "--scheduler", cluster.address],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 120
        while len(list(site.rglob("*.thumb.*.jpg"))) < 2:
            assert time.time() < deadline and build.poll() is None, build.communicate()
            time.sleep(0.05)
        cluster.kill("w2")  # the worker and its nanny, mid-write: a host gone, its task with it
        assert build.poll() is None, "killed mid-build"
        out, err = build.communicate(timeout=180)
    finally:
        if build.poll() is None:
            build.kill()
        cluster.start_worker("w2")
    assert build.returncode == 0, err
    assert "10 photos" in out and "0 skipped" in out and "skipped:" not in err, out + err
    # every image whole and no temporary file left, though the killed worker was writing one
    assert check_images(site) >= 10 * 3 and len(list(site.rglob("*.thumb.*.jpg"))) == 10 and crawl(site).broken == []
    again = albumen("build", str(src), "-o", str(site), "-v")
    assert again.returncode == 0 and "nothing changed since the last build" in again.stdout, again.stdout
    cluster.wait_for(2)


def test_a_photo_that_kills_its_workers_is_skipped_and_named(cluster, tmp_path):
    src = tmp_path / "photos"
    for name in ("a", "poison", "b", "c"):
        make_jpeg(src / f"{name}.jpg", size=(200, 150))  # small: one batch, retried job by job
    site = tmp_path / "site"
    done = albumen("build", str(src), "-o", str(site), "--scheduler", cluster.address)
    assert done.returncode == 0, done.stderr
    assert "skipped: poison.jpg: the worker crashed (4 Dask workers died running it" in done.stderr, done.stderr
    assert "3 photos" in done.stdout and "1 skipped" in done.stdout, done.stdout + done.stderr
    assert {p.parent.name for p in site.rglob("*.jpg")} == {"a", "b", "c"}
    assert check_images(site) == 3 * 2 and crawl(site).broken == []
    cluster.wait_for(2)  # the nannies started new workers


OTHER_ALBUMEN = """
import sys

import albumen

albumen.__version__ = "0.0.0+other"  # this build's Albumen, as the workers' is not

from albumen.cli import main

sys.argv = ["albumen", *sys.argv[1:]]
main()
"""


def test_another_albumen_on_a_worker_stops_the_build_naming_both(cluster, tmp_path):
    src = tmp_path / "photos"
    make_jpeg(src / "a.jpg", size=(200, 150))
    script = tmp_path / "other_albumen.py"
    script.write_text(OTHER_ALBUMEN)
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, str(script), "build", str(src), "-o", str(site), "--scheduler", cluster.address],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "runs another Albumen than this build" in done.stderr, done.stderr
    from albumen import __version__

    assert f"worker: Albumen {__version__} (code " in done.stderr and "build:  Albumen 0.0.0+other (code " in done.stderr
    assert not list(site.rglob("*.jpg"))


def test_a_task_for_another_albumen_is_refused_by_the_worker():
    """A worker that joins after the build connected checks every task."""
    from albumen.process import remote

    with pytest.raises(remote.WrongAlbumen) as refused:
        remote.run_task("Albumen 0.0.0 (code 0)", len, "abc", None)
    assert refused.value.worker == remote.identity() and remote.run_task(remote.identity(), len, "abc", None) == 3


@pytest.mark.parametrize("value", ["local:0", "udp://host:1", "tcp://host", "host", "local:two"])
def test_a_wrong_scheduler_setting_is_a_config_error(tmp_path, value):
    from albumen.config import load_config
    from albumen.errors import ConfigError

    conf = write_config(tmp_path, f'scheduler = "{value}"\n')
    with pytest.raises(ConfigError, match="scheduler: expected 'local', 'local:N' or a Dask scheduler's address"):
        load_config(conf)
