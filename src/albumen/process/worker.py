"""Run one job in a worker process: decode once (an animation as its frames are encoded), make every
derivative, report back.

A job never raises: any failure becomes a JobResult with ok=False and a reason,
and outputs already written by the failed job are removed.
"""

from __future__ import annotations

import os
import posixpath
import time
from dataclasses import replace

from ..errors import ProcessingError, described
from ..fsutil import OutsideRoot, check_inside, forget_resolved, open_regular, remove_temp_files, write_atomic
from . import filters
from .specs import (
    ImageJob,
    JobResult,
    OutputSpec,
    VideoJob,
    geometry_order,
    is_still,
    progressive_for,
    still_derivation,
)


def run_job(job: ImageJob) -> JobResult:
    started = time.perf_counter()
    written: list[tuple[str, int, int]] = []  # (dest_uri, size, mtime_ns) of each file made so far
    try:
        placeholder = _make_outputs(job, written)
    except ProcessingError as exc:
        _remove(job, written)
        return JobResult(job.job_id, ok=False, error=exc.message, seconds=time.perf_counter() - started)
    except Exception as exc:  # a bug or a library failure: still only this file fails
        _remove(job, written)
        return JobResult(job.job_id, ok=False, error=described(exc)[:300], seconds=time.perf_counter() - started)
    return JobResult(
        job.job_id, ok=True, written=tuple(written), placeholder=placeholder,
        seconds=time.perf_counter() - started,
    )


def run_jobs_batch(jobs: tuple[ImageJob, ...]) -> list[JobResult]:
    """Several jobs in one task (small images): each still succeeds or fails on its own."""
    forget_resolved()  # the output's folders as they are now, once per task (see fsutil.check_inside)
    return [run_job(job) for job in jobs]


def run_jobs_batch_tidy(jobs: tuple[ImageJob, ...]) -> list[JobResult]:
    """run_jobs_batch where a task may be run again without the build knowing (a Dask worker died
    with it, and the scheduler gave it to another): each job first removes the temporary files an
    attempt before it left in its folders (a media's folders are its job's alone while it runs)."""
    forget_resolved()
    for job in jobs:
        remove_temp_files_of(job)
    return [run_job(job) for job in jobs]


def run_job_tidy(job: ImageJob) -> JobResult:
    """run_job, as run_jobs_batch_tidy."""
    return run_jobs_batch_tidy((job,))[0]


def remove_temp_files_of(job: ImageJob | VideoJob) -> None:
    """Temporary files left in the job's output folders (each media has folders of its own; the
    build writes a media's page there only once its job is done)."""
    for folder in {os.path.join(job.abs_dest_root, *posixpath.dirname(s.dest_uri).split("/")) for s in job.outputs}:
        try:
            check_inside(folder, job.abs_dest_root)
        except OutsideRoot:  # nothing was written there: nothing to clean up through a link
            continue
        remove_temp_files(folder)


def _remove(job: ImageJob, written: list[tuple[str, int, int]]) -> None:
    for dest_uri, _, _ in written:
        try:
            os.unlink(os.path.join(job.abs_dest_root, dest_uri))
        except OSError:
            pass


def _write(job: ImageJob, spec: OutputSpec, data: bytes, written: list[tuple[str, int, int]]) -> None:
    _record(written, spec.dest_uri, _write_file(job, spec.dest_uri, data, spec.role))


def _write_file(job: ImageJob | VideoJob, dest_uri: str, data: bytes, role: str) -> os.stat_result:
    target = _target(job, dest_uri)
    if job.seal is not None:  # a password album's: encrypted before it leaves this process
        from ..seal.format import additional_data, holds, seal_bytes

        aad = additional_data(job.seal.album_id, role, dest_uri.rpartition("/")[2])
        if holds(job.seal.key, aad, target, data):  # made again, the same: its ciphertext is kept
            return os.stat(target)
        data = seal_bytes(job.seal.key, aad, data)
    return write_atomic(target, data)


