"""Publish one video: a poster from the first frame that is not black, a thumbnail, and streams
every browser plays (H.264/AAC MP4 with the index at the front; VP9 or AV1 in WebM as extras).

FFmpeg comes with PyAV, so `pip install` alone is enough; a system ffmpeg is used instead when the
config names one. Rotation flags are applied to the pixels: a phone's portrait video comes out
portrait in every player. Location metadata is dropped unless metadata is kept.
"""

from __future__ import annotations

import fractions
import functools
import math
import os
import signal
import subprocess
import sys
import tempfile

from ..errors import ProcessingError
from ..fsutil import TMP_PREFIX
from .specs import X264_THREADS, OutputSpec, VideoJob

POSTER_SEARCH_SECONDS = 5.0
ROTATION_AS_ORIENTATION = {0: 1, 90: 6, 180: 3, 270: 8}  # a clockwise turn as the EXIF orientation that asks for it
POSTER_SEARCH_FRAMES = 150


def _av_error(exc: Exception) -> str:
    text = str(exc).strip()
    return text.split(": '")[0] if text else type(exc).__name__


# ---------------------------------------------------------------- poster frame
def _luma_stats(frame) -> tuple[float, float]:
    """Mean and standard deviation of a tiny grey copy of the frame."""
    small = frame.reformat(width=48, height=27, format="gray")
    plane = small.planes[0]
    data = bytes(plane)
    stride = plane.line_size
    values = [data[y * stride + x] for y in range(small.height) for x in range(small.width)]
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values)
    return mean, math.sqrt(var)


def pick_poster_frame(path: str):
    """The first frame that is neither black nor blank (within the first seconds); else the liveliest seen."""
    import av

    try:
        container = av.open(path)
    except Exception as exc:
        raise ProcessingError(f"cannot read video: {_av_error(exc)}") from None
    best, best_score = None, -1.0
    with container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        try:
            for n, frame in enumerate(container.decode(stream)):
                mean, std = _luma_stats(frame)
                if mean > 24 and std > 10:
                    return frame
                score = mean + 4 * std
                if score > best_score:
                    best, best_score = frame, score
                t = float(frame.time or 0)
                if n >= POSTER_SEARCH_FRAMES or t >= POSTER_SEARCH_SECONDS:
                    break
        except Exception as exc:
            if best is None:
                raise ProcessingError(f"cannot decode the video: {_av_error(exc)}") from None
    if best is None:
        raise ProcessingError("the video has no frame that can be decoded")
    return best


def frame_to_vips(frame, rotation: int):
    import pyvips

    rgb = frame.reformat(format="rgb24")
    plane = rgb.planes[0]
    width, height, stride = rgb.width, rgb.height, plane.line_size
    data = bytes(plane)
    if stride != width * 3:
        data = b"".join(data[y * stride : y * stride + width * 3] for y in range(height))
    from .engine import _orient

    image = pyvips.Image.new_from_memory(data, width, height, 3, "uchar").copy(interpretation="srgb")
    return _orient(image, ROTATION_AS_ORIENTATION[rotation]).copy_memory()


# ---------------------------------------------------------------- streams with PyAV
_ENCODERS = {
    "mp4": ("mp4", "libx264", "aac"),
    "webm": ("webm", "libvpx-vp9", "libopus"),
    "av1": ("webm", "libsvtav1", "libopus"),
}


