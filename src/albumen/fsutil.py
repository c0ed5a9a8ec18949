"""Atomic file writes: a temporary file in the destination folder, then os.replace.

An interrupted build can leave a temporary file behind (removed by the next
build), never a half-written file under a published name.
"""

from __future__ import annotations

import os
import tempfile

TMP_PREFIX = ".albumen-tmp-"


def write_atomic(abs_path: str, data: bytes) -> None:
    folder = os.path.dirname(abs_path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)
        os.replace(tmp, abs_path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def same_content(abs_path: str, data: bytes) -> bool:
    """True when the file exists with exactly these bytes (so it need not be rewritten)."""
    try:
        if os.path.getsize(abs_path) != len(data):
            return False
        with open(abs_path, "rb") as f:
            return f.read() == data
    except OSError:
        return False