def _placeholder_of_file(job: ImageJob | VideoJob, path: str):
    """The placeholder of a thumbnail already written (a password album's is decrypted first)."""
    from . import engine

    if job.seal is None:
        return engine.placeholder_of_file(path)
    from ..seal.format import additional_data, open_bytes

    with open(path, "rb") as f:
        blob = f.read()
    aad = additional_data(job.seal.album_id, "thumb", os.path.basename(path))
    return engine.placeholder_of_jpeg(open_bytes(job.seal.key, aad, blob))


def _make_sealed_stream(job: VideoJob, spec: OutputSpec, target: str) -> os.stat_result:
    """A password album's video: encoded into a private temporary folder (never the output), then
    sealed into the output a chunk at a time."""
    import shutil
    import tempfile

    from ..fsutil import write_atomic_with
    from ..seal.format import additional_data, holds, seal_file
    from . import video

    folder = tempfile.mkdtemp(prefix="albumen-sealed-")  # 0700
    try:
        # the container follows the extension (a sealed name has none)
        plain = os.path.join(folder, "stream.webm" if spec.format in ("webm", "av1") else "stream.mp4")
        video.make_stream(job, spec, plain)
        aad = additional_data(job.seal.album_id, spec.role, spec.name)
        if holds(job.seal.key, aad, target, plain):  # made again, the same: its ciphertext is kept
            return os.stat(target)
        return write_atomic_with(target, lambda out: seal_file(job.seal.key, aad, plain, out))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _target(job: ImageJob | VideoJob, dest_uri: str) -> str:
    """Where an output goes, refused when its folder leads out of the output (see fsutil.check_inside)."""
    path = os.path.join(job.abs_dest_root, *dest_uri.split("/"))
    try:
        check_inside(os.path.dirname(path), job.abs_dest_root)
    except OutsideRoot as exc:
        raise ProcessingError(str(exc)) from None
    return path


def _record(written: list[tuple[str, int, int]], dest_uri: str, st: os.stat_result) -> None:
    """Size and modification time of a file made: a later build removes a stale file only while it
    is still the one made here (see BuildCache.stamp_outputs)."""
    written.append((dest_uri, st.st_size, st.st_mtime_ns))


def _make_video_outputs(job: VideoJob, written: list[tuple[str, int, int]]):
    from . import engine, video

    todo = set(job.todo) if job.todo is not None else None

    def need(spec: OutputSpec) -> bool:
        return todo is None or spec.dest_uri in todo

    placeholder = None
    filters.check(job.filters)
    thumbs = (job.thumb, *job.more_thumbs)
    if need(job.poster) or any(map(need, thumbs)) or (job.placeholder and not job.placeholder_source):
        frame = video.frame_to_vips(video.pick_poster_frame(job.abs_src_path), job.rotation)
        poster = engine.resize_exact(frame, job.poster.width, job.poster.height).copy_memory()
        if need(job.poster):
            shown = filters.filtered(poster, None, job.poster, "poster", job.filters)
            data = shown.encoded(job.poster, job) if shown else engine.encode(poster, job.poster, job)
            _write(job, job.poster, data, written)
        thumb = engine.resize_exact(poster, job.thumb.width, job.thumb.height, job.thumb.crop).copy_memory()
        shown = filters.filtered(thumb, None, job.thumb, "thumb", job.filters)
        for spec in thumbs:  # the JPEG first: the placeholder is taken from its bytes
            if spec is job.thumb or need(spec):
                data = shown.encoded(spec, job) if shown else engine.encode(thumb, spec, job)
                if need(spec):
                    _write(job, spec, data, written)
                if spec is job.thumb:
                    placeholder = engine.placeholder_of_jpeg(data)  # as it would be from the file later
    elif job.placeholder and job.placeholder_source:
        placeholder = _placeholder_of_file(job, job.placeholder_source)
    for spec in job.videos:
        if need(spec):
            target = _target(job, spec.dest_uri)
            if job.seal is not None:
                _record(written, spec.dest_uri, _make_sealed_stream(job, spec, target))
                continue
            video.make_stream(job, spec, target)
            _record(written, spec.dest_uri, os.stat(target))
    for source, dest_uri in job.tracks:
        if todo is None or dest_uri in todo:
            with open_regular(source) as f:  # a caption file swapped for a FIFO would hang the worker
                _record(written, dest_uri, _write_file(job, dest_uri, f.read(), "track"))
    return placeholder