@functools.lru_cache(maxsize=8)
def encoder_identity(ffmpeg: str | None) -> str:
    """What encodes videos, with its version: PyAV's own FFmpeg, or a system ffmpeg (videos.ffmpeg).
    Part of every video's recipe: another encoder, or another version of one, makes other bytes, which
    must not be published under the name of those it made before."""
    if not ffmpeg:
        from importlib.metadata import version

        return f"pyav {version('av')}"
    try:
        out = subprocess.run([ffmpeg, "-version"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             timeout=30, errors="replace")
        first = out.stdout.splitlines()[0] if out.stdout.strip() else f"exit {out.returncode}"
    except (OSError, subprocess.SubprocessError) as exc:
        first = f"unknown ({exc.__class__.__name__})"  # the job says why it cannot run it
    return f"{ffmpeg}: {first.split(' Copyright')[0]}"


def _video_options(fmt: str, job: VideoJob) -> dict[str, str]:
    if fmt == "mp4":
        return {"crf": str(job.crf), "preset": job.preset, "profile": "high"}
    if fmt == "webm":
        return {"crf": str(min(63, job.crf + 8)), "b": "0", "deadline": "good", "cpu-used": "5", "row-mt": "1"}
    return {"crf": str(min(63, job.crf + 12)), "preset": "10"}


def _rotate_filters(rotation: int) -> list[tuple[str, str]]:
    if rotation == 90:
        return [("transpose", "clock")]
    if rotation == 270:
        return [("transpose", "cclock")]
    if rotation == 180:
        return [("hflip", ""), ("vflip", "")]
    return []


def transcode_pyav(job: VideoJob, spec: OutputSpec, target: str) -> None:
    import av

    container_format, vcodec, acodec = _ENCODERS[spec.format]
    inp = av.open(job.abs_src_path)
    # bit-exact: a Matroska (WebM) file otherwise carries random identifiers, different at every run
    out = av.open(target, "w", format=container_format,
                  options={"movflags": "+faststart"} if container_format == "mp4" else {"fflags": "+bitexact"})
    try:
        vin = inp.streams.video[0]
        vin.thread_type = "AUTO"
        ain = inp.streams.audio[0] if inp.streams.audio else None
        rate = vin.average_rate or vin.guessed_rate or fractions.Fraction(25)
        vout = out.add_stream(vcodec, rate=rate)
        vout.width, vout.height = spec.width, spec.height
        vout.pix_fmt = "yuv420p"
        vout.options = _video_options(spec.format, job)
        vout.thread_count = X264_THREADS if vcodec == "libx264" else 0  # VP9's and AV1's bytes do not depend on it
        if job.keep_metadata:
            out.metadata.update(inp.metadata)
        aout = resampler = None
        if ain is not None:
            aout = out.add_stream(acodec, rate=48000)
            aout.layout = "stereo"
            aout.bit_rate = job.audio_bitrate * 1000
            fmt = aout.codec_context.codec.audio_formats[0].name if aout.codec_context.codec.audio_formats else "fltp"
            resampler = av.AudioResampler(format=fmt, layout="stereo", rate=48000, frame_size=aout.codec_context.frame_size or None)
        graph = av.filter.Graph()
        node = graph.add_buffer(template=vin)
        for name, args in [*_rotate_filters(job.rotation), ("scale", f"{spec.width}:{spec.height}"), ("format", "yuv420p")]:
            nxt = graph.add(name, args) if args else graph.add(name)
            node.link_to(nxt)
            node = nxt
        sink = graph.add("buffersink")
        node.link_to(sink)
        graph.configure()

        def drain_video():
            while True:
                try:
                    frame = graph.pull()
                except (av.BlockingIOError, av.EOFError):
                    return
                for packet in vout.encode(frame):
                    out.mux(packet)

        streams = [vin] + ([ain] if ain is not None else [])
        for packet in inp.demux(*streams):
            try:
                frames = packet.decode()
            except av.InvalidDataError:
                continue  # a damaged packet: skip it, keep the rest
            for frame in frames:
                if packet.stream is vin:
                    graph.push(frame)
                    drain_video()
                elif resampler is not None:
                    for f in resampler.resample(frame):
                        for p in aout.encode(f):
                            out.mux(p)
        graph.push(None)
        drain_video()
        for p in vout.encode(None):
            out.mux(p)
        if resampler is not None:
            for f in resampler.resample(None):
                for p in aout.encode(f):
                    out.mux(p)
            for p in aout.encode(None):
                out.mux(p)
    finally:
        out.close()
        inp.close()


def remux_pyav(job: VideoJob, target: str) -> None:
    import av

    inp = av.open(job.abs_src_path)
    out = av.open(target, "w", format="mp4", options={"movflags": "+faststart"})
    try:
        vin = inp.streams.video[0]
        ain = inp.streams.audio[0] if inp.streams.audio else None
        mapping = {vin: out.add_stream_from_template(vin)}
        if ain is not None:
            mapping[ain] = out.add_stream_from_template(ain)
        if job.keep_metadata:
            out.metadata.update(inp.metadata)
        for packet in inp.demux(*mapping):
            if packet.dts is None:
                continue
            packet.stream = mapping[packet.stream]
            out.mux(packet)
    finally:
        out.close()
        inp.close()


def ffmpeg_command(job: VideoJob, spec: OutputSpec, target: str) -> list[str]:
    """The same recipe for a system ffmpeg (which applies rotation flags itself)."""
    cmd = [job.ffmpeg or "ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", job.abs_src_path,
           "-map", "0:v:0", "-map", "0:a:0?"]
    if not job.keep_metadata:
        cmd += ["-map_metadata", "-1"]
    if spec.format == "remux":
        return [*cmd, "-c", "copy", "-movflags", "+faststart", "-f", "mp4", target]
    cmd += ["-vf", f"scale={spec.width}:{spec.height},format=yuv420p"]
    if spec.format == "mp4":
        cmd += ["-c:v", "libx264", "-threads", str(X264_THREADS), "-crf", str(job.crf), "-preset", job.preset, "-c:a", "aac",
                "-b:a", f"{job.audio_bitrate}k", "-ac", "2", "-movflags", "+faststart", "-f", "mp4"]
    elif spec.format == "webm":
        cmd += ["-c:v", "libvpx-vp9", "-crf", str(min(63, job.crf + 8)), "-b:v", "0", "-row-mt", "1",
                "-deadline", "good", "-cpu-used", "5", "-c:a", "libopus", "-b:a", f"{job.audio_bitrate}k",
                "-fflags", "+bitexact", "-f", "webm"]
    else:
        cmd += ["-c:v", "libsvtav1", "-crf", str(min(63, job.crf + 12)), "-preset", "10", "-c:a", "libopus",
                "-b:a", f"{job.audio_bitrate}k", "-fflags", "+bitexact", "-f", "webm"]
    return [*cmd, target]


_ffmpeg: subprocess.Popen | None = None  # the system ffmpeg this process is running (see stop_ffmpeg)
_starting = False  # a Popen of ffmpeg is under way: its process may exist before _ffmpeg names it
_stop_pending: int | None = None  # a stop signal that came meanwhile, raised again once _ffmpeg names it


def _run_ffmpeg(command: list[str], timeout: float) -> tuple[int, str]:
    """Run a system ffmpeg: (exit status, what it printed on stderr). It is killed when this
    returns early (a time limit, an exception) or when the worker is stopped (stop_ffmpeg)."""
    global _ffmpeg, _starting
    setup = _child_setup()
    _starting = True
    try:
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, preexec_fn=setup)
        _ffmpeg = proc
    finally:
        _starting = False
        if _stop_pending is not None:
            signal.raise_signal(_stop_pending)  # its handler now finds the ffmpeg, kills it and exits
    with proc:
        try:
            _, err = proc.communicate(timeout=timeout)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            _ffmpeg = None
    return proc.returncode, err


