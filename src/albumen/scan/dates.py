"""Dates from EXIF, XMP, IPTC, sidecars and file names, made time-zone aware.

A date that carries an offset keeps it; a date without one is taken in the
configured zone (default: the build machine's).
"""

from __future__ import annotations

import os
import re
from datetime import UTC, date, datetime, time, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

_OFFSET_RE = re.compile(r"^([+-])(\d{2}):?(\d{2})$")
# IMG_20240701_123456, PXL_20240701_123456789, 2024-07-01 12.34.56, Screenshot_2024-07-01-12-34-56
_NAME_DATETIME_RE = re.compile(
    r"(?<!\d)((?:19|20)\d{2})[-_.]?(\d{2})[-_.]?(\d{2})[-_ T.]?(\d{2})[-_:.h]?(\d{2})[-_:.m]?(\d{2})(?!\d{1,2}(?!\d))"
)
_NAME_DATE_RE = re.compile(r"(?<!\d)((?:19|20)\d{2})[-_.]?(\d{2})[-_.]?(\d{2})(?!\d)")


def get_timezone(name: str) -> tzinfo:
    """The configured zone, or this machine's local zone when the setting is empty.

    A real zone (with its daylight-saving rules), not today's offset: a July photo taken in
    Paris is +02:00 even when the build runs in January.
    """
    if name:
        return ZoneInfo(name)
    local = local_zone_name()
    if local:
        try:
            return ZoneInfo(local)
        except (ValueError, OSError):
            pass
    return datetime.now().astimezone().tzinfo or UTC


def local_zone_name() -> str | None:
    """This machine's zone name: $TZ, else where /etc/localtime points, else /etc/timezone."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and ("/" in tz or tz in ("UTC", "GMT")):
        return tz
    try:
        target = os.path.realpath("/etc/localtime")
        if "zoneinfo/" in target:
            return target.split("zoneinfo/", 1)[1]
    except OSError:
        pass
    try:
        with open("/etc/timezone", encoding="utf-8") as f:
            return f.read().strip() or None
    except OSError:
        return None


def localize(value: datetime, tz: tzinfo) -> datetime:
    """Attach `tz` to a naive datetime; leave an aware one as it is."""
    if value.tzinfo is not None:
        return value
    return value.replace(tzinfo=tz)


def parse_offset(text: str | None) -> timezone | None:
    if not text:
        return None
    m = _OFFSET_RE.match(text.strip().strip("\x00"))
    if not m:
        return None
    sign = -1 if m.group(1) == "-" else 1
    hours, minutes = int(m.group(2)), int(m.group(3))
    if hours > 14 or minutes > 59:
        return None
    return timezone(sign * timedelta(hours=hours, minutes=minutes))


def parse_subsec(text: str | None) -> int:
    """EXIF SubSecTime* (digits of a decimal fraction: '07' is 0.07 s, '9' is 0.9 s) in microseconds; 0 when
    absent or not digits."""
    if not text or not isinstance(text, str):
        return 0
    digits = text.strip().strip("\x00").strip()
    if not digits.isascii() or not digits.isdigit():
        return 0
    return int(digits[:6].ljust(6, "0"))


def parse_exif_datetime(text: str | None, offset: str | None = None, subsec: str | None = None) -> datetime | None:
    """EXIF 'YYYY:MM:DD HH:MM:SS' (+ OffsetTime*, + SubSecTime*) to datetime; None for blanks and zeros."""
    if not text or not isinstance(text, str):
        return None
    text = text.strip().strip("\x00").strip()
    m = re.match(r"^(\d{4})[:-](\d{2})[:-](\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?", text)
    if not m:
        return None
    try:
        parts = [int(g) if g else 0 for g in m.groups()]
        value = datetime(*parts)
    except ValueError:
        return None
    if value.year < 1826:  # before the oldest surviving photograph: a placeholder
        return None
    value = value.replace(microsecond=parse_subsec(subsec))
    tz = parse_offset(offset)
    return value.replace(tzinfo=tz) if tz else value


def parse_date_value(value) -> datetime | None:
    """A date from a sidecar or XMP: a YAML date/datetime, ISO 8601 text, or EXIF-style text."""
    if isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime.combine(value, time(0, 0))
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 9999:
        return datetime(value, 1, 1)  # a year alone, as YAML reads `date: 2024`
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return None
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    for candidate in (text, text.replace(" ", "T", 1)):
        try:
            return datetime.fromisoformat(candidate)
        except ValueError:
            pass
    if _YAML_TIMESTAMP.match(text):  # before the EXIF reading, which would stop at the seconds
        return _yaml_timestamp(text)
    exif = parse_exif_datetime(text)
    if exif:
        return exif
    for fmt in ("%Y-%m", "%Y"):
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            pass
    return None


_YAML_TIMESTAMP = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}([Tt]|[ \t]+)\d{1,2}:\d{2}:\d{2}(\.\d*)?[ \t]*(Z|[-+]\d{1,2}(:?\d{2})?)?$")


def _yaml_timestamp(text: str) -> datetime | None:
    """The other spellings YAML's timestamps allow ('2001-12-14 21:59:43.10 -5'), as yaml reads them."""
    import yaml

    try:
        value = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError):
        return None
    return value if isinstance(value, datetime) else None


def date_from_filename(name: str) -> datetime | None:
    """A date (and time when present) written in a file name, e.g. IMG_20240701_123456.jpg."""
    for m in _NAME_DATETIME_RE.finditer(name):
        try:
            return datetime(*(int(g) for g in m.groups()))
        except ValueError:
            continue
    for m in _NAME_DATE_RE.finditer(name):
        try:
            return datetime(*(int(g) for g in m.groups()))
        except ValueError:
            continue
    return None