def _make_outputs(job: ImageJob, written: list[tuple[str, int, int]]):
    from . import engine

    if isinstance(job, VideoJob):
        return _make_video_outputs(job, written)

    todo = {o.dest_uri for o in job.outputs}
    stills = [o for o in job.planned if is_still(o)]
    moving = [o for o in job.outputs if o.animated]
    originals = [o for o in job.outputs if o.format == "copy"]
    placeholder = None
    # each still is made as a whole build makes it, whichever of them this job makes: from the same
    # decoded image, through the same intermediates (see still_derivation)
    _, sources = still_derivation(job.src_width, job.src_height, job.format, stills)
    needed: set[int] = set()  # the stills to make, and those they are resized from
    for i, spec in enumerate(stills):
        if spec.dest_uri in todo:
            while i >= 0 and i not in needed:
                needed.add(i)
                i = sources[i]
    filters.check(job.filters)
    if needed:
        # decoded as stored, at the scale still_derivation chose (open_image reads job.planned): each
        # output is resized first and turned upright after, cheaper than turning the decoded image;
        # a plugin's media kind has its picture drawn by the plugin
        base = filters.draw(job) if job.maker is not None else engine.open_image(job, orient=False)
        swap = engine.transposed(job.orientation)
        made: dict[tuple, object] = {}  # (width, height, crop) -> that image as stored, resized once
        last_key, image, picture, shown = None, None, None, {}
        encoded: dict[tuple, bytes] = {}  # a thumbnail the size of a small photo is the same file twice
        for i in sorted(needed, key=lambda k: geometry_order(stills[k])):  # larger ones first
            spec = stills[i]
            key = (spec.width, spec.height, spec.crop)
            if key not in made:
                parent = stills[sources[i]] if sources[i] >= 0 else None
                source = base if parent is None else made[(parent.width, parent.height, None)]
                width, height = (spec.height, spec.width) if swap else (spec.width, spec.height)
                stored = engine.resize_exact(source, width, height, spec.crop)
                made[key] = stored if stored is source else stored.copy_memory()
            if spec.dest_uri not in todo:
                continue  # only an intermediate here
            if key != last_key:  # one upright image and Pillow copy per size, shared by its encodes
                last_key, image, picture, shown = key, engine.orient(made[key], job.orientation), None, {}
            if picture is None and (spec.format == "jpeg" or spec.role == "thumb"):
                picture = engine.to_pillow(image)
            role = "thumb" if spec.role == "cover" else spec.role  # a cover's card images are thumbnails to plugins
            calls = filters.for_role(job.filters, role)
            if calls and calls not in shown:  # plugins' filters: once per size and role, for every format
                shown[calls] = filters.filtered(image, picture, spec, role, calls)
            recipe = (spec.width, spec.height, spec.crop, spec.format, spec.quality, progressive_for(spec, job.progressive),
                      calls)
            if recipe not in encoded:
                encoded[recipe] = shown[calls].encoded(spec, job) if calls else engine.encode(image, spec, job, picture)
            _write(job, spec, encoded[recipe], written)
            if spec.role == "thumb" and spec.format == "jpeg" and job.placeholder and placeholder is None:
                # from the bytes written, as it would be from the file later (see placeholder_of_jpeg)
                placeholder = engine.placeholder_of_jpeg(encoded[recipe])
    for spec in moving:
        _write(job, spec, engine.make_animation(job, spec), written)
    for spec in originals:
        _write(job, spec, _original_bytes(job, spec), written)
    if placeholder is None and job.placeholder and job.placeholder_source:
        placeholder = _placeholder_of_file(job, job.placeholder_source)
    return placeholder


