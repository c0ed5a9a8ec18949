"""Titles rewritten by plugins (plugins.hookspecs.albumen_rewrite_title): rules that strip a date from
folder names, say. Applied once the gallery is read and before it is arranged, so that a sort by title
sees the new titles; every title is read again from its sources at each build, so a rule changed or
removed leaves no trace."""

from __future__ import annotations

from typing import Any

from ..model import Gallery

HOOK = "albumen_rewrite_title"


def rewrite_titles(gallery: Gallery, plugins: Any, keep_root: bool = False) -> None:
    """Each album's title, and each media item's that has one, through the plugins' hooks in order.
    keep_root: the home album's title is the config's `title` (the site's), which is left as written."""
    if not plugins or not plugins.has(HOOK):
        return
    for album in gallery.albums.values():
        if keep_root and album.src_uri == "":
            continue
        album.title = _rewritten(plugins, album.title, "album", album.src_uri, album.name)
    for media in gallery.media.values():
        if media.title:
            media.title = _rewritten(plugins, media.title, media.kind, media.src_uri, media.name)


def _rewritten(plugins: Any, title: str, kind: str, src_uri: str, name: str) -> str:
    for info, result in plugins.each(HOOK, "a title is left as it was", title=title, kind=kind, src_uri=src_uri,
                                     name=name):
        if isinstance(result, str) and result.strip():
            title = result.strip()
        elif result is not None and not isinstance(result, str):
            plugins.problems.append(f"plugin {info.name}: {HOOK} returned {result!r}, not a text")
    return title
