"""The command line as a user meets it: a real process, help texts, version, exit codes."""

from __future__ import annotations

import subprocess
import sys

from albumen import __version__
from conftest import make_jpeg, run_cli


def albumen(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "albumen", *args], capture_output=True, text=True, cwd=cwd, timeout=300)


def test_version_and_help_with_examples():
    out = albumen("--version")
    assert out.returncode == 0 and __version__ in out.stdout
    for command in ([], ["build"], ["demo"]):
        result = run_cli(*command, "--help")
        assert result.exit_code == 0
        assert "Example" in result.stdout


def test_real_process_build_plain_log_and_summary(tmp_path):
    src = tmp_path / "photos"
    make_jpeg(src / "A" / "one.jpg", size=(200, 100))
    make_jpeg(src / "A" / "two.jpg", size=(200, 100))
    (src / "A" / "bad.jpg").write_bytes(b"")
    out = albumen("build", str(src), "-o", str(tmp_path / "site"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[-1].startswith("built 2 albums, 2 photos, 0 videos, 1 skipped in ")
    assert "skipped: A/bad.jpg: empty file (0 bytes)" in out.stderr
    assert "\x1b[" not in out.stdout  # no terminal control codes when not on a terminal
    quiet = albumen("build", str(src), "-o", str(tmp_path / "site"), "-q")
    quiet_lines = quiet.stdout.strip().splitlines()
    assert len(quiet_lines) == 1 and quiet_lines[0].startswith("built 2 albums, 2 photos, 0 videos, 1 skipped in ")


def test_demo_builds_cleanly(tmp_path):
    demo = tmp_path / "demo-photos"
    assert run_cli("demo", str(demo)).exit_code == 0
    again = run_cli("demo", str(demo))
    assert again.exit_code == 0 and "already holds the demo" in again.stdout
    result = run_cli("build", str(demo), "-o", str(tmp_path / "site"), "--strict")
    assert result.exit_code == 0, result.output
    assert "skipped" not in result.stderr
    assert "built 7 albums, 24 photos, 0 videos, 0 skipped" in result.stdout


def test_broken_template_fails_the_build(tmp_path):
    src = tmp_path / "photos"
    make_jpeg(src / "a.jpg")
    theme = tmp_path / "theme" / "templates"
    theme.mkdir(parents=True)
    (theme / "album.html").write_text("{% extends 'base.html' %}{% block main %}{{ album.nope.deeper }}{% endblock %}")
    (tmp_path / "albumen.toml").write_text('theme = "theme"\n')
    result = run_cli("build", str(src), "-o", str(tmp_path / "site"), "-j", "1", cwd=tmp_path)
    assert result.exit_code == 1
    assert "template error in album.html" in result.stderr


def test_demo_force_never_overwrites(tmp_path):
    photos = tmp_path / "photos"
    (photos / "Mountains").mkdir(parents=True)
    (photos / "index.md").write_text("private: true\n")
    make_jpeg(photos / "Mountains" / "IMG_0001.jpg", size=(10, 10))
    before = (photos / "Mountains" / "IMG_0001.jpg").read_bytes()
    assert run_cli("demo", str(photos)).exit_code == 2
    assert run_cli("demo", str(photos), "--force").exit_code == 0
    assert (photos / "index.md").read_text() == "private: true\n"
    assert (photos / "Mountains" / "IMG_0001.jpg").read_bytes() == before
