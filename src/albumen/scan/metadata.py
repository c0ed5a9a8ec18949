"""Read an image's header and metadata (EXIF, IPTC, XMP, ICC) without decoding its pixels.

Everything here is best effort: broken metadata is ignored field by field, never a
reason to drop a photo. Only the header (size, format) must be sound.
"""

from __future__ import annotations

import io
import math
import re
import warnings
from datetime import datetime, time, timedelta

from PIL import Image, ImageCms, IptcImagePlugin

from ..errors import ProcessingError
from ..model import GPS, Camera, EmbeddedMetadata, MediaInfo
from .dates import parse_date_value, parse_exif_datetime, parse_offset
from .sidecar import clean_text

try:  # HEIC/HEIF through pillow-heif; AVIF is Pillow's own
    import pillow_heif

    pillow_heif.register_heif_opener()
except ImportError:  # pragma: no cover - a declared dependency
    pillow_heif = None

from defusedxml import ElementTree as SafeET

_NS = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "dc": "http://purl.org/dc/elements/1.1/",
    "xmp": "http://ns.adobe.com/xap/1.0/",
    "photoshop": "http://ns.adobe.com/photoshop/1.0/",
    "exif": "http://ns.adobe.com/exif/1.0/",
    "tiff": "http://ns.adobe.com/tiff/1.0/",
    "iptc": "http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/",
    "msphoto": "http://ns.microsoft.com/photo/1.0/",
}
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"

# Text cameras write into ImageDescription when the user wrote nothing.
_BOILERPLATE = {
    "OLYMPUS DIGITAL CAMERA", "SONY DSC", "DIGITAL CAMERA", "MINOLTA DIGITAL CAMERA",
    "KONICA MINOLTA DIGITAL CAMERA", "EXIF_JPEG_PICTURE", "DEFAULT", "IMAGE", "SAMSUNG", "CAMERA",
    "LEAD TECHNOLOGIES INC. V1.01", "DCIM", "PICTURE",
}

ANIMATABLE = {"gif", "webp"}

# IPTC-IIM datasets (record 2) that say where a photo was taken: content location code and name,
# city, sub-location, province/state, country code and name.
IPTC_PLACE = {(2, 26), (2, 27), (2, 90), (2, 92), (2, 95), (2, 100), (2, 101)}
# XMP properties that do (photoshop:, Iptc4xmpCore:, Iptc4xmpExt:, exif: GPS*), by local name
_XMP_PLACE = {
    "City", "State", "Country", "CountryCode", "Location", "Sublocation", "LocationCreated", "LocationShown",
    "ProvinceState", "CountryName", "GPSLatitude", "GPSLongitude", "GPSAltitude",
}


def read_image(abs_src_path: str, fmt: str, max_pixels: int) -> tuple[MediaInfo, EmbeddedMetadata, list[str]]:
    """Header + metadata of one image. Raises ProcessingError when the file cannot be used."""
    notes: list[str] = []
    Image.MAX_IMAGE_PIXELS = max_pixels
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            im = Image.open(abs_src_path)
        except Image.DecompressionBombError as exc:
            raise ProcessingError(_bomb_reason(exc, max_pixels)) from None
        except Exception as exc:  # Pillow raises many types for hostile input
            raise ProcessingError(_open_reason(abs_src_path, fmt, exc)) from None
        with im:
            width, height = im.size
            if width <= 0 or height <= 0:
                raise ProcessingError(f"image has no pixels ({width}x{height})")
            if width * height > max_pixels:
                raise ProcessingError(
                    f"image is {width}x{height} ({pixel_count(width * height)}), over the limit of "
                    f"{pixel_count(max_pixels)} (images.max_pixels): refused as a possible decompression bomb"
                )
            frames = _frame_count(im, fmt)
            exif = _safe(im.getexif) or Image.Exif()
            orientation = _orientation(exif)
            colour = _colour(im, exif)
            embedded = _embedded(im, exif, notes)
        for w in caught:
            if issubclass(w.category, Image.DecompressionBombWarning):
                continue
            notes.append(str(w.message))
    if orientation in (5, 6, 7, 8):
        width, height = height, width
    info = MediaInfo(
        kind="image", format=fmt, width=width, height=height, orientation=orientation, colour=colour, frames=frames
    )
    return info, embedded, notes


def pixel_count(n: int) -> str:
    return f"{n / 1e6:,.1f} megapixels" if n >= 1_000_000 else f"{n:,} pixels"


