"""What a batch of file-system changes means for the site. Pure: paths in, a decision out.

The build itself is incremental (unchanged files are not re-read, unchanged pages
not re-rendered), so the decision is about *whether* and *how* to rebuild:
reload the config first, wait for files still being copied, or do nothing.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field
from enum import IntEnum

from ..fsutil import open_regular
from ..scan.sniff import MEDIA_EXTS


class Action(IntEnum):
    """Ordered: a batch needs the largest action of its changes."""

    NOTHING = 0
    PAGES = 1  # sidecars, theme templates or static files: re-render, no image work
    MEDIA = 2  # photos or videos added, changed or removed: process those, re-render what shows them
    CONFIG = 3  # albumen.toml: reload and validate it, then rebuild (every setting may matter)


@dataclass
class Decision:
    action: Action
    reasons: list[str] = field(default_factory=list)  # one line per change that mattered
    media: set[str] = field(default_factory=set)  # absolute paths of media files added or changed

    def summary(self) -> str:
        shown = self.reasons[:3]
        more = f" (+{len(self.reasons) - 3} more)" if len(self.reasons) > 3 else ""
        return "; ".join(shown) + more


def _inside(path: str, folder: str | None) -> bool:
    if not folder:
        return False
    folder = folder.rstrip(os.sep)
    return path == folder or path.startswith(folder + os.sep)


def _hidden(path: str, root: str) -> bool:
    rel = os.path.relpath(path, root)
    return any(part.startswith(".") for part in rel.split(os.sep))


def _temporary(name: str) -> bool:
    """Editors' and copiers' scratch files: never worth a rebuild."""
    return (
        name.endswith(("~", ".swp", ".swx", ".tmp", ".part", ".crdownload", ".kate-swp"))
        or name.startswith((".#", "#", ".albumen-tmp-"))
        or name in ("4913",)  # vim's write test
    )


def _sed_work_file(name: str, path: str, changes: set[tuple[str, str]]) -> bool:
    """sed -i's work file (sedXXXXXX): made and gone within the batch (a folder named 'sediments' is not)."""
    return (len(name) == 9 and name.startswith("sed") and name[3:].isalnum()
            and ("added", path) in changes and ("deleted", path) in changes)


def classify_changes(
    changes: set[tuple[str, str]],
    source: str,
    config_path: str | None,
    theme_dir: str | None,
    output: str | None = None,
    config_files: Collection[str] = (),
) -> Decision:
    """changes: (kind, absolute path) pairs; kind is 'added', 'modified' or 'deleted'. config_files: the
    files the config's plugins read when it is loaded (a watermark's PNG), whose content is part of
    their recipes: a change loads the config again, as a change of the config does."""
    decision = Decision(Action.NOTHING)
    read_with_config = {os.path.abspath(f) for f in config_files}
    for kind, path in sorted(changes):
        name = os.path.basename(path)
        if _inside(path, output) or _temporary(name) or _sed_work_file(name, path, changes):
            continue
        if config_path and os.path.abspath(path) == os.path.abspath(config_path):
            decision.action = max(decision.action, Action.CONFIG)
            decision.reasons.append(f"config {kind}")
            continue
        if os.path.abspath(path) in read_with_config:
            decision.action = max(decision.action, Action.CONFIG)
            decision.reasons.append(f"{name} {kind} (a file of the config's plugins)")
            continue
        if _inside(path, theme_dir):
            decision.action = max(decision.action, Action.PAGES)
            decision.reasons.append(f"theme file {kind}: {os.path.relpath(path, theme_dir)}")
            continue
        if not _inside(path, source) or _hidden(path, source) and name != ".nomedia":
            continue
        rel = os.path.relpath(path, source)
        ext = os.path.splitext(name)[1].lower()
        if name == ".nomedia" or ext == ".md":
            decision.action = max(decision.action, Action.PAGES)
            decision.reasons.append(f"sidecar {kind}: {rel}")
        elif ext in MEDIA_EXTS or (kind == "deleted" and not ext) or os.path.isdir(path):
            # a deleted folder has no extension and can no longer be inspected: treat it as media gone
            decision.action = max(decision.action, Action.MEDIA)
            decision.reasons.append(f"{'folder' if os.path.isdir(path) else 'media'} {kind}: {rel}")
            if kind != "deleted" and os.path.isfile(path):
                decision.media.add(path)
        elif kind != "deleted" and os.path.isfile(path) and _looks_like_media(path):
            decision.action = max(decision.action, Action.MEDIA)  # recognised by content, whatever its name
            decision.reasons.append(f"media {kind}: {rel}")
            decision.media.add(path)
    return decision


def _looks_like_media(path: str) -> bool:
    from ..scan.sniff import sniff_bytes

    try:
        with open_regular(path) as f:  # never a FIFO: the watcher would wait forever
            head = f.read(64)
    except OSError:
        return False
    return sniff_bytes(head, os.path.splitext(path)[1]).kind in ("image", "video", "raw")
