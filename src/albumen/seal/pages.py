"""A password album's pages: one generic unlock page (the same bytes for every password album of
the site: no title, description, cover or share tags), its sealed.json (the wrapped key and where
the manifest is) and the manifest, encrypted: every album the link covers, with its titles,
descriptions, dates, counts and cover, and every photo and video with what its page would show and
the keyed names of its files. The theme's sealed.js decrypts it and draws the album."""

from __future__ import annotations

import hashlib
import json
import posixpath
from collections.abc import Iterator

from ..render.env import relative_url
from ..render.i18n import format_counts
from ..render.keys import digest
from ..scan.arrange import is_published
from . import format as fmt

SEALED_JSON = "sealed.json"
ID_LENGTH = 12


def sealed_tasks(renderer, uri: str) -> Iterator:
    """The pages of a password album (uri: the album whose link covers it): none for a sub-album
    sealed with its parent (its parent's manifest holds it)."""
    from ..render.pages import PageTask

    units = renderer.ctx.plan.units
    if uri not in units:
        return
    unit = units[uri]
    folder = unit.folder
    plaintext = json.dumps(manifest(renderer, unit), ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
    name = unit.name("manifest\0" + hashlib.sha256(plaintext).hexdigest())
    sealed = fmt.seal_bytes(unit.content_key, fmt.additional_data(unit.album_id, "manifest", name), plaintext)
    yield PageTask(f"{folder}/{name}", "", _page(renderer, folder), {"text": sealed},
                   digest(renderer.global_key, "sealed-manifest", plaintext.decode()), uri)
    lock = {
        "format": "albumen-sealed", "version": fmt.VERSION, "album": unit.album_id, "manifest": name,
        "kdf": {"name": "PBKDF2", "hash": "SHA-256", "iterations": unit.wrapped["iterations"], "salt": unit.wrapped["salt"]},
        "key": unit.wrapped["key"],
    }
    text = json.dumps(lock, indent=1, sort_keys=True) + "\n"
    yield PageTask(f"{folder}/{SEALED_JSON}", "", _page(renderer, folder), {"text": text},
                   digest(renderer.global_key, "sealed-json", text), uri)
    page = _page(renderer, folder)
    yield PageTask(f"{folder}/index.html", "sealed.html", page, {}, digest(renderer.global_key, "sealed.html", repr(page)), uri)


def _page(renderer, folder: str):
    from ..render.views import PageView

    # no feeds, canonical or image: nothing on the page may differ from another password album's
    return PageView(dir=folder, title=renderer.builder.gettext("Protected album"), kind="sealed",
                    robots="noindex,nofollow", private=True)


def manifest(renderer, unit) -> dict:
    """Everything the album's pages would show, by id: what sealed.js draws once it is decrypted."""
    ctx, builder = renderer.ctx, renderer.builder
    gallery, config = ctx.gallery, ctx.config
    units = ctx.plan.units
    links = config.pages.links
    folder = unit.folder

    def ident(kind: str, uri: str) -> str:
        return unit.name(f"{kind}\0{uri}")[:ID_LENGTH]

    def file(src: str) -> str:
        return posixpath.basename(src)

    def href(target: str) -> str:
        return relative_url(folder, target, links)

    albums, media = {}, {}
    for album in gallery.walk_albums(unit.album_uri, hidden=False):
        if not is_published(album):
            continue
        view = builder.album(album.src_uri)
        locked = [
            {"title": gallery.albums[c].title, "href": href(f"{units[c].folder}/")}
            for c in album.hidden if c in units and is_published(gallery.albums[c])
        ]
        albums[ident("album", album.src_uri)] = {
            "title": view.title,
            "description": str(view.description.render(href)),
            "dates": view.date_range, "iso": view.date_iso,
            "counts": format_counts(view.photo_count, view.video_count, config.language),
            "parent": ident("album", album.parent_uri) if album.src_uri != unit.album_uri else None,
            "children": [ident("album", c.src_uri) for c in view.children],
            "covers": [ident("media", c.cover.src_uri) if c.cover else None for c in view.children],
            "locked": locked,
            "media": [ident("media", m.src_uri) for m in view.media],
        }
        for m in view.media:
            media[ident("media", m.src_uri)] = _media(m, file, href)
        for c in view.children:  # a sub-album's cover may come from deeper down
            if c.cover and ident("media", c.cover.src_uri) not in media:
                media[ident("media", c.cover.src_uri)] = _media(c.cover, file, href)
    return {"version": fmt.VERSION, "album": unit.album_id, "root": ident("album", unit.album_uri),
            "albums": albums, "media": media}


def _media(m, file, href) -> dict:
    """A photo's or video's entry: what its page shows, its files by keyed name."""
    out = {
        "kind": m.kind, "title": m.title or "", "alt": m.alt,
        "description": str(m.description.render(href)),
        "date": m.datetime_text, "iso": m.date_iso, "camera": m.camera_text,
        "tags": list(m.tags), "location": m.location or "", "author": m.author or "",
        "colour": m.placeholder_colour, "preview": m.placeholder_uri,
        "thumb": [file(m.thumb.src), m.thumb.width, m.thumb.height],
        "thumbs": [[t.mime, file(t.src)] for t in m.thumbs[1:]],  # the thumbnail in the other formats
        "sources": [[s.mime, [[file(i.src), i.width, i.height] for i in s.images]] for s in m.sources],
    }
    if m.original is not None:
        out["original"] = [file(m.original.src), m.original_name, m.original.format]
    if m.video:
        v = m.video
        out["video"] = {
            "sources": [[s["mime"], file(s["src"])] for s in v["sources"]],
            "poster": [file(v["poster"].src), v["width"], v["height"]],
            "duration": v["duration_text"],
            "tracks": [[file(t["src"]), t["srclang"], t["label"]] for t in v["tracks"]],
        }
    return out
