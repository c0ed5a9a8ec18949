"""Files of the output this tool made before, found again: a derivative moved with its album, and
whether a folder of the output leads out of it through a symbolic link."""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from ..fsutil import TMP_PREFIX, OutsideRoot, check_inside

if TYPE_CHECKING:
    from ..cache import BuildCache


class Relocator:
    """Finds a derivative this tool already made under another folder (an album renamed, made private
    or public again): same content, same recipe, same file name. It is linked into place instead of
    being made again."""

    def __init__(self, cache: BuildCache, output: Path) -> None:
        self.cache = cache  # its manifest of outputs, as it was before this build recorded any
        self.output = output
        self.moved: list[tuple[str, int, int]] = []  # (dest_uri, size, mtime_ns) of each file put in place

    def __call__(self, dest_uri: str) -> bool:
        old = self.cache.output_named(posixpath.basename(dest_uri), other_than=dest_uri)
        if old is None:
            return False
        old_uri, size, mtime_ns = old
        src = os.path.join(self.output, *old_uri.split("/"))
        dst = os.path.join(self.output, *dest_uri.split("/"))
        try:
            check_inside(os.path.dirname(src), str(self.output))
            check_inside(os.path.dirname(dst), str(self.output))
            st = os.stat(src, follow_symlinks=False)
        except OSError:  # (OutsideRoot too: the worker that makes it anew says why)
            return False
        if not stat.S_ISREG(st.st_mode) or (size is not None and (st.st_size, st.st_mtime_ns) != (size, mtime_ns)):
            return False  # not the file this tool made there any more
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        # under a name of our own first, then renamed over whatever is at dst (a link there is
        # replaced, never written through)
        tmp = os.path.join(os.path.dirname(dst), f"{TMP_PREFIX}{os.getpid()}-relocated-{os.path.basename(dst)[:40]}")
        try:
            try:
                os.link(src, tmp)
            except OSError:
                shutil.copy2(src, tmp, follow_symlinks=False)
            os.replace(tmp, dst)
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            return False
        st = os.stat(dst, follow_symlinks=False)
        self.moved.append((dest_uri, st.st_size, st.st_mtime_ns))
        return True


class LinksOut:
    """Whether a media's folder leads out of the output through a symbolic link: one listing of each
    album folder (its entries say which are links) rather than one lstat per media folder."""

    def __init__(self, output: Path) -> None:
        self.root = str(output)
        self.links: dict[str, frozenset[str] | None] = {}  # album folder -> its entries that are links;
        # None: the album folder itself leads out

    def __call__(self, folder: str) -> bool:
        if folder == self.root:
            return False
        parent, _, name = folder.rpartition("/")  # (os.path.split, 3x slower: asked for every photo and page)
        if os.sep != "/" or not parent or parent.endswith("/") or not name:  # (a root, or doubled slashes)
            parent, name = os.path.split(folder)
        if parent not in self.links:
            try:
                check_inside(parent, self.root)
                with os.scandir(parent) as entries:
                    self.links[parent] = frozenset(e.name for e in entries if e.is_symlink())
            except OutsideRoot:
                self.links[parent] = None
            except OSError:  # not made yet
                self.links[parent] = frozenset()
        links = self.links[parent]
        if links is None:
            return True
        if name not in links:
            return False
        try:
            check_inside(folder, self.root)
        except OutsideRoot:
            return True
        return False
