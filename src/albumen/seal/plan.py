"""Password albums in the site's plan: every file of such an album goes in the album's own private
folder (p/<token>/, which holds nothing else but its unlock page and its sealed.json) under a keyed
name: an HMAC, under the album's name key, of the name the file would have in a public build (its
slug, role, size, the hash of its content and recipe, its extension). The name says nothing of the
photo, has no extension, and is the same at every build while the photo, its recipe and the key are:
the file is then not made again, so its ciphertext (and its nonce) stay byte for byte as they were.
Sub-albums sealed with their parent get no folder of their own (their names would be readable)."""

from __future__ import annotations

import posixpath
from dataclasses import replace

from ..model import Gallery
from ..process.plan import MediaPlan, SitePlan
from ..process.specs import SealSpec


def seal_plan(plan: SitePlan, gallery: Gallery, units: dict) -> None:
    """Rewrite the plan of every album and media that a password album's link covers (in place)."""
    plan.units = units
    plan.seals = {uri: SealSpec(unit.content_key, unit.album_id) for uri, unit in units.items()}
    for uri, album in gallery.albums.items():
        if album.zone in units:
            plan.album_dirs[uri] = units[album.zone].folder
    for uri, media in gallery.media.items():
        unit = units.get(gallery.albums[media.album_uri].zone)
        if unit is not None and uri in plan.media:
            plan.media[uri] = sealed_media_plan(plan.media[uri], unit)


def sealed_media_plan(media_plan: MediaPlan, unit) -> MediaPlan:
    folder = unit.folder

    def name(dest_uri: str) -> str:
        return unit.name("file\0" + posixpath.basename(dest_uri))

    names = "".join(name(uri) for uri, _ in media_plan.named())
    videos = tuple(replace(spec, folder=folder, name=name(spec.dest_uri)) for spec in media_plan.videos)
    tracks = tuple((replace(spec, folder=folder, name=name(spec.dest_uri)), lang) for spec, lang in media_plan.tracks)
    return MediaPlan(media_plan.src_uri, folder, media_plan.looks, names, videos, tracks, media_plan.filters, sealed=True)