def _original_bytes(job: ImageJob, spec: OutputSpec) -> bytes:
    """The original file, with its location removed unless metadata is kept."""
    with open_regular(job.abs_src_path) as f:
        data = f.read()
    if job.keep_metadata:
        return data
    if job.format in ("jpeg", "mpo"):
        stripped = strip_jpeg_location(data)
        if stripped is not None:
            return stripped
        # a structure that cannot be followed might hide a location anywhere: published as a JPEG
        # made from its pixels, without metadata (as plan does for other formats that name a place)
        from . import engine

        jpeg = replace(spec, format="jpeg", quality=95)
        return engine.encode(engine.open_image(replace(job, outputs=(jpeg,), planned=(jpeg,))), jpeg, job)
    return data


_STANDALONE_MARKERS = {0x01, *range(0xD0, 0xD8)}  # TEM and RSTn: no length follows


def strip_jpeg_location(data: bytes) -> bytes | None:
    """Remove where a JPEG was taken, without re-encoding the pixels: the GPS IFD of its EXIF, the
    place datasets of its IPTC (city, region, country, location), and from its XMP (which can repeat
    both) every property but those known not to name a place (see _XMP_KEPT).

    Only the primary image is kept: the file is followed marker by marker, through each scan's
    entropy-coded data, up to that image's end (EOI); what follows it (an MPO's other frames with
    their own EXIF, an appended JPEG, a Motion Photo's video, a gain map) is dropped, and so is the
    MPF segment that points there. Junk and 0xFF fill bytes between segments are dropped, as libjpeg
    skips them. None when the structure cannot be followed (no SOI, a segment running past the end,
    a second SOI, no scan at all): the caller must then not publish these bytes."""
    if data[:2] != b"\xff\xd8":
        return None
    out = bytearray(b"\xff\xd8")
    i, n = 2, len(data)
    scanned = False
    while True:
        i = data.find(b"\xff", i)  # junk before a marker is skipped, as libjpeg does
        while 0 <= i < n and data[i] == 0xFF:  # any number of fill bytes
            i += 1
        if i < 0 or i >= n:  # no EOI: a truncated file is complete up to its last scan
            return bytes(out) if scanned else None
        marker = data[i]
        i += 1
        if marker == 0x00:  # a stuffed zero outside a scan: junk
            continue
        if marker == 0xD9:  # end of the primary image: nothing after it is published
            return bytes(out + b"\xff\xd9")
        if marker in _STANDALONE_MARKERS:
            out += bytes((0xFF, marker))
            continue
        length = int.from_bytes(data[i : i + 2], "big")
        if marker == 0xD8 or i + 2 > n or length < 2 or i + length > n:
            return None
        segment = bytes((0xFF, marker)) + data[i : i + length]
        payload = segment[4:]
        i += length
        if marker == 0xE1 and payload.startswith(b"Exif\x00\x00"):
            tiff = _without_gps(payload[6:])
            # unreadable EXIF: dropped rather than risk leaking a location
            segment = b"" if tiff is None else segment[:4] + payload[:6] + tiff
        elif marker == 0xE1 and payload.startswith(_XMP_HEADER):
            packet = _xmp_without_place(payload[len(_XMP_HEADER) :])
            segment = b"" if packet is None else b"\xff\xe1" + (len(packet) + 2).to_bytes(2, "big") + packet
        elif marker == 0xE1 and (payload.startswith(b"http://ns.adobe.com/") or b"xmp" in payload[:40].lower()):
            segment = b""  # Extended XMP (and anything XMP-like but unknown): dropped whole
        elif marker == 0xE2 and payload.startswith(b"MPF\x00"):
            segment = b""  # an MPO's index of the frames after EOI, which are dropped
        elif marker == 0xED:  # APP13: Photoshop resources, where IPTC-IIM lives
            kept = _without_iptc_place(payload)
            segment = b"" if kept is None else b"\xff\xed" + (len(kept) + 2).to_bytes(2, "big") + kept
        elif marker == 0xFE:
            segment = b""  # a comment: free text, which may name a place
        elif 0xE0 <= marker <= 0xEF and not any(marker == m and payload.startswith(p) for m, p in _APP_KEPT):
            segment = b""  # an application segment not known to hold no place (a maker's own, FlashPix, ...)
        out += segment
        if marker == 0xDA:  # start of scan: its entropy-coded data runs to the next marker
            scanned = True
            end = _entropy_end(data, i)
            out += data[i:end]
            i = end


