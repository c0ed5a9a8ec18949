"""Files of the output that are no longer part of the site, and temporary files left by a build that
stopped: removed, but only files this tool recorded, and never through a link leading out."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..fsutil import OutsideRoot, check_inside, remove_temp_files
from ..report import plural, some

if TYPE_CHECKING:
    from ..cache import BuildCache


@dataclass
class StaleOutputs:
    """What removing the last build's outputs that this one did not make again did."""

    removed: int = 0
    kept: list[str] = field(default_factory=list)  # changed since Albumen wrote them: the user's now
    linked: list[str] = field(default_factory=list)  # behind a symbolic link leading out of the output

    def notes(self) -> list[str]:
        """Said once, not with the summary a build with nothing to do repeats."""
        kept = self.kept
        if not kept:
            return []
        return [
            f"kept {plural(len(kept), 'file')} no longer part of the site, changed since"
            f" Albumen wrote {'them' if len(kept) > 1 else 'it'} (remove by hand if not wanted): " + some(kept)
        ]

    def warnings(self) -> list[str]:
        if not self.linked:
            return []
        return [
            f"left {plural(len(self.linked), 'file')} no longer part of the site where"
            " a symbolic link in the output leads out of it (nothing is removed through such a link): "
            + some(self.linked)
        ]


def remove_stale_outputs(cache: BuildCache, output: Path) -> StaleOutputs:
    """Remove the outputs the cache recorded that this build did not count among its own, and forget
    them (a file kept because it changed since is the user's from now on)."""
    stale = cache.stale_outputs()
    outcome = remove_stale(output, stale)
    cache.remove_outputs(uri for uri, _, _ in stale)
    return outcome


def remove_stale(output: Path, stale: Iterable[tuple[str, int | None, int | None]]) -> StaleOutputs:
    """Remove stale outputs: each only while it is still the file this tool wrote there (same size
    and modification time as recorded; an output recorded without them is this tool's path all the
    same), and never through a symbolic link leading out of the output. Returns how many were
    removed, the paths kept because someone changed them since, and those left behind such a link."""
    outcome = StaleOutputs()
    root = str(output)
    folders: set[str] = set()
    for dest_uri, size, mtime_ns in stale:
        path = os.path.normpath(os.path.join(root, *dest_uri.split("/")))
        if not path.startswith(root.rstrip(os.sep) + os.sep):
            continue
        try:
            check_inside(os.path.dirname(path), root)  # never through a link leading out of the output
        except OutsideRoot:
            outcome.linked.append(dest_uri)
            continue
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            st = None
        if st is not None and stat.S_ISREG(st.st_mode):
            if size is not None and (st.st_size, st.st_mtime_ns) != (size, mtime_ns):
                outcome.kept.append(dest_uri)
                continue
            try:
                os.unlink(path)
                outcome.removed += 1
            except OSError:
                continue
        folders.add(os.path.dirname(path))
    for folder in sorted(folders, key=len, reverse=True):  # deepest first; only folders left empty
        while folder.startswith(root.rstrip(os.sep) + os.sep):
            try:
                os.rmdir(folder)
            except OSError:
                break
            folder = os.path.dirname(folder)
    return outcome


def damaged_note(output: Path, damaged: dict[str, int | None]) -> list[str]:
    """The files of the last build found missing or changed at the start of this one (written again)."""
    if not damaged:
        return []
    n = len(damaged)
    return [
        f"{plural(n, 'file')} of the last build {'was' if n == 1 else 'were'} missing or changed in {output} "
        f"({some(sorted(damaged))}): written again where {'it' if n == 1 else 'they'} differed"
    ]


def remove_all_temp_files(output: Path) -> None:
    """Every temporary file under the output (a build that stopped left them; none is another's: the
    build holds the output)."""
    for dirpath, _, names in os.walk(output):
        remove_temp_files(dirpath, names)
