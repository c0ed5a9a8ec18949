"""Password albums: where each password comes from, and each album's content key.

A password comes, first found, from the environment (ALBUMEN_PASSWORD_<ALBUM PATH> in capitals,
every other character an underscore: ALBUMEN_PASSWORD_HOLIDAYS_FAMILY for 'Holidays/Family'), the
config's [passwords] table, or the album's index.md (`password: ...`). An album with a password is
private (it gets its own link); its sub-albums without a password of their own are sealed with it.

Each protected album (a "unit": the album and what its link covers) has a random 256-bit content
key, kept in Albumen's own folder beside the private-link secret (keys/<HMAC of the album path>.json,
0600), never in the photo folder, the output or the cache. The key record also holds the key
wrapped under the password as published, and a check of the password it was wrapped with (an HMAC
under the content key, which the record holds anyway): a build with the same password publishes
the same wrapped key, byte for byte; another password re-wraps the same content key (no photo is
encrypted again); a rotated link (`albumen links --rotate`) gets a new content key, so every file
of the album is encrypted again under new names.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from anyascii import anyascii

from ..errors import ConfigError, UsageError
from ..fsutil import make_private_dirs
from ..tokens import albumen_home, current_rotations, load_secret

ENV_PREFIX = "ALBUMEN_PASSWORD_"
KEYS_DIR = "keys"
WEAK_LENGTH = 14
WEAK_WORDS = 4
NAME_LENGTH = 24  # hex characters of a keyed name (96 bits), as seal.format.NAME_LENGTH


def env_name(album_uri: str) -> str:
    """The environment variable that holds an album's password."""
    return ENV_PREFIX + re.sub(r"[^A-Z0-9]", "_", anyascii(album_uri).upper())


def normalized(password: str) -> str:
    """Passwords are compared as NFC text, as the browser's unlock page sends them."""
    return unicodedata.normalize("NFC", password)


def configured_albums(album_uris: Iterable[str], config) -> tuple[set[str], list[str]]:
    """The albums the config's [passwords] and ALBUMEN_PASSWORD_* variables protect, and warnings
    about variables that name no album. A [passwords] entry that names no album stops the build
    before anything is written (the album it meant would be published without its password)."""
    uris = list(album_uris)
    by_env: dict[str, list[str]] = {}
    for uri in uris:
        if uri:
            by_env.setdefault(env_name(uri), []).append(uri)
    found = set()
    problems = []
    for uri, _ in config.passwords:
        if uri in uris and uri:
            found.add(uri)
        else:
            problems.append(f"passwords: {uri!r} names no album folder of the photo folder, so it cannot be protected")
    if problems:
        raise ConfigError(problems)
    warnings = []
    for name, value in os.environ.items():
        if not name.startswith(ENV_PREFIX) or not value:
            continue
        named = by_env.get(name, [])
        if not named:
            warnings.append(f"{name} names no album (album paths in capitals, '_' for every other character,"
                            f" e.g. {env_name('Holidays/Family')} for Holidays/Family); it protects nothing")
        elif len(named) > 1:
            warnings.append(f"{name} names several albums ({', '.join(named)}): give them passwords in [passwords]")
        found.update(named[:1])
    return found, warnings


def own_password(album, config) -> tuple[str, str] | None:
    """(password, where it comes from) of an album's own password, None without one."""
    value = os.environ.get(env_name(album.src_uri)) if album.src_uri else None
    if value:
        return normalized(value), "the environment variable " + env_name(album.src_uri)
    for uri, password in config.passwords:
        if uri == album.src_uri:
            return normalized(password), "[passwords] in the config"
    meta = album.sidecar.meta if album.sidecar else {}
    value = meta.get("password")
    if value is not None and str(value).strip():
        return normalized(str(value).strip()), (album.sidecar.src_uri if album.sidecar else "index.md")
    return None


def weakness(password: str) -> str | None:
    words = len(password.split())
    if len(password) >= WEAK_LENGTH or words >= WEAK_WORDS:
        return None
    return f"{len(password)} characters, {words} word{'s' if words != 1 else ''}"