def _entropy_end(data: bytes, i: int) -> int:
    """Where a scan's entropy-coded data starting at i ends: at the first 0xFF that is neither a
    stuffed zero (0xFF00) nor a restart marker (RSTn); the end of the data when there is none."""
    while True:
        i = data.find(b"\xff", i)
        if i < 0 or i + 1 >= len(data):
            return len(data)
        if data[i + 1] != 0x00 and not 0xD0 <= data[i + 1] <= 0xD7:
            return i
        i += 2


_TIFF_TYPE_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4, 16: 8, 17: 8, 18: 8}


def _without_gps(tiff: bytes) -> bytes | None:
    """EXIF (a TIFF structure) with its GPS IFD emptied in place: its entries and the values they point
    to become zeros, and it is left an IFD of no entries. Every other byte stays where it was, so the
    rest of the EXIF (maker notes included, whose offsets a rewrite would break) reads as before.
    None when the structure cannot be followed."""
    if tiff[:4] not in (b"II*\x00", b"MM\x00*"):
        return None
    order = "little" if tiff[:2] == b"II" else "big"

    def number(at: int, size: int) -> int:
        if at < 0 or at + size > len(tiff):
            raise IndexError(at)
        return int.from_bytes(tiff[at : at + size], order)

    out = bytearray(tiff)
    try:
        ifd0 = number(4, 4)
        pointers = [number(ifd0 + 2 + 12 * k + 8, 4) for k in range(number(ifd0, 2))
                    if number(ifd0 + 2 + 12 * k, 2) == 0x8825]  # a crafted file may hold several
        for gps in pointers:
            count = number(gps, 2)
            end = gps + 2 + 12 * count + 4
            if end > len(tiff):
                return None
            for k in range(count):
                entry = gps + 2 + 12 * k
                size = _TIFF_TYPE_SIZES.get(number(entry + 2, 2), 1) * number(entry + 4, 4)
                if size > 4:  # the value lives elsewhere: zeroed there too
                    at = number(entry + 8, 4)
                    if at + size > len(tiff):
                        return None
                    out[at : at + size] = bytes(size)
            out[gps:end] = bytes(end - gps)  # no entries, no next IFD
    except IndexError:
        return None
    return bytes(out)


_PHOTOSHOP = b"Photoshop 3.0\x00"
# Photoshop resources kept (the IPTC block cleaned): ones that cannot name a place. Every other one is
# dropped, among them a whole EXIF block (0x0422) or XMP packet (0x0424) with their GPS, and thumbnails.
_PHOTOSHOP_KEPT = {
    0x03ED,  # resolution
    0x03F3,  # print flags
    0x0404,  # IPTC-NAA, without its place datasets
    0x040D,  # global lighting angle
    0x040F,  # ICC profile
    0x0411,  # ICC untagged flag
    0x0419,  # global lighting altitude (an angle, not a height above the sea)
    0x0421,  # version info
}


def _without_iptc_place(payload: bytes) -> bytes | None:
    """An APP13 payload with only the resources of _PHOTOSHOP_KEPT, its IPTC without the datasets that
    name a place. None when the payload cannot be read: the caller drops it whole."""
    from ..scan.metadata import IPTC_PLACE

    if not payload.startswith(_PHOTOSHOP):
        return None
    out = bytearray(_PHOTOSHOP)
    i = len(_PHOTOSHOP)
    while i < len(payload):
        if payload[i : i + 4] != b"8BIM" or i + 7 > len(payload):
            if not payload[i:].strip(b"\x00"):  # padding at the end
                break
            return None
        resource = int.from_bytes(payload[i + 4 : i + 6], "big")
        name_end = i + 6 + 1 + payload[i + 6]
        name_end += (name_end - (i + 6)) % 2  # the name (with its length byte) is padded to even
        if name_end + 4 > len(payload):
            return None
        size = int.from_bytes(payload[name_end : name_end + 4], "big")
        start = name_end + 4
        end = start + size
        if end > len(payload):
            return None
        data = payload[start:end]
        if resource == 0x0404:  # IPTC-NAA
            data = _iptc_without(data, IPTC_PLACE)
            if data is None:
                return None
        if resource in _PHOTOSHOP_KEPT:  # the IPTC digest (0x0425) goes too: stale once the IPTC changed
            out += payload[i:name_end] + len(data).to_bytes(4, "big") + data + (b"\x00" if len(data) % 2 else b"")
        i = end + (size % 2)
    return bytes(out) if len(out) + 2 <= 0xFFFF else None


