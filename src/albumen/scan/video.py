"""Probe a video with FFmpeg (through PyAV): size, rotation, duration, codecs, date and place."""

from __future__ import annotations

import re
from datetime import datetime

from ..errors import ProcessingError
from ..model import GPS, Camera, EmbeddedMetadata, MediaInfo
from .dates import parse_date_value
from .sidecar import clean_text

_ISO6709 = re.compile(r"^([+-]\d+(?:\.\d+)?)([+-]\d+(?:\.\d+)?)([+-]\d+(?:\.\d+)?)?")


def read_video(abs_src_path: str, fmt: str) -> tuple[MediaInfo, EmbeddedMetadata, list[str]]:
    """Header and metadata of a video. Raises ProcessingError when it cannot be opened or has no picture."""
    import av

    notes: list[str] = []
    try:
        container = av.open(abs_src_path, metadata_errors="replace")
    except Exception as exc:
        raise ProcessingError(f"cannot read video: {_av_reason(exc)}") from None
    with container:
        if not container.streams.video:
            raise ProcessingError("no video stream (an audio file?)")
        stream = container.streams.video[0]
        ctx = stream.codec_context
        width, height = ctx.width, ctx.height
        if not width or not height:
            raise ProcessingError("video has no picture size")
        duration = None
        if container.duration:
            duration = container.duration / 1_000_000
        elif stream.duration and stream.time_base:
            duration = float(stream.duration * stream.time_base)
        rotation = 0
        try:  # the display matrix is on decoded frames; decoding one frame also proves the stream is readable
            frame = next(container.decode(stream))
            rotation = _clockwise(getattr(frame, "rotation", 0) or 0)
        except StopIteration:
            raise ProcessingError("cannot decode any frame of the video") from None
        except Exception as exc:
            raise ProcessingError(f"cannot decode the video: {_av_reason(exc)}") from None
        audio = container.streams.audio[0].codec_context.name if container.streams.audio else None
        meta = {k.lower(): v for k, v in container.metadata.items()}
        meta.update({k.lower(): v for k, v in stream.metadata.items() if k.lower() not in meta})
        bitrate = container.bit_rate or None
        fps = float(stream.average_rate) if stream.average_rate else None
        pix_fmt = ctx.pix_fmt
        codec = ctx.name
    if rotation in (90, 270):
        width, height = height, width
    info = MediaInfo(
        kind="video", format=fmt, width=width, height=height, duration=duration, rotation=rotation,
        video_codec=codec, audio_codec=audio, pix_fmt=pix_fmt, bitrate=bitrate, fps=fps,
    )
    date, source = _video_date(meta)
    embedded = EmbeddedMetadata(
        title=_text(meta.get("title")),
        description=_text(meta.get("description") or meta.get("comment")),
        date=date,
        date_source=source,
        artist=_text(meta.get("artist")),
        copyright=_text(meta.get("copyright")),
        camera=Camera(make=_text(meta.get("com.apple.quicktime.make")), model=_text(meta.get("com.apple.quicktime.model"))),
        gps=_location(meta.get("com.apple.quicktime.location.iso6709") or meta.get("location")),
    )
    return info, embedded, notes


def _clockwise(display_rotation: float) -> int:
    """FFmpeg's display rotation (counter-clockwise degrees) as the clockwise turn that shows it upright."""
    return int(round(-display_rotation / 90.0)) % 4 * 90


def _text(value) -> str | None:
    if not isinstance(value, str):
        return None
    value = clean_text(value).strip()
    return value or None


def _video_date(meta: dict) -> tuple[datetime | None, str | None]:
    for key in ("com.apple.quicktime.creationdate", "creation_time", "date"):
        value = _text(meta.get(key))
        if not value:
            continue
        if re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{4}$", value):  # Apple: +0100 without a colon
            value = value[:-2] + ":" + value[-2:]
        date = parse_date_value(value)
        if date is not None and date.year > 1970:  # 1970/1904 epochs are placeholders
            return date, "video"
    return None, None


def _location(value) -> GPS | None:
    text = _text(value)
    if not text:
        return None
    m = _ISO6709.match(text)
    if not m:
        return None
    lat, lon = float(m.group(1)), float(m.group(2))
    if abs(lat) > 90 or abs(lon) > 180 or (lat == 0 and lon == 0):
        return None
    return GPS(latitude=lat, longitude=lon, altitude=float(m.group(3)) if m.group(3) else None)


def _av_reason(exc: Exception) -> str:
    text = str(exc)
    text = re.sub(r"^\[Errno -?\d+\]\s*", "", text)
    text = re.sub(r":\s*'[^']*'$", "", text)
    return text.strip() or type(exc).__name__