def _bomb_reason(exc: Exception, max_pixels: int) -> str:
    match = re.search(r"\((\d+) pixels\)", str(exc))
    claimed = f"the header claims {pixel_count(int(match.group(1)))}" if match else str(exc)
    return (
        f"{claimed}, over the limit of {pixel_count(max_pixels)} (images.max_pixels): "
        "refused as a possible decompression bomb"
    )


def _open_reason(abs_src_path: str, fmt: str, exc: Exception) -> str:
    if fmt == "jpeg":
        from .sniff import jpeg_variant

        try:
            with open(abs_src_path, "rb") as f:
                variant = jpeg_variant(f.read(65536))
        except OSError:
            variant = None
        if variant:
            return f"unsupported JPEG variant: {variant} (browsers and Pillow cannot read it; export an 8-bit JPEG)"
    if "Decompressed data too large" in str(exc):
        return "refused as a possible decompression bomb: a metadata chunk inflates beyond the safety limit"
    name = type(exc).__name__
    message = str(exc).replace(abs_src_path, "").replace("''", "").strip(" :")
    return f"cannot read image header ({name}: {message})" if message else f"cannot read image header ({name})"


def _frame_count(im: Image.Image, fmt: str) -> int:
    if fmt not in ANIMATABLE:
        return 1
    try:
        return int(getattr(im, "n_frames", 1)) if getattr(im, "is_animated", False) else 1
    except Exception:
        return 1


def _safe(fn, *args):
    try:
        return fn(*args)
    except Exception:
        return None


def _orientation(exif: Image.Exif) -> int:
    value = exif.get(0x0112)
    try:
        value = int(value)
    except (TypeError, ValueError):
        return 1
    return value if 1 <= value <= 8 else 1


def _colour(im: Image.Image, exif: Image.Exif) -> str:
    """What to do with colour: keep sRGB/untagged, keep Display P3 with its profile, else convert.

    'adobergb': no profile, but the EXIF says Adobe RGB (see _says_adobe_rgb); converted to sRGB
    as if it carried an Adobe RGB (1998) profile. An embedded profile always wins over EXIF.
    """
    icc = im.info.get("icc_profile")
    if im.mode in ("CMYK", "YCbCr", "LAB"):
        return "convert"
    if not icc:
        return "adobergb" if im.mode in ("RGB", "RGBA") and _safe(_says_adobe_rgb, exif) else "srgb"
    try:
        desc = ImageCms.ImageCmsProfile(io.BytesIO(icc)).profile.profile_description or ""
    except Exception:
        return "srgb"  # a broken profile is ignored: treated as untagged
    low = desc.lower()
    if "srgb" in low or "iec61966" in low or "iec 61966" in low:
        return "srgb"
    if "p3" in low:
        return "p3"
    return "convert"


def _says_adobe_rgb(exif: Image.Exif) -> bool:
    """The DCF way cameras set to Adobe RGB mark an untagged JPEG: EXIF ColorSpace 0xFFFF
    ('Uncalibrated') and InteroperabilityIndex 'R03' (the DCF option file, Adobe RGB). 'R98' is
    sRGB. ColorSpace 2, which exiftool lists as a non-standard Adobe RGB, is accepted too.
    A file name starting with '_' (another DCF hint) is not used: names are renamed freely."""
    space = exif.get_ifd(0x8769).get(0xA001)
    if space == 2:
        return True
    if space != 0xFFFF:
        return False
    index = exif.get_ifd(0xA005).get(0x0001)
    if isinstance(index, bytes):
        index = index.decode("latin-1")
    return isinstance(index, str) and index.strip("\x00 ").upper() == "R03"


def _text(value) -> str | None:
    if isinstance(value, bytes):
        for enc in ("utf-8", "latin-1"):
            try:
                value = value.decode(enc)
                break
            except UnicodeDecodeError:
                continue
    if not isinstance(value, str):
        return None
    if not value.isascii():  # Pillow reads EXIF text as Latin-1; cameras and editors write UTF-8
        try:
            value = value.encode("latin-1").decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            pass  # really Latin-1 text, or already decoded (XMP, IPTC)
    value = clean_text(value).strip()
    return value or None


def _num(value) -> float | None:
    if isinstance(value, tuple):
        value = value[0] if value else None
    try:
        number = float(value)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def _xp_text(value) -> str | None:
    """Windows XP* tags: UTF-16LE bytes (or a tuple of byte values)."""
    if isinstance(value, tuple):
        value = bytes(value)
    if isinstance(value, bytes):
        try:
            return _text(value.decode("utf-16-le"))
        except UnicodeDecodeError:
            return None
    return _text(value)


