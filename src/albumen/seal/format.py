"""The sealed file format, version 1: what a password album's files are, and the only code that
makes or opens them (the browser's sealed.js reads the same format with Web Crypto).

A file is a 2-byte header (the version, and the plaintext size of its chunks as a power of two)
followed by its chunks, each `nonce (12 bytes) | AES-256-GCM ciphertext | tag (16 bytes)`. Each
chunk has a fresh random 96-bit nonce, and its additional data binds the album, the file's role
and name, the chunk's place and whether it is the last: a file cannot be moved to another album or
another name, nor a chunk reordered, dropped or the file truncated, without failing to decrypt.
Large files (videos) are chunked so that a browser decrypts them a chunk at a time.

The album's content key (random, 256 bits) is wrapped with AES-256-GCM under a key derived from
the password with PBKDF2-HMAC-SHA256 (a random 16-byte salt; the iteration count is written beside
it, so it can be raised later). File names are keyed HMACs (the name key is derived from the
content key): they say nothing of the photo, and change when the key does.

Workers import this module: it holds no state and needs nothing but `cryptography`.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import os
import struct

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.pbkdf2 import PBKDF2HMAC

VERSION = 1
CHUNK_LOG2 = 20  # 1 MiB of plaintext a chunk
NONCE = 12
TAG = 16
KEY_BYTES = 32
SALT_BYTES = 16
ITERATIONS = 600_000  # OWASP's 2023 figure for PBKDF2-HMAC-SHA256
NAME_LENGTH = 24  # hex characters of a file's keyed name (96 bits)
_PREFIX = b"albumen-sealed/1\0"


class SealError(ValueError):
    """A file or a key that does not open: the wrong key or password, or bytes changed or moved."""


def additional_data(album_id: str, role: str, name: str) -> bytes:
    """What a file's encryption is bound to besides its key: its album, its role and its name."""
    return _PREFIX + f"{album_id}\0{role}\0{name}".encode()


def _chunk_aad(header: bytes, aad: bytes, index: int, last: bool) -> bytes:
    return header + aad + struct.pack(">IB", index, 1 if last else 0)


def seal_chunks(key: bytes, aad: bytes, chunks, chunk_log2: int = CHUNK_LOG2):
    """The sealed file, piece by piece, from its plaintext given as an iterator of byte strings of
    any sizes (re-cut into chunks of 2**chunk_log2 bytes)."""
    header = bytes((VERSION, chunk_log2))
    size = 1 << chunk_log2
    aead = AESGCM(key)
    yield header
    pending = b""
    index = 0
    source = iter(chunks)
    ended = False
    while True:
        while len(pending) <= size and not ended:
            more = next(source, None)
            if more is None:
                ended = True
            else:
                pending += more
        last = ended and len(pending) <= size
        piece, pending = pending[:size], pending[size:]
        nonce = os.urandom(NONCE)
        yield nonce + aead.encrypt(nonce, piece, _chunk_aad(header, aad, index, last))
        if last:
            return
        index += 1


def seal_bytes(key: bytes, aad: bytes, data: bytes, chunk_log2: int = CHUNK_LOG2) -> bytes:
    return b"".join(seal_chunks(key, aad, [data], chunk_log2))


def seal_file(key: bytes, aad: bytes, abs_src: str, out) -> None:
    """Seal a file into the binary file object `out`, a chunk in memory at a time."""

    def read():
        with open(abs_src, "rb") as f:
            while True:
                block = f.read(1 << CHUNK_LOG2)
                if not block:
                    return
                yield block

    for piece in seal_chunks(key, aad, read()):
        out.write(piece)


