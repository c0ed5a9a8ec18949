"""What the command line prints: text made safe for the terminal, and the build's progress (a log of
lines for pipes, CI and files; a live display on a terminal)."""

from __future__ import annotations

import re
import sys
import threading
import time

import click

from .report import media_count, plural

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: object) -> str:
    """Text for the terminal: control characters (from file names, EXIF, sidecars) shown as \\xNN, so a
    name cannot move the cursor, clear the screen or write to the clipboard (OSC 52)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(text))


def say(text: object = "", err: bool = False) -> None:
    click.echo(printable(text), err=err)


class PlainReporter:
    """Line-based log for pipes, CI and files: one line per phase that did work."""

    DONE = {"Reading metadata": "read {n} new or changed file{s}", "Writing pages": "rendered {n} page{s}"}

    def __init__(self, verbosity: int) -> None:
        self.verbosity = verbosity
        self.count = 0
        self.kinds: dict[str, int] = {}
        self.name = ""

    def _end_phase(self) -> None:
        if not self.count or self.verbosity < 1:
            return
        if self.name.startswith("Processing "):  # photos and videos, each counted as what it is
            say(f"processed {media_count(self.kinds.get('image', 0), self.kinds.get('video', 0))}")
        elif self.name in self.DONE:
            say(self.DONE[self.name].format(n=self.count, s="" if self.count == 1 else "s"))

    def phase(self, name: str, total: int | None = None) -> None:
        self._end_phase()
        self.name, self.count, self.kinds = name, 0, {}

    def advance(self, detail: str = "", kind: str = "") -> None:
        self.count += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if self.verbosity >= 2 and detail:
            say(f"  {detail}")

    def note(self, text: str) -> None:
        if self.verbosity >= 2:
            say(text)

    def waiting(self, text: str) -> None:
        say(f"{text}…", err=True)  # even with -q: a build that waits must not look stuck

    def close(self) -> None:
        self._end_phase()
        self.name = ""


class RichReporter:
    """A progress bar per phase on a terminal.

    Redrawn by the build as it advances, and by a thread of its own only once the workers exist
    (keep_redrawing): the build forks its workers only while it has a single thread (see
    pool.can_fork), and in an incremental build they start after the progress bar has appeared."""

    REDRAW_EVERY = 0.1  # seconds

    def __init__(self, verbosity: int) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        self.console = Console(stderr=False)
        self.verbosity = verbosity
        self.progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            transient=False,
            auto_refresh=False,
        )
        self.task = None
        self.drawn = 0.0
        self.ticker: threading.Thread | None = None
        self.stopped = threading.Event()
        self.progress.start()

    def keep_redrawing(self) -> None:
        """Redraw ten times a second from now on (the spinner and the clock move while a long video
        is made, or while nothing advances)."""
        if self.ticker is None:
            def tick() -> None:
                while not self.stopped.wait(self.REDRAW_EVERY):
                    self.progress.refresh()

            self.ticker = threading.Thread(target=tick, name="albumen-progress", daemon=True)
            self.ticker.start()

    def _redraw(self, now: bool = False) -> None:
        if now or time.monotonic() - self.drawn >= self.REDRAW_EVERY:
            self.progress.refresh()
            self.drawn = time.monotonic()

    def _end_task(self) -> None:
        """The phase that ends shows what it did; one that did nothing (a scan that found nothing new,
        which read 'Scanning 0/0' at the end of the display) is taken off."""
        if self.task is None:
            return
        task = next(t for t in self.progress.tasks if t.id == self.task)
        if task.completed:
            self.progress.update(self.task, total=task.completed)
        else:
            self.progress.remove_task(self.task)
        self.task = None

    def phase(self, name: str, total: int | None = None) -> None:
        self._end_task()
        self.task = self.progress.add_task(name, total=total)
        self._redraw(now=True)

    def advance(self, detail: str = "", kind: str = "") -> None:
        if self.task is not None:
            self.progress.advance(self.task)
            self._redraw()

    def note(self, text: str) -> None:
        if self.verbosity >= 2:
            self.progress.console.print(printable(text), markup=False, highlight=False)

    def waiting(self, text: str) -> None:
        say(f"{text}…", err=True)

    def close(self) -> None:
        self._end_task()
        self._redraw(now=True)
        self.stopped.set()
        if self.ticker is not None:
            self.ticker.join()
        self.progress.stop()


def ignored_line(names: list[str], verbosity: int, shown: int = 5) -> str:
    """'ignored 2 files that are not photos or videos'; with -v their names (five, then how many more),
    with -vv all of them."""
    one = len(names) == 1
    line = f"ignored {plural(len(names), 'file')} that {'is not a photo or video' if one else 'are not photos or videos'}"
    if verbosity < 2:
        return line
    names = sorted(names, key=str.casefold)
    listed = names if verbosity >= 3 or len(names) <= shown + 1 else names[:shown]
    more = f" and {len(names) - len(listed)} more (-vv lists all)" if len(listed) < len(names) else ""
    return f"{line}: {', '.join(listed)}{more}"


def reporter_for(verbosity: int):
    if verbosity > 0 and sys.stdout.isatty():
        return RichReporter(verbosity)
    return PlainReporter(verbosity)
