"""What a build leaves for the next one: the fingerprint of everything it read (when the next build's
is the same, nothing changed) and the summary of what it found, which a build with nothing to do
repeats."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import xxhash

from . import __version__
from .config import LoadedConfig
from .model import Skipped
from .process.specs import PROCESSING_VERSION, STILLS_VERSION, VIDEOS_VERSION
from .render.themes import theme_dirs
from .report import BuildReport
from .scan import WalkReport
from .scan.dates import local_zone_name
from .scan.walk import listing_digest, listing_text
from .seal.keys import passwords_fingerprint
from .tokens import albumen_home

if TYPE_CHECKING:
    from .cache import BuildCache


def fingerprint(
    listings, walk_report: WalkReport, loaded: LoadedConfig, theme: Path | None, source: Path, output: Path,
    more_templates: list[Path] = (), folders: dict[str, str] | None = None, digests: list[str] | None = None,
) -> str:
    """Everything a build reads, by name, size and modification time: when it is unchanged, so is the site.

    The photo folder's listing (every file it holds, sidecars and captions included, and where each
    symbolic link leads, with the index.md files above a link's target that the walk does not list),
    the config (plugins' versions and options included), the theme's files and the plugins' templates
    (more_templates), the time zone and Albumen's version; the private-link secret and rotations are
    added by with_secret.

    folders: filled with each listed folder's own digest (scan.walk.listing_text: its files' names, sizes
    and modification times, and what the walk said of each), which the renderer's album fingerprints
    (see render.albumkeys) and the scan's folder snapshots start from. digests: those digests, when the
    caller made them already (while the walk waited for the workers).
    """
    h = hashlib.sha256()
    h.update(f"{__version__}\0{PROCESSING_VERSION}\0{STILLS_VERSION}\0{VIDEOS_VERSION}\0{source}\0{output}\0{loaded.config!r}\0".encode())
    h.update(f"{local_zone_name()}\0{os.environ.get('ALBUMEN_SECRET', '')}\0".encode("utf-8", "surrogateescape"))
    h.update(f"P{passwords_fingerprint(loaded.config)}\0".encode())  # [passwords] and ALBUMEN_PASSWORD_* (keyed)
    for folder in [*theme_dirs(theme), *more_templates]:
        for path in sorted(folder.rglob("*")):
            st = path.stat()
            h.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\0".encode("utf-8", "surrogateescape"))
    for n, listing in enumerate(listings):
        digest = digests[n] if digests is not None else listing_digest(listing_text(listing))
        h.update(f"{digest}\0".encode())
        if folders is not None:
            folders[listing.src_uri] = digest
    for link in walk_report.links:
        h.update(f"L{link.src_uri}\0{link.real_uri}\0{link.walked_as}\0".encode("utf-8", "surrogateescape"))
    for folder, entries in walk_report.marks.items():
        h.update(f"M{folder}\0".encode("utf-8", "surrogateescape"))
        for entry in entries or ():
            h.update(f"{entry.name}\0{entry.size}\0{entry.mtime_ns}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def with_secret(read: str) -> str:
    """A fingerprint (see fingerprint) with the private-link secret and its rotations, read now: the
    build that makes the secret records the fingerprint its next build reads (one taken before the
    secret existed never matched again, and the build after the first did all its work again)."""
    h = hashlib.sha256(read.encode())
    for extra in (albumen_home() / "secret", albumen_home() / "rotations.json"):
        try:
            h.update(extra.read_bytes())
        except OSError:
            h.update(b"-")
    return h.hexdigest()


def restore_summary(text: str | None, report: BuildReport) -> bool:
    """The last build's counts and messages, for a build that had nothing to do."""
    if not text:
        return False
    try:
        data = json.loads(text)
        report.albums, report.photos, report.videos = data["albums"], data["photos"], data["videos"]
        report.ignored = data["ignored"]
        if not isinstance(report.ignored, list):  # an older build's count: build again, to name them
            return False
        report.skipped = [Skipped(uri, reason) for uri, reason in data["skipped"]]
        report.warnings += data["warnings"]
        report.notes += data["notes"]
    except (ValueError, KeyError, TypeError):
        return False
    return True


def save_summary(cache: BuildCache, report: BuildReport) -> None:
    """The counts and messages a build with nothing to do says again (see restore_summary); not the
    cache's own warnings (about this run), nor the note that the secret was created."""
    summary = {
        "albums": report.albums, "photos": report.photos, "videos": report.videos, "ignored": report.ignored,
        "skipped": [[s.src_uri, s.reason] for s in report.skipped],
        "warnings": [w for w in report.warnings if w not in cache.warnings],  # the cache's are about this run
        "notes": [n for n in report.notes if not n.startswith("created the secret")],
    }
    # written only when it changed: a library whose camera clocks were wrong said 787,703 warnings, a
    # 72 MB summary that each build wrote again (and its text, made only to be written, ~150 MB more
    # memory at the end of the build): its digest is taken item by item
    h = xxhash.xxh3_128()
    for name, value in summary.items():
        h.update(f"\0{name}\0".encode())
        for item in value if isinstance(value, list) else [value]:
            h.update((item if isinstance(item, str) else json.dumps(item)).encode("utf-8", "surrogateescape"))
            h.update(b"\0")
    digest = h.hexdigest()
    if cache.get_meta("summary_digest") != digest or not cache.has_meta("summary"):
        cache.set_meta("summary", json.dumps(summary))
        cache.set_meta("summary_digest", digest)
