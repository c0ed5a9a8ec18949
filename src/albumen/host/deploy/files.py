"""What a deploy publishes: the output's files with their headers, and the record of what it put
at a destination (so that it deletes only its own objects, and skips what is already there).

Headers: a name that carries its content's hash (Albumen's images, videos and captions:
'beach.1024w.3f2a1b9c0d.jpg') never changes, so it is cached for good (`immutable`); pages, feeds
and the sitemap change with every build that touches them, so browsers and CDNs ask again every
time (`no-cache`: a cheap 304 when unchanged); anything else (the theme's files, asked for with a
?v= of their own) for an hour.

The record lives beside the build caches (it names every private album's p/<token>/ folder: never
in the output, never at the destination), one file per destination, this user's only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...fsutil import TMP_PREFIX, make_private_dirs

HASHED = re.compile(r"\.[0-9a-f]{10}\.[A-Za-z0-9]+$")  # name.<recipe+content hash>.ext (process.plan)
PAGE_EXTS = {".html", ".xml", ".txt", ".json", ".webmanifest"}  # they link to the rest: published last
IMMUTABLE = "public, max-age=31536000, immutable"
NO_CACHE = "no-cache"
SHORT = "public, max-age=3600"
TYPES = {
    ".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
    ".json": "application/json", ".txt": "text/plain; charset=utf-8", ".svg": "image/svg+xml",
    ".xml": "application/xml", ".vtt": "text/vtt; charset=utf-8", ".webmanifest": "application/manifest+json",
    ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png", ".gif": "image/gif", ".webp": "image/webp",
    ".avif": "image/avif", ".heic": "image/heic", ".ico": "image/x-icon", ".tif": "image/tiff", ".tiff": "image/tiff",
    ".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".mov": "video/quicktime", ".ogv": "video/ogg",
    ".woff2": "font/woff2", ".woff": "font/woff", ".zip": "application/zip", ".pdf": "application/pdf",
    ".gpx": "application/gpx+xml", ".md": "text/markdown; charset=utf-8",
}
FEEDS = {"feed.xml": "application/atom+xml", "rss.xml": "application/rss+xml"}  # the sitemap is plain XML


def content_type(key: str) -> str:
    name = key.rsplit("/", 1)[-1]
    if name in FEEDS:
        return FEEDS[name]
    return TYPES.get(os.path.splitext(name)[1].lower(), "application/octet-stream")


def is_page(key: str) -> bool:
    return os.path.splitext(key)[1].lower() in PAGE_EXTS


def cache_control(key: str) -> str:
    if is_page(key):
        return NO_CACHE
    return IMMUTABLE if HASHED.search(key) else SHORT


@dataclass
class LocalFile:
    key: str  # the path relative to the output, '/'-separated
    abs_path: str
    size: int
    mtime_ns: int
    md5: str = ""  # hex; read when needed (see Record.digest)

    @property
    def content_type(self) -> str:
        return content_type(self.key)

    @property
    def cache_control(self) -> str:
        return cache_control(self.key)


def list_output(output: Path) -> dict[str, LocalFile]:
    """Every file of the site, by key: regular files (links followed only inside the output), never
    a temporary file of a build."""
    root = os.path.realpath(output)
    files: dict[str, LocalFile] = {}
    for dirpath, dirnames, names in os.walk(root):
        dirnames.sort()
        for name in sorted(names):
            if name.startswith(TMP_PREFIX):
                continue
            path = os.path.join(dirpath, name)
            real = os.path.realpath(path)
            if not real.startswith(root + os.sep):
                continue
            try:
                st = os.stat(real)
            except OSError:
                continue
            if not os.path.isfile(real):
                continue
            key = os.path.relpath(path, root).replace(os.sep, "/")
            files[key] = LocalFile(key, real, st.st_size, st.st_mtime_ns)
    return files


def md5_of(path: str) -> str:
    h = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def records_folder() -> Path:
    root = os.environ.get("ALBUMEN_CACHE_DIR")
    if root:
        return Path(root).expanduser() / "deploys"
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("albumen")) / "deploys"


@dataclass
class Record:
    """What this tool put at one destination: key -> {md5, size, etag, type, cache}; and the MD5 of
    each local file by (size, mtime), so an unchanged file is not read again."""

    path: Path
    dest: str
    objects: dict[str, dict]
    digests: dict[str, list]  # key -> [size, mtime_ns, md5] of the output's file

    @classmethod
    def load(cls, dest: str) -> Record:
        path = records_folder() / (hashlib.sha256(dest.encode()).hexdigest()[:16] + ".json")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("dest") != dest:
                raise ValueError("another destination")
            return cls(path, dest, dict(data.get("objects", {})), dict(data.get("digests", {})))
        except (OSError, ValueError, AttributeError):
            return cls(path, dest, {}, {})

    def digest(self, f: LocalFile) -> str:
        known = self.digests.get(f.key)
        if known and known[0] == f.size and known[1] == f.mtime_ns:
            f.md5 = known[2]
        else:
            f.md5 = md5_of(f.abs_path)
            self.digests[f.key] = [f.size, f.mtime_ns, f.md5]
        return f.md5

    def put(self, f: LocalFile, etag: str = "") -> None:
        self.objects[f.key] = {"md5": f.md5, "size": f.size, "etag": etag, "type": f.content_type,
                               "cache": f.cache_control}

    def same(self, f: LocalFile) -> bool:
        """Whether this file is what the record says was put there, headers included."""
        entry = self.objects.get(f.key)
        return entry is not None and (entry.get("md5"), entry.get("size"), entry.get("type"), entry.get("cache")) == (
            f.md5, f.size, f.content_type, f.cache_control)

    def save(self, local: dict[str, LocalFile] | None = None) -> None:
        if local is not None:  # only the output's files now: a removed file's digest is not kept
            self.digests = {k: v for k, v in self.digests.items() if k in local}
        make_private_dirs(self.path.parent)
        tmp = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"dest": self.dest, "objects": self.objects, "digests": self.digests}, out, sort_keys=True)
        os.replace(tmp, self.path)