def _iptc_without(block: bytes, drop: set[tuple[int, int]]) -> bytes | None:
    """An IPTC-IIM block without the given (record, dataset) entries; None if it is malformed."""
    out = bytearray()
    i = 0
    while i < len(block):
        if block[i] != 0x1C:
            if block[i:].strip(b"\x00") == b"":
                break
            return None
        if i + 5 > len(block):
            return None
        record, dataset = block[i + 1], block[i + 2]
        length = int.from_bytes(block[i + 3 : i + 5], "big")
        head = 5
        if length & 0x8000:  # extended: the next (length & 0x7FFF) bytes hold the length
            count = length & 0x7FFF
            if count > 4 or i + 5 + count > len(block):
                return None
            length = int.from_bytes(block[i + 5 : i + 5 + count], "big")
            head += count
        end = i + head + length
        if end > len(block):
            return None
        if (record, dataset) not in drop:
            out += block[i:end]
        i = end
    return bytes(out)


_XMP_HEADER = b"http://ns.adobe.com/xap/1.0/\x00"
# application segments kept as they are (EXIF, XMP and IPTC are cleaned above): JFIF, the colour
# profile, Adobe's colour transform flag (needed to decode CMYK and YCCK files right)
_APP_KEPT = ((0xE0, b"JFIF\x00"), (0xE0, b"JFXX\x00"), (0xE1, b"Exif\x00\x00"), (0xE1, _XMP_HEADER),
             (0xE2, b"ICC_PROFILE\x00"), (0xED, b"Photoshop 3.0\x00"), (0xEE, b"Adobe"))
_RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"

# The XMP properties a published original keeps, by namespace: (prefix written, local names). An
# allowlist, not a blocklist: a property not named here (a place, GPS, a drone maker's own
# coordinates, a structure holding an address such as Iptc4xmpCore:CreatorContactInfo) is dropped.
# Title, description, headline and keywords are the photographer's words and are kept as IPTC keeps
# its caption and keywords, even when they name a place: the photo page shows them anyway. For the same
# reason lr:hierarchicalSubject (Lightroom's keywords, e.g. "Places|France|Paris") is kept like
# dc:subject. Iptc4xmpCore:AltTextAccessibility is alt text, a description like dc:description.
_XMP_KEPT: dict[str, tuple[str, frozenset[str]]] = {
    "http://purl.org/dc/elements/1.1/": ("dc", frozenset({"creator", "rights", "title", "description", "subject"})),
    "http://ns.adobe.com/xap/1.0/": ("xmp", frozenset({"Rating", "Label", "CreateDate", "CreatorTool"})),
    "http://ns.adobe.com/xap/1.0/rights/": (
        "xmpRights", frozenset({"Certificate", "Marked", "Owner", "UsageTerms", "WebStatement"})),
    "http://ns.adobe.com/photoshop/1.0/": (
        "photoshop", frozenset({"Credit", "Source", "Headline", "DateCreated", "AuthorsPosition"})),
    "http://iptc.org/std/Iptc4xmpCore/1.0/xmlns/": ("Iptc4xmpCore", frozenset({"AltTextAccessibility"})),
    "http://ns.adobe.com/lightroom/1.0/": ("lr", frozenset({"hierarchicalSubject"})),
}


