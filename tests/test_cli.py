"""The command line as a user meets it: a real process, help texts, version, exit codes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from albumen import __version__
from conftest import build_site, make_jpeg, making_videos, run_cli, start_build, tree_digest, video_gallery


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
    # -vv lists every page rendered, those written while images were still being made too
    result = run_cli("build", str(demo), "-o", str(tmp_path / "site2"), "-vv")
    listed = [ln.strip() for ln in result.stdout.splitlines() if ln.strip().endswith(".html")]
    summary = int(result.stdout.split("; rendered ")[1].split()[0])
    assert len(listed) == len(set(listed)) == summary > 20, result.stdout
    assert f"rendered {summary} pages\n" in result.stdout


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


RECORDING_CLI = """
import json, os, sys

import albumen.pool as pool

methods = []
real = pool._start_method


def recording():
    methods.append(real())
    return methods[-1]


pool._start_method = recording

if __name__ == "__main__":
    from albumen.cli import main

    sys.argv = ["albumen", *sys.argv[1:]]
    try:
        main()
    finally:
        with open(os.environ["METHODS_OUT"], "w") as f:
            json.dump(methods, f)
"""


def test_a_build_on_a_terminal_still_forks_its_workers(tmp_path):
    """On a terminal the progress bar is drawn by the build, not by a thread of Rich's: an incremental
    build starts its workers after the bar appeared, and a process with other threads cannot fork
    them (it would fall back to the slower fork server)."""
    import json
    import os
    import threading

    if not sys.platform.startswith("linux"):
        return
    script = tmp_path / "recording_albumen.py"
    script.write_text(RECORDING_CLI)
    src, site = tmp_path / "p", tmp_path / "site"
    make_jpeg(src / "a.jpg", size=(300, 200))

    def build_on_a_terminal() -> tuple[list[str], str]:
        out = tmp_path / "methods.json"
        leader, follower = os.openpty()
        env = dict(os.environ, METHODS_OUT=str(out), COLUMNS="100", TERM="xterm")
        done = subprocess.Popen([sys.executable, str(script), "build", str(src), "-o", str(site)],
                                stdout=follower, stderr=follower, env=env)
        os.close(follower)
        chunks: list[bytes] = []

        def read() -> None:
            while True:
                try:
                    data = os.read(leader, 4096)
                except OSError:
                    return
                if not data:
                    return
                chunks.append(data)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        assert done.wait(timeout=300) == 0
        reader.join(timeout=10)
        os.close(leader)
        return json.loads(out.read_text()), b"".join(chunks).decode(errors="replace")

    methods, shown = build_on_a_terminal()
    assert methods == ["fork"] and "Processing photos" in shown, shown
    make_jpeg(src / "b.jpg", size=(320, 200))  # an incremental build: the workers start during the scan
    methods, shown = build_on_a_terminal()
    assert methods == ["fork"], methods
    assert "Processing photos" in shown and "2 photos" in shown, shown
    methods, shown = build_on_a_terminal()  # nothing changed: the display ended on 'Scanning 0/0'
    assert "0/0" not in shown and "nothing changed since the last build" in shown, shown


def test_the_progress_bar_keeps_moving_once_the_workers_exist():
    """Without Rich's own thread, the bar is redrawn by a thread started once the workers exist:
    the spinner and the clock move while nothing advances (a long video, a big scan)."""
    import threading
    import time

    from albumen.cli import RichReporter

    reporter = RichReporter(1)
    redraws = []
    real = reporter.progress.refresh
    reporter.progress.refresh = lambda: (redraws.append(1), real())
    reporter.phase("Scanning")
    before = len(redraws)
    time.sleep(0.3)
    assert len(redraws) == before, "no thread of its own before the workers exist"
    threads = threading.active_count()
    reporter.keep_redrawing()
    reporter.keep_redrawing()  # once only
    assert threading.active_count() == threads + 1
    time.sleep(0.6)
    reporter.close()
    assert len(redraws) - before >= 3 and not reporter.ticker.is_alive()


def test_lists_of_files_in_messages_read_the_same_everywhere():
    from albumen.report import media_count, plural, some

    assert (media_count(3, 2), media_count(0, 5), media_count(1, 0), media_count(0, 0)) == (
        "3 photos and 2 videos", "5 videos", "1 photo", "0 photos")

    assert some(["a.jpg"]) == "a.jpg"
    assert some([f"{i}.jpg" for i in range(5)]) == "0.jpg, 1.jpg, 2.jpg, 3.jpg, 4.jpg"
    assert some([f"{i}.jpg" for i in range(8)]) == "0.jpg, 1.jpg, 2.jpg, 3.jpg, 4.jpg and 3 more"
    assert (plural(1, "file"), plural(0, "file"), plural(2, "file")) == ("1 file", "0 files", "2 files")


def test_file_names_cannot_send_control_sequences_to_the_terminal(tmp_path):
    """A name is printed as it is in skip lines and warnings: an escape in it could clear the screen,
    move the cursor over the summary or write to the clipboard (OSC 52)."""
    src = tmp_path / "photos"
    make_jpeg(src / "A" / "ok.jpg")
    (src / "A" / "x\x1b]52;c;cHduZWQ=\x07\x1b[2J\rbad.jpg").write_bytes(b"\xff\xd8\xff\xe0 not a real jpeg")
    result = run_cli("build", str(src), "-o", str(tmp_path / "site"))
    assert result.exit_code == 0
    assert "\x1b" not in result.output and "\x07" not in result.output and "\r" not in result.output
    assert "skipped: A/x\\x1b]52;c;cHduZWQ=\\x07\\x1b[2J\\x0dbad.jpg" in result.output


def test_two_builds_into_one_output_never_mix(tmp_path):
    """A second build into an output that a build is writing refuses (status 2), naming that build,
    and one with --wait starts once it is done. Without a lock, the second took the first's
    temporary files for leftovers of an interrupted build and removed them (its videos failed with
    'No such file or directory'), and the next build said 'nothing changed' and kept the damage."""
    src, conf = video_gallery(tmp_path)
    site = tmp_path / "site"
    first = start_build(src, site, "-c", str(conf))
    making_videos(site, first)
    os.killpg(first.pid, signal.SIGSTOP)  # held there, however slow the machine, while the others start
    try:
        second = start_build(src, site, "-c", str(conf))
        _, err = second.communicate(timeout=120)
        assert second.returncode == 2, err
        assert f"{site} is in use by albumen build (pid {first.pid})" in err and "--wait" in err, err
        waiting = start_build(src, site, "-c", str(conf), "--wait")
        said = waiting.stderr.readline()  # (the line is written before it waits)
        assert f"waiting for albumen build (pid {first.pid}), which is writing {site}" in said, said
    finally:
        os.killpg(first.pid, signal.SIGCONT)
    out, err = first.communicate(timeout=300)
    assert first.returncode == 0 and "3 videos, 0 skipped" in out, out + err
    out, err = waiting.communicate(timeout=300)
    assert waiting.returncode == 0 and "3 videos, 0 skipped" in out, out + err
    build_site(src, site, "-c", str(conf))
    clean = tmp_path / "clean"
    build_site(src, clean, "-c", str(conf))
    assert tree_digest(site) == tree_digest(clean)


def test_python_m_albumen_interrupted_exits_130_not_by_sigint(tmp_path):
    """An interrupt that strikes while Python makes a dataclass (an exec() of its generated methods,
    in a module the build imports as it goes) is caught and the build says so, but CPython took it
    for one nobody handled, and `python -m albumen` then killed itself with SIGINT as it exited:
    status -2, not 130 (5 runs in 30 of test_video's interrupt test, with short videos, under load).
    The interrupt is made to strike there, with a sitecustomize the build's Python loads."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import albumen.build\n\n"
        "def build(*args, **kwargs):\n"
        "    exec('raise KeyboardInterrupt')  # as Ctrl-C striking in a dataclass's exec()\n\n"
        "albumen.build.build = build\n",
        encoding="utf-8",
    )
    make_jpeg(tmp_path / "photos" / "a.jpg")
    path = [str(hook), *filter(None, [os.environ.get("PYTHONPATH")])]
    result = subprocess.run(
        [sys.executable, "-m", "albumen", "build", str(tmp_path / "photos"), "-o", str(tmp_path / "site")],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
    )
    assert result.returncode == 130 and "interrupted" in result.stderr, (result.returncode, result.stderr)


def test_a_process_holding_an_output_is_named_by_its_albumen_command():
    from albumen.locks import command_of

    assert command_of(["/v/bin/python3", "/v/bin/albumen", "serve", "photos"]) == "albumen serve"
    assert command_of(["/v/bin/python", "-m", "albumen", "build", "-o", "site"]) == "albumen build"
    assert command_of(["/src/albumen/__main__.py", "build", "photos"]) == "albumen build"  # its own sys.argv
    assert command_of(["/v/pytest/__main__.py", "-n", "2", "tests"]) == "/v/pytest/__main__.py -n 2 tests"
