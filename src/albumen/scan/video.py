"""Probe a video with FFmpeg (through PyAV): size, rotation, duration, codecs, date and place, and
whether its data ends before its header says it does (a file cut off in a copy or a download)."""

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
        if duration:
            reach = _reach(abs_src_path, container, stream, duration)
            if reach is not None:
                notes.append(
                    f"the file ends early (cut off?); published the first {_seconds(reach)} s of {_seconds(duration)} s"
                )
                duration = reach
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


def _reach(abs_src_path: str, container, stream, declared: float) -> float | None:
    """How far the video's data goes, in seconds, when it stops short of the duration its header
    declares; None when it does not. FFmpeg reads a cut-off file as far as it goes and stops without
    an error (it only logs 'partial file'), so a file cut at 40% would be published as a shorter
    video without a word. The end is looked at first (a seek near it, a few packets): only a file
    whose end is missing is read through (opened again: FFmpeg may refuse to seek back from the end
    of a cut Matroska file), to find where its data stops."""
    import av

    fps = float(stream.average_rate) if stream.average_rate else 25.0
    slack = max(0.5, 2 / fps)  # a last frame without a duration, rounding

    def ends(opened, video_stream, start: float | None) -> tuple[float, float]:
        """(the furthest end of any packet, of a video packet), from `start` on (None: from where it is)."""
        furthest = video = 0.0
        try:
            if start is not None:
                opened.seek(int(start * av.time_base))
            for packet in opened.demux():
                when = packet.pts if packet.pts is not None else packet.dts
                if when is None or packet.time_base is None:
                    continue
                end = float((when + (packet.duration or 0)) * packet.time_base)
                furthest = max(furthest, end)
                if packet.stream.index == video_stream.index:
                    video = max(video, end)
        except (av.FFmpegError, OSError):
            pass  # a damaged end: as far as it went
        return furthest, video

    furthest, video = ends(container, stream, max(0.0, declared - 3.0))
    if furthest >= declared - slack:
        return None
    try:
        with av.open(abs_src_path, metadata_errors="replace") as again:
            whole, whole_video = ends(again, again.streams.video[0], None)
    except (av.FFmpegError, OSError):
        whole, whole_video = 0.0, 0.0
    furthest, video = max(furthest, whole), max(video, whole_video)
    if furthest >= declared - slack:
        return None  # (a seek that found nothing near the end of a whole file)
    start = float(stream.start_time * stream.time_base) if stream.start_time is not None and stream.time_base else 0.0
    return max(0.0, video - max(0.0, start))


def _seconds(value: float) -> str:
    """'12.4', '30' (no '.0')."""
    return f"{value:.1f}".removesuffix(".0")


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
