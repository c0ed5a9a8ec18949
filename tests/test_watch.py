"""albumen watch and --each: galleries kept built headless, one at a time, with one worker pool."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from albumen.host.sites import Site, find_galleries
from albumen.host.watch import EachGallery, OneGallery, WatchOptions, watch_galleries
from conftest import crawl, make_jpeg, run_cli, soup, tree_digest


def wait_for(predicate, timeout=60.0, step=0.1) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


def three_galleries(root: Path) -> None:
    for i, name in enumerate(("Alice", "Bob", "Club Night")):
        make_jpeg(root / name / "Trip" / "a.jpg", size=(320, 240), color=(40 * i, 90, 30), date="2024:01:01 10:00:00")
        make_jpeg(root / name / "b.jpg", size=(320, 240), color=(90, 40 * i, 30), date="2024:01:02 10:00:00")


@pytest.fixture
def watching(tmp_path):
    """albumen watch --each on three galleries, in a thread; yields root, outroot, log."""
    root, out = tmp_path / "root", tmp_path / "out"
    three_galleries(root)
    log: list[str] = []
    options = WatchOptions(jobs=1, debounce_ms=200, settle_seconds=0.3, poll_seconds=0.5)
    galleries = EachGallery(root.resolve(), out.resolve(), "https://ex.org/photos")
    thread = threading.Thread(target=watch_galleries, args=(galleries, options, log.append), daemon=True)
    thread.start()
    assert options.ready.wait(120), log
    yield root, out, log
    options.stop.set()
    thread.join(30)
    assert not thread.is_alive()
    assert log[-1] == "stopped"


def test_watch_each_rebuilds_the_gallery_that_changed_and_no_other(watching):
    root, out, log = watching
    assert sorted(p.name for p in out.iterdir()) == ["alice", "bob", "club-night"]
    assert sorted(line.split(":")[0] for line in log if " built in " in line) == ["alice", "bob", "club-night"], log
    # each gallery is published under its slug, with that URL prefix
    assert "https://ex.org/photos/club-night/" in (out / "club-night" / "sitemap.xml").read_text()
    others = {name: tree_digest(out / name) for name in ("alice", "club-night")}
    make_jpeg(root / "Bob" / "Trip" / "c.jpg", size=(320, 240), color=(10, 200, 10), date="2024:01:03 10:00:00")
    assert wait_for(lambda: (out / "bob" / "trip" / "c" / "index.html").is_file()), log
    assert wait_for(lambda: any(line.startswith("bob: rebuilt in ") and "Trip/c.jpg" in line for line in log)), log
    page = soup(out / "bob" / "trip" / "index.html")
    assert page.select_one('a[href="c/"]') is not None
    assert {name: tree_digest(out / name) for name in others} == others  # no other gallery's file changed
    assert crawl(out / "bob").broken == []


def test_a_broken_config_in_one_gallery_is_reported_and_the_others_go_on(watching):
    root, out, log = watching
    (root / "Alice" / "albumen.toml").write_text("[images]\nquality = 'high'\n")
    assert wait_for(lambda: any(line.startswith("alice: rebuild failed") and "images.quality" in line for line in log)), log
    kept = tree_digest(out / "alice")
    make_jpeg(root / "Bob" / "d.jpg", size=(320, 240), color=(1, 2, 200))
    make_jpeg(root / "Club Night" / "d.jpg", size=(320, 240), color=(200, 2, 1))
    good = (root / "Club Night" / "d.jpg").read_bytes()
    (root / "Club Night" / "bad.jpg").write_bytes(good[: len(good) // 3])  # a bad photo: skipped, said
    assert wait_for(lambda: (out / "bob" / "d" / "index.html").is_file() and (out / "club-night" / "d" / "index.html").is_file()), log
    assert wait_for(lambda: any(line.startswith("club-night:   skipped: bad.jpg: ") for line in log)), log
    assert any(line.startswith("club-night: rebuilt in ") and line.endswith("; 1 skipped") for line in log), log
    assert tree_digest(out / "alice") == kept  # the last good site
    (root / "Alice" / "albumen.toml").write_text('title = "Alice again"\n')
    assert wait_for(lambda: any(line.startswith("alice: rebuilt in ") and "config" in line for line in log)), log
    assert "Alice again" in (out / "alice" / "index.html").read_text()


def test_a_broken_sidecar_is_said_and_the_rebuild_goes_on(watching):
    """A sidecar whose header cannot be read is a warning in the log; the photo beside it and the
    rest of the gallery are rebuilt, and the watch goes on."""
    root, out, log = watching
    (root / "Bob" / "Trip" / "a.md").write_text("---\ntitle: [not closed\n---\nA caption.\n")
    make_jpeg(root / "Bob" / "Trip" / "e.jpg", size=(320, 240), color=(1, 200, 2))
    assert wait_for(lambda: (out / "bob" / "trip" / "e" / "index.html").is_file()), log
    said = lambda: [line for line in log if line.startswith("bob:   warning: Trip/a.md: ") and "front matter" in line]  # noqa: E731
    assert wait_for(lambda: said()), log
    assert (out / "bob" / "trip" / "a" / "index.html").is_file() and crawl(out / "bob").broken == []
    make_jpeg(root / "Bob" / "f.jpg", size=(320, 240), color=(200, 1, 2))
    assert wait_for(lambda: (out / "bob" / "f" / "index.html").is_file()), log  # still watching
    assert wait_for(lambda: sum(1 for line in log if line.startswith("bob: rebuilt in ")) >= 2), log
    assert len(said()) == 1, log  # said once, not again at every rebuild while it stays


def test_galleries_share_one_pool_and_are_rebuilt_in_the_order_their_changes_came(tmp_path, monkeypatch):
    """One worker pool for every gallery (200 galleries are not 200 pools), one rebuild at a time, in
    the order the changes arrived."""
    import albumen.pool

    pools = []
    original = albumen.pool.WorkerPool.__init__

    def counted(self, *args, **kwargs):
        pools.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(albumen.pool.WorkerPool, "__init__", counted)
    root, out = tmp_path / "root", tmp_path / "out"
    three_galleries(root)
    log: list[str] = []
    options = WatchOptions(jobs=1, debounce_ms=200, settle_seconds=0.3, poll_seconds=0.5)
    thread = threading.Thread(target=watch_galleries, daemon=True,
                              args=(EachGallery(root.resolve(), out.resolve(), None), options, log.append))
    thread.start()
    try:
        assert options.ready.wait(120), log
        make_jpeg(root / "Club Night" / "g.jpg", size=(320, 240), color=(3, 3, 200))
        time.sleep(1.0)  # after the debounce: another batch of changes
        make_jpeg(root / "Alice" / "g.jpg", size=(320, 240), color=(200, 3, 3))
        assert wait_for(lambda: sum(1 for line in log if " rebuilt in " in line) >= 2), log
        rebuilt = [line.split(":")[0] for line in log if " rebuilt in " in line]
        assert rebuilt[:2] == ["club-night", "alice"], log
        assert len(pools) == 1, pools  # three galleries built, two rebuilt: one pool
    finally:
        options.stop.set()
        thread.join(30)
    assert log[-1] == "stopped"


def test_gallery_folders_added_and_removed_while_watching(watching):
    root, out, log = watching
    make_jpeg(root / "Dora" / "x.jpg", size=(320, 240), color=(5, 5, 250))
    assert wait_for(lambda: (out / "dora" / "x" / "index.html").is_file()), log
    mine = out / "bob" / "mine.txt"  # a file Albumen did not write
    mine.write_text("keep me")
    import shutil

    shutil.rmtree(root / "Bob")
    assert wait_for(lambda: any(line.startswith("bob: its folder was removed: took its site down") for line in log)), log
    assert [p.relative_to(out).as_posix() for p in (out / "bob").rglob("*")] == ["bob/mine.txt"]
    assert (out / "alice" / "index.html").is_file() and (out / "dora" / "index.html").is_file()


def test_a_photo_folder_missing_or_empty_keeps_the_site_and_comes_back(tmp_path):
    src, site = tmp_path / "photos", tmp_path / "site"
    make_jpeg(src / "a.jpg", size=(320, 240))
    make_jpeg(src / "b.jpg", size=(320, 240), color=(0, 0, 200))
    log: list[str] = []
    options = WatchOptions(jobs=1, debounce_ms=200, settle_seconds=0.3, poll_seconds=0.5)
    thread = threading.Thread(target=watch_galleries, daemon=True, args=(
        OneGallery(Site("", src.resolve(), site.resolve(), None)), options, log.append))
    thread.start()
    try:
        assert options.ready.wait(120), log
        built = tree_digest(site)
        away = tmp_path / "away"
        src.rename(away)  # unmounted
        src.mkdir()  # its empty mount point
        assert wait_for(lambda: any("is missing or empty" in line for line in log)), log
        time.sleep(1.5)
        assert tree_digest(site) == built  # nothing taken down
        src.rmdir()
        away.rename(src)  # mounted again
        make_jpeg(src / "c.jpg", size=(320, 240), color=(0, 200, 0))
        assert wait_for(lambda: (site / "c" / "index.html").is_file()), log
    finally:
        options.stop.set()
        thread.join(30)


def test_build_each_namespaces_private_links_and_takes_down_removed_galleries(tmp_path):
    root, out = tmp_path / "root", tmp_path / "out"
    for name in ("Ann", "Ben"):
        make_jpeg(root / name / "Family" / "a.jpg", size=(320, 240))
        (root / name / "Family" / "index.md").write_text("private: true\n")
        make_jpeg(root / name / "public.jpg", size=(320, 240))
    result = run_cli("build", "--each", str(root), "-o", str(out), "-j", "1")
    assert result.exit_code == 0, result.output
    assert "built 2 of 2 galleries" in result.stdout
    tokens = {name: [p.name for p in (out / name / "p").iterdir() if p.is_dir()] for name in ("ann", "ben")}
    assert len(tokens["ann"]) == len(tokens["ben"]) == 1 and tokens["ann"] != tokens["ben"]  # unrelated links
    assert not (out / "ann" / "family").exists()
    listed = run_cli("links", "--each", str(root), "-o", str(out), "--url", "https://ex.org/club/")
    for name in ("ann", "ben"):  # each gallery's own link, as published
        assert f"Family: https://ex.org/club/{name}/p/{tokens[name][0]}/" in listed.stdout, listed.output
    # a gallery that cannot be built is reported; the others are built
    (root / "Ann" / "albumen.toml").write_text("title = [\n")
    make_jpeg(root / "Ben" / "new.jpg", size=(320, 240))
    result = run_cli("build", "--each", str(root), "-o", str(out), "-j", "1")
    assert result.exit_code == 1 and "ann: build failed" in result.stderr and "failed: ann" in result.stdout
    assert (out / "ben" / "new" / "index.html").is_file() and (out / "ann" / "index.html").is_file()
    # a gallery folder removed: its site taken down by the next run
    import shutil

    shutil.rmtree(root / "Ben")
    result = run_cli("build", "--each", str(root), "-o", str(out), "-j", "1")
    assert "ben: its folder was removed: took its site down" in result.stdout, result.output
    assert not (out / "ben").exists()


def test_each_refuses_nested_roots_and_clashing_folder_names(tmp_path):
    root = tmp_path / "root"
    make_jpeg(root / "Alice" / "a.jpg")
    make_jpeg(root / "alice" / "a.jpg")
    result = run_cli("build", "--each", str(root), "-o", str(root / "site"))
    assert result.exit_code == 2 and "inside one another" in result.stderr
    found = find_galleries(root, tmp_path / "out")
    assert list(found.sites) == ["alice"] and "'Alice' and 'alice' would both be published at alice/" in found.problems[0]
    assert run_cli("build", str(root), "--each", str(root)).exit_code == 2


def _session_processes(sid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                pids.append(int(entry.name))
    return pids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_mid_rebuild_leaves_a_complete_site_and_no_worker(tmp_path, stop):
    """systemd's SIGTERM and a terminal's Ctrl-C (SIGINT) alike: the rebuild stops, the site stays whole."""
    root, out = tmp_path / "root", tmp_path / "out"
    three_galleries(root)
    log = (tmp_path / "watch.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "albumen", "watch", "--each", str(root), "-o", str(out), "-j", "2"],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    try:
        text = lambda: (tmp_path / "watch.log").read_text()  # noqa: E731
        assert wait_for(lambda: text().count(" built in ") == 3, timeout=120), text()
        for i in range(40):  # big photos: the rebuild takes a while
            make_jpeg(tmp_path / "Big" / f"p{i:02d}.jpg", size=(2400, 1600), color=(i * 5, 100, 200))
        (tmp_path / "Big").rename(root / "Bob" / "Big")  # all at once: one rebuild
        assert wait_for(lambda: len(list((out / "bob").rglob("*.thumb.*.jpg"))) >= 5, timeout=120), text()
        assert proc.poll() is None and len(_session_processes(proc.pid)) > 1  # workers busy
        proc.send_signal(stop)
        assert proc.wait(timeout=60) == 0, text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        log.close()
    assert wait_for(lambda: not _session_processes(proc.pid), timeout=15), _session_processes(proc.pid)
    assert "bob: stopped during a rebuild" in text() and text().rstrip().endswith("stopped")
    assert not list(out.rglob(".albumen-tmp-*"))
    for name in ("alice", "bob", "club-night"):
        assert crawl(out / name).broken == [], name  # every page's images in place


def test_an_output_held_by_another_build_is_built_once_free(tmp_path):
    from albumen.locks import hold_output

    src, site = tmp_path / "photos", tmp_path / "site"
    make_jpeg(src / "a.jpg", size=(320, 240))
    site.mkdir()
    log: list[str] = []
    options = WatchOptions(jobs=1, debounce_ms=200, settle_seconds=0.3, poll_seconds=0.5)
    with hold_output(site.resolve(), can_wait=False):  # another build writes it
        thread = threading.Thread(target=watch_galleries, daemon=True, args=(
            OneGallery(Site("", src.resolve(), site.resolve(), None)), options, log.append))
        thread.start()
        try:
            assert options.ready.wait(120), log
            assert any(line.startswith("not built yet: ") for line in log), log
            assert not (site / "index.html").exists()
        except BaseException:
            options.stop.set()
            raise
    try:
        assert wait_for(lambda: (site / "a" / "index.html").is_file()), log
        assert wait_for(lambda: any(line.startswith("built in ") for line in log)), log
    finally:
        options.stop.set()
        thread.join(30)
