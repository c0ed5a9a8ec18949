"""albumen serve: a real server on a free loopback port, real file changes, the classifier on its own."""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import threading
import time
import urllib.request

import pytest

from albumen.build import build
from albumen.serve import Action, ServeOptions, classify_changes, serve
from albumen.serve.http import SiteServer
from conftest import make_jpeg, run_cli, soup

# ---------------------------------------------------------------------------------------------
# the classifier, on its own


def decide(*changes, source="/p", config="/c/albumen.toml", theme="/c/theme", output="/site"):
    return classify_changes(set(changes), source, config, theme, output)


def test_classifier_orders_and_filters_changes(tmp_path):
    assert decide(("modified", "/p/a/index.md")).action == Action.PAGES
    assert decide(("added", "/p/a/x.jpg")).action == Action.MEDIA
    assert decide(("deleted", "/p/a/x.JPG")).action == Action.MEDIA
    assert decide(("modified", "/c/theme/templates/album.html")).action == Action.PAGES
    assert decide(("modified", "/c/albumen.toml"), ("added", "/p/x.jpg")).action == Action.CONFIG
    assert decide(("modified", "/site/index.html")).action == Action.NOTHING  # our own output
    assert decide(("added", "/p/a/.DS_Store"), ("added", "/p/.hidden/x.jpg")).action == Action.NOTHING
    assert decide(("modified", "/p/a/x.jpg.part"), ("modified", "/p/a/.x.jpg.swp")).action == Action.NOTHING
    # sed -i writes a work file beside the sidecar and renames it: only the sidecar is named
    edit = decide(("added", "/p/a/sedyR22j8"), ("deleted", "/p/a/sedyR22j8"), ("modified", "/p/a/index.md"))
    assert edit.action == Action.PAGES and edit.reasons == ["sidecar modified: a/index.md"]
    assert decide(("deleted", "/p/sediments")).action == Action.MEDIA  # a folder moved away, not sed's file
    assert decide(("modified", "/p/a/notes.txt")).action == Action.NOTHING
    assert decide(("added", "/p/a/.nomedia")).action == Action.PAGES
    assert decide(("modified", "/elsewhere/x.jpg")).action == Action.NOTHING
    # content counts, not the name: a photo without an extension
    src = tmp_path / "p"
    make_jpeg(src / "scan0001")
    d = classify_changes({("added", str(src / "scan0001"))}, str(src), None, None, None)
    assert d.action == Action.MEDIA and d.media == {str(src / "scan0001")}
    assert "media added: a/x.jpg" in decide(("added", "/p/a/x.jpg")).summary()
    # a file the config's plugins read (a watermark's PNG, beside the config or hidden in the photo folder)
    for mark in ("/c/mark.png", "/p/.mark.png"):
        d = classify_changes({("modified", mark)}, "/p", "/c/albumen.toml", None, "/site", config_files=[mark])
        assert d.action == Action.CONFIG and d.reasons == [f"{mark[3:]} modified (a file of the config's plugins)"]
    assert decide(("modified", "/c/mark.png")).action == Action.NOTHING  # not one of them


# ---------------------------------------------------------------------------------------------
# a real server


def fetch(url: str) -> tuple[int, bytes, dict]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


