"""Recognise media by content (magic numbers), with the extension only as a tie-breaker.

A HEIF file named `.jpg` is a HEIF; a text file named `.jpg` is reported, not decoded
as JPEG; a RAW file is a RAW even though its bytes look like a TIFF.
"""

from __future__ import annotations

from dataclasses import dataclass

IMAGE_EXTS = {
    ".jpg", ".jpeg", ".jpe", ".jfif", ".png", ".gif", ".webp", ".tif", ".tiff", ".bmp", ".dib",
    ".mpo", ".heic", ".heif", ".hif", ".avif", ".avifs",
}
RAW_EXTS = {
    ".cr2", ".cr3", ".crw", ".nef", ".nrw", ".arw", ".srf", ".sr2", ".dng", ".orf", ".rw2", ".raf",
    ".pef", ".srw", ".x3f", ".3fr", ".erf", ".kdc", ".mos", ".mrw", ".iiq", ".rwl", ".raw",
}
VIDEO_EXTS = {
    ".mp4", ".m4v", ".mov", ".qt", ".mkv", ".webm", ".avi", ".3gp", ".3g2", ".ogv", ".mts", ".m2ts",
    ".mpg", ".mpeg", ".wmv", ".flv",
}
OTHER_IMAGE_EXTS = {".psd", ".psb", ".svg", ".svgz", ".jxl", ".jp2", ".j2k", ".ico", ".xcf", ".exr", ".hdr"}
MEDIA_EXTS = IMAGE_EXTS | RAW_EXTS | VIDEO_EXTS | OTHER_IMAGE_EXTS
STILL_EXTS = {".jpg", ".jpeg", ".jpe", ".heic", ".heif", ".hif", ".avif", ".png", ".tif", ".tiff", ".webp"}

_HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"hevm", b"hevs", b"mif1", b"msf1", b"mif2"}
_AVIF_BRANDS = {b"avif", b"avis"}
_VIDEO_BRANDS = {
    b"isom", b"iso2", b"iso3", b"iso4", b"iso5", b"iso6", b"mp41", b"mp42", b"M4V ", b"M4VH", b"M4VP",
    b"qt  ", b"avc1", b"3gp4", b"3gp5", b"3gp6", b"3g2a", b"3g2b", b"3g2c", b"dash", b"f4v ", b"MSNV",
    b"XAVC", b"mmp4", b"NDAS", b"CAEP",
}
_FORMAT_NAMES = {
    "psd": "Photoshop document",
    "jxl": "JPEG XL image",
    "svg": "SVG vector image",
    "raw": "camera RAW file",
}


@dataclass(frozen=True)
class Sniffed:
    kind: str | None  # 'image' | 'video' | 'raw' | 'unsupported' | 'broken' | None (not media)
    format: str | None = None
    reason: str | None = None


def sniff_bytes(head: bytes, ext: str) -> Sniffed:
    """Classify a file from its first bytes (64 are enough) and its lower-case extension."""
    ext = ext.lower()
    looks_like_media = ext in MEDIA_EXTS
    if not head:
        return Sniffed("broken", reason="empty file (0 bytes)") if looks_like_media else Sniffed(None)
    if ext in RAW_EXTS:
        return Sniffed("raw", "raw", reason=f"{_FORMAT_NAMES['raw']} ({ext[1:].upper()}) without a JPEG or HEIC beside it")
    fmt = _signature(head)
    if fmt in ("jpeg", "png", "gif", "webp", "tiff", "bmp", "heif", "avif"):
        if fmt == "jpeg" and ext == ".mpo":
            fmt = "mpo"
        if fmt == "bmp" and ext not in (".bmp", ".dib") and not _plausible_bmp(head):
            fmt = None
        else:
            return Sniffed("image", fmt)
    if fmt == "video":
        if ext in (".ogg", ".oga", ".opus", ".m4a", ".mp3"):
            return Sniffed(None)
        return Sniffed("video", ext[1:] or "video")
    if fmt in ("psd", "jxl", "svg") or (fmt is None and ext in (".svg", ".svgz")):
        name = _FORMAT_NAMES[fmt or "svg"]
        return Sniffed("unsupported", fmt or "svg", reason=f"unsupported format: {name}")
    if looks_like_media:
        if ext in OTHER_IMAGE_EXTS:
            return Sniffed("unsupported", ext[1:], reason=f"unsupported format: {ext[1:].upper()}")
        return Sniffed("broken", reason=f"not a valid {ext[1:].upper()} file: its content is not a known image or video format")
    return Sniffed(None)


def _signature(head: bytes) -> str | None:
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    if head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return "video"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return "tiff"
    if head[:2] == b"BM" and len(head) >= 18:
        return "bmp"
    if head[:4] == b"8BPS":
        return "psd"
    if head[:2] == b"\xff\x0a" or head[:12] == b"\x00\x00\x00\x0cJXL \r\n\x87\n":
        return "jxl"
    if head[:4] == b"\x1a\x45\xdf\xa3" or head[:4] == b"OggS":
        return "video"
    if head[4:8] == b"ftyp":
        return _ftyp(head)
    if head[4:8] in (b"moov", b"mdat", b"wide", b"free", b"skip", b"pnot"):
        return "video"  # old QuickTime without ftyp
    stripped = head.lstrip()
    if stripped.startswith(b"<svg") or (stripped.startswith(b"<?xml") and b"<svg" in head):
        return "svg"
    return None


def _ftyp(head: bytes) -> str | None:
    size = int.from_bytes(head[0:4], "big")
    end = min(max(size, 16), len(head))
    brands = {head[8:12]} | {head[i : i + 4] for i in range(16, end - 3, 4)}
    major = head[8:12]
    if major in _AVIF_BRANDS or (major in (b"mif1", b"msf1") and brands & _AVIF_BRANDS and not brands & {b"heic", b"heix"}):
        return "avif"
    if major in _HEIF_BRANDS or brands & _HEIF_BRANDS:
        return "heif"
    if brands & _AVIF_BRANDS:
        return "avif"
    if major == b"crx ":
        return None
    if major in _VIDEO_BRANDS or brands & _VIDEO_BRANDS:
        return "video"
    return None


def _plausible_bmp(head: bytes) -> bool:
    dib_size = int.from_bytes(head[14:18], "little")
    return dib_size in (12, 16, 40, 52, 56, 64, 108, 124)


def jpeg_variant(data: bytes) -> str | None:
    """Name the JPEG flavour Pillow cannot read (12-bit, lossless, arithmetic), from the SOF marker."""
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            precision = data[i + 4]
            if marker in (0xC3, 0xC7, 0xCB, 0xCF):
                return "lossless JPEG"
            if precision != 8:
                return f"{precision}-bit JPEG"
            return None
        i += 2 + length
    return None
