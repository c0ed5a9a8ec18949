"""albumen deploy: to a real S3 server on loopback (Ceph's RADOS Gateway, from Debian's packages,
started by the fixture with ../shared/s3/start_rgw.sh) and with Debian's rsync."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from albumen.host.deploy import deploy
from albumen.host.deploy.files import IMMUTABLE, NO_CACHE
from albumen.host.deploy.s3 import S3Store
from conftest import SHARED, build_site, make_jpeg, make_video, tree_digest, write_config

RGW_SCRIPT = SHARED / "s3" / "start_rgw.sh"
RGW_PROGRAMS = ("radosgw", "ceph-mon", "ceph-osd", "monmaptool", "radosgw-admin")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _stop(folder: Path) -> None:
    pids = []
    for pid_file in (folder / "run").glob("*.pid"):
        try:
            pids.append(int(pid_file.read_text().strip()))
        except (OSError, ValueError):
            continue
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.time() + 20
    while time.time() < deadline and any(Path(f"/proc/{pid}").exists() for pid in pids):
        time.sleep(0.1)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.fixture(scope="module")
def rgw(tmp_path_factory):
    """A single-node Ceph cluster and its S3 gateway on 127.0.0.1 (memory-backed), for this module."""
    if not RGW_SCRIPT.is_file():
        pytest.skip(f"no {RGW_SCRIPT} (the shared folder beside the project)")
    missing = [p for p in RGW_PROGRAMS if shutil.which(p) is None]
    if missing:
        pytest.skip(f"Ceph's RADOS Gateway is not installed ({', '.join(missing)} missing): "
                    "scripts/test.sh installs radosgw, ceph-mon and ceph-osd")
    # one cluster at a time on this machine (its monitor's port is fixed): test processes take turns
    lock = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "albumen-test-rgw.lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    folder = tmp_path_factory.mktemp("rgw")
    deadline = time.time() + 30  # the monitor's port, once the last cluster's monitor has gone
    while time.time() < deadline and _listening(6789):
        time.sleep(0.5)
    port = _free_port()
    env = dict(os.environ, PORT=str(port), AK="ALBUMENTESTKEY", SK="albumen-test-secret", MEMSTORE_BYTES=str(512 << 20))
    for attempt in range(2):  # (its monitor, just started, may not answer yet: once more from scratch)
        try:
            started = subprocess.run(["bash", str(RGW_SCRIPT), str(folder)], env=env, capture_output=True,
                                     text=True, timeout=180, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            started = None
        if started is not None and started.returncode == 0 and "RGW up" in started.stdout:
            break
        _stop(folder)
        if attempt == 0:
            folder = tmp_path_factory.mktemp("rgw")
            while _listening(6789) and time.time() < deadline + 30:
                time.sleep(0.5)
    else:
        lock.close()
        detail = "timed out" if started is None else (
            f"exit status {started.returncode}: " + (started.stderr + started.stdout).strip()[-500:])
        pytest.skip(f"the S3 server (Ceph RGW) could not start: {detail}")
    yield {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "ALBUMENTESTKEY",
           "AWS_SECRET_ACCESS_KEY": "albumen-test-secret", "AWS_DEFAULT_REGION": "us-east-1"}
    _stop(folder)
    lock.close()


_buckets = iter(range(1000))


@pytest.fixture
def bucket(rgw, monkeypatch, tmp_path):
    """A new bucket; the AWS variables point at the test server (and no user's AWS files are read)."""
    for key, value in rgw.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
        monkeypatch.delenv(name, raising=False)
    import boto3

    client = boto3.client("s3")
    name = f"albumen-test-{os.getpid()}-{next(_buckets)}"
    client.create_bucket(Bucket=name)
    return name, client


def gallery(tmp_path: Path) -> tuple[Path, Path]:
    src = tmp_path / "photos"
    make_jpeg(src / "Trip" / "a.jpg", size=(800, 600), color=(200, 40, 40), date="2024:01:01 10:00:00")
    make_jpeg(src / "Trip" / "b.jpg", size=(800, 600), color=(40, 200, 40), date="2024:01:02 10:00:00")
    make_jpeg(src / "Other" / "c.jpg", size=(800, 600), color=(40, 40, 200), date="2024:01:03 10:00:00")
    make_jpeg(src / "Family" / "secret.jpg", size=(800, 600), color=(9, 9, 9), date="2024:01:04 10:00:00")
    (src / "Family" / "index.md").write_text("private: true\n")
    make_video(src / "Trip" / "clip.mp4", seconds=0.4)
    (src / "Trip" / "clip.vtt").write_text("WEBVTT\n\n00:00.000 --> 00:00.400\nHello\n")
    config = write_config(tmp_path, 'url = "https://photos.example.org/"\n[images]\nformats = ["jpeg", "avif"]\n'
                                    "sizes = [640]\n")
    return src, config


def keys(client, bucket: str, prefix: str = "") -> set[str]:
    found = set()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        found.update(obj["Key"] for obj in page.get("Contents", []))
    return found


def test_s3_deploy_uploads_what_changed_in_order_and_deletes_only_its_own(bucket, tmp_path, monkeypatch):
    name, client = bucket
    src, config = gallery(tmp_path)
    site = tmp_path / "site"
    build_site(src, site, "-c", str(config))
    dest = f"s3://{name}/gallery"
    client.put_object(Bucket=name, Key="gallery/someone/else.txt", Body=b"not Albumen's")
    client.put_object(Bucket=name, Key="outside.txt", Body=b"not under the prefix")
    order: list[tuple[str, str]] = []  # what the deploy did, in order
    put, delete = S3Store.put, S3Store.delete
    monkeypatch.setattr(S3Store, "put", lambda self, f: (order.append(("put", f.key)), put(self, f))[1])
    monkeypatch.setattr(S3Store, "delete", lambda self, ks: (order.extend(("delete", k) for k in ks), delete(self, ks))[1])

    # a first deploy uploads everything, with the right headers
    first = deploy(site, dest)
    files = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert first.uploaded == len(files) and first.deleted == 0
    assert keys(client, name, "gallery/") == {f"gallery/{k}" for k in files} | {"gallery/someone/else.txt"}

    def head(key: str) -> tuple[str, str]:
        answer = client.head_object(Bucket=name, Key=f"gallery/{key}")
        return answer["ContentType"], answer.get("CacheControl", "")

    def one(pattern: str) -> str:
        found = sorted(k for k in files if Path(k).match(pattern))
        assert found, pattern
        return found[0]

    assert head("index.html") == ("text/html; charset=utf-8", NO_CACHE)
    assert head("feed.xml") == ("application/atom+xml", NO_CACHE)
    assert head("sitemap.xml") == ("application/xml", NO_CACHE)
    assert head(one("trip/a/a.*.jpg")) == ("image/jpeg", IMMUTABLE)
    assert head(one("trip/a/a.*.avif")) == ("image/avif", IMMUTABLE)
    assert head(one("trip/clip/*.vtt")) == ("text/vtt; charset=utf-8", IMMUTABLE)
    assert head(one("trip/clip/*.mp4")) == ("video/mp4", IMMUTABLE)
    assert head("static/albumen.css")[0] == "text/css; charset=utf-8"
    body = client.get_object(Bucket=name, Key="gallery/index.html")["Body"].read()
    assert body == (site / "index.html").read_bytes()
    puts = [k for what, k in order if what == "put"]
    first_page = min(i for i, k in enumerate(puts) if k.endswith(".html"))
    assert all(not k.endswith((".html", ".xml")) for k in puts[:first_page])  # what pages link to, first
    assert not first.warnings[1:] and "Albumen did not put there" in first.warnings[0]

    # a private album is only under its token path
    private = [k for k in keys(client, name) if "secret" in k]
    assert private and all(k.startswith("gallery/p/") for k in private)
    assert not any("family" in k.lower() for k in keys(client, name))

    # nothing changed: nothing uploaded, and few requests (a listing and the anonymous check)
    order.clear()
    again = deploy(site, dest)
    assert (again.uploaded, again.deleted, again.unchanged) == (0, 0, len(files)) and order == []
    assert again.requests == 2

    # a changed photo: its new derivatives and the pages that changed, nothing else
    before = tree_digest(site)
    make_jpeg(src / "Trip" / "a.jpg", size=(800, 600), color=(250, 250, 0), date="2024:01:01 10:00:00")
    build_site(src, site, "-c", str(config))
    after = tree_digest(site)
    changed = {k for k, v in after.items() if not k.endswith("/") and before.get(k) != v}
    order.clear()
    third = deploy(site, dest)
    assert {k for what, k in order if what == "put"} == changed
    assert any(k.startswith("trip/a/a.") and k.endswith(".jpg") for k in changed) and "trip/a/index.html" in changed
    removed = {k for k in before if not k.endswith("/") and k not in after}
    assert {k for what, k in order if what == "delete"} == removed  # the old derivatives
    assert order[-len(removed):] == [("delete", k) for k in sorted(removed)]  # after the pages
    assert third.uploaded == len(changed) and third.deleted == len(removed)

    # a removed album: its objects deleted; other people's objects left alone
    shutil.rmtree(src / "Other")
    build_site(src, site, "-c", str(config))
    fourth = deploy(site, dest)
    assert fourth.deleted > 0 and not any(k.startswith("gallery/other/") for k in keys(client, name))
    assert {"gallery/someone/else.txt", "outside.txt"} <= keys(client, name)
    local = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    assert keys(client, name, "gallery/") == {f"gallery/{k}" for k in local} | {"gallery/someone/else.txt"}

    # an object of the site replaced by someone since: not deleted when the site drops it
    client.put_object(Bucket=name, Key="gallery/trip/b/index.html", Body=b"edited by hand")
    (src / "Trip" / "b.jpg").unlink()
    build_site(src, site, "-c", str(config))
    fifth = deploy(site, dest)
    assert "gallery/trip/b/index.html" in keys(client, name)
    assert any("someone changed since" in w for w in fifth.warnings)


def test_s3_deploy_dry_run_and_the_anonymous_listing_warning(bucket, tmp_path):
    name, client = bucket
    src = tmp_path / "photos"
    make_jpeg(src / "a.jpg", size=(320, 240))
    site = tmp_path / "site"
    build_site(src, site)
    dry = deploy(site, f"s3://{name}", dry_run=True)
    assert dry.uploaded > 0 and keys(client, name) == set() and any(line == "upload index.html" for line in dry.planned)
    assert not any("anyone can list" in w for w in dry.warnings)
    client.put_bucket_acl(Bucket=name, ACL="public-read")
    done = deploy(site, f"s3://{name}")
    assert any("anyone can list" in w for w in done.warnings)
    assert "index.html" in keys(client, name)


def test_deploy_command_refuses_what_is_not_a_site_and_a_site_being_built(tmp_path):
    from conftest import run_cli

    (tmp_path / "folder").mkdir()
    result = run_cli("deploy", str(tmp_path / "folder"), str(tmp_path / "dest"))
    assert result.exit_code == 2 and "not a site Albumen built" in result.stderr
    assert not (tmp_path / "dest").exists()


def test_rsync_deploy_to_a_folder_moves_what_changed_and_deletes_only_its_own(tmp_path):
    if shutil.which("rsync") is None:
        pytest.skip("rsync is not installed (scripts/test.sh installs Debian's)")
    from conftest import run_cli

    src = tmp_path / "photos"
    make_jpeg(src / "Trip" / "a.jpg", size=(640, 480), date="2024:01:01 10:00:00")
    make_jpeg(src / "Other" / "c.jpg", size=(640, 480), color=(0, 0, 200))
    site, dest = tmp_path / "site", tmp_path / "www" / "photos"
    build_site(src, site)
    result = run_cli("deploy", str(site), str(dest))
    assert result.exit_code == 0, result.output
    assert tree_digest(dest).keys() == tree_digest(site).keys()
    assert all(v == tree_digest(site)[k] for k, v in tree_digest(dest).items() if not k.endswith("/"))
    (dest / "mine.txt").write_text("someone else's")
    again = run_cli("deploy", str(site), str(dest))
    assert "uploaded 0 files" in again.stdout, again.output
    shutil.rmtree(src / "Other")
    make_jpeg(src / "Trip" / "b.jpg", size=(640, 480), color=(0, 200, 0))
    build_site(src, site)
    dry = run_cli("deploy", str(site), str(dest), "--dry-run")
    assert "dry run" in dry.stdout and not (dest / "trip" / "b").exists()
    third = run_cli("deploy", str(site), str(dest))
    assert third.exit_code == 0, third.output
    assert (dest / "trip" / "b" / "index.html").is_file() and (dest / "mine.txt").is_file()
    assert not [p for p in (dest / "other").rglob("*") if p.is_file()] if (dest / "other").exists() else True
    site_files = {k for k in tree_digest(site) if not k.endswith("/")}
    assert {k for k in tree_digest(dest) if not k.endswith("/")} == site_files | {"mine.txt"}


def test_watch_deploys_after_each_rebuild(tmp_path):
    if shutil.which("rsync") is None:
        pytest.skip("rsync is not installed (scripts/test.sh installs Debian's)")
    from albumen.host.deploy import deploy_after_build
    from albumen.host.sites import Site
    from albumen.host.watch import OneGallery, WatchOptions, watch_galleries

    src, site, dest = tmp_path / "photos", tmp_path / "site", tmp_path / "www"
    make_jpeg(src / "a.jpg", size=(320, 240))
    log: list[str] = []
    options = WatchOptions(jobs=1, debounce_ms=200, settle_seconds=0.3, poll_seconds=0.5,
                           deploy=deploy_after_build(str(dest)))
    thread = threading.Thread(target=watch_galleries, daemon=True, args=(
        OneGallery(Site("", src.resolve(), site.resolve(), None)), options, log.append))
    thread.start()
    try:
        assert options.ready.wait(120), log
        assert (dest / "a" / "index.html").is_file() and any(line.startswith("deployed to ") for line in log), log
        make_jpeg(src / "b.jpg", size=(320, 240), color=(0, 0, 200))
        deadline = time.time() + 60
        while time.time() < deadline and not (dest / "b" / "index.html").is_file():
            time.sleep(0.1)
        assert (dest / "b" / "index.html").is_file(), log
    finally:
        options.stop.set()
        thread.join(30)