def open_bytes(key: bytes, aad: bytes, blob: bytes) -> bytes:
    """The plaintext of a sealed file; SealError when it does not open."""
    if len(blob) < 2 + NONCE + TAG or blob[0] != VERSION or not 10 <= blob[1] <= 30:
        raise SealError("not a sealed file of a version this Albumen reads")
    header = blob[:2]
    step = (1 << blob[1]) + NONCE + TAG
    aead = AESGCM(key)
    out = []
    offsets = range(2, len(blob), step)
    for index, at in enumerate(offsets):
        piece = blob[at : at + step]
        last = at + step >= len(blob)
        try:
            out.append(aead.decrypt(piece[:NONCE], piece[NONCE:], _chunk_aad(header, aad, index, last)))
        except Exception as exc:  # InvalidTag, or a piece too short
            raise SealError("does not decrypt: wrong key, or the file was changed or moved") from exc
    return b"".join(out)


def open_file_chunks(key: bytes, aad: bytes, f):
    """The plaintext of the sealed file open as `f` (binary), a chunk at a time; SealError when it
    does not open."""
    header = f.read(2)
    if len(header) < 2 or header[0] != VERSION or not 10 <= header[1] <= 30:
        raise SealError("not a sealed file of a version this Albumen reads")
    step = (1 << header[1]) + NONCE + TAG
    aead = AESGCM(key)
    piece = f.read(step)
    index = 0
    while True:
        following = f.read(step)
        try:
            yield aead.decrypt(piece[:NONCE], piece[NONCE:], _chunk_aad(header, aad, index, not following))
        except Exception as exc:
            raise SealError("does not decrypt: wrong key, or the file was changed or moved") from exc
        if not following:
            return
        piece = following
        index += 1


def holds(key: bytes, aad: bytes, abs_path: str, plain) -> bool:
    """Whether the sealed file at abs_path exists and holds exactly `plain` (bytes, or the path of a
    file): a file made again with the same bytes is then kept as it is, its ciphertext and nonces
    unchanged, so that a deploy does not upload it again."""
    try:
        f = open(abs_path, "rb")
    except OSError:
        return False
    with f:
        try:
            other = open(plain, "rb") if isinstance(plain, str) else io.BytesIO(plain)
        except OSError:
            return False
        with other:
            try:
                for chunk in open_file_chunks(key, aad, f):
                    if other.read(len(chunk)) != chunk:
                        return False
            except (SealError, OSError):
                return False
            return other.read(1) == b""


def nonces(blob: bytes) -> list[bytes]:
    """The nonce of each chunk of a sealed file (for tests and audits)."""
    step = (1 << blob[1]) + NONCE + TAG
    return [blob[at : at + NONCE] for at in range(2, len(blob), step)]


def derive_password_key(password: str, salt: bytes, iterations: int = ITERATIONS) -> bytes:
    kdf = PBKDF2HMAC(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=salt, iterations=iterations)
    return kdf.derive(password.encode("utf-8"))


def key_aad(album_id: str) -> bytes:
    return _PREFIX + f"{album_id}\0key".encode()


def wrap_key(content_key: bytes, password: str, album_id: str, iterations: int = ITERATIONS) -> dict:
    """The content key wrapped under the password: what the album's sealed.json publishes of it."""
    salt = os.urandom(SALT_BYTES)
    nonce = os.urandom(NONCE)
    wrapped = AESGCM(derive_password_key(password, salt, iterations)).encrypt(nonce, content_key, key_aad(album_id))
    return {"iterations": iterations, "salt": salt.hex(), "key": (nonce + wrapped).hex()}


def unwrap_key(wrapped: dict, password: str, album_id: str) -> bytes:
    """The content key; SealError for a wrong password (or another album's key)."""
    blob = bytes.fromhex(wrapped["key"])
    pw_key = derive_password_key(password, bytes.fromhex(wrapped["salt"]), int(wrapped["iterations"]))
    try:
        return AESGCM(pw_key).decrypt(blob[:NONCE], blob[NONCE:], key_aad(album_id))
    except Exception as exc:
        raise SealError("wrong password") from exc


def name_key(content_key: bytes) -> bytes:
    """The key of the album's file names and ids, derived from its content key."""
    return hmac.new(content_key, b"albumen-sealed/1 names", hashlib.sha256).digest()


def keyed_name(names: bytes, text: str, length: int = NAME_LENGTH) -> str:
    return hmac.new(names, text.encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()[:length]
