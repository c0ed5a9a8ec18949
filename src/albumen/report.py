"""How stages talk to the user: phases with progress, and notes. The CLI decides how to show them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .model import Skipped


class Reporter(Protocol):
    def phase(self, name: str, total: int | None = None) -> None: ...
    def advance(self, detail: str = "", kind: str = "") -> None:
        """One item done; kind: 'image' or 'video' for a media processed, else ''."""
    def note(self, text: str) -> None: ...
    def waiting(self, text: str) -> None: ...  # for another process to finish with the output (--wait)


class QuietReporter:
    def phase(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, detail: str = "", kind: str = "") -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def waiting(self, text: str) -> None:
        pass


@dataclass
class BuildReport:
    """What a build did, for the command line and the dev server to show."""

    source: Path
    output: Path
    cache: Path | None = None
    albums: int = 0
    photos: int = 0
    videos: int = 0
    ignored: list[str] = field(default_factory=list)  # files that are not photos or videos
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # worth saying once, not problems (--strict ignores them)
    derivatives_made: int = 0
    derivatives_moved: int = 0  # made before under another folder: linked into place, not re-made
    photos_processed: int = 0  # photos whose derivatives this build made (successfully)
    videos_processed: int = 0  # and videos
    pages_rendered: int = 0
    pages_written: int = 0
    stale_removed: int = 0
    replaced: list[str] = field(default_factory=list)  # pages written over files Albumen had not made
    output_was_ours: bool = False  # the output held Albumen's static files when the build started
    unchanged: bool = False  # nothing read, made or written: the sources were as the last build left them
    seconds: float = 0.0

    @property
    def processed(self) -> str:
        """'3 photos and 2 videos' processed by this build."""
        return media_count(self.photos_processed, self.videos_processed)

    @property
    def problems(self) -> bool:
        return bool(self.skipped or self.warnings)


def plural(n: int, word: str) -> str:
    """'1 photo', '3 photos'."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def media_count(photos: int, videos: int) -> str:
    """'3 photos and 2 videos', '5 videos', '1 photo': a video is not counted as a photo (or an image)."""
    if photos and videos:
        return f"{plural(photos, 'photo')} and {plural(videos, 'video')}"
    return plural(videos, "video") if videos else plural(photos, "photo")


def some(items: list[str], limit: int = 5) -> str:
    """'a, b, c' or, past the limit, 'a, b, c, d, e and 3 more'."""
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def rebuild_line(report: BuildReport, seconds: float, why: str | None) -> str:
    """One line for a build under `albumen serve` or `albumen watch`: 'rebuilt in 0.4 s (media
    added: Trip/c.jpg): made 2 derivatives of 1 photo, wrote 5 files, removed 0; 0 skipped'.
    why: what changed, or None for the first build (a build, not a rebuild)."""
    made = f"made {plural(report.derivatives_made, 'derivative')} of {report.processed}, " if (
        report.photos_processed + report.videos_processed) else ""
    because = f" ({why})" if why else ""
    return (
        ("rebuilt" if why else "built")
        + f" in {seconds:.1f} s{because}: {made}wrote {plural(report.pages_written, 'file')}, "
        f"removed {report.stale_removed}; {len(report.skipped)} skipped"
    )