def _embedded(im: Image.Image, exif: Image.Exif, notes: list[str]) -> EmbeddedMetadata:
    ex = _read_exif(exif)
    ip = _safe(_read_iptc, im) or {}
    xmp_bytes = im.info.get("xmp") or im.info.get("XML:com.adobe.xmp")
    xp = _safe(read_xmp, xmp_bytes) if xmp_bytes else None
    if xmp_bytes and xp is None:
        notes.append("XMP metadata is unreadable and was ignored")
    xp = xp or {}

    def first(*values):
        for v in values:
            if v:
                return v
        return None

    date, source = None, None
    latest = datetime.now() + timedelta(days=2)  # a clock set wrong, or a corrupt tag: not a date to sort by
    exif_date = ex.get("date")
    for value, name in ((xp.get("date"), "xmp"), (ip.get("date"), "iptc"), (exif_date, "exif")):
        if not value:
            continue
        if value.replace(tzinfo=None) > latest:
            notes.append(f"{name.upper()} date {value:%Y-%m-%d} is in the future; ignored")
            continue
        if (name != "exif" and exif_date and value.time() == time(0, 0) and value.tzinfo is None
                and exif_date.date() == value.date()):
            value, name = exif_date, "exif"  # a day alone (IPTC, XMP): the camera's time of that day is kept
        elif (name != "exif" and exif_date and exif_date.microsecond and not value.microsecond
                and value.replace(tzinfo=None) == exif_date.replace(microsecond=0, tzinfo=None)):
            value = value.replace(microsecond=exif_date.microsecond)  # the same second: the burst's order is kept
        date, source = value, name
        break
    keywords = xp.get("subject") or ip.get("keywords") or ex.get("keywords") or ()
    return EmbeddedMetadata(
        title=first(xp.get("title"), ip.get("title"), ex.get("title")),
        description=first(xp.get("description"), ip.get("description"), ex.get("description")),
        alt=xp.get("alt"),
        keywords=tuple(dict.fromkeys(k for k in keywords if k)),
        rating=xp.get("rating"),
        date=date,
        date_source=source,
        artist=first(xp.get("creator"), ip.get("artist"), ex.get("artist")),
        copyright=first(xp.get("rights"), ip.get("copyright"), ex.get("copyright")),
        camera=ex.get("camera") or Camera(),
        gps=ex.get("gps"),
        names_place=bool(ip.get("place") or xp.get("place")),
    )


def _read_exif(exif: Image.Exif) -> dict:
    out: dict = {}
    if not exif:
        return out
    sub = _safe(exif.get_ifd, 0x8769) or {}
    make = _text(exif.get(0x010F))
    description = _text(exif.get(0x010E))
    if description and (description.upper() in _BOILERPLATE or (make and description.upper() == make.upper())):
        description = None
    out["description"] = description
    out["title"] = _xp_text(exif.get(0x9C9B))
    keywords = _xp_text(exif.get(0x9C9E))
    out["keywords"] = tuple(k.strip() for k in keywords.split(";")) if keywords else ()
    out["artist"] = _text(exif.get(0x013B))
    out["copyright"] = _text(exif.get(0x8298))
    # each date with its own sub-seconds (bursts share a second) and offset; some cameras and phones
    # write only OffsetTime, which then stands for DateTimeOriginal's
    offset = _text(sub.get(0x9011))
    if parse_offset(offset) is None:
        offset = _text(sub.get(0x9010))
    date = parse_exif_datetime(_text(sub.get(0x9003)), offset, _text(sub.get(0x9291)))
    if date is None:
        date = parse_exif_datetime(_text(sub.get(0x9004)), _text(sub.get(0x9012)), _text(sub.get(0x9292)))
    if date is None:
        date = parse_exif_datetime(_text(exif.get(0x0132)), _text(sub.get(0x9010)), _text(sub.get(0x9290)))
    out["date"] = date
    lens = _text(sub.get(0xA434))
    out["camera"] = Camera(
        make=make,
        model=_text(exif.get(0x0110)),
        lens=lens,
        exposure_time=_exposure_time(sub),
        f_number=_f_number(sub),
        iso=_iso(sub),
        focal_length=_within(_num(sub.get(0x920A)), 0.5, 5000),
        focal_length_35mm=_within(_num(sub.get(0xA405)), 1, 10000),
    )
    out["gps"] = _safe(_read_gps, exif)
    return out


