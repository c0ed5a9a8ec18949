"""ICC profiles Albumen needs but no library ships: one compatible with Adobe RGB (1998).

Cameras set to Adobe RGB write JPEGs without a profile and say so only in EXIF (see
scan.metadata._colour). Giving such pixels this profile lets the ordinary embedded-profile
conversion to sRGB handle them. Neither Pillow nor libvips bundles an Adobe RGB profile,
and LittleCMS' cmsCreateRGBProfile is not reachable from Pillow, so it is written here:
a small ICC v2 matrix/TRC display profile, built once per process and never published.
"""

from __future__ import annotations

import functools
import struct

D50 = (0.9642, 1.0, 0.8249)
# Adobe RGB (1998) primaries adapted to D50 (Bradford), as in Adobe's own profile
_ADOBE_RGB_COLORANTS = {
    b"rXYZ": (0.60974, 0.31111, 0.01947),
    b"gXYZ": (0.20528, 0.62567, 0.06087),
    b"bXYZ": (0.14919, 0.06322, 0.74457),
}
_ADOBE_RGB_GAMMA = 563  # u8Fixed8: 2.19921875, the value of the Adobe RGB (1998) specification


def _s15f16(value: float) -> bytes:
    return struct.pack(">i", round(value * 65536))


def _xyz(xyz: tuple[float, float, float]) -> bytes:
    return b"XYZ \x00\x00\x00\x00" + b"".join(_s15f16(v) for v in xyz)


def _desc(text: str) -> bytes:
    """textDescriptionType (ICC v2): ASCII, then empty Unicode and ScriptCode parts."""
    ascii_ = text.encode("ascii") + b"\x00"
    return (b"desc\x00\x00\x00\x00" + struct.pack(">I", len(ascii_)) + ascii_
            + struct.pack(">II", 0, 0) + struct.pack(">HB", 0, 0) + b"\x00" * 67)


def _text(text: str) -> bytes:
    return b"text\x00\x00\x00\x00" + text.encode("ascii") + b"\x00"


def _curve_gamma(gamma_u8f8: int) -> bytes:
    return b"curv\x00\x00\x00\x00" + struct.pack(">IH", 1, gamma_u8f8)


def _pad(data: bytes) -> bytes:
    return data + b"\x00" * (-len(data) % 4)


def build_rgb_profile(description: str, copyright_: str, colorants: dict[bytes, tuple[float, float, float]],
                      gamma_u8f8: int) -> bytes:
    """An ICC v2 RGB display profile: D50 white, three colorants and one gamma for all channels."""
    curve = _curve_gamma(gamma_u8f8)
    tags: list[tuple[bytes, bytes]] = [
        (b"desc", _desc(description)),
        (b"cprt", _text(copyright_)),
        (b"wtpt", _xyz(D50)),
        *((sig, _xyz(xyz)) for sig, xyz in colorants.items()),
        (b"rTRC", curve),
        (b"gTRC", curve),
        (b"bTRC", curve),
    ]
    table_size = 4 + 12 * len(tags)
    offset = 128 + table_size
    table = [struct.pack(">I", len(tags))]
    data: list[bytes] = []
    shared: dict[bytes, tuple[int, int]] = {}  # the three TRCs point to one curve
    for sig, body in tags:
        if body not in shared:
            shared[body] = (offset, len(body))
            data.append(_pad(body))
            offset += len(data[-1])
        where, size = shared[body]
        table.append(sig + struct.pack(">II", where, size))
    payload = b"".join(table) + b"".join(data)
    size = 128 + len(payload)
    header = (
        struct.pack(">I", size)
        + b"\x00\x00\x00\x00"  # preferred CMM: none
        + struct.pack(">I", 0x02100000)  # version 2.1
        + b"mntrRGB XYZ "
        + struct.pack(">6H", 1998, 1, 1, 0, 0, 0)  # a fixed date: the same bytes in every build
        + b"acsp"
        + b"\x00" * 24  # platform, flags, manufacturer, model, attributes
        + struct.pack(">I", 0)  # perceptual
        + b"".join(_s15f16(v) for v in D50)
        + b"\x00" * 4  # creator
        + b"\x00" * 44  # profile ID (v4 only) and reserved
    )
    assert len(header) == 128
    return header + payload


@functools.cache
def adobe_rgb_profile() -> bytes:
    """A profile compatible with Adobe RGB (1998), for pixels that cameras say are in it."""
    return build_rgb_profile(
        "Compatible with Adobe RGB (1998)",
        "No copyright; made by Albumen from the published Adobe RGB (1998) primaries",
        _ADOBE_RGB_COLORANTS,
        _ADOBE_RGB_GAMMA,
    )