def raw_get(port: int, path: str, headers: dict | None = None) -> tuple[int, bytes, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", path, headers=headers or {})
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, body, dict(r.getheaders())


def wait_for(predicate, timeout=30.0, step=0.1):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return False


@contextlib.contextmanager
def serving(src, site, conf):
    """albumen serve in a thread, watching: (its url, its log)."""
    log: list[str] = []
    options = ServeOptions(source=src, output=site, config_path=conf, port=0, jobs=1, debounce_ms=200,
                           settle_seconds=0.3)
    thread = threading.Thread(target=serve, args=(options, build, log.append), daemon=True)
    thread.start()
    try:
        assert options.ready.wait(60), log
        yield next(line.split(" at ")[1].split()[0] for line in log if line.startswith("serving")), log
    finally:
        options.stop.set()
        thread.join(20)


@pytest.fixture
def running(tmp_path):
    src = tmp_path / "photos"
    make_jpeg(src / "Trip" / "a.jpg", size=(640, 480), date="2024:01:01 10:00:00")
    make_jpeg(src / "Trip" / "b.jpg", size=(640, 480), date="2024:01:02 10:00:00")
    conf = tmp_path / "albumen.toml"
    conf.write_text('title = "Live"\n')
    site = tmp_path / "site"
    with serving(src, site, conf) as (url, log):
        yield src, site, conf, url, log


def test_live_site_follows_the_photo_folder(running):
    src, site, conf, url, log = running
    status, body, headers = fetch(url + "trip/")
    assert status == 200 and b"__albumen/events" in body  # reload script added on the fly...
    assert b"__albumen" not in (site / "trip" / "index.html").read_bytes()  # ...never written
    # a new photo appears
    # the first build is a build (it said 'rebuilt in 1.2 s (first build): 6 images made')
    # (a thumbnail and a display image of each photo, and two card images of Trip's cover)
    assert re.fullmatch(r"built in [\d.]+ s: made 6 derivatives of 2 photos, wrote \d+ files, removed 0; 0 skipped",
                        log[0]), log
    make_jpeg(src / "Trip" / "c.jpg", size=(640, 480), date="2024:01:03 10:00:00")
    assert wait_for(lambda: b"c/" in fetch(url + "trip/")[1] and (site / "trip" / "c" / "index.html").exists()), log
    # (one batch of changes may also say 'media modified: Trip/c.jpg')
    assert wait_for(lambda: any(re.fullmatch(r"rebuilt in [\d.]+ s \([^)]*Trip/c\.jpg[^)]*\): made 2 derivatives "
                                             r"of 1 photo, wrote \d+ files, removed \d+; 0 skipped", line)
                                for line in log)), log
    # a sidecar edit re-renders without touching any image
    images = {p: p.stat().st_mtime_ns for p in site.rglob("*.jpg")}
    (src / "Trip" / "a.md").write_text("Title: Renamed live\n")
    assert wait_for(lambda: b"Renamed live" in fetch(url + "trip/a/")[1]), log
    assert {p: p.stat().st_mtime_ns for p in site.rglob("*.jpg")} == images
    # a deleted photo disappears with its derivatives
    (src / "Trip" / "b.jpg").unlink()
    assert wait_for(lambda: fetch(url + "trip/b/")[0] == 404), log
    # its page goes first, then its derivatives and the emptied folder, while the server already says 404
    assert wait_for(lambda: not (site / "trip" / "b").exists()), log
    # a broken config keeps the last good site, then recovers
    conf.write_text("[images]\nquality = 'high'\n")
    assert wait_for(lambda: any("config not reloaded" in line for line in log)), log
    status, body, _ = fetch(url + "trip/a/")
    assert status == 200 and b"Renamed live" in body  # the last good site
    assert b"images.quality" in body  # with the error shown over the page
    conf.write_text('title = "Live again"\n')
    assert wait_for(lambda: b"Live again" in fetch(url)[1] and b"images.quality" not in fetch(url)[1]), log


def test_events_stream_announces_rebuilds(running):
    src, site, conf, url, log = running
    port = int(url.rsplit(":", 1)[1].strip("/"))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/__albumen/events")
    response = conn.getresponse()
    assert response.status == 200 and response.getheader("Content-Type") == "text/event-stream"
    (src / "Trip" / "index.md").write_text("Title: Trip renamed\n")
    seen = b""
    deadline = time.time() + 30
    while b"event: reload" not in seen and time.time() < deadline:
        seen += response.fp.readline()
    conn.close()
    assert b"event: reload" in seen


def test_a_photo_still_being_copied_is_not_processed_half_written(running):
    src, site, conf, url, log = running
    data = (src / "Trip" / "a.jpg").read_bytes()
    target = src / "Trip" / "slow.jpg"
    with open(target, "wb") as f:
        for i in range(0, len(data), max(1, len(data) // 6)):
            f.write(data[i : i + max(1, len(data) // 6)])
            f.flush()
            time.sleep(0.15)
    assert wait_for(lambda: (site / "trip" / "slow" / "index.html").exists(), timeout=30), log
    assert not any(line.strip().startswith("skipped: Trip/slow.jpg") for line in log), log
    from PIL import Image

    largest = max((site / "trip" / "slow").glob("*w.*.jpg"), key=lambda p: p.stat().st_size)
    with Image.open(largest) as im:
        im.load()  # complete, not a half-copied file
        assert im.size == (640, 480)


# ---------------------------------------------------------------------------------------------
# what the server will and will not send


@pytest.fixture
def static_server(tmp_path):
    site = tmp_path / "site"
    (site / "sub").mkdir(parents=True)
    (site / "index.html").write_text("<html><body>home</body></html>")
    (site / "sub" / "index.html").write_text("<html><body>sub</body></html>")
    (site / "clip.mp4").write_bytes(bytes(range(256)) * 40)
    for ext in ("webp", "avif", "webm", "vtt", "jpg"):
        (site / f"x.{ext}").write_bytes(b"data")
    (site / "nolisting").mkdir()
    (site / "nolisting" / "file.txt").write_text("x")
    outside = tmp_path / "secret.txt"
    outside.write_text("TOP SECRET")
    os.symlink(outside, site / "link.txt")
    os.symlink(tmp_path, site / "linkdir")
    server = SiteServer(str(site), "127.0.0.1", 0)
    server.start()
    yield server.httpd.server_address[1], site
    server.stop()


@pytest.mark.parametrize("path", [
    "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E%2Fsecret.txt", "/sub/../../secret.txt", "/link.txt",
    "/linkdir/secret.txt", "/..%2fsecret.txt", "//etc/passwd", "/%2fetc%2fpasswd", "/nolisting/",
])
def test_no_traversal_no_listing(static_server, path):
    port, _ = static_server
    status, body, _ = raw_get(port, path)
    assert status in (400, 403, 404), (path, status)
    assert b"TOP SECRET" not in body and b"root:" not in body and b"file.txt" not in body


def test_types_ranges_and_redirects(static_server):
    port, site = static_server
    for ext, ctype in (("webp", "image/webp"), ("avif", "image/avif"), ("webm", "video/webm"), ("vtt", "text/vtt")):
        assert raw_get(port, f"/x.{ext}")[2]["Content-Type"].startswith(ctype)
    status, body, headers = raw_get(port, "/clip.mp4", {"Range": "bytes=100-199"})
    assert status == 206 and headers["Content-Type"] == "video/mp4"
    assert headers["Content-Range"] == f"bytes 100-199/{256 * 40}" and body == (bytes(range(256)) * 40)[100:200]
    status, body, _ = raw_get(port, "/clip.mp4", {"Range": "bytes=-10"})
    assert status == 206 and body == (bytes(range(256)) * 40)[-10:]
    assert raw_get(port, "/clip.mp4", {"Range": "bytes=999999-"})[0] == 416
    status, _, headers = raw_get(port, "/sub")
    assert status == 301 and headers["Location"] == "/sub/"
    assert raw_get(port, "/sub/")[1].startswith(b"<html><body>sub")


def test_serve_binds_loopback_by_default_and_warns_otherwise(tmp_path):
    from albumen.serve import is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.5")
    result = run_cli("serve", "--help")
    assert "127.0.0.1" in result.stdout


# ---------------------------------------------------------------------------------------------
# albumen init


def test_init_writes_every_setting_and_never_overwrites(tmp_path):
    from albumen.config import iter_settings, load_config

    result = run_cli("init", str(tmp_path / "g"), "--source", str(tmp_path / "Photos"))
    assert result.exit_code == 0, result.output
    text = (tmp_path / "g" / "albumen.toml").read_text()
    for key, _ in iter_settings():
        assert f"# {key.rpartition('.')[2]} = " in text or key == "source", key
    loaded = load_config(tmp_path / "g" / "albumen.toml")  # it parses and validates as written
    assert loaded.resolve(loaded.config.source) == (tmp_path / "Photos").resolve()
    again = run_cli("init", str(tmp_path / "g"))
    assert again.exit_code == 2 and "already exists" in again.stderr
    (tmp_path / "Photos").mkdir()
    inside = run_cli("init", str(tmp_path / "Photos" / "x"), "--source", str(tmp_path / "Photos"))
    assert inside.exit_code == 2 and "inside the photo folder" in inside.stderr
    assert not (tmp_path / "Photos" / "x").exists()


def test_private_toggle_moves_outputs_without_re_encoding(tmp_path):
    src = tmp_path / "photos"
    make_jpeg(src / "Fam" / "a.jpg", size=(900, 600))
    make_jpeg(src / "Pub" / "b.jpg", size=(900, 600))
    site = tmp_path / "site"
    assert run_cli("build", str(src), "-o", str(site), "-j", "1").exit_code == 0
    (src / "Fam" / "index.md").write_text("private: true\n")
    result = run_cli("build", str(src), "-o", str(site), "-j", "1", "-v")
    assert "made 0 derivatives (3 more moved, not re-made);" in result.stdout, result.stdout
    assert not (site / "fam").exists()
    token_dir = next(p for p in (site / "p").iterdir() if p.is_dir())
    assert soup(token_dir / "a" / "index.html").select_one("img.photo-image") is not None
    assert len(list((token_dir / "a").glob("*.jpg"))) == 3


def test_symlinked_index_and_odd_ranges(static_server, tmp_path):
    port, site = static_server
    (site / "dd").mkdir()
    os.symlink(tmp_path / "secret.txt", site / "dd" / "index.html")
    status, body, _ = raw_get(port, "/dd/")
    assert status == 403 and b"TOP SECRET" not in body
    (site / "empty.bin").write_bytes(b"")
    assert raw_get(port, "/empty.bin", {"Range": "bytes=-5"})[0] == 416
    for header in ("bytes=0-1,3-4", "items=0-3", "bytes=abc"):
        status, body, _ = raw_get(port, "/clip.mp4", {"Range": header})
        assert status == 200 and len(body) == 256 * 40, header


def test_other_host_names_are_refused_on_loopback(static_server):
    port, _ = static_server
    assert raw_get(port, "/", {"Host": "evil.example:80"})[0] == 421
    assert raw_get(port, "/", {"Host": f"localhost:{port}"})[0] == 200


def test_every_loopback_address_checks_host_names(tmp_path):
    """--host 127.0.0.2 is loopback too (no warning is given for it): a page elsewhere must not read
    the site through its own name there either (DNS rebinding)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html><body>home</body></html>")
    server = SiteServer(str(site), "127.0.0.2", 0)
    server.start()
    try:
        port = server.httpd.server_address[1]
        conn = http.client.HTTPConnection("127.0.0.2", port, timeout=10)
        for host, status in (("attacker.example", 421), (f"127.0.0.2:{port}", 200), (f"localhost:{port}", 200)):
            conn.request("GET", "/", headers={"Host": host})
            response = conn.getresponse()
            response.read()
            assert response.status == status, host
        conn.close()
    finally:
        server.stop()


@pytest.mark.parametrize("failing", [2, 1])
def test_an_unexpected_error_in_a_build_keeps_the_server_and_the_last_good_site(tmp_path, failing):
    """failing: which build raises, a rebuild (2: the last good site stays, the error shown over it)
    or the first (1: no site yet, and the log does not claim one); the next change recovers."""
    src = tmp_path / "photos"
    make_jpeg(src / "Trip" / "a.jpg", size=(640, 480), date="2024:01:01 10:00:00")
    site = tmp_path / "site"
    log: list[str] = []
    calls = []

    def flaky_build(loaded, options):
        calls.append(1)
        if len(calls) == failing:
            raise RuntimeError("a bug somewhere")
        return build(loaded, options)

    options = ServeOptions(source=src, output=site, config_path=None, port=0, jobs=1, debounce_ms=200,
                           settle_seconds=0.3)
    thread = threading.Thread(target=serve, args=(options, flaky_build, log.append), daemon=True)
    thread.start()
    try:
        assert options.ready.wait(60), log
        url = next(line.split(" at ")[1].split()[0] for line in log if line.startswith("serving"))
        if failing == 1:
            failure = next(line for line in log if "build failed" in line)
            assert failure.startswith("build failed unexpectedly; the site is not built yet"), failure
            assert "last good site" not in failure
        else:
            make_jpeg(src / "Trip" / "b.jpg", size=(640, 480), date="2024:01:02 10:00:00")
            assert wait_for(lambda: any("rebuild failed unexpectedly" in line for line in log)), log
            assert any("still serving the last good site" in line for line in log), log
            assert thread.is_alive()
            status, body, _ = fetch(url + "trip/")
            assert status == 200 and b"a bug somewhere" in body  # the last good site, the error shown over it
        make_jpeg(src / "Trip" / "c.jpg", size=(640, 480), date="2024:01:03 10:00:00")
        assert wait_for(lambda: (site / "trip" / "c" / "index.html").exists() and b"a bug" not in fetch(url + "trip/")[1]), log
    finally:
        options.stop.set()
        thread.join(20)


def test_a_missing_address_gets_the_site_404_page_with_status_404(static_server):
    port, site = static_server
    assert raw_get(port, "/nowhere/")[0] == 404  # no 404.html yet: plain text
    (site / "404.html").write_text("<html><body><h1>Page not found</h1></body></html>")
    for path in ("/nowhere/", "/sub/gone.jpg", "/nolisting/"):
        status, body, headers = raw_get(port, path)
        assert status == 404 and b"Page not found" in body, path
        assert headers["Content-Type"].startswith("text/html")
    assert raw_get(port, "/sub/")[0] == 200


def test_the_site_is_also_served_at_the_path_of_its_url(tmp_path):
    """With url = "https://x.org/my gallery/", the 404 page links from /my%20gallery/: albumen serve
    answers there too, so that page works in the dev server as it will on the real one."""
    src, site = tmp_path / "photos", tmp_path / "site"
    make_jpeg(src / "Trip" / "a.jpg", size=(640, 480))
    conf = tmp_path / "albumen.toml"
    conf.write_text('url = "https://x.org/my gallery/"\n')
    log: list[str] = []
    options = ServeOptions(source=src, output=site, config_path=conf, port=0, jobs=1, watch=False)
    thread = threading.Thread(target=serve, args=(options, build, log.append), daemon=True)
    thread.start()
    try:
        assert options.ready.wait(60), log
        url = next(line.split(" at ")[1].split()[0] for line in log if line.startswith("serving"))
        status, body, _ = fetch(url + "nowhere/")
        assert status == 404
        css = next(ref for ref in re.findall(rb'href="([^"]+)"', body) if b"albumen.css" in ref).decode()
        assert css.startswith("/my%20gallery/static/albumen.css")
        assert fetch(url.rstrip("/") + css)[0] == 200
        assert fetch(url + "my%20gallery/trip/")[0] == 200 and fetch(url + "trip/")[0] == 200
        assert fetch(url + "my%20gallery/../../etc/passwd")[0] in (400, 403, 404)
    finally:
        options.stop.set()
        thread.join(20)


def test_redirects_stay_on_the_site_under_its_base_path(tmp_path):
    """A folder asked for without its final '/' is redirected to a path of this site, under the url's
    path when it was asked for there: '/gallery/stream' went to '/stream/', '/gallery//stream' to
    '//stream/' (another host), and an album named evil.com ('slugs = "original"') gave '//evil.com/'."""
    site = tmp_path / "site"
    for folder in ("stream", "evil.com", "two words"):
        (site / folder).mkdir(parents=True)
        (site / folder / "index.html").write_text("<html><body>x</body></html>")
    (site / "index.html").write_text("<html><body>home</body></html>")
    server = SiteServer(str(site), "127.0.0.1", 0)
    server.base_path = "/gallery/"
    server.start()
    try:
        port = server.httpd.server_address[1]
        for path, expected in (
            ("/gallery/stream", "/gallery/stream/"), ("/gallery//stream", "/gallery/stream/"),
            ("/gallery", "/gallery/"), ("/stream", "/stream/"), ("//stream", "/stream/"),
            ("//evil.com", "/evil.com/"), ("///evil.com", "/evil.com/"), ("/gallery//evil.com", "/gallery/evil.com/"),
            ("/two%20words?x=1", "/two%20words/?x=1"), ("/./stream", "/stream/"),
        ):
            status, _, headers = raw_get(port, path)
            assert (status, headers.get("Location")) == (301, expected), path
            assert raw_get(port, expected)[0] == 200, expected
    finally:
        server.stop()


def test_a_bracketed_ipv6_host_without_a_port_is_accepted_on_loopback(static_server):
    port, _ = static_server
    for host in ("[::1]", f"[::1]:{port}", "127.0.0.1", "LOCALHOST"):
        assert raw_get(port, "/", {"Host": host})[0] == 200, host
    for host in ("[::2]", "[evil.example]:80", "evil.example", "[::1"):
        assert raw_get(port, "/", {"Host": host})[0] == 421, host


def test_a_build_into_a_served_folder_refuses_naming_the_server(tmp_path):
    """albumen serve rebuilds into its output as the photos change: a build into that folder meanwhile
    would undo its work (and it would undo the build's), so the folder is the server's while it runs."""
    import signal
    import subprocess
    import sys

    src, site = tmp_path / "photos", tmp_path / "site"
    make_jpeg(src / "Trip" / "a.jpg")
    server = subprocess.Popen(
        [sys.executable, "-m", "albumen", "serve", str(src), "-o", str(site), "--port", "0", "--no-watch"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert any(line.startswith("serving") for line in iter(server.stdout.readline, ""))  # built, listening
        result = run_cli("build", str(src), "-o", str(site))
        assert result.exit_code == 2
        assert f"{site} is in use by albumen serve (pid {server.pid})" in result.stderr
        assert "Ctrl-C" in result.stderr and "--wait" not in result.stderr  # it would wait for ever
    finally:
        server.send_signal(signal.SIGTERM)
        server.communicate(timeout=30)
    assert run_cli("build", str(src), "-o", str(site)).exit_code == 0  # its lock went with it


def test_a_watermark_edited_while_serving_re_marks_the_images(tmp_path):
    """The watermark's PNG is read with the config (its content is in the marked images' names): the
    server watches it as it watches the config, and a new mark re-makes the marked images, and only them."""
    from PIL import Image

    src = tmp_path / "photos"
    make_jpeg(src / "Trip" / "a.jpg", size=(400, 300), color=(40, 40, 40))
    Image.new("RGBA", (100, 50), (255, 0, 0, 255)).save(tmp_path / "mark.png")
    conf = tmp_path / "albumen.toml"
    conf.write_text('plugins = ["watermark"]\n[plugin.watermark]\nimage = "mark.png"\nopacity = 1.0\nscale = 0.5\n'
                    'position = "center"\n')
    site = tmp_path / "site"
    with serving(src, site, conf) as (_, log):

        def centre() -> tuple[int, ...] | None:
            found = list((site / "trip" / "a").glob("a.400w.*.jpg"))
            if len(found) != 1:
                return None
            with Image.open(found[0]) as im:
                return im.convert("RGB").getpixel((200, 150))

        assert wait_for(lambda: centre() is not None and centre()[0] > 200 and centre()[2] < 60), (centre(), log)
        thumbs = sorted(p.name for p in site.rglob("*.thumb.*"))
        Image.new("RGBA", (100, 50), (0, 0, 255, 255)).save(tmp_path / "mark.png")
        assert wait_for(lambda: (c := centre()) is not None and c[2] > 200 and c[0] < 60), (centre(), log)
        assert wait_for(lambda: any("mark.png modified (a file of the config's plugins)" in line for line in log)), log
        assert sorted(p.name for p in site.rglob("*.thumb.*")) == thumbs  # not marked: not made again