def stop_ffmpeg(signum: int) -> bool:
    """Kill the system ffmpeg this worker runs, and wait until it is gone (it is writing a temporary
    file that the build removes once its workers are stopped). False when that cannot be done yet:
    a Popen is starting one, whose process may already exist though its pid is not known. The
    signal is then raised again as soon as it is (see _run_ffmpeg), and the worker must not exit
    before: that ffmpeg would go on, orphaned, and create its file after the build's clean-up."""
    global _stop_pending
    if _starting:
        _stop_pending = signum
        return False
    proc = _ffmpeg
    if proc is not None and proc.returncode is None:
        # not proc.kill() and proc.wait(): this runs in a signal handler, maybe while the code it
        # interrupted (communicate) holds the Popen's lock, which proc.wait() would wait for in vain
        try:
            os.kill(proc.pid, signal.SIGKILL)
            os.waitpid(proc.pid, 0)
        except (ProcessLookupError, ChildProcessError):  # the interrupted code had just reaped it
            pass
    return True


_prctl = None  # libc's prctl, loaded before any fork: the child must not load a library
PR_SET_PDEATHSIG = 1


def _child_setup():
    """What ffmpeg's process does between fork and exec, on Linux: have the kernel kill it when the
    worker that started it dies, however it dies (pebble's SIGKILL when a stop takes over 3 s, the
    out-of-memory killer, the build killed and its workers with it), so that no ffmpeg ever outlives
    its worker and writes into the output after the build has removed the temporary files. It calls
    prctl and getppid, nothing else: the worker may run other threads (libvips'), so the child takes
    no lock and imports nothing."""
    global _prctl
    if not sys.platform.startswith("linux"):
        return None
    if _prctl is None:
        import ctypes

        try:
            _prctl = ctypes.CDLL("libc.so.6", use_errno=True).prctl
        except (OSError, AttributeError):  # not glibc: no parent-death signal
            _prctl = False
    if not _prctl:
        return None
    prctl, worker, kill = _prctl, os.getpid(), int(signal.SIGKILL)

    def die_with_worker() -> None:
        prctl(PR_SET_PDEATHSIG, kill)
        if os.getppid() != worker:  # the worker died before that was set
            os._exit(1)

    return die_with_worker


def make_stream(job: VideoJob, spec: OutputSpec, abs_dest: str) -> None:
    """Write one stream atomically: a temporary file beside it, then a rename; nothing left on failure."""
    folder = os.path.dirname(abs_dest)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, suffix=os.path.splitext(abs_dest)[1], dir=folder)
    os.close(fd)
    try:
        if job.ffmpeg:
            try:
                status, err = _run_ffmpeg(ffmpeg_command(job, spec, tmp), job.timeout)
            except subprocess.TimeoutExpired:
                raise ProcessingError(f"ffmpeg took longer than {job.timeout:.0f} s") from None
            except FileNotFoundError:
                raise ProcessingError(f"ffmpeg not found at {job.ffmpeg} (videos.ffmpeg)") from None
            if status != 0:
                raise ProcessingError(f"ffmpeg failed: {err.strip().splitlines()[-1] if err.strip() else status}")
        elif spec.format == "remux":
            remux_pyav(job, tmp)
        else:
            transcode_pyav(job, spec, tmp)
        if os.path.getsize(tmp) == 0:
            raise ProcessingError("the encoder wrote nothing")
        os.chmod(tmp, 0o644)
        os.replace(tmp, abs_dest)
    except BaseException as exc:  # an interrupt too: nothing is left behind that this process can remove
        _unlink(tmp)
        if isinstance(exc, ProcessingError) or not isinstance(exc, Exception):
            raise
        raise ProcessingError(f"cannot encode the video: {_av_error(exc)}") from None


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