def _within(value: float | None, low: float, high: float) -> float | None:
    """A value no camera can record (a corrupt or hostile tag) is left out rather than shown."""
    return value if value is not None and low <= value <= high else None


def _apex(value) -> float | None:
    number = value[0] if isinstance(value, tuple) and value else value
    try:
        number = float(number)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return number if math.isfinite(number) and -20 < number < 40 else None


def _exposure_time(sub) -> float | None:
    """ExposureTime (1/100,000 s to a day), else ShutterSpeedValue (APEX: t = 2^-Tv)."""
    exposure = _within(_num(sub.get(0x829A)), 1e-5, 86400)
    if exposure is None and (tv := _apex(sub.get(0x9201))) is not None:
        exposure = _within(2.0 ** -tv, 1e-5, 86400)
    return exposure


def _f_number(sub) -> float | None:
    """FNumber (f/0.7 to f/256), else ApertureValue (APEX: N = 2^(Av/2))."""
    number = _within(_num(sub.get(0x829D)), 0.7, 256)
    if number is None and (av := _apex(sub.get(0x9202))) is not None:
        number = _within(round(2.0 ** (av / 2), 1), 0.7, 256)
    return number


def _iso(sub) -> int | None:
    """ISOSpeedRatings, which holds at most 65535: above that, cameras write ISOSpeed (or the
    recommended exposure index) instead."""
    def whole(value) -> int | None:
        if isinstance(value, tuple):
            value = value[0] if value else None
        return value if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= 10_000_000 else None

    iso = whole(sub.get(0x8827))
    if iso is None or iso == 65535:
        iso = whole(sub.get(0x8833)) or whole(sub.get(0x8832)) or iso
    return iso


def _read_gps(exif: Image.Exif) -> GPS | None:
    gps = exif.get_ifd(0x8825)
    if not gps or 2 not in gps or 4 not in gps:
        return None

    def degrees(dms) -> float:
        d, m, s = (float(x) for x in dms)
        return d + m / 60 + s / 3600

    lat, lon = degrees(gps[2]), degrees(gps[4])
    if str(gps.get(1, "N")).strip("\x00").upper().startswith("S"):
        lat = -lat
    if str(gps.get(3, "E")).strip("\x00").upper().startswith("W"):
        lon = -lon
    if not (math.isfinite(lat) and math.isfinite(lon)) or abs(lat) > 90 or abs(lon) > 180:
        return None
    if lat == 0 and lon == 0:
        return None
    alt = _safe(float, gps.get(6)) if 6 in gps else None
    if alt is not None and (not math.isfinite(alt)):
        alt = None
    if alt is not None and gps.get(5) in (1, b"\x01"):
        alt = -alt
    return GPS(latitude=round(lat, 7), longitude=round(lon, 7), altitude=alt)


def _iptc_text(value, encoding: str) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, bytes):
        try:
            value = value.decode(encoding)
        except UnicodeDecodeError:
            value = value.decode("latin-1")
    return _text(value)


def _read_iptc(im: Image.Image) -> dict:
    info = IptcImagePlugin.getiptcinfo(im)
    if not info:
        return {}
    encoding = "utf-8"  # ESC % G in 1:90 says UTF-8; most modern writers use it anyway
    out: dict = {
        "title": _iptc_text(info.get((2, 5)), encoding) or _iptc_text(info.get((2, 105)), encoding),
        "description": _iptc_text(info.get((2, 120)), encoding),
        "artist": _iptc_text(info.get((2, 80)), encoding),
        "copyright": _iptc_text(info.get((2, 116)), encoding),
    }
    out["place"] = any(key in info for key in IPTC_PLACE)
    keywords = info.get((2, 25))
    if keywords is not None:
        if not isinstance(keywords, list):
            keywords = [keywords]
        out["keywords"] = tuple(k for k in (_iptc_text(k, encoding) for k in keywords) if k)
    day = _iptc_text(info.get((2, 55)), encoding)
    if day and len(day) == 8 and day.isdigit():
        clock = _iptc_text(info.get((2, 60)), encoding) or ""
        text = f"{day[:4]}-{day[4:6]}-{day[6:]}"
        if len(clock) >= 6 and clock[:6].isdigit():
            text += f"T{clock[:2]}:{clock[2:4]}:{clock[4:6]}"
            if len(clock) == 11 and clock[6] in "+-":
                text += f"{clock[6:9]}:{clock[9:11]}"
        out["date"] = parse_date_value(text)
    return out


