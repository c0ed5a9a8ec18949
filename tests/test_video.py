"""Videos: probed and transcoded with FFmpeg (PyAV), posters, captions, incremental, and played in Chromium."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import pytest
from PIL import Image, ImageStat

from conftest import (
    CORPUS,
    build_site,
    crawl,
    make_jpeg,
    make_video,
    making_videos,
    needs_corpus,
    run_cli,
    soup,
    start_build,
    write_config,
)


def probe(path: Path) -> dict:
    with av.open(str(path)) as c:
        v = c.streams.video[0]
        frame = next(c.decode(v))
        return {
            "format": c.format.name, "video": v.codec_context.name, "audio": c.streams.audio[0].codec_context.name
            if c.streams.audio else None, "duration": c.duration / 1e6, "display": _display(frame),
            "metadata": dict(c.metadata),
        }


def _display(frame) -> tuple[int, int]:
    w, h = frame.width, frame.height
    return (h, w) if round((frame.rotation or 0) / 90) % 2 else (w, h)


def moov_before_mdat(path: Path) -> bool:
    data = path.read_bytes()
    return 0 <= data.find(b"moov") < data.find(b"mdat")


def media_files(folder: Path) -> dict[str, Path]:
    return {f.name.split(".")[-3] + "." + f.suffix.lstrip("."): f for f in folder.iterdir() if f.name != "index.html"}


@needs_corpus
def test_corpus_videos(tmp_path):
    src = tmp_path / "p"
    src.mkdir()
    for name in ("testsrc_h264_aac.mp4", "testsrc_h264_rotate90.mp4", "testsrc_hevc10_hvc1_gps.mov"):
        shutil.copy(CORPUS / "hard" / "video" / name, src / name)
    shutil.copy(CORPUS / "hard" / "corrupt" / "truncated_no_moov_generated.mp4", src / "cut.mp4")
    shutil.copy(CORPUS / "hard" / "corrupt" / "exiftool_QuickTime_broken.mov", src / "broken.mov")
    make_jpeg(src / "photo.jpg")
    site = tmp_path / "site"
    result = build_site(src, site, "-j", "2")
    assert "built 1 album, 1 photo, 3 videos, 2 skipped" in result.stdout
    assert "skipped: cut.mp4: cannot read video" in result.stderr
    assert "skipped: broken.mov: cannot decode any frame of the video" in result.stderr
    expected = {"testsrc-h264-aac": (3.0, (320, 240), "aac"), "testsrc-h264-rotate90": (3.0, (240, 320), None),
                "testsrc-hevc10-hvc1-gps": (2.0, (640, 360), None)}
    for slug, (duration, display, audio) in expected.items():
        mp4 = next((site / slug).glob("*.mp4"))
        info = probe(mp4)
        assert info["video"] == "h264" and info["audio"] == audio and info["format"].startswith("mov,mp4")
        assert abs(info["duration"] - duration) <= 0.2, info
        assert info["display"] == display, (slug, info)
        assert "location" not in info["metadata"] and moov_before_mdat(mp4)
        poster = next((site / slug).glob("*.poster.*.jpg"))
        with Image.open(poster) as im:
            assert im.size == display
            assert ImageStat.Stat(im.convert("L")).mean[0] > 30  # not black
    page = soup(site / "testsrc-h264-rotate90" / "index.html").select_one("video")
    assert (page["width"], page["height"]) == ("240", "320")
    assert page.has_attr("playsinline") and page["preload"] == "metadata" and page["poster"].endswith(".jpg")
    assert crawl(site).broken == []


def test_black_leading_frames_are_skipped_and_rotation_applied(tmp_path):
    src = tmp_path / "p"
    make_video(src / "dark-start.mp4", seconds=1.2, black=12)
    make_video(src / "phone.mp4", seconds=0.6, rotation=90, size=(160, 96))
    site = tmp_path / "site"
    build_site(src, site)
    with Image.open(next((site / "dark-start").glob("*.poster.*.jpg"))) as im:
        r, g, b = ImageStat.Stat(im.convert("RGB")).mean
        assert r > 150 and b < 100  # orange, not one of the 12 black frames
    info = probe(next((site / "phone").glob("*.mp4")))
    assert info["display"] == (96, 160)
    with Image.open(next((site / "phone").glob("*.poster.*.jpg"))) as im:
        assert im.size == (96, 160)


def test_video_page_grid_badge_captions_and_stream(tmp_path):
    src = tmp_path / "p"
    make_video(src / "Trip" / "clip.mp4", seconds=2.0)
    (src / "Trip" / "clip.vtt").write_text("WEBVTT\n\n00:00.000 --> 00:01.000\nHello\n")
    (src / "Trip" / "clip.fr.vtt").write_text("WEBVTT\n\n00:00.000 --> 00:01.000\nBonjour\n")
    make_jpeg(src / "Trip" / "still.jpg", date="2001:01:01 00:00:00")
    make_video(src / "Secret" / "hidden.mp4", seconds=1.0)  # a private album's: counted nowhere public
    (src / "Secret" / "index.md").write_text("private: true\n")
    site = tmp_path / "site"
    conf = tmp_path / "cfg" / "albumen.toml"
    conf.parent.mkdir()
    conf.write_text('url = "https://x.org/"\n')
    result = build_site(src, site, "-c", str(conf))
    assert "ignored" not in result.stdout  # the captions are part of the video
    video = soup(site / "trip" / "clip" / "index.html").select_one("video")
    tracks = video.select("track")
    assert [(t.get("srclang"), t["label"]) for t in tracks] == [(None, "Captions"), ("fr", "Français")]
    for t in tracks:
        assert (site / "trip" / "clip" / t["src"]).read_text().startswith("WEBVTT")
    assert [s["type"] for s in video.select("source")] == ["video/mp4"]
    tile = soup(site / "trip" / "index.html").select_one("li#m-clip")
    assert tile.select_one(".badge").get_text() == "0:02"
    card = soup(site / "index.html").select_one(".card-meta")  # the album's card counts both kinds
    assert [s.get_text() for s in card.select("span")] == ["1 photo", "1 video"]
    stream = soup(site / "stream" / "index.html")
    # everywhere a count is shown, a video is not a photo (the stream said '2 photos')
    assert [s.get_text() for s in stream.select(".album-meta span")] == ["1 photo", "1 video"]
    assert stream.find("meta", attrs={"name": "description"})["content"] == "1 photo, 1 video"
    album = soup(site / "trip" / "index.html")
    assert [s.get_text() for s in album.select(".album-meta span")] == ["1 photo", "1 video"]
    assert album.find("meta", attrs={"property": "og:description"})["content"] == "1 photo, 1 video, 1 January 2001"
    assert "clip/" in [a["href"].split("/")[-2] + "/" for a in stream.select(".grid a")]
    assert "clip" in (site / "feed.xml").read_text()
    assert crawl(site).broken == []


def test_videos_are_not_re_encoded_when_nothing_changed(tmp_path):
    src = tmp_path / "p"
    make_video(src / "clip.mp4", seconds=1.0, size=(640, 360))
    site = tmp_path / "site"
    build_site(src, site)
    before = {p: p.stat().st_mtime_ns for p in site.rglob("*.mp4")}
    result = build_site(src, site, "-v")
    assert "made 0 derivatives;" in result.stdout
    assert {p: p.stat().st_mtime_ns for p in site.rglob("*.mp4")} == before


def test_the_build_log_counts_videos_as_videos(tmp_path):
    """Five videos were 'processed 5 images' and 'made 15 derivatives of 5 images'."""
    src = tmp_path / "p"
    make_video(src / "a.mp4", seconds=0.4, audio=False)
    make_video(src / "b.mp4", seconds=0.4, audio=False)
    site = tmp_path / "site"
    lines = build_site(src, site).stdout.splitlines()
    assert "processed 2 videos" in lines and "read 2 new or changed files" in lines
    assert next(line for line in lines if line.startswith("made ")) == (
        "made 6 derivatives of 2 videos; rendered 5 pages, wrote 11 files; removed 0 stale files")
    assert lines[-1].startswith("built 1 album, 0 photos, 2 videos, 0 skipped in ")
    make_jpeg(src / "c.jpg", size=(300, 200))
    lines = build_site(src, site).stdout.splitlines()
    assert "processed 1 photo" in lines
    assert next(line for line in lines if line.startswith("made ")).startswith("made 2 derivatives of 1 photo; ")


def test_remux_or_transcode_by_settings_and_modern_formats(tmp_path):
    src = tmp_path / "p"
    clip = make_video(src / "clip.mp4", seconds=0.8, size=(320, 180), metadata={"location": "+44.2310-076.4860/"})
    site = tmp_path / "site"
    build_site(src, site)
    copied = next((site / "clip").glob("*.mp4"))
    assert "location" not in probe(copied)["metadata"] and "location" in probe(clip)["metadata"]
    assert copied.name.startswith("clip.180p.")
    with av.open(str(copied)) as c, av.open(str(clip)) as o:  # remuxed: same packets, not re-encoded
        assert c.streams.video[0].frames == o.streams.video[0].frames
    conf = tmp_path / "cfg" / "albumen.toml"
    conf.parent.mkdir()
    conf.write_text('[videos]\nremux = false\nmax_size = 160\nformats = ["mp4", "webm", "av1"]\n')
    site2 = tmp_path / "site2"
    build_site(src, site2, "-c", str(conf))
    files = sorted(p.name.split(".")[1] + p.suffix for p in (site2 / "clip").glob("*.*") if p.suffix in (".mp4", ".webm"))
    assert files == ["90p-av1.webm", "90p-vp9.webm", "90p.mp4"]
    codecs = {p.name.split(".")[1]: probe(p)["video"] for p in (site2 / "clip").glob("*.webm")}
    assert codecs["90p-vp9"] == "vp9" and codecs["90p-av1"] in ("av1", "libdav1d", "libaom-av1")
    for made in (p for p in (site2 / "clip").iterdir() if p.suffix in (".mp4", ".webm")):
        assert not {k.lower() for k in probe(made)["metadata"]} & {"location", "title"}
    sources = [s["type"] for s in soup(site2 / "clip" / "index.html").select("video source")]
    assert sources[-1] == "video/mp4" and len(sources) == 3


CHROMIUM = Path("/usr/bin/chromium")


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian's chromium is not installed (scripts/test.sh installs it)")
@pytest.mark.parametrize("formats", [["mp4"], ["mp4", "webm", "av1"]])
def test_chromium_plays_the_videos(tmp_path, formats):
    from playwright.sync_api import sync_playwright

    from test_browser import ARGS, serve

    src = tmp_path / "p"
    make_video(src / "clip.mp4", seconds=1.0, size=(320, 180))
    make_video(src / "turned.mp4", seconds=1.0, size=(160, 96), rotation=90)
    conf = tmp_path / "cfg" / "albumen.toml"
    conf.parent.mkdir()
    conf.write_text(f"[videos]\nformats = {formats!r}\nremux = false\n".replace("'", '"'))
    site = tmp_path / "site"
    build_site(src, site, "-c", str(conf))
    server, url = serve(site)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            page = browser.new_page()
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            for slug, size in (("clip", (320, 180)), ("turned", (96, 160))):
                page.goto(url + slug + "/")
                page.evaluate("() => { const v = document.querySelector('video'); v.muted = true; return v.play(); }")
                page.wait_for_function("() => document.querySelector('video').readyState >= 2", timeout=20000)
                shown = page.evaluate("() => { const v = document.querySelector('video'); return [v.videoWidth, v.videoHeight, v.currentSrc]; }")
                assert tuple(shown[:2]) == size
                if len(formats) > 1:
                    assert shown[2].endswith(".webm")  # a modern source is preferred when offered
            # in the lightbox too
            page.goto(url)
            page.click("li#m-clip a")
            page.wait_for_selector(".lb video")
            page.evaluate("() => { const v = document.querySelector('.lb video'); v.muted = true; return v.play(); }")
            page.wait_for_function("() => document.querySelector('.lb video').readyState >= 2", timeout=20000)
            assert page.locator(".lb-count").inner_text().startswith("Video ")  # as its page says
            assert errors == []
            browser.close()
    finally:
        server.shutdown()


def test_a_video_over_its_time_limit_fails_alone_and_leaves_nothing(tmp_path, monkeypatch):
    """videos.timeout: a video taking longer is stopped and skipped; the photos beside it are made.
    In a whole build, what it had written is removed too."""
    from dataclasses import replace

    from albumen.config import Config
    from albumen.pool import WorkerPool
    from albumen.process.executor import run_jobs
    from albumen.process.plan import plan_jobs, plan_site
    from albumen.process.specs import VideoJob
    from albumen.scan import scan_source

    src, out = tmp_path / "p", tmp_path / "site"
    # transcoded, not remuxed; noise, so that no machine makes it in 0.3 s (solid colours took 0.34 s; this, 2.5 s)
    make_video(src / "slow.mp4", seconds=8.0, size=(640, 480), codec="mpeg4", noise=True)  # ~2.5 s
    make_jpeg(src / "photo.jpg")
    config = Config()
    gallery = scan_source(str(src), config)
    plan = plan_site(gallery, config, str(out), str(src))
    jobs = [
        replace(job, timeout=0.3) if isinstance(job, VideoJob) else job  # the setting's floor is 10 s
        for job in plan_jobs(gallery, plan, config, str(out), str(src))
    ]
    with WorkerPool(2) as pool:
        results = {r.job_id: r for r in run_jobs(jobs, pool)}
    assert results["photo.jpg"].ok
    assert not results["slow.mp4"].ok and "time" in results["slow.mp4"].error.lower(), results["slow.mp4"].error
    # the worker was stopped mid-write: its temporary file is gone (what it finished, a poster and a
    # thumbnail, is the build's to remove as stale: the video is not part of the site)
    assert not [p for p in out.rglob("*") if p.name.startswith(".albumen-tmp-")]

    # the same in a whole build: the video is listed as skipped and nothing of it is published
    from albumen.process import plan as plan_module

    real = plan_module._video_job
    monkeypatch.setattr(plan_module, "_video_job", lambda *a, **k: replace(real(*a, **k), timeout=0.3))
    result = build_site(src, out, "-v")
    assert "skipped: slow.mp4:" in result.stderr
    assert not [p for p in out.rglob("*") if "slow" in p.name or p.name.startswith(".albumen-tmp-")]
    assert (out / "photo" / "index.html").is_file() and crawl(out).broken == []


SYSTEM_FFMPEG = shutil.which("ffmpeg")
needs_ffmpeg = pytest.mark.skipif(
    SYSTEM_FFMPEG is None, reason="no system ffmpeg on the PATH (scripts/test.sh installs Debian's)"
)


def _logging_ffmpeg(folder: Path, fail: bool = False) -> Path:
    """A videos.ffmpeg wrapper that logs each call, then runs the real ffmpeg (or fails like it would)."""
    script = folder / "ff.sh"
    run = 'echo "Unknown encoder: nothing here" >&2; exit 1' if fail else f'exec "{SYSTEM_FFMPEG}" "$@"'
    script.write_text(f'#!/bin/sh\necho "$@" >> "{folder / "calls.log"}"\n{run}\n')
    script.chmod(0o755)
    return script


@needs_ffmpeg
def test_system_ffmpeg_makes_every_stream(tmp_path):
    """videos.ffmpeg (a path relative to the config): the system ffmpeg makes the streams, upright,
    in every format asked for, with audio, playable from the start (moov first), metadata gone."""
    src = tmp_path / "p"
    where = {"title": "Home", "location": "+44.2310-076.4860/"}
    make_video(src / "phone.mp4", seconds=1.0, rotation=90, size=(320, 180), metadata=where)
    assert probe(src / "phone.mp4")["metadata"]["location"] == where["location"]
    make_video(src / "ok.mp4", seconds=0.6, size=(160, 120))  # already fine: remuxed when allowed
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    _logging_ffmpeg(cfg)
    (cfg / "albumen.toml").write_text(
        '[videos]\nffmpeg = "./ff.sh"\nremux = false\nmax_size = 160\nformats = ["mp4", "webm", "av1"]\n'
    )
    site = tmp_path / "site"
    build_site(src, site, "-c", str(cfg / "albumen.toml"))
    calls = [c for c in (cfg / "calls.log").read_text().splitlines() if c != "-version"]  # its version: see encoder_identity
    assert len(calls) == 6 and all("phone.mp4" in c or "ok.mp4" in c for c in calls)
    streams = {p.name.split(".")[1] + p.suffix: p for p in (site / "phone").iterdir() if p.suffix in (".mp4", ".webm")}
    assert sorted(streams) == ["160p-av1.webm", "160p-vp9.webm", "160p.mp4"]
    expected = {"160p.mp4": ("h264", "aac"), "160p-vp9.webm": ("vp9", "opus"), "160p-av1.webm": ("av1", "opus")}
    for name, (video, audio) in expected.items():
        info = probe(streams[name])
        assert (info["video"].replace("libdav1d", "av1").replace("libaom-av1", "av1"), info["audio"]) == (video, audio)
        assert info["display"] == (90, 160), name  # turned upright (the source was 320x180 turned 90°)
        assert 0.8 <= info["duration"] <= 1.3
        assert not {k.lower() for k in info["metadata"]} & {"title", "location"}, info["metadata"]
    assert moov_before_mdat(streams["160p.mp4"])
    with Image.open(next((site / "phone").glob("*.poster.*.jpg"))) as im:
        assert im.size == (90, 160)
    # remuxing allowed (the default): an H.264/AAC MP4 that fits is copied by ffmpeg, not re-encoded
    (cfg / "albumen.toml").write_text('[videos]\nffmpeg = "./ff.sh"\n')
    (cfg / "calls.log").unlink()
    site2 = tmp_path / "site2"
    build_site(src, site2, "-c", str(cfg / "albumen.toml"))
    calls = [c for c in (cfg / "calls.log").read_text().splitlines() if c != "-version"]  # its version: see encoder_identity
    remuxed = [c for c in calls if "ok.mp4" in c]
    assert len(remuxed) == 1 and "-c copy" in remuxed[0]
    copied = next((site2 / "ok").glob("*.mp4"))
    with av.open(str(copied)) as c, av.open(str(src / "ok.mp4")) as o:
        assert c.streams.video[0].frames == o.streams.video[0].frames
    assert moov_before_mdat(copied)


@needs_ffmpeg
def test_a_failing_system_ffmpeg_skips_only_its_video(tmp_path):
    src = tmp_path / "p"
    make_video(src / "clip.mp4", seconds=0.5, size=(160, 120), codec="mpeg4")
    make_jpeg(src / "photo.jpg")
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    _logging_ffmpeg(cfg, fail=True)
    (cfg / "albumen.toml").write_text('[videos]\nffmpeg = "./ff.sh"\n')
    site = tmp_path / "site"
    result = build_site(src, site, "-c", str(cfg / "albumen.toml"))
    assert "clip.mp4" in result.stderr and "ffmpeg failed: Unknown encoder: nothing here" in result.stderr
    assert (site / "photo" / "index.html").is_file()
    assert not [p for p in site.rglob("*") if p.suffix == ".mp4" or p.name.startswith(".albumen-tmp-")]
    assert crawl(site).broken == []
    strict = run_cli("build", str(src), "-o", str(tmp_path / "strict"), "-c", str(cfg / "albumen.toml"), "--strict")
    assert strict.exit_code != 0 and "clip.mp4" in strict.output


@pytest.mark.parametrize("encoder", ["pyav", pytest.param("system ffmpeg", marks=needs_ffmpeg)])
def test_an_interrupted_build_leaves_no_temporary_file(tmp_path, encoder):
    """Ctrl-C (SIGINT to the build's whole process group, as a terminal sends it) or SIGTERM (to the
    build alone, as `timeout` or a service manager sends it) while videos are being made, again and
    again: each time the build exits 130 with nothing temporary left in the output and no ffmpeg
    running. The pool stopped its workers mid-write and their .albumen-tmp-*.mp4 stayed (4 runs in
    8) until the next build; a system ffmpeg went on encoding, orphaned, after the build had exited.
    Twenty-four short videos, so that the workers go from one to the next all the time and each stop
    finds them at another point of a video (starting ffmpeg, encoding, renaming), 0 to 0.3 s after
    the first began: a worker stopped as it started ffmpeg left that ffmpeg running, and it made its
    file again after the clean-up (3 runs in 15 under load; the next test makes that moment certain).
    (Twelve, once builds started faster, were sometimes all made within those 0.3 s: the build had
    ended, with nothing to interrupt.)"""
    src = tmp_path / "photos"
    first = make_video(src / "Clips" / "clip00.mp4", seconds=1, size=(320, 180))
    for i in range(1, 24):
        shutil.copyfile(first, src / "Clips" / f"clip{i:02}.mp4")
    make_jpeg(src / "photo.jpg")
    conf = write_config(tmp_path, '[videos]\nremux = false\npreset = "slower"\n')
    if encoder == "system ffmpeg":
        with conf.open("a", encoding="utf-8") as f:
            f.write(f'ffmpeg = "{SYSTEM_FFMPEG}"\n')
    site = tmp_path / "site"
    for n, (signum, group) in enumerate([(signal.SIGINT, True), (signal.SIGTERM, False)] * 4):
        build = start_build(src, site, "-c", str(conf), "--force")
        making_videos(site, build)
        time.sleep(0.1 * (n // 2))
        (os.killpg if group else os.kill)(build.pid, signum)
        _, err = build.communicate(timeout=60)
        assert build.returncode == 130 and "interrupted" in err, (build.returncode, err)
        assert not [p.relative_to(site) for p in site.rglob(".albumen-tmp-*")], signum
        still = subprocess.run(["pgrep", "-f", str(site)], capture_output=True, text=True).stdout.split()
        assert not still, f"{still} still writing into the output after the build exited"


def _cut(path: Path, fraction: float) -> Path:
    """The file cut off after `fraction` of its bytes, as an interrupted copy or download leaves it."""
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])
    return path


def _ends_early(text: str) -> list[tuple[str, float, float]]:
    """(file, seconds published, seconds declared) of each 'ends early' warning."""
    found = re.findall(r"warning: (\S+): the file ends early \(cut off\?\); published the first ([\d.]+) s of ([\d.]+) s",
                       text)
    return [(name, float(shown), float(whole)) for name, shown, whole in found]


def test_a_video_cut_off_part_way_is_published_with_a_warning(tmp_path):
    """FFmpeg reads a cut-off file as far as it goes and stops without an error: such a video was
    published shorter than it is, without a word."""
    src = tmp_path / "p"
    _cut(make_video(src / "clip.mp4", seconds=4.0, faststart=True), 0.5)
    _cut(make_video(src / "film.mkv", seconds=4.0, fmt="matroska"), 0.5)
    make_video(src / "whole.mp4", seconds=2.0, faststart=True)
    site = tmp_path / "site"
    result = build_site(src, site)
    found = {name: (shown, whole) for name, shown, whole in _ends_early(result.stderr)}
    assert set(found) == {"clip.mp4", "film.mkv"}, result.stderr  # the whole one is not named
    for name, (shown, whole) in found.items():
        assert whole == 4.0 and 1.0 < shown < 3.0, (name, shown)
        slug = name.split(".")[0]
        published = probe(next((site / slug).glob("*.mp4")))
        assert abs(published["duration"] - shown) < 0.3, (name, published, shown)
        badge = soup(site / "index.html").select_one(f"li#m-{slug} .badge").get_text()
        assert badge == f"0:{round(shown):02d}", (name, badge)  # what was published, not the header's 0:04
    assert "built 1 album, 0 photos, 3 videos, 0 skipped" in result.stdout
    again = build_site(src, site)  # said at every build while the file is as it is
    assert {name for name, _, _ in _ends_early(again.stderr)} == {"clip.mp4", "film.mkv"}
    assert "nothing changed since the last build" in again.stdout
    build_site(src, site, "--strict", expect=1)


def test_videos_read_by_an_older_reader_are_read_again(tmp_path):
    """A cut-off video already in the build cache was read before the reader looked at its end: its
    record is read again (and only videos' are)."""
    from albumen.config import Config
    from albumen.scan import FileRecord, ScanCache, read_media_file, scan_source

    src = tmp_path / "p"
    clip = _cut(make_video(src / "clip.mp4", seconds=4.0, faststart=True), 0.5)
    photo = make_jpeg(src / "photo.jpg")
    asked: list[str] = []

    class OlderCache(ScanCache):
        def get_file(self, src_uri, size, mtime_ns):
            asked.append(src_uri)
            path = clip if src_uri == "clip.mp4" else photo
            record = read_media_file(str(path), src_uri, 10**9)
            record.notes = []
            del record.reader  # as unpickled from a record cached before the field existed
            return record

        def put_file(self, src_uri, size, mtime_ns, record: FileRecord):
            asked.append(f"put {src_uri}")

    gallery = scan_source(str(src), Config(), OlderCache())
    assert sorted(asked) == ["clip.mp4", "photo.jpg", "put clip.mp4"]
    assert any(w.startswith("clip.mp4: the file ends early") for w in gallery.warnings), gallery.warnings


@needs_corpus
def test_corpus_video_cut_off_is_published_with_a_warning(tmp_path):
    """The corpus's camera-like MP4 (H.264/AAC, index first) cut at 60%, and any video the corpus
    lists as cut off: each published with the warning, or skipped with its reason, never silently short."""
    src = tmp_path / "p"
    src.mkdir()
    _cut(Path(shutil.copy(CORPUS / "hard" / "video" / "testsrc_h264_aac.mp4", src / "cut.mp4")), 0.6)
    listed = []
    for row in (CORPUS / "hard" / "MANIFEST.tsv").read_text().splitlines():
        name, *rest = row.split("\t")
        if name.startswith("video/") and re.search(r"truncat|cut off|cut to|partial", " ".join(rest), re.I):
            listed.append(Path(shutil.copy(CORPUS / "hard" / name, src / Path(name).name)).name)
    site = tmp_path / "site"
    result = build_site(src, site)
    found = {name: (shown, whole) for name, shown, whole in _ends_early(result.stderr)}
    assert "cut.mp4" in found and found["cut.mp4"][1] == 3.0 and found["cut.mp4"][0] < 2.5, result.stderr
    assert abs(probe(next((site / "cut").glob("*.mp4")))["duration"] - found["cut.mp4"][0]) < 0.3
    for name in listed:
        assert name in found or f"skipped: {name}:" in result.stderr, (name, result.stderr)


def _one_cpu():  # pragma: no cover - runs in the child
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


@pytest.mark.parametrize("encoder", ["pyav", pytest.param("system ffmpeg", marks=needs_ffmpeg)])
def test_video_streams_are_the_same_bytes_on_any_machine(tmp_path, encoder):
    """A stream's name carries its recipe, so it may be cached for ever: the same source and settings
    must give the same bytes wherever they are encoded. x264's output depended on its thread count,
    which FFmpeg takes from the CPUs the process may use (a build on 1 CPU and one on 2 differed), and
    WebM files carried random identifiers (two builds never agreed)."""
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs to compare with a build on 1")
    import subprocess
    import sys

    src = tmp_path / "p"
    make_video(src / "clip.mp4", seconds=1.0, size=(320, 240))
    text = '[videos]\nremux = false\nformats = ["webm"]\n'
    if encoder == "system ffmpeg":
        text += f'ffmpeg = "{SYSTEM_FFMPEG}"\n'
    conf = write_config(tmp_path, text)
    digests = []
    for i, limit in enumerate((None, _one_cpu)):
        site = tmp_path / f"site{i}"
        done = subprocess.run([sys.executable, "-m", "albumen", "build", str(src), "-o", str(site), "-c", str(conf)],
                              capture_output=True, text=True, preexec_fn=limit, timeout=300)
        assert done.returncode == 0, done.stderr
        digests.append({p.name: p.read_bytes() for p in site.rglob("*") if p.suffix in (".mp4", ".webm")})
    assert sorted(digests[0]) == sorted(digests[1]) and len(digests[0]) == 2
    for name, data in digests[0].items():
        assert digests[1][name] == data, name


@needs_ffmpeg
def test_another_encoder_gives_other_names(tmp_path):
    """PyAV's FFmpeg and a system ffmpeg make different bytes from one recipe: their streams must not
    share a name (switching videos.ffmpeg published the other encoder's bytes under the old names)."""
    src = tmp_path / "p"
    make_video(src / "clip.mp4", seconds=0.5, size=(160, 120))
    names = []
    for i, text in enumerate(("[videos]\nremux = false\n", f'[videos]\nremux = false\nffmpeg = "{SYSTEM_FFMPEG}"\n')):
        conf = tmp_path / f"c{i}" / "albumen.toml"
        conf.parent.mkdir()
        conf.write_text(text)
        site = tmp_path / f"site{i}"
        build_site(src, site, "-c", str(conf))
        names.append({p.name for p in site.rglob("*.mp4")})
    assert len(names[0]) == 1 and not names[0] & names[1]


def _start_ffmpeg_and_be_stopped(task: tuple[str, str]) -> None:
    """In a worker: run a stand-in for a system ffmpeg (a sleeping Python) as a video job does, and
    have the worker stopped the moment its Popen returns, before the worker has recorded which process
    it started: with SIGTERM, as the pool stops a worker (the worker's handler alone must deal with
    it: no parent-death signal), or SIGKILL (a worker that took over 3 s to stop, the out-of-memory
    killer, a build killed with its workers). The stand-in's pid goes to a file."""
    from albumen.process import video

    how, pid_file = task
    real = subprocess.Popen

    class StoppedAsItStarts(real):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            with open(pid_file, "a", encoding="utf-8") as f:  # a task whose pool broke runs twice
                f.write(f"{self.pid}\n")
            os.kill(os.getpid(), signal.SIGTERM if how == "term" else signal.SIGKILL)

    subprocess.Popen = StoppedAsItStarts  # this worker ends here
    if how == "term":
        video._child_setup = lambda: None
    video._run_ffmpeg([sys.executable, "-c", "import time; time.sleep(60)"], 60)


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")  # a zombie runs no more


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the parent-death signal is Linux's")
@pytest.mark.parametrize("how", ["term", "kill"])
def test_a_worker_stopped_as_it_starts_ffmpeg_leaves_no_ffmpeg_running(tmp_path, how):
    """The worker's SIGTERM handler killed the ffmpeg it had recorded; one that arrived while Popen was
    starting ffmpeg found none recorded, the worker exited, and that ffmpeg went on, orphaned, and
    created its temporary file after the build's clean-up. Now the handler lets Popen return, then
    kills and reaps that ffmpeg before the worker exits (term: gone, not even a zombie, when the pool
    sees the worker gone); and ffmpeg dies with its worker whatever kills the worker (kill). Both
    failed before: the stand-in went on running (term fails too with the parent-death signal alone)."""
    from albumen.pool import TaskFailed, WorkerPool

    pid_file = tmp_path / "ffmpeg.pid"
    with WorkerPool(1) as pool:
        [(_, result)] = list(pool.run(_start_ffmpeg_and_be_stopped, [(how, str(pid_file))], timeout=60))
    assert isinstance(result, TaskFailed) and "crashed" in str(result), result  # the worker was stopped
    pids = [int(pid) for pid in pid_file.read_text().split()]
    try:
        if how == "term":
            assert not [pid for pid in pids if Path(f"/proc/{pid}").exists()], "the worker did not reap its ffmpeg"
        deadline = time.time() + 5  # killed by the kernel at once; whoever inherits it may take a moment to reap it
        while any(map(_running, pids)) and time.time() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in pids if _running(pid)], "the ffmpeg outlived its worker"
    finally:
        for pid in filter(_running, pids):
            os.kill(pid, signal.SIGKILL)
