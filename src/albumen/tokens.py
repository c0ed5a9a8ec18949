"""Unguessable, stable links for private albums.

A private album is published under `p/<token>/`, where the token is 128 bits of
HMAC-SHA256(secret, album path + rotation count), written base64url (22 characters).
The same secret and source give the same tokens on any machine; a different secret
gives different ones. The secret lives outside the photo folder and the output: in
$ALBUMEN_SECRET when set (for CI and deploys), else in a file created on first use
in Albumen's own folder ($ALBUMEN_HOME, default the user config folder). Rotations
are recorded beside it (rotations.json), never in a cache, so a clean rebuild keeps
a rotated link; the config's private_rotations carries them to other machines (CI).

Galleries built side by side by one process (`albumen build --each`, `albumen watch --each`) each
have a namespace: their secret is derived from the base secret and the gallery's name, and their
rotations are recorded apart, so that two members' albums of the same path get unrelated links
(knowing one's link tells nothing of the other's).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import UsageError
from .fsutil import make_private_dirs

if TYPE_CHECKING:
    from .config import Config
    from .model import Gallery
    from .report import BuildReport

TOKEN_BYTES = 16  # 128 bits
PRIVATE_DIR = "p"
_namespace: str | None = None  # the gallery whose links are made now (see secret_namespace)


@contextmanager
def secret_namespace(name: str | None) -> Iterator[None]:
    """Make the private links of the gallery `name` (a slug: letters, digits, '-') in this block: a
    secret of its own, derived from the base secret, and rotations recorded apart. None: the base."""
    global _namespace
    previous, _namespace = _namespace, name
    try:
        yield
    finally:
        _namespace = previous


def albumen_home() -> Path:
    home = os.environ.get("ALBUMEN_HOME")
    if home:
        return Path(home).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("albumen"))


@dataclass
class Secret:
    key: bytes
    origin: str  # where it came from, for messages
    created: bool = False


def load_secret(create: bool = True) -> Secret:
    """The secret from $ALBUMEN_SECRET, else the secret file (created with a fresh random key if
    missing); within a gallery's namespace, that gallery's secret, derived from it."""
    base = _load_base_secret(create)
    if _namespace is None:
        return base
    key = hmac.new(base.key, f"albumen-gallery\0{_namespace}".encode(), hashlib.sha256).digest()
    derived = base64.urlsafe_b64encode(key).decode("ascii").rstrip("=").encode("ascii")
    return Secret(derived, f"{base.origin} (for the gallery {_namespace!r})", base.created)


def _load_base_secret(create: bool) -> Secret:
    env = os.environ.get("ALBUMEN_SECRET")
    if env:
        if len(env) < 16:
            raise UsageError("ALBUMEN_SECRET is too short", hint="use at least 32 random characters, e.g. from `openssl rand -base64 32`")
        return Secret(env.encode("utf-8"), "the ALBUMEN_SECRET environment variable")
    path = albumen_home() / "secret"
    try:
        text = path.read_text(encoding="utf-8").strip()
        if len(text) < 16:
            raise UsageError(f"the secret in {path} is too short", hint="delete it to have a new one made (all private links change)")
        return Secret(text.encode("utf-8"), str(path))
    except FileNotFoundError:
        if not create:
            raise UsageError(f"no secret yet at {path}", hint="build once, or set ALBUMEN_SECRET") from None
    make_private_dirs(path.parent)
    text = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode("ascii").rstrip("=")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    return Secret(text.encode("utf-8"), str(path), created=True)


def rotations_path() -> Path:
    if _namespace is not None:
        return albumen_home() / "galleries" / _namespace / "rotations.json"
    return albumen_home() / "rotations.json"


def load_rotations() -> dict[str, int]:
    try:
        data = json.loads(rotations_path().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {rotations_path()}: {exc}") from None
    return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}


def current_rotations(configured: tuple[tuple[str, int], ...] = ()) -> dict[str, int]:
    """Each album's rotation count: the higher of this machine's record (rotations.json) and the
    config's private_rotations, which carries rotations to every machine that builds the site."""
    rotations = load_rotations()
    for uri, count in configured:
        rotations[uri] = max(rotations.get(uri, 0), count)
    return rotations


def rotate(album_uri: str, configured: tuple[tuple[str, int], ...] = ()) -> dict[str, int]:
    """Give an album a new token; returns every album's rotation count after it (see current_rotations)."""
    rotations = current_rotations(configured)
    rotations[album_uri] = rotations.get(album_uri, 0) + 1
    path = rotations_path()
    make_private_dirs(path.parent)
    tmp = path.with_suffix(".tmp")
    try:  # this user's only, as the secret: it names private albums
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(rotations, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return rotations


def album_token(secret: bytes, album_uri: str, rotation: int = 0) -> str:
    digest = hmac.new(secret, f"albumen-private-album\0{album_uri}\0{rotation}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:TOKEN_BYTES]).decode("ascii").rstrip("=")


def private_dirs(album_uris: list[str], secret: bytes, rotations: dict[str, int]) -> dict[str, str]:
    """Output folder (p/<token>) of every album that has its own private link."""
    return {uri: f"{PRIVATE_DIR}/{album_token(secret, uri, rotations.get(uri, 0))}" for uri in album_uris}


def private_links(gallery: Gallery, config: Config, report: BuildReport | None = None) -> dict[str, str]:
    """Folder (p/<token>) of every album that has its own private link; the secret is made on first use."""
    marked = marked_private(gallery)
    if report is not None:
        report.warnings.extend(rotation_warnings(marked, config))
    if not marked:
        return {}
    secret = load_secret()
    if secret.created and report is not None:
        report.notes.append(
            f"created the secret for private links in {secret.origin}: private URLs depend on it, keep a copy "
            "(or set ALBUMEN_SECRET)"
        )
    return private_dirs(marked, secret.key, current_rotations(config.private_rotations))


def marked_private(gallery: Gallery) -> list[str]:
    """The albums that have a private link of their own, sorted."""
    return sorted(uri for uri, album in gallery.albums.items() if uri and album.marked_private)


def rotation_warnings(marked: list[str], config: Config) -> list[str]:
    """A private_rotations entry that names no private album rotates nothing: the link it was meant
    to revoke stays published, so it is a warning (--strict fails), with the album meant when it
    differs only in capitals or Unicode form."""
    import unicodedata

    def loose(uri: str) -> str:
        return unicodedata.normalize("NFC", uri).casefold()

    out = []
    for uri, _count in config.private_rotations:
        if uri in marked:
            continue
        near = next((m for m in marked if loose(m) == loose(uri)), None)
        hint = f"did you mean {near!r}?" if near else "album paths are relative to the photo folder, as 'albumen links' lists them"
        out.append(f"private_rotations: {uri!r} is not a private album, so it rotates no link ({hint})")
    return out
