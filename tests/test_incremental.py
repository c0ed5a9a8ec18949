"""Incremental builds: nothing redone without a reason, everything redone that has one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import build_site, crawl, make_jpeg, run_cli, soup, tree_digest, write_config


def snapshot(site: Path) -> dict[str, int]:
    """Output file -> mtime_ns."""
    return {str(p.relative_to(site)): p.stat().st_mtime_ns for p in site.rglob("*") if p.is_file()}


def images(snap: dict[str, int]) -> dict[str, int]:
    return {k: v for k, v in snap.items() if k.endswith((".jpg", ".webp", ".avif", ".gif")) and "/static/" not in k}


def changed(before: dict[str, int], after: dict[str, int]) -> set[str]:
    return {k for k in after if before.get(k) != after[k]}



@pytest.fixture
def gallery(tmp_path):
    src = tmp_path / "photos"
    for album in ("A", "B"):
        for i in range(1, 5):
            make_jpeg(src / album / f"p{i}.jpg", size=(900, 600), color=(40 * i, 90, 160),
                      date=f"2024:0{i}:01 10:00:00")
    return src


@pytest.fixture(params=["alone", "helped"])
def walk_helped(request, monkeypatch):
    """Builds of a photo folder as a small one's (the walk and the look at the output in this process)
    and as a large one's (with the workers' help: see build.PARALLEL_WALK)."""
    if request.param == "helped":
        monkeypatch.setattr("albumen.build.PARALLEL_WALK", 1)
    return request.param


def test_nothing_changed_means_nothing_redone(gallery, tmp_path, walk_helped):
    site = tmp_path / "site"
    build_site(gallery, site)
    before = snapshot(site)
    time.sleep(0.01)
    result = build_site(gallery, site, "-v")
    assert "made 0 derivatives; rendered 0 pages, wrote 0 files; removed 0 stale files" in result.stdout
    assert "nothing changed since the last build" in result.stdout  # the fast path: only a walk and stats
    assert "built 3 albums, 8 photos" in result.stdout  # the summary of the last build
    assert snapshot(site) == before
    (site / "index.html").unlink()  # a damaged output is noticed and repaired
    result = build_site(gallery, site, "-v")
    assert "nothing changed" not in result.stdout and (site / "index.html").is_file()
    (gallery / "A" / "p1.md").write_text("Title: x\n")
    assert "nothing changed" not in build_site(gallery, site, "-v").stdout


def test_files_deleted_or_changed_in_the_output_are_put_back(gallery, tmp_path, walk_helped):
    """With nothing changed in the photos, a rebuild checked only that index.html was there: an image
    deleted by hand from the output stayed missing (a broken image on its pages) and every later
    build said 'nothing changed'. Each file the last build wrote is now checked by its size and
    modification time (one stat each): one missing or cut short is made again, a page edited in
    place is written again, and one that only got a new time (a copy, a touch) is kept as it is."""
    site = tmp_path / "site"
    build_site(gallery, site)
    clean = tree_digest(site)
    for album in ("a", "b"):  # (B/p1 is A/p1's twin: either would be linked from the other)
        next(site.glob(f"{album}/p1/p1.thumb.*.jpg")).unlink()
    cut = next(site.glob("a/p2/p2.900w.*.jpg"))
    cut.write_bytes(cut.read_bytes()[:200])
    page = site / "b" / "p3" / "index.html"
    page.write_bytes(page.read_bytes().replace(b"<title>", b"<TITLE>", 1))  # same size, other bytes
    touched = next(site.glob("b/p4/p4.640w.*.jpg"))
    inode, mtime = touched.stat().st_ino, touched.stat().st_mtime_ns
    os.utime(touched, ns=(mtime + 10**10, mtime + 10**10))
    result = build_site(gallery, site, "-v")
    assert "nothing changed" not in result.stdout
    assert "5 files of the last build were missing or changed" in result.stdout, result.stdout
    assert "made 3 derivatives of 3 photos" in result.stdout  # those deleted and the one cut short
    assert tree_digest(site) == clean
    assert touched.stat().st_ino == inode  # kept: only its time had changed
    again = build_site(gallery, site, "-v")  # (its new time is the one recorded now)
    assert "nothing changed" in again.stdout and "missing or changed" not in again.stdout


def test_touch_alone_remakes_nothing(gallery, tmp_path):
    site = tmp_path / "site"
    build_site(gallery, site)
    before = snapshot(site)
    for path in gallery.rglob("*.jpg"):
        os.utime(path, None)
    result = build_site(gallery, site, "-v")
    assert "read 8 new or changed files" in result.stdout
    assert "made 0 derivatives;" in result.stdout
    assert snapshot(site) == before


def test_changed_photo_remakes_only_its_derivatives_and_pages(gallery, tmp_path):
    site = tmp_path / "site"
    build_site(gallery, site)
    before = snapshot(site)
    old_p2 = {k for k in images(before) if k.startswith("a/p2/")}
    make_jpeg(gallery / "A" / "p2.jpg", size=(900, 600), color=(250, 10, 10), date="2024:02:01 10:00:00")
    result = build_site(gallery, site, "-v")
    after = snapshot(site)
    remade = changed(images(before), images(after))
    assert remade and all(k.startswith("a/p2/") for k in remade)
    assert len(remade) == 3  # thumbnail, 640 px and the 900 px source size (never upscaled)
    assert not (old_p2 & set(after)), "old derivatives of the changed photo are removed"
    pages = {k for k in changed(before, after) if k.endswith(".html")}
    # its page, its album, the stream and the page before it (which prefetches its image, renamed);
    # the album's cover is p1, so the home page is unchanged
    assert pages == {"a/p2/index.html", "a/p1/index.html", "a/index.html", "stream/index.html"}
    assert "made 3 derivatives of 1 photo;" in result.stdout
    assert crawl(site).broken == []


def test_changed_sidecar_rerenders_without_image_work(gallery, tmp_path):
    site = tmp_path / "site"
    (gallery / "B" / "p3.md").write_text("Title: Before\n")
    build_site(gallery, site)
    before = snapshot(site)
    (gallery / "B" / "p3.md").write_text("Title: After\n")
    result = build_site(gallery, site, "-v")
    after = snapshot(site)
    assert changed(images(before), images(after)) == set()
    assert "made 0 derivatives" in result.stdout
    assert soup(site / "b" / "p3" / "index.html").select_one(".photo-caption h1").get_text() == "After"
    assert {k for k in changed(before, after)} == {"b/p3/index.html", "b/index.html", "stream/index.html"}


def test_thumbnail_setting_remakes_only_thumbnails(gallery, tmp_path):
    site = tmp_path / "site"
    conf = write_config(tmp_path, "[thumbnails]\nheight = 200\n")
    build_site(gallery, site, "-c", str(conf))
    before = images(snapshot(site))
    conf.write_text("[thumbnails]\nheight = 150\n")
    result = build_site(gallery, site, "-c", str(conf), "-v")
    after = images(snapshot(site))
    made = set(after) - set(before)
    gone = set(before) - set(after)
    assert len(made) == 8 and all(".thumb." in k for k in made)
    assert len(gone) == 8 and all(".thumb." in k for k in gone)
    assert {k: after[k] for k in after if ".thumb." not in k} == {k: before[k] for k in before if ".thumb." not in k}
    assert "made 8 derivatives of 8 photos" in result.stdout


def test_deleted_photo_and_album_disappear(gallery, tmp_path):
    site = tmp_path / "site"
    build_site(gallery, site)
    (site / "CNAME").write_text("photos.example.org\n")  # a file the user put there
    (site / "b" / "keep-me.txt").write_text("mine")
    (gallery / "A" / "p4.jpg").unlink()
    for p in (gallery / "B").iterdir():
        p.unlink()
    (gallery / "B").rmdir()
    result = build_site(gallery, site, "-v")
    assert not (site / "a" / "p4").exists()
    assert not (site / "b" / "p1").exists()
    assert (site / "CNAME").read_text() == "photos.example.org\n"
    assert (site / "b" / "keep-me.txt").read_text() == "mine"  # only files Albumen wrote are removed
    assert not (site / "b" / "index.html").exists()
    assert "removed" in result.stdout and crawl(site).broken == []
    assert [li["id"].removeprefix("m-") for li in soup(site / "a" / "index.html").select(".grid li")] == ["p1", "p2", "p3"]


def test_a_stale_file_someone_replaced_is_kept(gallery, tmp_path):
    site = tmp_path / "site"
    build_site(gallery, site)
    folder = site / "a" / "p4"
    page, thumb = folder / "index.html", next(folder.glob("p4.thumb.*.jpg"))
    others = [p for p in folder.glob("*.jpg") if p != thumb]
    assert len(others) == 2
    page.write_text("<p>my own page</p>")  # someone put their own files where Albumen wrote some
    make_jpeg(thumb, size=(30, 20), color=(1, 2, 3))
    (gallery / "A" / "p4.jpg").unlink()
    result = build_site(gallery, site, "-v")
    assert page.read_text() == "<p>my own page</p>" and thumb.is_file()
    assert not any(p.exists() for p in others)  # the rest of what Albumen wrote for p4 is gone
    assert "kept 2 files no longer part of the site" in result.stdout
    assert "a/p4/index.html" in result.stdout and f"a/p4/{thumb.name}" in result.stdout
    # they are the user's now: no later build mentions or removes them
    result = build_site(gallery, site, "-v")
    assert "nothing changed" in result.stdout and "kept" not in result.stdout
    (gallery / "A" / "p3.jpg").unlink()
    result = build_site(gallery, site, "-v")
    assert "kept" not in result.stdout and not (site / "a" / "p3").exists()
    assert page.read_text() == "<p>my own page</p>" and thumb.is_file()
    assert crawl(site).broken == []


def test_outputs_recorded_before_stamps_are_still_cleaned_up(gallery, tmp_path, isolated_cache):
    import sqlite3

    site = tmp_path / "site"
    build_site(gallery, site)
    db = sqlite3.connect(next(isolated_cache.rglob("cache.sqlite")))
    with db:  # the manifest as an older Albumen kept it: paths only
        db.executescript(
            "CREATE TABLE old AS SELECT dest_uri FROM outputs; DROP TABLE outputs;"
            "CREATE TABLE outputs (dest_uri TEXT PRIMARY KEY); INSERT INTO outputs SELECT dest_uri FROM old;"
            "DROP TABLE old;"
        )
    db.close()
    (gallery / "A" / "p4.jpg").unlink()
    build_site(gallery, site)
    assert not (site / "a" / "p4").exists()
    db = sqlite3.connect(next(isolated_cache.rglob("cache.sqlite")))
    rows = dict(db.execute("SELECT dest_uri, size FROM outputs WHERE dest_uri LIKE 'a/%'"))
    db.close()
    assert rows["a/index.html"] == (site / "a" / "index.html").stat().st_size  # rewritten: stamped


def test_a_renamed_album_reuses_its_derivatives_but_not_one_someone_replaced(gallery, tmp_path):
    from PIL import Image

    site = tmp_path / "site"
    for i in range(1, 5):  # B's photos unlike A's (same pictures would share derivatives' names)
        make_jpeg(gallery / "B" / f"p{i}.jpg", size=(900, 600), color=(40 * i, 200, 20), date=f"2024:0{i}:01 10:00:00")
    build_site(gallery, site)
    mine = next((site / "b" / "p1").glob("p1.thumb.*.jpg"))
    with Image.open(mine) as im:
        thumb_size = im.size
    make_jpeg(mine, size=(30, 20), color=(1, 2, 3))  # not the thumbnail Albumen made any more
    (gallery / "B").rename(gallery / "C")
    result = build_site(gallery, site, "-v")
    # 3 images of each photo, and 3 card images of p1, B's cover
    assert "made 1 derivative of 1 photo (14 more moved, not re-made)" in result.stdout
    with Image.open(site / "c" / "p1" / mine.name) as im:
        assert im.size == thumb_size
    assert not (site / "b" / "p2").exists() and mine.is_file()  # moved away; the replaced one kept
    assert crawl(site).broken == []


def test_force_and_force_album(gallery, tmp_path):
    site = tmp_path / "site"
    build_site(gallery, site)
    before = snapshot(site)
    result = build_site(gallery, site, "--force-album", "B", "-v")
    after = snapshot(site)
    assert "made 15 derivatives of 4 photos" in result.stdout  # 3 of each, and 3 card images of p1, B's cover
    assert all(k.startswith("b/") for k in changed(images(before), images(after)))
    assert "matches no album" not in result.output
    # a pattern that matches nothing redoes nothing, and says so
    before = snapshot(site)
    result = build_site(gallery, site, "--force-album", "b", "--force-album", "Nope*")
    assert "--force-album 'b' matches no album: nothing was redone for it (did you mean 'B'?" in result.output
    assert "--force-album 'Nope*' matches no album" in result.output
    assert changed(images(before), images(snapshot(site))) == set()
    result = build_site(gallery, site, "--force-album", "B/", "-v")  # a trailing slash names the album too
    assert "matches no album" not in result.output and "made 15 derivatives of 4 photos" in result.stdout
    build_site(gallery, site, "--force-album", "Nope*", "--strict", expect=1)
    result = build_site(gallery, site, "--force", "-v")
    assert "made 30 derivatives of 8 photos" in result.stdout  # and the card images of A and B's covers


def test_cache_lives_outside_source_and_output(gallery, tmp_path, isolated_cache):
    site = tmp_path / "site"
    before = tree_digest(gallery)
    build_site(gallery, site)
    assert tree_digest(gallery) == before
    assert not list(site.rglob("*.sqlite*"))
    caches = list(isolated_cache.rglob("cache.sqlite"))
    assert len(caches) == 1
    conf = write_config(tmp_path, f'cache_dir = "{site / "cache"}"\n')
    result = build_site(gallery, site, "-c", str(conf), expect=2)
    assert "cache folder" in result.stderr


def test_unreadable_cache_is_rebuilt_with_a_warning(gallery, tmp_path, isolated_cache):
    site = tmp_path / "site"
    build_site(gallery, site)
    cache = next(isolated_cache.rglob("cache.sqlite"))
    for suffix in ("-wal", "-shm"):
        Path(f"{cache}{suffix}").unlink(missing_ok=True)
    cache.write_bytes(b"this is not a database" * 100)
    before = snapshot(site)
    result = build_site(gallery, site)
    assert "build cache" in result.stderr and "unreadable" in result.stderr
    assert changed(images(before), images(snapshot(site))) == set()  # outputs already there are reused
    # and the pages too: placeholders taken again from the thumbnails written are the ones the pages
    # already inline, so a deploy after a lost cache moves nothing
    assert changed(before, snapshot(site)) == set()
    assert crawl(site).broken == []
    again = build_site(gallery, site)  # said once: a build with nothing to do does not repeat it
    assert "nothing changed" in again.stdout and "build cache" not in again.stderr


def test_a_cache_of_another_format_is_started_anew_once(gallery, tmp_path, isolated_cache):
    import sqlite3

    site = tmp_path / "site"
    build_site(gallery, site)
    cache = next(isolated_cache.rglob("cache.sqlite"))
    with sqlite3.connect(cache) as db:  # as an older Albumen left it
        db.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
    db.close()
    before = snapshot(site)
    result = build_site(gallery, site)
    assert "build cache format changed" in result.stderr
    assert "nothing changed" not in result.stdout  # a real build: the new cache learns every file now
    assert changed(before, snapshot(site)) == set()  # not one file rewritten
    assert crawl(site).broken == []
    again = build_site(gallery, site)
    assert "nothing changed" in again.stdout and "format changed" not in again.stderr


def _build_in_background(tmp_path: Path) -> tuple[subprocess.Popen, Path, Path, list[int]]:
    """A build of 80 big photos, started in a process of its own and caught with its workers busy
    (far from done: a build that finished first would make these tests fail at random)."""
    src = tmp_path / "photos"
    for i in range(80):
        make_jpeg(src / f"album{i % 3}" / f"p{i:02d}.jpg", size=(2400, 1600), color=(i * 5, 100, 200))
    site = tmp_path / "site"
    proc = subprocess.Popen(
        [sys.executable, "-m", "albumen", "build", str(src), "-o", str(site), "-j", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    deadline = time.time() + 120
    while time.time() < deadline and len(list(site.rglob("*.thumb.*.jpg"))) < 3:
        time.sleep(0.05)
    assert proc.poll() is None, "the build finished before it could be interrupted"
    workers = [int(p) for p in subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()]
    assert workers
    return proc, src, site, workers


def _gone(pids: list[int], seconds: float = 10) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if not any(Path(f"/proc/{pid}").exists() and "Z" not in _state(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_killed_build_then_rebuild_gives_a_complete_site(tmp_path):
    proc, src, site, workers = _build_in_background(tmp_path)
    os.kill(workers[0], signal.SIGKILL)  # a worker dies mid-job
    time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # then the whole build
    proc.wait(timeout=30)
    # the killed build's lock on the output (and the cache) ended with it: the rebuild neither refuses
    # (exit 2, "is in use by") nor waits (issue 19: a kernel lock, not a file that merely exists)
    result = run_cli("build", str(src), "-o", str(site), "-j", "2")
    assert result.exit_code == 0, result.output
    assert "in use by" not in result.output and "waiting for" not in result.output
    assert "built 4 albums, 80 photos, 0 videos, 0 skipped" in result.stdout
    walk = crawl(site)
    assert walk.broken == []
    assert len([p for p in walk.pages if p.count("/") == 2]) == 80
    assert not [p for p in site.rglob(".albumen-tmp-*")]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigterm_stops_a_build_like_ctrl_c(tmp_path):
    """A service manager, `timeout` or a cancelled CI job sends SIGTERM: the build stops its workers
    and says it was interrupted, instead of vanishing and leaving them running."""
    proc, src, site, workers = _build_in_background(tmp_path)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "interrupted" in err, err[-3000:]
    assert _gone(workers)
    result = run_cli("build", str(src), "-o", str(site), "-j", "2")
    assert result.exit_code == 0 and "80 photos" in result.stdout
    assert not list(site.rglob(".albumen-tmp-*"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl and /proc are Linux's")
def test_workers_die_with_a_killed_build(tmp_path):
    """SIGKILL (the OOM killer, kill -9) gives the build no chance to stop its workers: the kernel does."""
    proc, _, _, workers = _build_in_background(tmp_path)
    try:
        for pid in workers:  # stopped, a worker cannot notice by itself that its build is gone
            os.kill(pid, signal.SIGSTOP)
        proc.kill()  # the build process only, not its process group
        proc.wait(timeout=30)  # (not its pipes: the workers hold them while they live)
        assert _gone(workers)
    finally:
        for pid in workers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _build_watching_pages(src: Path, site: Path, tmp_path: Path, monkeypatch):
    """Build with one process (results arrive one by one, in order), noting which pages exist
    when the images are all made and how often each page is rendered."""
    from albumen.build import BuildOptions, build
    from albumen.config import load_config
    from albumen.render.pages import SiteRenderer
    from albumen.report import QuietReporter

    rendered: dict[str, int] = {}
    real_render = SiteRenderer.render

    def counting(self, task):
        rendered[task.dest_uri] = rendered.get(task.dest_uri, 0) + 1
        return real_render(self, task)

    monkeypatch.setattr(SiteRenderer, "render", counting)
    before_pages: set[str] = set()

    class Watcher(QuietReporter):
        def phase(self, name, total=None):
            if name == "Writing pages":
                before_pages.update(str(p.relative_to(site)) for p in site.rglob("index.html"))

    report = build(load_config(None, cwd=tmp_path), BuildOptions(source=src, output=site, jobs=1), Watcher())
    return report, before_pages, rendered


def test_album_pages_are_written_while_later_images_are_made(gallery, tmp_path, monkeypatch):
    site = tmp_path / "site"
    report, early, rendered = _build_watching_pages(gallery, site, tmp_path, monkeypatch)
    # album A's images are all made before B's: its pages were written while B's were being made
    assert {"a/index.html", "a/p1/index.html", "a/p4/index.html"} <= early
    assert "stream/index.html" not in early  # the stream needs every album: written after the images
    assert max(rendered.values()) == 1, "no page is rendered twice"
    assert report.pages_rendered == len(rendered)
    assert crawl(site).broken == []
    # what the early pages show is what a build would show anyway: a forced rebuild writes the same bytes
    first = tree_digest(site)
    build_site(gallery, site, "--force")
    assert tree_digest(site) == first


def test_a_file_failing_after_early_pages_leaves_a_correct_site(tmp_path, monkeypatch):
    src = tmp_path / "photos"
    for album in ("A", "B"):
        for i in range(1, 4):
            make_jpeg(src / album / f"p{i}.jpg", size=(900, 600), color=(40 * i, 90, 160), date=f"2024:0{i}:01 10:00:00")
    good = (src / "B" / "p1.jpg").read_bytes()
    (src / "B" / "p2.jpg").write_bytes(good[: len(good) // 2])  # fails after A's pages were written
    (src / "C").mkdir()
    (src / "C" / "only.jpg").write_bytes(good[: len(good) // 2])  # C ends up empty: no page, no card
    site = tmp_path / "site"
    report, early, rendered = _build_watching_pages(src, site, tmp_path, monkeypatch)
    assert sorted(s.src_uri for s in report.skipped) == ["B/p2.jpg", "C/only.jpg"]
    assert "a/index.html" in early
    assert max(rendered.values()) == 1, "pages written early that did not change are not written again"
    assert crawl(site).broken == []
    home = soup(site / "index.html")
    hrefs = {a["href"] for a in home.find_all("a", href=True)}
    assert not any(h.startswith("c/") for h in hrefs) and not (site / "c" / "index.html").exists()
    album_b = soup(site / "b" / "index.html")
    assert not any("p2" in a["href"] for a in album_b.find_all("a", href=True))
    assert "2 photos" in home.get_text(" ") or "2 photos" in album_b.get_text(" ")
    first = tree_digest(site)
    build_site(src, site, "--force")
    assert tree_digest(site) == first


def test_a_page_written_early_is_written_again_when_a_later_failure_changes_it(tmp_path, monkeypatch):
    src = tmp_path / "photos"
    for i in (1, 2):
        make_jpeg(src / "A" / f"a{i}.jpg", size=(900, 600), date=f"2024:01:0{i} 10:00:00")
    make_jpeg(src / "A" / "X" / "x1.jpg", size=(900, 600), date="2024:02:01 10:00:00")
    later = make_jpeg(tmp_path / "later.jpg", size=(900, 600), date="2024:03:01 10:00:00").read_bytes()
    (src / "A" / "X" / "x2.jpg").write_bytes(later[: len(later) // 2])  # after x1, X's cover: A's page was ready
    site = tmp_path / "site"
    report, early, rendered = _build_watching_pages(src, site, tmp_path, monkeypatch)
    assert [s.src_uri for s in report.skipped] == ["A/X/x2.jpg"]
    assert "a/index.html" in early
    assert rendered["a/index.html"] == 2, "written early with X's card counting 2 photos, then corrected"
    card = soup(site / "a" / "index.html").get_text(" ")
    assert "1 photo" in card and "2 photos" not in card
    assert crawl(site).broken == []
    first = tree_digest(site)
    build_site(src, site, "--force")
    assert tree_digest(site) == first


def test_stream_pages_reuse_album_fingerprints_and_agree_with_their_views(tmp_path, monkeypatch, isolated_cache):
    """Stream pages get their keys from the fingerprints made for album pages: the same keys as from
    their own views, and no view is built for a stream page that did not change."""
    import sqlite3

    from albumen.render.pages import SiteRenderer
    from albumen.render.stores import ViewDigests

    src = tmp_path / "photos"
    for a, album in enumerate(("Alps", "Beach", "City")):
        for i in range(1, 9):
            make_jpeg(src / album / f"{album.lower()}{i}.jpg", size=(40, 30), color=(30 * a, 20 * i, 90),
                      date=f"2024:0{a + 1}:{i:02d} 10:00:00")
        (src / album / f"{album.lower()}1.md").write_text(f"Title: First of {album}\n")
    conf = write_config(tmp_path, "[stream]\npage_size = 10\n")

    def stream_keys() -> list[dict[str, str]]:
        """The recorded keys of stream pages, per build cache (one per output folder)."""
        found = []
        for path in sorted(isolated_cache.rglob("cache.sqlite")):
            con = sqlite3.connect(path)
            found.append(dict(con.execute("SELECT dest_uri, key FROM pages WHERE dest_uri LIKE 'stream/%'")))
            con.close()
        return found

    calls = []
    real = SiteRenderer._stream_views
    monkeypatch.setattr(SiteRenderer, "_stream_views", lambda self, uris: calls.append(len(uris)) or real(self, uris))
    site_a = tmp_path / "a"
    build_site(src, site_a, "-c", str(conf))
    pages = list(stream_keys()[0])
    assert len(pages) >= 2  # 24 photos, about 10 a page
    calls.clear()
    (src / "Beach" / "index.md").write_text("Sand and sea, described at last.\n")  # not shown by stream items
    result = build_site(src, site_a, "-c", str(conf), "-v")
    assert "rendered" in result.stdout and calls == []  # no stream page changed: none built its views
    (src / "City" / "city1.md").write_text("Title: Renamed city photo\n")
    calls.clear()
    build_site(src, site_a, "-c", str(conf))
    city = next(p for p in pages if "city1" in (site_a / p).read_text())  # (City is the newest album)
    assert calls == [len(soup(site_a / city).select(".grid li"))]  # the one stream page showing it, built to be rendered
    assert "Renamed city photo" in (site_a / city).read_text()

    # the same site with no fingerprints to reuse: every stream page from its own views
    monkeypatch.setattr(ViewDigests, "get", lambda self, uris: {})
    site_b = tmp_path / "b"
    build_site(src, site_b, "-c", str(conf))
    keys = stream_keys()
    assert len(keys) == 2 and keys[0] == keys[1]
    assert sorted(keys[0]) == sorted(pages)
    for page in pages:
        assert (site_a / page).read_bytes() == (site_b / page).read_bytes()


def test_two_pages_claiming_one_path_stop_the_build(gallery, tmp_path, monkeypatch):
    from albumen.cache import BuildCache
    from albumen.render.pages import SiteRenderer

    cache = BuildCache(tmp_path / "claims")
    assert cache.claim_pages([("a/index.html", "album.html"), ("a/p1/index.html", "media.html")]) is None
    assert cache.claim_pages([("b/index.html", "album.html"), ("a/p1/index.html", "album.html")]) == (
        "a/p1/index.html", "media.html", "album.html")
    assert cache.claim_pages([("c/index.html", "x.html"), ("c/index.html", "y.html")]) == (
        "c/index.html", "x.html", "y.html")
    assert cache.claim_pages([("b/index.html", "album.html")]) is None  # a refused batch recorded nothing
    cache.forget_claims()
    assert cache.claim_pages([("a/index.html", "album.html")]) is None
    cache.close()

    real = SiteRenderer.tasks

    def twice(self, listed=()):  # a renderer that lists one page twice
        first = None
        for task in real(self, listed):
            first = first or task
            yield task
        yield first

    monkeypatch.setattr(SiteRenderer, "tasks", twice)
    result = build_site(gallery, tmp_path / "site", expect=1)
    assert "two pages claim one output path" in result.stderr


def test_the_sink_knows_every_path_it_wrote_by_hash_and_refuses_a_second_claim(tmp_path, monkeypatch):
    """write.DiskSink keeps the paths it wrote as 8-byte hashes in buckets (PathHashes), not a set of
    ints: every path written is known, no other is, a hash found across two others' bytes is not taken
    for one, and a path claimed twice stops the build."""
    from albumen.errors import BuildError
    from albumen.write import DiskSink, PathHashes

    monkeypatch.setattr(PathHashes, "_BUCKETS", 4)  # (~2,500 paths a bucket: the search through one is what is shown)
    written = [f"albums/{i // 100}/p{i}/index.html" for i in range(10_000)]
    known = PathHashes()
    for path in written:
        assert known.claim(path)
    assert all(path in known for path in written)
    assert not any(f"albums/{i // 100}/q{i}/index.html" in known for i in range(10_000))
    lone = "other/index.html"
    number = hash(lone) & 0xFFFF_FFFF_FFFF_FFFF
    straddled = PathHashes()  # its 8 bytes as the end of one hash and the start of the next
    straddled.buckets[number & 3] = bytearray(4) + number.to_bytes(8, "little") + bytearray(4)
    assert lone not in straddled
    assert straddled.claim(lone) and not straddled.claim(lone)
    assert lone in straddled

    sink = DiskSink(str(tmp_path))
    assert sink.write("a/index.html", b"<p>a") and sink.has("a/index.html") and not sink.has("b/index.html")
    with pytest.raises(BuildError, match="two outputs claim one path: a/index.html"):
        sink.write("a/index.html", b"<p>again")
    assert (tmp_path / "a" / "index.html").read_bytes() == b"<p>a"


def test_file_records_are_found_folder_by_folder(tmp_path):
    """The cache hands the scan one folder's records at a time; none may be lost or mixed up
    between a folder, its sub-folders and folders whose names sort next to it."""
    from albumen.cache import BuildCache
    from albumen.scan import FileRecord

    uris = ["top.jpg", "a/one.jpg", "a/b/two.jpg", "a/b/c/three.jpg", "a0/four.jpg", "a b/five.jpg",
            "a-b/six.jpg", "ä/seven.jpg", "a/ä/eight.jpg", "b/nine.jpg", "a/zz.jpg", "a/Ωmega.jpg"]
    cache = BuildCache(tmp_path / "c")
    for i, uri in enumerate(uris):
        cache.put_file(uri, 100 + i, 1000 + i, FileRecord("image", "jpeg", content_hash=f"h{i}"))
    cache.close()

    cache = BuildCache(tmp_path / "c")
    order = sorted(uris, key=lambda u: (u.rpartition("/")[0], u))  # as the scan asks: folder by folder
    for uri in order:
        i = uris.index(uri)
        record = cache.get_file(uri, 100 + i, 1000 + i)
        assert record is not None and record.content_hash == f"h{i}", uri
        folder = uri.rpartition("/")[0]  # only that folder's records are held
        assert set(cache._files) == {u for u in uris if u.rpartition("/")[0] == folder}, uri
    assert cache.get_file("a/one.jpg", 101, 9999) is None  # changed since: read again
    assert cache.get_file("a/b/one.jpg", 101, 1001) is None  # another file of the same name
    assert cache.get_file("b/nine.jpg", 109, 1009).content_hash == "h9"  # a folder asked for again
    assert cache.get_file("a/one.jpg", 101, 1001).content_hash == "h1"
    cache.forget_missing(set(uris) - {"a/b/two.jpg"})
    cache.close()

    cache = BuildCache(tmp_path / "c")
    assert cache.get_file("a/b/two.jpg", 102, 1002) is None
    assert cache.get_file("a/b/c/three.jpg", 103, 1003).content_hash == "h3"
    cache.close()


def test_records_of_files_gone_are_forgotten_folder_by_folder(tmp_path):
    """forget_missing looks only at the folders not taken from snapshots when the photo folder has the
    folders it had at the last such call, and at every record otherwise: a file gone is forgotten in
    either case, a file of an unchanged folder never is (names that sort beside a folder's included)."""
    from albumen.cache import BuildCache
    from albumen.scan import FileRecord

    uris = ["top.jpg", "a/one.jpg", "a/two.jpg", "a/b/three.jpg", "a0/four.jpg", "a-b/five.jpg", "a b/six.jpg",
            "ab/seven.jpg", "b/c/eight.jpg"]
    folders = sorted({u.rpartition("/")[0] for u in uris} | {"b"})
    cache = BuildCache(tmp_path / "c")
    for i, uri in enumerate(uris):
        cache.put_file(uri, i, i, FileRecord("image", "jpeg", content_hash=f"h{i}"))

    def left() -> set[str]:
        return {u for i, u in enumerate(uris) if cache.get_file(u, i, i) is not None}

    cache.forget_missing(set(uris), set(), iter(folders))  # (as the scan gives them: once through)  # the first time: every record looked at
    assert left() == set(uris)
    # 'a' listed again with one file fewer (its sub-folder and its neighbours in name order unchanged)
    cache.forget_missing({"a/one.jpg"}, set(folders) - {"a"}, iter(folders))
    assert left() == set(uris) - {"a/two.jpg"}
    # a record nobody saw, in a folder taken from its snapshot, stays: the snapshot says it is there
    cache.forget_missing(set(), set(folders), iter(folders))
    assert left() == set(uris) - {"a/two.jpg"}
    # folders gone: every record is looked at
    fewer = [f for f in folders if not f.startswith("b")]
    cache.forget_missing(set(), set(fewer), iter(fewer))
    assert left() == set(uris) - {"a/two.jpg", "b/c/eight.jpg"}
    # the top folder listed again (it holds every folder): every record is looked at
    cache.forget_missing({"a/one.jpg"}, set(fewer) - {""}, iter(fewer))
    assert left() == set(uris) - {"a/two.jpg", "b/c/eight.jpg", "top.jpg"}
    cache.close()


def test_unchanged_folders_are_taken_from_their_snapshots(gallery, tmp_path, monkeypatch, isolated_cache):
    """A folder whose listing is unchanged since the last build is made from its snapshot (scan.snapshots):
    none of its files' records is looked up; one whose listing changed is scanned. A snapshot that cannot
    be read is a folder scanned again, to the same site."""
    import sqlite3

    from albumen.cache import BuildCache

    make_jpeg(gallery / "B" / "Deeper" / "d1.jpg", size=(300, 200), date="2024:06:01 10:00:00")
    site = tmp_path / "site"
    build_site(gallery, site)
    asked: list[str] = []
    real = BuildCache.get_file
    monkeypatch.setattr(BuildCache, "get_file", lambda self, uri, *more: asked.append(uri) or real(self, uri, *more))

    (gallery / "A" / "p2.md").write_text("Title: The second one\n")
    build_site(gallery, site)
    assert sorted(asked) == ["A/p1.jpg", "A/p2.jpg", "A/p3.jpg", "A/p4.jpg"]  # B and B/Deeper: none
    assert "The second one" in (site / "a" / "p2" / "index.html").read_text()
    made = tree_digest(site)

    [db_file] = isolated_cache.rglob("cache.sqlite")
    db = sqlite3.connect(db_file)
    assert {row[0] for row in db.execute("SELECT folder FROM folders")} == {"", "A", "B", "B/Deeper"}
    db.execute("UPDATE folders SET snapshot = x'00ff' WHERE folder = 'B'")  # damaged
    db.commit()
    db.close()
    asked.clear()
    (gallery / "A" / "p2.md").write_text("Title: The second one\n\nSaid again.\n")
    build_site(gallery, site)
    assert sorted(asked) == ["A/p1.jpg", "A/p2.jpg", "A/p3.jpg", "A/p4.jpg", "B/p1.jpg", "B/p2.jpg", "B/p3.jpg",
                             "B/p4.jpg"]
    changed_pages = {k for k, v in tree_digest(site).items() if made.get(k) != v}
    assert "a/p2/index.html" in changed_pages
    assert [page for page in changed_pages if not page.startswith(("a/", "stream/"))] == []  # B: the same album


@pytest.mark.parametrize("asked", ["embedded", "size", "mtime_ns", "content_hash", "tags", "sidecar"])
def test_snapshot_media_read_their_embedded_metadata_when_first_asked(tmp_path, asked):
    """A folder's media taken from its snapshot share one model.LazyFacts, read only when a media's
    embedded metadata, size, time or hash is first asked for, and hold no name of their own (the end of
    their path): then each media is the one the scan made (equal, dates, cameras, hashes included), and
    pickles as it."""
    import gc
    import pickle

    from albumen import model as albumen_model
    from albumen.config import Config
    from albumen.model import LazyFacts
    from albumen.scan import scan_source, snapshots

    for i, (model, day) in enumerate([("Alpha", "01"), ("Beta", "02"), ("Alpha", "03")]):
        make_jpeg(tmp_path / "A" / f"p{i}.jpg", date=f"2024:05:{day} 10:00:00", model=model)
    made = sorted(scan_source(str(tmp_path), Config()).media.values(), key=lambda m: m.name)
    assert [m.embedded.camera.model for m in made] == ["Alpha", "Beta", "Alpha"]
    loaded = snapshots.load(snapshots.dump(snapshots.FolderScan(made, [], [], [])))
    lazy = {id(ref): ref for m in loaded.media for ref in gc.get_referents(m) if type(ref) is LazyFacts}
    facts = next(iter(lazy.values()))
    assert len(lazy) == 1 and facts not in albumen_model._READ  # one for the folder, not read yet
    held = {ref for m in loaded.media for ref in gc.get_referents(m) if isinstance(ref, (str, int))}
    own = {m.name for m in made} | {m.content_hash for m in made} | {m.size for m in made} | {m.mtime_ns for m in made}
    assert not held & own  # (none of their own: no object a photo for them)
    first = getattr(loaded.media[1], asked)
    assert facts in albumen_model._READ and getattr(loaded.media[1], asked) is first  # read once
    assert first == getattr(made[1], asked) and loaded.media[1].name == "p1.jpg"
    names = {m.name for m in made}  # a name asked for is made again each time, not kept (a million photos' ~60 MB)
    assert not {ref for m in loaded.media for ref in gc.get_referents(m) if isinstance(ref, str)} & names
    assert loaded.media == made and [m.embedded.date for m in loaded.media] == [m.embedded.date for m in made]
    assert [(m.name, m.size, m.mtime_ns, m.content_hash) for m in loaded.media] == \
        [(m.name, m.size, m.mtime_ns, m.content_hash) for m in made]
    again = snapshots.load(snapshots.dump(snapshots.FolderScan(made, [], [], [])))
    assert pickle.loads(pickle.dumps(again.media)) == made  # (not read before: pickled as read)


def test_snapshot_facts_are_read_again_from_the_cache_not_held(tmp_path):
    """snapshots.load(blob, fetch): the folder's piece of facts is not held (model.LazyFacts.blob None) but
    read through fetch (the build cache) when a media's facts are first asked for, once while the folder
    stays read; the media are the scan's; a snapshot gone from the cache meanwhile is an error, not a guess."""
    from albumen import model as albumen_model
    from albumen.config import Config
    from albumen.scan import scan_source, snapshots

    for i in range(3):
        make_jpeg(tmp_path / "A" / f"p{i}.jpg", date=f"2024:05:0{i + 1} 10:00:00")
    made = sorted(scan_source(str(tmp_path), Config()).media.values(), key=lambda m: m.name)
    blob = snapshots.dump(snapshots.FolderScan(made, [], [], []))
    asked: list[int] = []

    def fetch():
        asked.append(1)
        return blob

    loaded = snapshots.load(blob, fetch)
    assert loaded.media[0].rest.blob is None and not asked
    albumen_model._READ.clear()
    assert [m.content_hash for m in loaded.media] == [m.content_hash for m in made] and len(asked) == 1
    assert loaded.media == made
    albumen_model._READ.clear()
    gone = snapshots.load(blob, lambda: None)
    with pytest.raises(LookupError):
        gone.media[0].size  # noqa: B018


def _fact_reads(monkeypatch) -> list[bool]:
    """Every read of a snapshot media's facts from here on (model.LazyFacts.of): True for each one read
    again from the build cache (its piece not held), False for one read from a piece held."""
    from albumen import model as albumen_model

    read: list[bool] = []
    real_of = albumen_model.LazyFacts.of

    def of(self, name):
        read.append(self.blob is None)
        return real_of(self, name)

    monkeypatch.setattr(albumen_model.LazyFacts, "of", of)
    return read


def test_a_build_reads_snapshot_facts_from_its_cache_and_keeps_none_after(tmp_path, monkeypatch):
    """A rebuild after a caption is added takes the other album from its snapshot, whose media read their
    facts again from the build's cache (the cover shown on the home page); once the build ends, none is
    kept read (they would read from a closed cache)."""
    from albumen import model as albumen_model

    src, site = tmp_path / "photos", tmp_path / "site"
    for album in ("A", "B"):
        for i in range(2):
            make_jpeg(src / album / f"p{i}.jpg", size=(90, 60), date=f"2024:05:0{i + 1} 10:00:00")
    build_site(src, site)
    read = _fact_reads(monkeypatch)
    (src / "A" / "p0.md").write_text("---\ntitle: New\n---\n")
    build_site(src, site)
    assert read and all(read) and not albumen_model._READ
    assert "New" in (site / "a" / "p0" / "index.html").read_text()


def test_folders_made_from_cached_records_as_the_scan_goes(tmp_path, monkeypatch, isolated_cache):
    """A folder whose every file has its record in the cache is made as the scan reaches it, and its
    snapshot written then (a few at a time: _SNAPSHOTS_AT_ONCE): a photo deleted loses its record, the
    others keep theirs and are not read again; a time zone changed (every folder made again from its
    records, none read) gives the site a clean build gives."""
    import sqlite3
    from contextlib import closing

    import albumen.scan

    monkeypatch.setattr(albumen.scan, "_SNAPSHOTS_AT_ONCE", 2)
    src, site = tmp_path / "photos", tmp_path / "site"
    for album in ("A", "B", "C", "D"):
        for i in range(3):
            make_jpeg(src / album / f"p{i}.jpg", size=(90, 60), date=f"2024:05:0{i + 1} 10:00:00")
    assert "read 12 new or changed files" in build_site(src, site, "-v").output
    [db_file] = isolated_cache.rglob("cache.sqlite")

    def recorded() -> set[str]:
        with closing(sqlite3.connect(db_file)) as db:
            return {uri for (uri,) in db.execute("SELECT src_uri FROM files")}

    assert {"A/p1.jpg", "D/p2.jpg"} <= recorded()
    (src / "A" / "p1.jpg").unlink()
    assert "new or changed" not in build_site(src, site, "-v").output
    assert "A/p1.jpg" not in recorded() and {"A/p0.jpg", "A/p2.jpg", "D/p2.jpg"} <= recorded()
    assert not (site / "a" / "p1").exists()
    conf = write_config(tmp_path, 'timezone = "Asia/Tokyo"\n')
    assert "new or changed" not in build_site(src, site, "-v", "-c", str(conf)).output  # (every record from the cache)
    assert len(recorded()) == 11
    clean = tmp_path / "clean"
    monkeypatch.setenv("ALBUMEN_CACHE_DIR", str(tmp_path / "other-cache"))
    build_site(src, clean, "-c", str(conf))
    assert tree_digest(site) == tree_digest(clean)


def test_snapshot_facts_read_are_kept_for_a_few_folders_only():
    """model.LazyFacts keeps the pieces of the last folders read (_KEPT_READ): a build that shows one photo
    of each of thousands of folders (a year's album cards) must not keep them all; one read again after
    it was let go gives the same values."""
    import pickle
    import zlib

    from albumen import model as albumen_model
    from albumen.model import LazyFacts

    folders = [LazyFacts(zlib.compress(pickle.dumps({f"p{i}.jpg": (i, n, "h", None)}))) for n, i in enumerate(range(40))]
    assert [facts.of(f"p{i}.jpg") for i, facts in enumerate(folders)] == [(i, i, "h", None) for i in range(40)]
    assert len(albumen_model._READ) == albumen_model._KEPT_READ and folders[0] not in albumen_model._READ
    assert folders[0].of("p0.jpg") == (0, 0, "h", None) and folders[-1] in albumen_model._READ


def test_placeholders_of_photos_gone_are_forgotten_once_they_add_up(tmp_path, monkeypatch, isolated_cache):
    import sqlite3
    from contextlib import closing

    import albumen.build

    gallery = tmp_path / "photos"
    for album in ("A", "B"):
        for i in range(1, 3):
            make_jpeg(gallery / album / f"p{i}.jpg", size=(90, 60), color=(40 * i, 90 if album == "A" else 10, 160))
    site = tmp_path / "site"
    build_site(gallery, site)
    [db_file] = isolated_cache.rglob("cache.sqlite")

    def placeholders() -> int:
        with closing(sqlite3.connect(db_file)) as db:
            return db.execute("SELECT count(*) FROM placeholders").fetchone()[0]

    assert placeholders() == 4
    (gallery / "A" / "p1.jpg").unlink()
    build_site(gallery, site)
    assert placeholders() == 4  # one spare: kept
    monkeypatch.setattr(albumen.build, "PLACEHOLDERS_SPARE", 0)
    (gallery / "A" / "p2.jpg").write_bytes((gallery / "A" / "p2.jpg").read_bytes())  # (a change: a real build)
    build_site(gallery, site)
    assert placeholders() == 3  # 4 > 3 * 1.1: the one of the photo gone is forgotten


@pytest.mark.parametrize("made", ["new", "before names"])
def test_an_output_is_found_by_its_name_in_another_folder(tmp_path, made):
    """cache.output_named (a derivative moved with its album) looks the file name up in an index that
    SQLite keeps of every output's name, also in a manifest made before it had one."""
    import sqlite3

    from albumen.cache import BuildCache

    names = ["x.thumb.0123456789.jpg", "x_1.thumb.0123456789.jpg", "ä.640w.aaaaaaaaaa.jpg", "top.jpg", "%_.jpg"]
    outputs = ["a/x/x.thumb.0123456789.jpg", "b/x_1/x_1.thumb.0123456789.jpg", "c/ä/ä.640w.aaaaaaaaaa.jpg",
               "top.jpg", "d/%_.jpg", "d/e%_.jpg", "d/px.thumb.0123456789.jpg", "e/a b.c/x.jpg.jpg"]
    asked = [(name, other) for name in [*names, "none.jpg", "x.jpg", "thumb.0123456789.jpg", "_.jpg", "x.jpg.jpg"]
             for other in ("", *outputs)]
    if made == "before names":  # the manifest of an older build: no name column, no index
        cache = BuildCache(tmp_path / "c")
        cache.close()
        db = sqlite3.connect(tmp_path / "c" / "cache.sqlite")
        db.executescript("DROP TABLE outputs; CREATE TABLE outputs (dest_uri TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER);")
        db.executemany("INSERT INTO outputs VALUES (?, NULL, NULL)", [(o,) for o in outputs])
        db.commit()
        db.close()
    cache = BuildCache(tmp_path / "c")
    cache.add_outputs(outputs)
    cache.stamp_outputs([("a/x/x.thumb.0123456789.jpg", 10, 20)])

    def expected(name, other):
        found = [o for o in outputs if o.rpartition("/")[2] == name and o != other]
        return found[0] if found else None

    for name, other in asked:
        found = cache.output_named(name, other)
        assert (found[0] if found else None) == expected(name, other), (name, other)
        if found and found[0] == "a/x/x.thumb.0123456789.jpg":
            assert found[1:] == (10, 20)
    plan = cache.db.execute("EXPLAIN QUERY PLAN SELECT dest_uri FROM outputs WHERE name = ?", ("x",)).fetchall()
    assert "outputs_by_name" in str(plan)
    cache.close()


def test_folders_without_a_page_are_found_by_the_cache(tmp_path):
    from albumen.cache import BuildCache

    cache = BuildCache(tmp_path / "c")
    cache.add_outputs(["index.html", "a/index.html", "a/b/c/x.jpg", "a/b/y.jpg", "d/e.jpg", "p/tok/index.html",
                       "p/tok/q/z.jpg", "ä/ö/index.html", "static/app.css", "static/icons/i.svg"])
    assert cache.folders_without_index() == [
        ("a/b", "a"), ("a/b/c", "a"), ("d", ""), ("p", ""), ("p/tok/q", "p/tok"), ("static", ""),
        ("static/icons", ""), ("ä", ""),
    ]
    cache.close()


def test_folders_without_a_page_agree_with_their_definition_in_random_trees(tmp_path):
    """cache.folders_without_index reads this build's outputs once in name order, holding only the
    folders around the one being read: names that sort between a folder and its own files ('a b',
    'a-b', 'a.b', 'a0' beside 'a/') must not confuse it. Settled albums' outputs (see
    cache.claim_recorded) are not read: their records name their folders without an index.html, which
    may have one among another album's outputs or this build's. An album recorded but not settled is
    not part of the build. Checked against the definition, in 300 trees."""
    import json
    import random

    from albumen.cache import BuildCache
    from albumen.render.albumkeys import unindexed

    rng = random.Random(24)
    names = ["a", "b", "a b", "a-b", "a.b", "a0", "ab", "ä", "Z"]
    for n in range(300):
        cache = BuildCache(tmp_path / f"c{n}")
        uris = {"/".join([*(rng.choice(names) for _ in range(rng.randint(0, 4))),
                          rng.choice(["index.html", "x.jpg", "index.html.x"])]) for _ in range(rng.randint(1, 25))}
        # '': this build's; s*: a settled album's; u0: a recorded album's, not settled; x: of no album, not this build's
        owner = {uri: rng.choice(["", "", "s0", "s1", "u0", "x"]) if n % 2 else "" for uri in sorted(uris)}
        cache.add_outputs(uri for uri in sorted(uris) if owner[uri] == "")
        cache.reserve_outputs(uri for uri in sorted(uris) if owner[uri] != "")
        rows = []
        for album in ("s0", "s1", "u0"):
            mine = [uri for uri in sorted(uris) if owner[uri] == album]
            pages = [[uri, "media.html", None, None] for uri in mine if uri.endswith("index.html")]
            others = [uri for uri in mine if not uri.endswith("index.html")]
            rows.append((album, "key", json.dumps(pages), json.dumps(others), json.dumps(unindexed([p[0] for p in pages], others)), "", ""))
        cache.set_albums(rows)
        assert cache.claim_recorded(["s0", "s1"])
        built = {uri for uri in uris if owner[uri] not in ("u0", "x")}
        folders = {uri.rsplit("/", i)[0] for uri in built for i in range(1, uri.count("/") + 1)}
        pages = {uri[: -len("/index.html")] for uri in built if uri.endswith("/index.html")}

        def nearest(folder: str, pages: set[str] = pages) -> str:
            while folder and folder not in pages:
                folder = folder.rpartition("/")[0]
            return folder

        want = [(f, nearest(f.rpartition("/")[0])) for f in sorted(folders - pages)]
        assert cache.folders_without_index() == want, sorted(owner.items())
        assert sorted(uri for uri, _, _ in cache.stale_outputs()) == sorted(uri for uri in uris if owner[uri] in ("u0", "x"))
        cache.close()


def test_nothing_is_written_or_removed_through_a_link_leading_out_of_the_output(gallery, tmp_path):
    """An output folder replaced by a symbolic link to elsewhere (here: into the photo folder itself)
    is never written or cleaned through: sources are sacred."""
    site = tmp_path / "site"
    build_site(gallery, site)
    before = tree_digest(gallery)
    album = site / "a"
    assert (album / "index.html").is_file()
    import shutil

    shutil.rmtree(album)
    album.symlink_to(gallery / "B", target_is_directory=True)  # the output's album A now leads into the photos
    result = build_site(gallery, site, "--force")
    for i in range(1, 5):  # each photo whose folder leads out is skipped, saying why
        assert f"skipped: A/p{i}.jpg: output folder a/p{i} is a symbolic link to" in result.output
    assert "outside the output; nothing is written through it" in result.output
    assert tree_digest(gallery) == before  # not one file written into the photo folder
    assert "built 2 albums, 4 photos, 0 videos, 4 skipped" in result.output  # the rest is built
    assert crawl(site).broken == []
    assert build_site(gallery, site, "--strict", expect=1)
    assert tree_digest(gallery) == before


def test_stale_files_behind_a_link_leading_out_of_the_output_are_kept(gallery, tmp_path):
    import shutil

    site = tmp_path / "site"
    build_site(gallery, site)
    # p2: not the album's cover, whose card images would make the list too long to name its page
    photo_dir = next(p for p in (site / "a").iterdir() if p.is_dir() and p.name.startswith("p2"))
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(photo_dir, elsewhere, copy_function=shutil.copy2)  # same names, sizes and times
    shutil.rmtree(photo_dir)
    photo_dir.symlink_to(elsewhere, target_is_directory=True)
    kept = sorted(p.name for p in elsewhere.iterdir())
    (gallery / "A" / "p2.jpg").unlink()  # its outputs are now stale: they are behind the link
    result = build_site(gallery, site)
    assert sorted(p.name for p in elsewhere.iterdir()) == kept  # nothing removed outside the output
    assert "a symbolic link in the output leads out of it" in result.output
    assert "a/p2/index.html" in result.output


def test_check_inside_follows_links_only_as_far_as_the_output(tmp_path):
    from albumen.fsutil import OutsideRoot, check_inside, forget_resolved

    out = tmp_path / "out"
    (out / "real" / "deep").mkdir(parents=True)
    (tmp_path / "away").mkdir()
    (out / "inner").symlink_to(out / "real")  # a link that stays inside the output is fine
    (out / "outer").symlink_to(tmp_path / "away")
    forget_resolved()
    check_inside(str(out / "inner" / "deep"), str(out))
    check_inside(str(out / "not-yet" / "made"), str(out))
    check_inside(str(out), str(out))
    for bad in (out / "outer", out / "outer" / "new", out / "real" / ".." / ".." / "away"):
        with pytest.raises(OutsideRoot):
            check_inside(str(bad), str(out))
    (out / "later").mkdir()
    check_inside(str(out / "later"), str(out))
    (out / "later").rmdir()
    (out / "later").symlink_to(tmp_path / "away")  # changed since: seen afresh once forgotten
    forget_resolved()
    with pytest.raises(OutsideRoot):
        check_inside(str(out / "later"), str(out))


def test_a_photo_folder_linked_to_a_copy_elsewhere_is_skipped_not_served_from_there(gallery, tmp_path):
    import shutil

    site = tmp_path / "site"
    build_site(gallery, site)
    p1 = site / "a" / "p1"
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(p1, elsewhere, copy_function=shutil.copy2)  # its images and page, all there
    shutil.rmtree(p1)
    p1.symlink_to(elsewhere, target_is_directory=True)
    before = tree_digest(elsewhere)
    (gallery / "A" / "p1.md").write_text("Title: New title\n")  # its page would change
    result = build_site(gallery, site)  # the rest of the site is built
    assert "skipped: A/p1.jpg: output folder a/p1 is a symbolic link to" in result.output
    assert tree_digest(elsewhere) == before
    album = soup(site / "a" / "index.html")
    assert not [a for a in album.select("a[href]") if a["href"].startswith("p1")]  # not linked any more
    assert crawl(site).broken == []


def test_a_link_where_a_moved_derivative_goes_is_replaced_not_written_through(tmp_path):
    src = tmp_path / "photos"
    make_jpeg(src / "A" / "p1.jpg", size=(300, 200))
    site = tmp_path / "site"
    build_site(src, site)
    names = [n for n in os.listdir(site / "a" / "p1") if n != "index.html"]
    (src / "A").rename(src / "C")  # the album's derivatives are moved into place, not made again
    (site / "c" / "p1").mkdir(parents=True)
    for name in names:  # dangling links where they go, pointing into the photo folder
        os.symlink(src / f"leak-{name}", site / "c" / "p1" / name)
    before = tree_digest(src)
    build_site(src, site)
    assert tree_digest(src) == before  # nothing written through the links
    for name in names:
        path = site / "c" / "p1" / name
        assert path.is_file() and not path.is_symlink()


def test_check_inside_refuses_dot_dot(tmp_path):
    from albumen.fsutil import OutsideRoot, check_inside

    (tmp_path / "out").mkdir()
    with pytest.raises(OutsideRoot):
        check_inside(str(tmp_path / "out" / "a" / ".." / "b"), str(tmp_path / "out"))


def test_an_unchanged_page_behind_a_link_leading_out_stops_the_build(gallery, tmp_path):
    """A page folder replaced by a link to a copy elsewhere is refused even when the page there
    already has the right bytes: it would be served from outside the output."""
    import shutil

    site = tmp_path / "site"
    build_site(gallery, site)
    stream = site / "stream"
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(stream, elsewhere, copy_function=shutil.copy2)
    shutil.rmtree(stream)
    stream.symlink_to(elsewhere, target_is_directory=True)
    before = tree_digest(elsewhere)
    for path in gallery.rglob("*.jpg"):  # a real build, with every page's content the same
        os.utime(path, None)
    result = build_site(gallery, site, expect=1)
    assert "output folder stream is a symbolic link to" in result.output
    assert tree_digest(elsewhere) == before


def test_the_summary_is_written_when_it_changed_and_said_again_by_a_build_with_nothing_to_do(tmp_path, monkeypatch, isolated_cache):
    """The summary a build with nothing to do says again (counts, warnings) is written only when it
    changed (a library of wrong camera clocks had a 72 MB one, written by every build), and again when
    it is missing from the cache."""
    import sqlite3

    from albumen.cache import BuildCache

    src = tmp_path / "photos"
    make_jpeg(src / "A" / "future.jpg", size=(60, 40), date="2099:01:01 10:00:00")
    make_jpeg(src / "A" / "b.jpg", size=(60, 40), date="2020:01:01 10:00:00")
    site = tmp_path / "site"
    written: list[str] = []
    real = BuildCache.set_meta
    monkeypatch.setattr(BuildCache, "set_meta", lambda self, key, value: (key == "summary" and written.append(key)) or real(self, key, value))
    warning = "A/future.jpg: EXIF date 2099-01-01 is in the future; ignored"
    assert warning in build_site(src, site).output
    assert written == ["summary"]
    make_jpeg(src / "A" / "b.jpg", size=(60, 40), color=(200, 10, 10), date="2020:01:01 10:00:00")  # same counts, same warnings
    assert warning in build_site(src, site).output
    assert written == ["summary"]
    result = build_site(src, site)
    assert "nothing changed" in result.output and warning in result.output
    assert written == ["summary"]
    make_jpeg(src / "A" / "c.jpg", size=(60, 40), date="2020:01:03 10:00:00")  # 3 photos now: another summary
    build_site(src, site)
    assert written == ["summary", "summary"]
    (cache,) = isolated_cache.rglob("cache.sqlite")
    with sqlite3.connect(cache) as db:
        db.execute("DELETE FROM meta WHERE key = 'summary'")
    make_jpeg(src / "A" / "c.jpg", size=(60, 40), color=(9, 9, 9), date="2020:01:03 10:00:00")
    build_site(src, site)
    assert written == ["summary"] * 3
    result = build_site(src, site)
    assert "nothing changed" in result.output and warning in result.output


def test_a_page_claimed_by_a_settled_album_is_not_claimed_again(tmp_path):
    """A settled album's pages are not claimed one by one (see cache.claim_recorded): a page of this
    build at one of their paths is still two pages at one path, named with the album that has it; and
    an album one of whose pages is claimed already is not settled."""
    import json

    from albumen.cache import BuildCache

    pages = json.dumps([["a/index.html", "album.html", "a/", None], ["a/p1/index.html", "media.html", "a/p1/", None]])
    for n, first in enumerate((None, "a/index.html")):
        cache = BuildCache(tmp_path / f"c{n}")
        cache.reserve_outputs(["a/index.html", "a/p1/index.html", "a/p1/p1.thumb.x.jpg"])
        cache.set_albums([("A", "key", pages, json.dumps(["a/p1/p1.thumb.x.jpg"]), json.dumps([]), "", "")])
        if first is None:
            assert cache.claim_recorded(["A"])
            assert cache.claim_pages([("c/index.html", "album.html"), ("a/p1/index.html", "media.html")]) == (
                "a/p1/index.html", "a page of A", "media.html")
            assert cache.claim_pages([("c/index.html", "album.html")]) is None
        else:
            assert cache.claim_pages([(first, "album.html")]) is None
            assert not cache.claim_recorded(["A"])
            assert cache.claim_pages([("a/p1/index.html", "media.html")]) is None  # (A is not settled)
        cache.close()


def test_the_output_looked_at_in_spans_by_workers_is_found_as_one_look_finds_it(gallery, tmp_path, isolated_cache):
    """write.outputs_not_as_written_by: the recorded outputs in spans (BuildCache.output_spans: every row
    once), each looked at by a worker that reads its span from the cache file itself, give what one look
    in this process gives; a span whose task fails is looked at here."""
    from albumen.cache import BuildCache
    from albumen.pool import TaskFailed, WorkerPool
    from albumen.write import outputs_not_as_written, outputs_not_as_written_by

    site = tmp_path / "site"
    build_site(gallery, site)
    next(site.glob("a/p1/p1.thumb.*.jpg")).unlink()
    cut = next(site.glob("b/p2/p2.900w.*.jpg"))
    cut.write_bytes(cut.read_bytes()[:100])
    (site / "a" / "index.html").unlink()
    (cache_file,) = isolated_cache.rglob("cache.sqlite")
    cache = BuildCache(cache_file.parent)
    try:
        alone = outputs_not_as_written(str(site), cache.output_stamps())
        assert len(alone) == 3
        rows = sorted(cache.output_stamps())

        class Inline:
            workers = 1

            def run(self, fn, items):
                for n, item in enumerate(items):
                    yield item, (TaskFailed("the worker crashed") if n % 2 else fn(item))

        for parts in (1, 3, 7, 1000):
            spans = cache.output_spans(parts)
            assert sorted(row for read, args in spans for row in read(*args)) == rows, parts
            assert outputs_not_as_written_by(Inline(), str(site), spans) == alone, parts
        with WorkerPool(2) as pool:
            assert outputs_not_as_written_by(pool, str(site), cache.output_spans(8)) == alone
    finally:
        cache.close()


def test_a_first_build_holds_its_jobs_as_uris_its_plans_bounded_and_its_media_as_snapshots(tmp_path, monkeypatch):
    """What a first build needs once for every photo is not all held till its end: the jobs left are
    their media's uris (process.todo), made again as they are sent; media plans are let go past
    PLANS_HELD and made again when asked for; the files are read _READ_AT_ONCE at a time (whole
    folders), a folder made as its last file is read, its media those of its snapshot, whose facts are
    read again from the cache. The site is the one a build
    holding everything makes, and a rebuild makes nothing."""
    import albumen.build
    import albumen.process.plan as plan_module
    import albumen.scan

    src = tmp_path / "photos"
    for album in ("A", "B", "C", "D"):
        for i in range(3):
            make_jpeg(src / album / f"p{i}.jpg", size=(90, 60), date=f"2024:05:0{i + 1} 10:00:00")
    (src / "B" / "p1.md").write_text("---\ntitle: Harbour\n---\nA *boat*.\n")
    clean = tmp_path / "clean"
    monkeypatch.setenv("ALBUMEN_CACHE_DIR", str(tmp_path / "clean-cache"))
    build_site(src, clean)

    monkeypatch.setenv("ALBUMEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(albumen.scan, "_SNAPSHOTS_AT_ONCE", 2)
    monkeypatch.setattr(albumen.scan, "_READ_AT_ONCE", 4)  # (read two folders at a time)
    monkeypatch.setattr(plan_module, "PLANS_HELD", 3)
    held: list[list] = []
    real_run_jobs = albumen.build.run_jobs

    def run_jobs(todo, makers):
        held.append(list(todo.small))
        return real_run_jobs(todo, makers)

    made = []
    real_plan_image = plan_module._plan_image

    def plan_image(media, *args):
        made.append(media.src_uri)
        return real_plan_image(media, *args)

    monkeypatch.setattr(albumen.build, "run_jobs", run_jobs)
    monkeypatch.setattr(plan_module, "_plan_image", plan_image)
    read = _fact_reads(monkeypatch)
    site = tmp_path / "site"
    assert "read 12 new or changed files" in build_site(src, site, "-v").output
    [items] = held
    assert sorted(items) == sorted(f"{a}/p{i}.jpg" for a in "ABCD" for i in range(3))  # uris, not jobs
    assert len(made) > 12 and set(made) == set(items)  # plans let go were made again
    assert read and all(read)  # the media of folders read now are their snapshots'
    assert tree_digest(site) == tree_digest(clean)
    assert "A *boat*" not in (site / "b" / "p1" / "index.html").read_text()
    assert "<em>boat</em>" in (site / "b" / "p1" / "index.html").read_text()
    assert "nothing changed" in build_site(src, site).output


def test_jobs_held_as_uris_are_made_as_they_are_sent_in_the_executors_order():
    """process.todo: a planned job held as its uri is made (make) only when its task is sent, large jobs go
    first, biggest first, small ones in the order given, 16 a task; a batch that fails is run again job by
    job, each made again; results are paired by id."""
    from albumen.pool import TaskFailed
    from albumen.process.executor import run_jobs
    from albumen.process.specs import ImageJob, JobResult
    from albumen.process.todo import Todo

    def job(uri: str, width: int) -> ImageJob:
        return ImageJob(uri, f"/src/{uri}", "/out", "jpeg", 1, "srgb", width, 1000, 1, (), ())

    sizes = {f"s{i}": 100 + i for i in range(20)} | {"big": 4000, "bigger": 6000, "part": 3000}
    made: list[str] = []

    def make(uri: str) -> ImageJob:
        made.append(uri)
        return job(uri, sizes[uri])

    todo = Todo(make)
    for uri in ("big", "s0", "part", "bigger", *(f"s{i}" for i in range(1, 20))):
        todo.add(job(uri, sizes[uri]), planned=uri != "part")
    assert todo.small[:2] == ["s0", "s1"] and len(todo) == 23 and not made
    assert sorted(todo.ids()) == sorted(sizes)

    class Pool:
        sent: list[tuple[str, ...]] = []

        def run(self, fn, items, timeout=None, ahead=2, prepare=None):
            for item in list(items):
                jobs = prepare(item)
                if not isinstance(jobs, tuple):
                    jobs = (jobs,)
                assert all(isinstance(j, ImageJob) for j in jobs)
                self.sent.append(tuple(j.job_id for j in jobs))
                if len(jobs) > 1 and "s3" in self.sent[-1]:
                    yield item, TaskFailed("the worker crashed")
                else:
                    results = [JobResult(j.job_id, ok=j.job_id != "s5") for j in jobs]
                    yield item, results if fn.__name__.endswith("batch") else results[0]

    pool = Pool()
    results = list(run_jobs(todo, pool))
    assert pool.sent[:3] == [("bigger",), ("big",), ("part",)]
    assert pool.sent[3] == tuple(f"s{i}" for i in range(16))
    assert pool.sent[5:] == [(f"s{i}",) for i in range(16)]  # the failed batch, job by job
    assert sorted(r.job_id for r in results) == sorted(sizes)
    assert [r.job_id for r in results if not r.ok] == ["s5"]
    assert "part" not in made and made.count("s3") == 2  # held whole / made again for its retry


def test_pages_written_early_are_listed_in_order_from_a_temporary_file(monkeypatch):
    """render.writer._Names: the names of pages written before the progress display shows pages (a first
    build's nearly every page) go to a temporary file past HELD, and come back whole and in order."""
    from albumen.render.writer import _Names

    monkeypatch.setattr(_Names, "HELD", 7)
    names = _Names()
    given = [f"année-{i}/ph\u00f6to {i}/index.html" for i in range(50)]
    for name in given:
        names.append(name)
    assert names.file is not None and len(names.names) < 7
    assert list(names) == given