def read_xmp(data: bytes | str) -> dict:
    """The XMP fields Albumen uses, from a packet. Tolerates padding, UTF-16 and Latin-1 packets."""
    root = parse_xmp_packet(data)
    props: dict[tuple[str, str], object] = {}
    for desc in root.iter(f"{{{_NS['rdf']}}}Description"):
        for name, value in desc.attrib.items():
            if name.startswith("{"):
                ns, _, local = name[1:].partition("}")
                props.setdefault((ns, local), value)
        for child in desc:
            if not child.tag.startswith("{"):
                continue
            ns, _, local = child.tag[1:].partition("}")
            props.setdefault((ns, local), _xmp_value(child))

    def get(prefix: str, local: str):
        return props.get((_NS[prefix], local))

    def text(prefix: str, local: str) -> str | None:
        value = get(prefix, local)
        if isinstance(value, list):
            value = value[0] if value else None
        return _text(value) if isinstance(value, str) else None

    out: dict = {
        "title": text("dc", "title") or text("photoshop", "Headline"),
        "description": text("dc", "description"),
        "alt": text("iptc", "AltTextAccessibility"),
        "creator": text("dc", "creator"),
        "rights": text("dc", "rights"),
    }
    subject = get("dc", "subject")
    if isinstance(subject, str):
        subject = [subject]
    if isinstance(subject, list):
        out["subject"] = tuple(s.strip() for s in subject if isinstance(s, str) and s.strip())
    rating = text("xmp", "Rating")
    try:
        value = int(float(rating)) if rating is not None else None
        out["rating"] = value if value is not None and 0 <= value <= 5 else None
    except ValueError:
        out["rating"] = None
    for prefix, local in (("exif", "DateTimeOriginal"), ("photoshop", "DateCreated"), ("xmp", "CreateDate")):
        value = parse_date_value(text(prefix, local))
        if value is not None and value.year >= 1826:
            out["date"] = value
            break
    orientation = text("tiff", "Orientation")
    if orientation and orientation.isdigit():
        out["orientation"] = int(orientation)
    out["place"] = any(local in _XMP_PLACE for _ns, local in props)
    return out


def _xmp_value(element):
    """A property's value: its text, or the items of an rdf:Alt/Bag/Seq (x-default first)."""
    for container in ("Alt", "Bag", "Seq"):
        node = element.find(f"{{{_NS['rdf']}}}{container}")
        if node is not None:
            items = list(node.findall(f"{{{_NS['rdf']}}}li"))
            if container == "Alt":
                items.sort(key=lambda li: 0 if li.get(_XML_LANG) == "x-default" else 1)
            return [li.text or "" for li in items]
    if element.get(f"{{{_NS['rdf']}}}resource"):
        return element.get(f"{{{_NS['rdf']}}}resource")
    return element.text or ""


def parse_xmp_packet(data: bytes | str):
    """The root element of an XMP packet (defusedxml: no entities, no external references).
    Raises ValueError when no reading of it parses."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if data[:2] in (b"\x00<", b"<\x00", b"\xfe\xff", b"\xff\xfe"):  # UTF-16 packets (ExifTool, old Photoshop)
        codec = "utf-16" if data[:2] in (b"\xfe\xff", b"\xff\xfe") else ("utf-16-be" if data[0] == 0 else "utf-16-le")
        data = data[: len(data) // 2 * 2].decode(codec, errors="replace").encode("utf-8")
        data = data.replace(b"encoding='UTF-16'", b"").replace(b'encoding="UTF-16"', b"")
    data = data.strip(b"\x00 \t\r\n")
    start = data.find(b"<x:xmpmeta")
    attempts: list[bytes | str] = [data]
    if start > 0 and not data.startswith(b"\x00"):
        end = data.rfind(b"</x:xmpmeta>")
        if end > start:
            attempts.append(data[start : end + len(b"</x:xmpmeta>")])
    try:
        attempts.append(data.decode("latin-1"))
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes everything
        pass
    last: Exception | None = None
    for attempt in attempts:
        try:
            if isinstance(attempt, str):
                attempt = attempt.split("?>", 1)[1] if attempt.lstrip().startswith("<?xml") else attempt
            return SafeET.fromstring(attempt)
        except Exception as exc:  # expat errors and defusedxml refusals alike
            last = exc
    raise ValueError(f"unreadable XMP: {last}")

