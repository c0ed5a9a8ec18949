"""Deploy with the system's rsync: to a folder on a server over SSH (`host:/var/www/photos`,
`user@host:photos`), an rsync daemon (`rsync://host/module/path`) or a local folder.

Three passes: the files that are not pages (images, videos, captions, the theme's), then the pages
that link to them, then the deletion of the files this tool put there before and that the site no
longer has (named one by one with --delete-missing-args: never a --delete of the whole folder,
which would also remove files someone else put there). rsync sends only files whose size or time
differ (times are kept, and a build rewrites a file only when its bytes change), and of those only
the parts that differ.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ...errors import AlbumenError, UsageError

BASE = ["--links", "--times", "--perms", "--chmod=D755,F644", "--mkpath", "--from0"]


def find_rsync() -> str:
    found = shutil.which("rsync")
    if found is None:
        raise UsageError("rsync is not installed", hint="install it (Debian: apt install rsync), here and on the server")
    return found


def run_rsync(output: Path, dest: str, keys: Iterable[str], *extra: str, dry_run: bool = False) -> list[str]:
    """rsync these files (relative to output) to dest; returns rsync's itemized lines (what changed)."""
    keys = list(keys)
    if not keys:
        return []
    with tempfile.NamedTemporaryFile("wb", prefix="albumen-rsync-", suffix=".list") as listing:
        listing.write(b"".join(k.encode("utf-8") + b"\0" for k in keys))
        listing.flush()
        command = [find_rsync(), *BASE, "--itemize-changes", f"--files-from={listing.name}", *extra]
        if dry_run:
            command.append("--dry-run")
        command += [str(output).rstrip(os.sep) + os.sep, dest.rstrip("/") + "/"]
        done = subprocess.run(command, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    # 24, 'some files vanished': the deletion pass names files whose folder the site no longer has
    if done.returncode != 0 and not (done.returncode == 24 and "--delete-missing-args" in extra):
        message = (done.stderr.strip() or done.stdout.strip()).splitlines()
        raise AlbumenError(
            f"rsync to {dest} failed (exit status {done.returncode}): {' / '.join(message[-3:])}",
            hint="check the destination, and that you can reach it (ssh HOST works without a password)",
        )
    return [line for line in done.stdout.splitlines() if line and not line.startswith(("sending", "sent ", "total "))]


def sent(lines: list[str]) -> int:
    """How many files an itemized rsync run sent (created or updated: '<f' or 'cf' lines)."""
    return sum(1 for line in lines if line[:2] in ("<f", ">f", "cf"))


def deleted(lines: list[str]) -> int:
    return sum(1 for line in lines if line.startswith("*deleting"))