@dataclass
class Unit:
    """A protected album and what its link covers, with its key: everything sealed with one key."""

    album_uri: str
    folder: str  # p/<token>
    album_id: str  # the token: bound to every file of the album
    content_key: bytes = field(repr=False)
    wrapped: dict = field(default_factory=dict)  # published in sealed.json
    names: bytes = field(default=b"", repr=False)

    def name(self, text: str) -> str:
        """A keyed name: a file's or an id, which says nothing without the key."""
        return hmac.new(self.names, text.encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()[:NAME_LENGTH]


def find_units(gallery, config) -> dict[str, tuple[str, str]]:
    """Album uri -> (password, source) of every protected album: a private album with a password
    of its own or of an album above it (the nearest one)."""
    albums = gallery.albums
    own = {uri: found for uri, album in albums.items() if uri and (found := own_password(album, config))}
    units = {}
    for uri, album in albums.items():
        if not uri or not album.marked_private:
            continue
        at: str | None = uri
        while at is not None and at not in own:
            at = albums[at].parent_uri if at in albums else None
        if at is not None:
            units[uri] = own[at]
    return units


def load_units(gallery, config, private_dirs: dict[str, str], warnings: list[str]) -> dict[str, Unit]:
    """The key of every protected album, made on first use, re-wrapped when its password changed."""
    found = find_units(gallery, config)
    if not found:
        return {}
    secret = load_secret().key
    rotations = current_rotations(config.private_rotations)
    units = {}
    told = set()  # a password shared by sub-albums (inherited) is named once
    for uri in sorted(found):
        password, source = found[uri]
        weak = weakness(password)
        if weak and (source, password) not in told:
            told.add((source, password))
            warnings.append(f"{uri}: its password ({source}) is weak ({weak}): use at least {WEAK_LENGTH} "
                            f"characters or {WEAK_WORDS} words, as nothing limits how fast it can be guessed offline")
        folder = private_dirs[uri]
        token = folder.rpartition("/")[2]
        units[uri] = _unit(uri, folder, token, password, rotations.get(uri, 0), secret)
    return units


def keys_dir() -> Path:
    return albumen_home() / KEYS_DIR


def key_path(secret: bytes, album_uri: str) -> Path:
    """A key record's file, named so that the folder does not say which albums have one."""
    digest = hmac.new(secret, f"albumen-sealed-key\0{album_uri}".encode(), hashlib.sha256).hexdigest()[:32]
    return keys_dir() / f"{digest}.json"


def _unit(uri: str, folder: str, token: str, password: str, rotation: int, secret: bytes) -> Unit:
    from . import format as fmt  # (cryptography is imported only by builds that seal something)

    path = key_path(secret, uri)
    record = _read_record(path)
    if record is None or record.get("rotation") != rotation or record.get("album") != token:
        record = {"v": 1, "rotation": rotation, "album": token, "key": secrets.token_bytes(32).hex()}
    content_key = bytes.fromhex(record["key"])
    check = hmac.new(content_key, b"password\0" + password.encode(), hashlib.sha256).hexdigest()
    if record.get("check") != check or not isinstance(record.get("wrapped"), dict):
        record["wrapped"] = fmt.wrap_key(content_key, password, token)
        record["check"] = check
        _write_record(path, record)
    return Unit(uri, folder, token, content_key, record["wrapped"], fmt.name_key(content_key))


def _read_record(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the key record {path}: {exc}",
                         hint="delete it to have a new key made (every file of its album is then encrypted again)") from None
    return data if isinstance(data, dict) and data.get("v") == 1 else None


def _write_record(path: Path, record: dict) -> None:
    make_private_dirs(path.parent)
    tmp = path.with_suffix(".tmp")
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(record, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def passwords_fingerprint(config) -> str:
    """What the build's fingerprint takes of the passwords from the config and the environment
    (index.md files are in it already): a keyed digest, never the passwords themselves."""
    items = sorted([(uri, pw) for uri, pw in config.passwords]
                   + [(k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIX)])
    if not items:
        return "-"
    try:
        key = load_secret(create=False).key
    except UsageError:
        key = b"albumen-no-secret-yet"
    return hmac.new(key, json.dumps(items).encode(), hashlib.sha256).hexdigest()