def _xmp_without_place(packet: bytes) -> bytes | None:
    """An APP1 XMP payload (header included) holding only the allowlisted properties of the packet,
    rebuilt as a new minimal packet. None (the caller drops the XMP) when nothing is kept, when the
    packet cannot be read, or when the new one would not fit in one segment."""
    from ..scan.metadata import parse_xmp_packet

    try:
        root = parse_xmp_packet(packet)
    except ValueError:
        return None
    rdf = next(root.iter(f"{{{_RDF}}}RDF"), None)
    if rdf is None:
        return None
    kept: dict[tuple[str, str], str] = {}
    # only the top-level descriptions: one nested in a structure (a location, an ingredient's own
    # metadata) describes something else
    for desc in rdf.findall(f"{{{_RDF}}}Description"):
        for name, value in desc.attrib.items():
            ns, local = _xmp_name(name)
            if local in _XMP_KEPT.get(ns, ("", ()))[1]:
                kept.setdefault((ns, local), ">" + _xml_text(value))
        for child in desc:
            ns, local = _xmp_name(child.tag)
            if local in _XMP_KEPT.get(ns, ("", ()))[1] and (ns, local) not in kept:
                value = _xmp_simple_value(child)
                if value is not None:
                    kept[(ns, local)] = value
    if not kept:
        return None
    used = sorted({ns for ns, _ in kept})
    xmlns = "".join(f'\n    xmlns:{_XMP_KEPT[ns][0]}="{_xml_text(ns)}"' for ns in used)
    body = "".join(
        f"   <{_XMP_KEPT[ns][0]}:{local}{value}</{_XMP_KEPT[ns][0]}:{local}>\n" for (ns, local), value in kept.items()
    )
    text = (
        '<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>\n'
        '<x:xmpmeta xmlns:x="adobe:ns:meta/">\n'
        f' <rdf:RDF xmlns:rdf="{_RDF}">\n'
        f'  <rdf:Description rdf:about=""{xmlns}>\n{body}  </rdf:Description>\n'
        " </rdf:RDF>\n</x:xmpmeta>\n"
        '<?xpacket end="w"?>'
    )
    out = _XMP_HEADER + text.encode("utf-8")
    return out if len(out) + 2 <= 0xFFFF else None


def _xmp_name(name: str) -> tuple[str, str]:
    """(namespace, local name) of a Clark-notation tag or attribute; ("", name) without a namespace."""
    if not name.startswith("{"):
        return "", name
    ns, _, local = name[1:].partition("}")
    return ns, local


def _xmp_simple_value(element) -> str | None:
    """A property element as written back after its opening tag's name: '>text' for a simple value,
    ' rdf:resource="uri">' for a URI, or '>' plus an rdf:Alt/Seq/Bag of text items (xml:lang kept).
    None for any other shape (structures, qualifiers, nested resources): not copied, since what a
    structure holds is not checked."""
    lang = element.get(_XML_LANG)
    if set(element.attrib) - {_XML_LANG, f"{{{_RDF}}}resource"}:
        return None
    opening = f" xml:lang={_xml_attr(lang)}" if lang is not None else ""
    children = list(element)
    if not children:
        resource = element.get(f"{{{_RDF}}}resource")
        if resource is not None:
            return None if (element.text or "").strip() else f" rdf:resource={_xml_attr(resource)}>"
        return f"{opening}>{_xml_text(element.text or '')}"
    if element.get(f"{{{_RDF}}}resource") is not None or len(children) != 1 or (element.text or "").strip():
        return None
    container = children[0]
    ns, kind = _xmp_name(container.tag)
    if ns != _RDF or kind not in ("Alt", "Seq", "Bag") or container.attrib:
        return None
    items = []
    for li in container:
        if li.tag != f"{{{_RDF}}}li" or len(li) or set(li.attrib) - {_XML_LANG}:
            return None
        li_lang = li.get(_XML_LANG)
        attr = f" xml:lang={_xml_attr(li_lang)}" if li_lang is not None else ""
        items.append(f"     <rdf:li{attr}>{_xml_text(li.text or '')}</rdf:li>\n")
    return f"{opening}>\n    <rdf:{kind}>\n{''.join(items)}    </rdf:{kind}>\n   "


def _xml_text(text: str) -> str:
    """Text escaped for an element or a double-quoted attribute (a carriage return survives parsing)."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
            .replace("\r", "&#13;"))


def _xml_attr(text: str) -> str:
    return f'"{_xml_text(text)}"'
