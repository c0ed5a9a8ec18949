"""How stages talk to the user: phases with progress, and notes. The CLI decides how to show them."""

from __future__ import annotations

from typing import Protocol


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
