"""`albumen set-meta`: write or update one sidecar, keeping the rest of it byte for byte (Sigal's set_meta).

The one command that writes into the photo folder, and only the one file it is asked to. The sidecar
is found as the scanner finds it: a folder's index.md (any capitals), a photo's photo.jpg.md, else its
photo.md. An existing sidecar is edited line by line in its own header style (Sigal's `Key: value`
lines, YAML between `---` lines, TOML between `+++` lines): the lines of the keys set or removed
change, every other byte stays (the body, the other keys, comments, line endings, the encoding and its
byte-order mark).

A sidecar is only changed when it can be read whole and trusted: a link, a FIFO, a file over 1 MiB,
one with NUL bytes or bytes its encoding cannot hold, a header that is not read whole (a fence never
closed, a line that stops a `Key: value` header) or that does not parse are refused, saying why.
Before anything is written, the new text is read back with the scanner's own reader: the keys set say
what was asked, every other key and the body read exactly as before, and the private mark does not
change unless asked. Otherwise nothing is written. The file is written to a temporary file in the
same folder and renamed over it, with the old file's mode.
"""

from __future__ import annotations

import codecs
import difflib
import errno
import os
import re
import stat
import tomllib
from dataclasses import dataclass, field

from .config.tomlwrite import toml_string, toml_value
from .errors import AlbumenError, UsageError
from .fsutil import TMP_PREFIX, open_regular
from .scan.sidecar import (
    _CLOSING_FENCE,
    _CONTINUATION,
    _LINE_BREAKS,
    _META_LINE,
    _OPENING_FENCE,
    _front_matter_loader,
    clean_text,
    decode_text,
    marks_private,
    meta_bool,
    meta_text,
    parse_sidecar_text,
)

MAX_BYTES = 1 << 20  # the reader reads no more: a longer sidecar is not read whole
KEY = re.compile(r"^[A-Za-z0-9_-]+$")  # what a `Key: value` header can hold, and a bare key in YAML and TOML
_NOT_SHARING = (".md", ".vtt", ".xmp")  # files beside a photo that are not another photo of that name
_BOMS = (  # UTF-32 LE's begins with UTF-16 LE's: looked for first
    (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_ENDING = re.compile("(?:\r\n|[\n\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029])$")
_BOOLEAN_KEYS = ("private",)


class SidecarRefused(AlbumenError):
    """The sidecar cannot be changed safely; nothing was written."""


@dataclass
class SidecarEdit:
    """What set-meta will write: the sidecar, its old and new bytes, and what changed."""

    abs_path: str
    describes: str  # the photo or folder it is the sidecar of
    old: bytes | None  # None: a new file
    new: bytes
    old_text: str
    new_text: str
    encoding: str
    changes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    old_stat: os.stat_result | None = None

    @property
    def changed(self) -> bool:
        return self.old != self.new


def parse_assignments(items: tuple[str, ...]) -> list[tuple[str, str]]:
    """key=value arguments as (key, value); an empty value removes the key. Line breaks of every kind
    in a value become '\\n' (the reader sees them as line breaks anyway)."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError(f"{item!r} is not key=value", hint="e.g. title=\"Summer at the sea\"; key= removes a key")
        if not KEY.match(key):
            raise UsageError(f"{key!r} is not a sidecar key (letters, digits, '-' and '_')")
        if key.lower() in seen:
            raise UsageError(f"{key!r} is given twice")
        seen.add(key.lower())
        value = _LINE_BREAKS.sub("\n", value).strip()
        if re.search("[\x00-\x08\x0b-\x1f\x7f]", value):
            raise UsageError(f"the value of {key!r} has control characters")
        if key.lower() in _BOOLEAN_KEYS and value and meta_bool({key: value}, key) is None:
            raise UsageError(f"{key}: expected true or false, got {value!r}")
        out.append((key, value))
    return out


# ------------------------------------------------------------------------------------------ which file
def find_sidecar(path: str) -> tuple[str, str, list[str]]:
    """(the sidecar's path, what it describes, notes) for a photo or a folder, as the scanner pairs them."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such photo or folder") from None
    if stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(path)
        if os.path.isdir(path):
            raise UsageError(f"{path} is a symbolic link to the folder {real}; set-meta does not write through links",
                             hint=f"give the folder itself: albumen set-meta {real} ...")
        if os.path.dirname(real) != os.path.realpath(os.path.dirname(os.path.abspath(path))):
            raise UsageError(f"{path} is a symbolic link to {real}, in another folder; set-meta does not follow it",
                             hint="give the photo itself")
        try:
            st = os.stat(path)
        except OSError:
            raise UsageError(f"{path} is a broken symbolic link") from None
    folder = path if stat.S_ISDIR(st.st_mode) else os.path.dirname(path) or "."
    try:
        names = os.listdir(folder)
    except OSError as exc:
        raise UsageError(f"{folder}: cannot list it ({exc.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        indexes = sorted(n for n in names if n.lower() == "index.md")
        if len(indexes) > 1:
            raise SidecarRefused(f"{path}: {' and '.join(indexes)} are both there; one index.md per folder",
                                 hint="keep one of them, then run set-meta again")
        return os.path.join(folder, indexes[0] if indexes else "index.md"), path, []
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{path} is not a photo or a folder (a FIFO, a device or a socket)")
    name = os.path.basename(path)
    if name.lower().endswith(".md"):
        raise UsageError(f"{path} is a sidecar itself", hint="give the photo it describes, or its folder for index.md")
    stem = os.path.splitext(name)[0]
    sharing = sorted(n for n in names if n != name and os.path.splitext(n)[0] == stem
                     and not n.lower().endswith(_NOT_SHARING))
    if f"{name}.md" in names:
        return os.path.join(folder, f"{name}.md"), path, []
    if stem.lower() != "index" and f"{stem}.md" in names:
        notes = [f"{stem}.md is the sidecar of {', '.join(sharing)} too (it describes every file named {stem})"] if sharing else []
        return os.path.join(folder, f"{stem}.md"), path, notes
    # a new one: Sigal's name (photo.md), unless it would describe another file too, or be the album's
    if sharing or stem.lower() == "index" or not stem:
        return os.path.join(folder, f"{name}.md"), path, []
    return os.path.join(folder, f"{stem}.md"), path, []


# -------------------------------------------------------------------------------------- reading whole
def _read_exact(abs_path: str) -> tuple[bytes, os.stat_result]:
    """The sidecar's bytes, all of them, and its stat (FileNotFoundError when there is none)."""
    st = os.lstat(abs_path)
    if stat.S_ISLNK(st.st_mode):
        raise SidecarRefused(f"{abs_path} is a symbolic link (to {os.path.realpath(abs_path)}); set-meta does not "
                             "write through links", hint="edit the file it leads to, or replace the link by a file")
    if not stat.S_ISREG(st.st_mode):
        raise SidecarRefused(f"{abs_path} is not a regular file (a folder, a FIFO or a device); nothing was written")
    try:
        with open_regular(abs_path) as f:
            raw = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise SidecarRefused(f"{abs_path}: cannot read it ({exc.strerror or exc}); nothing was written") from None
    if len(raw) > MAX_BYTES:
        raise SidecarRefused(f"{abs_path} is larger than 1 MiB, more than Albumen reads; nothing was written",
                             hint="make it shorter by hand")
    return raw, st


def _decode_exact(raw: bytes, abs_path: str) -> tuple[str, str, bytes]:
    """(text, encoding, byte-order mark) such that bom + text.encode(encoding) == raw."""
    bom, encoding = b"", None
    for mark, name in _BOMS:
        if raw.startswith(mark):
            bom, encoding = mark, name
            break
    body = raw[len(bom):]
    for candidate in [encoding] if encoding else ["utf-8", "cp1252"]:
        try:
            text = body.decode(candidate)
        except UnicodeDecodeError:
            continue
        if "\x00" in text:
            break
        if text.encode(candidate) == body:
            return text, candidate, bom
    what = f"{encoding.upper()} text, as its byte-order mark says" if encoding else "UTF-8 or Windows-1252 text"
    nul = " (it has NUL bytes)" if b"\0" in body else ""
    raise SidecarRefused(f"{abs_path} cannot be read whole: it is not {what}{nul}; nothing was written",
                         hint="save it as UTF-8 text")


# ----------------------------------------------------------------------------------- the header's lines
@dataclass
class _Header:
    style: str  # "sigal", "yaml", "toml", or "" when the file has none
    start: int  # index of the first line of the header's keys (after an opening fence)
    end: int  # index after the last line of the header's keys (a closing fence, or the blank line)
    spans: list[tuple[str, int, int]]  # (lower-cased key, first line, line after its last) in file order


def _split(text: str) -> tuple[list[str], list[str]]:
    """The file's lines as (contents without their line break, their line breaks), as the reader splits them."""
    contents, endings = [], []
    for line in text.splitlines(keepends=True):
        m = _ENDING.search(line)
        ending = m.group() if m else ""
        contents.append(line[: len(line) - len(ending)])
        endings.append(ending)
    return contents, endings


def _find_header(view: list[str], abs_path: str) -> _Header:
    """Where the header's keys are, read as scan.sidecar reads them; raises SidecarRefused when the header
    is not read whole."""
    first = 0
    while first < len(view) and view[first].strip(" \t") == "":
        first += 1
    if first == len(view):
        return _Header("", 0, 0, [])
    fence = _OPENING_FENCE.match(view[first] + "\n")
    if fence:
        kind = fence.group(1)
        close = next((i for i in range(first + 1, len(view)) if _CLOSING_FENCE[kind].match(view[i])), None)
        if close is None:
            raise SidecarRefused(f"{abs_path}: the '{kind}' on line {first + 1} that opens the header is never closed; "
                                 "nothing was written", hint=f"close the header with a '{kind}' line")
        style = "yaml" if kind == "---" else "toml"
        spans = (_yaml_spans if style == "yaml" else _toml_spans)(view, first + 1, close, abs_path)
        return _Header(style, first + 1, close, spans)
    spans: list[tuple[str, int, int]] = []
    i = first
    while i < len(view) and view[i].strip():
        m = _META_LINE.match(view[i])
        if m:
            spans.append((m.group(1).lower(), i, i + 1))
        elif _CONTINUATION.match(view[i]) and spans:
            key, start, _ = spans[-1]
            spans[-1] = (key, start, i + 1)
        elif not spans:
            return _Header("", first, first, [])  # no header: the text is all body
        else:
            raise SidecarRefused(
                f"{abs_path}: the header stops at line {i + 1}, which is not a 'Key: value' line; nothing was written",
                hint="end the header with a blank line before the text, or fix that line",
            )
        i += 1
    return _Header("sigal", first, i, spans)


_YAML_KEY = re.compile(r"""^(?:"([A-Za-z0-9_-]+)"|'([A-Za-z0-9_-]+)'|([A-Za-z0-9_-]+))[ \t]*:(?:[ \t]|$)""")


def _yaml_spans(view: list[str], start: int, end: int, abs_path: str) -> list[tuple[str, int, int]]:
    """Top-level keys of a YAML block: a key at the start of a line, with the lines after it that are
    indented, blank, or list items ('- ') under it. What else the block holds is left as it is (the
    read-back check refuses an edit that would change it)."""
    spans: list[tuple[str, int, int]] = []
    for i in range(start, end):
        line = view[i]
        m = _YAML_KEY.match(line)
        if m:
            spans.append(((m.group(1) or m.group(2) or m.group(3)).lower(), i, i + 1))
        elif spans and spans[-1][2] == i and (line[:1] in (" ", "\t") or not line.strip() or line.startswith("-")):
            key, first, _ = spans[-1]
            spans[-1] = (key, first, i + 1)
    return [_trim_blank(view, span) for span in spans]


def _trim_blank(view: list[str], span: tuple[str, int, int]) -> tuple[str, int, int]:
    """Blank lines after a value belong to no key."""
    key, first, last = span
    while last - 1 > first and not view[last - 1].strip():
        last -= 1
    return key, first, last


def _toml_spans(view: list[str], start: int, end: int, abs_path: str) -> list[tuple[str, int, int]]:
    """Top-level keys of a TOML block (before its first [table]): each key's value ends on the first line
    from which the lines so far read as TOML."""
    spans: list[tuple[str, int, int]] = []
    i = start
    while i < end:
        line = view[i].strip()
        if not line or line.startswith("#"):
            i += 1
            continue
        if line.startswith("["):
            break  # a table: what follows is not top-level
        for j in range(i + 1, end + 1):
            try:
                data = tomllib.loads("\n".join(view[i:j]))
            except tomllib.TOMLDecodeError:
                continue
            if len(data) == 1:
                spans.append((next(iter(data)).lower(), i, j))
                i = j
                break
        else:
            raise SidecarRefused(f"{abs_path}: line {i + 1} of the TOML header does not read as one key; nothing was written")
    return spans


# ----------------------------------------------------------------------------------- values as text
def _yaml_lines(key: str, value: str) -> list[str]:
    """'key: value' as YAML lines: plain when it reads back as the same text, a literal block for several
    lines, else double-quoted with escapes."""
    import yaml

    loader = _front_matter_loader()

    def reads_back(lines: list[str]) -> bool:
        try:
            return yaml.load("\n".join(lines) + "\n", Loader=loader) == {key: value}
        except yaml.YAMLError:
            return False

    if key.lower() in _BOOLEAN_KEYS and value.lower() in ("true", "false"):
        return [f"{key}: {value.lower()}"]
    if "\n" not in value:
        candidate = [f"{key}: {value}"]
        if reads_back(candidate):
            return candidate
    else:
        candidate = [f"{key}: |-"] + [f"  {line}" if line else "" for line in value.split("\n")]
        if reads_back(candidate):
            return candidate
    return [f"{key}: {toml_string(value)}"]  # TOML's quoted forms ('...' or "..." with escapes) are YAML's too


def _toml_lines(key: str, value: str) -> list[str]:
    if key.lower() in _BOOLEAN_KEYS and value.lower() in ("true", "false"):
        return [f"{key} = {value.lower()}"]
    return [f"{key} = {toml_value(value)}"]


def _kept_comment(line: str, style: str) -> str:
    """The comment at the end of a one-line YAML or TOML value ('  # why'), to keep on the new line."""
    for m in re.finditer(r"[ \t]+#", line):
        head = line[: m.start()]
        try:
            if style == "yaml":
                import yaml

                same = yaml.load(head, Loader=_front_matter_loader()) == yaml.load(line, Loader=_front_matter_loader())
            else:
                same = tomllib.loads(head) == tomllib.loads(line)
        except Exception:  # a '#' inside the value: not where the comment starts
            continue
        if same:
            return line[m.start():]
    return ""


# ------------------------------------------------------------------------------------------- the edit
def plan_set_meta(path: str, assignments: list[tuple[str, str]]) -> SidecarEdit:
    """The edit that sets (or, with '', removes) each key in the sidecar of path; nothing is written."""
    abs_path, describes, notes = find_sidecar(path)
    try:
        raw, st = _read_exact(abs_path)
    except FileNotFoundError:
        raw, st = None, None
    if raw is None:
        text, encoding, bom = "", "utf-8", b""
    else:
        text, encoding, bom = _decode_exact(raw, abs_path)
    before_meta, before_body = _reader_view(raw, abs_path) if raw is not None else ({}, "")
    contents, endings = _split(text)
    view = [c.replace("\ufeff", "") for c in contents]
    header = _find_header(view, abs_path)
    newline = next((e for e in endings if e), "\n")
    if header.style == "":
        new_contents, new_endings, changes = _new_header(contents, endings, header, assignments, newline)
    else:
        new_contents, new_endings, changes = _edit_header(contents, endings, view, header, assignments, newline, abs_path)
    new_text = "".join(c + e for c, e in zip(new_contents, new_endings, strict=True))
    try:
        new = bom + new_text.encode(encoding)
    except UnicodeEncodeError as exc:
        raise SidecarRefused(f"{abs_path} is {encoding} text, which cannot hold {new_text[exc.start:exc.end]!r}; "
                             "nothing was written", hint="save it as UTF-8, then run set-meta again") from None
    edit = SidecarEdit(abs_path, describes, raw, new, text, new_text, encoding, changes, notes, st)
    if edit.changed:
        _check(edit, assignments, before_meta, before_body)
    return edit


def _reader_view(raw: bytes, abs_path: str) -> tuple[dict, str]:
    """The sidecar as the scanner reads it: (meta, body); refused when the reader has anything to say."""
    text, _doubt = decode_text(raw, abs_path)
    notes: list[str] = []
    meta, body = parse_sidecar_text(clean_text(text), os.path.basename(abs_path), notes)
    if notes:
        raise SidecarRefused(f"{notes[0]}; nothing was written", hint="fix the header by hand first")
    return meta, body


def _new_header(contents, endings, header, assignments, newline):
    """A file without a header (or a new file) gets one at the top: Sigal's `Key: value` lines, or YAML
    front matter when a value has several lines (which a `Key: value` line cannot hold)."""
    setting = [(k, v) for k, v in assignments if v]
    changes = [f"{k} set" for k, _ in setting]
    if not setting:
        return contents, endings, []
    if any("\n" in v for _, v in setting):
        lines = ["---"] + [line for k, v in setting for line in _yaml_lines(k.lower(), v)] + ["---"]
    else:
        lines = [f"{k.capitalize()}: {v}" for k, v in setting]
        if contents:
            lines.append("")  # the blank line that ends the header
    return lines + contents, [newline] * len(lines) + endings, changes


def _edit_header(contents, endings, view, header, assignments, newline, abs_path):
    """The lines of the keys set are replaced (the first, when a key is there twice: the others go), those
    of the keys removed go, new keys come after the header's last key; every other line stays as it is."""
    changes: list[str] = []
    replaced: dict[int, tuple[int, list[str]]] = {}  # first line of a key -> (the line after it, new lines)
    gone: set[int] = set()
    added: list[str] = []
    lower_case = header.style != "sigal" or any(view[i].lstrip()[:1].islower() for _, i, _ in header.spans)
    for key, value in assignments:
        spans = [s for s in header.spans if s[0] == key.lower()]
        if "\n" in value and header.style == "sigal":
            raise SidecarRefused(
                f"{abs_path}: the value of {key!r} has several lines, which a 'Key: value' header cannot hold; "
                "nothing was written", hint="write the header as YAML between two '---' lines, or give one line")
        for _, first, last in spans[1:] if value else spans:
            gone.update(range(first, last))
        if value and spans:
            _, first, last = spans[0]
            replaced[first] = (last, _value_lines(header.style, view[first], key, value, last - first))
        elif value:
            added += _value_lines(header.style, "", key.lower() if lower_case else key.capitalize(), value, 0)
        if value or spans:
            changes.append(f"{key} {'set' if value else 'removed'}")
    kept = [s for s in header.spans if s[1] not in gone]
    if header.style == "sigal" and not kept and not added and header.end < len(view):
        gone.add(header.end)  # no key left: the blank line that ended the header goes too
    insert_at = header.spans[-1][2] if header.spans else header.start
    out_c: list[str] = []
    out_e: list[str] = []
    i = 0
    while i <= len(contents):
        if i == insert_at and added:
            if out_e and not out_e[-1]:
                out_e[-1] = newline  # the line before ended the file without a line break
            out_c += added
            out_e += [newline] * len(added)
        if i == len(contents):
            break
        if i in replaced:
            last, lines = replaced[i]
            out_c += lines
            out_e += [newline] * (len(lines) - 1) + [endings[last - 1]]
            i = last
            continue
        if i not in gone:
            out_c.append(contents[i])
            out_e.append(endings[i])
        i += 1
    return out_c, out_e, changes


_TOML_KEY = re.compile(r"""^\s*(?:"([A-Za-z0-9_-]+)"|'([A-Za-z0-9_-]+)'|([A-Za-z0-9_-]+))""")


def _value_lines(style: str, old_line: str, key: str, value: str, old_span: int) -> list[str]:
    """The new lines of one key: spelled as the old line spells it; for Sigal's header, the old line's
    text up to the value kept; for a one-line YAML or TOML value, its comment kept."""
    if style == "sigal":
        m = re.match(r"^( {0,3}[A-Za-z0-9_-]+[ \t]*:[ \t]*)", old_line)
        if m:
            return [m.group(1) + value if m.group(1)[-1] in " \t" else f"{m.group(1)} {value}"]
        return [f"{key}: {value}"]
    m = (_YAML_KEY if style == "yaml" else _TOML_KEY).match(old_line)
    if m:
        key = m.group(1) or m.group(2) or m.group(3)
    lines = _yaml_lines(key, value) if style == "yaml" else _toml_lines(key, value)
    if old_line and old_span == 1 and len(lines) == 1:
        lines[0] += _kept_comment(old_line, style)
    return lines


def _check(edit: SidecarEdit, assignments: list[tuple[str, str]], before: dict, before_body: str) -> None:
    """The new text, read by the scanner's reader: what was asked, and nothing else changed."""
    text, _doubt = decode_text(edit.new, edit.abs_path)
    notes: list[str] = []
    after, after_body = parse_sidecar_text(clean_text(text), os.path.basename(edit.abs_path), notes)
    asked = {k.lower(): v for k, v in assignments}
    problems = list(notes)
    for key, value in asked.items():
        if not value and key in after:
            problems.append(f"{key} would still be read")
        elif value and key in _BOOLEAN_KEYS:
            if meta_bool(after, key) != meta_bool({key: value}, key):
                problems.append(f"{key} would read {after.get(key)!r}")
        elif value and meta_text(after, key) != value:
            problems.append(f"{key} would read {meta_text(after, key)!r}, not {value!r}")
    for key in (set(before) | set(after)) - set(asked):
        if before.get(key) != after.get(key):
            problems.append(f"{key} would change too ({before.get(key)!r} -> {after.get(key)!r})")
    if after_body.lstrip("\n") != before_body.lstrip("\n"):
        problems.append("its text (the body) would change too")
    if "private" not in asked and marks_private(after) != marks_private(before):
        problems.append("whether it marks its album private would change")
    if problems:
        raise SidecarRefused(
            f"{edit.abs_path}: cannot make this change safely: {'; '.join(problems)}; nothing was written",
            hint="edit the file by hand",
        )


# ------------------------------------------------------------------------------------------ showing
def diff(edit: SidecarEdit) -> str:
    """The change as a unified diff of the text (line breaks shown as '\\n'; what is kept is said)."""
    old = [line.replace("\ufeff", "") for line in _split(edit.old_text)[0]]
    new = [line.replace("\ufeff", "") for line in _split(edit.new_text)[0]]
    name = edit.abs_path
    lines = list(difflib.unified_diff(old, new, "/dev/null" if edit.old is None else name, name, lineterm=""))
    kept = _kept_form(edit)
    return "\n".join(lines + ([f"(kept: {kept})"] if kept else []))


def _kept_form(edit: SidecarEdit) -> str:
    if edit.old is None:
        return ""
    parts = []
    _, endings = _split(edit.old_text)
    kinds = {e for e in endings if e}
    names = {"\r\n": "CRLF", "\r": "CR", "\n": "LF"}
    if kinds - {"\n"}:
        parts.append(" and ".join(sorted(names.get(k, repr(k)) for k in kinds)) + " line endings")
    bom = next((name for mark, name in _BOMS if edit.old.startswith(mark)), None)
    if bom or edit.encoding != "utf-8":
        parts.append(f"{(bom or edit.encoding).upper()} text" + (" with a byte-order mark" if bom else ""))
    return ", ".join(parts)


# ------------------------------------------------------------------------------------------- writing
def write_sidecar(edit: SidecarEdit) -> None:
    """Write the new bytes atomically: a temporary file in the same folder (with the old file's mode, or
    a new file's usual one), then a rename over the old file, or a link to the new name that fails if a
    file of that name appeared meanwhile. A sidecar changed since it was read is left as it is."""
    folder, name = os.path.split(edit.abs_path)
    tmp = os.path.join(folder, f"{TMP_PREFIX}{os.getpid()}-{os.urandom(4).hex()}-{name[:40]}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)  # the umask applies
    try:
        try:
            view = memoryview(edit.new)
            while view:
                view = view[os.write(fd, view):]
            if edit.old_stat is not None:
                os.fchmod(fd, stat.S_IMODE(edit.old_stat.st_mode))
                try:
                    os.fchown(fd, edit.old_stat.st_uid, edit.old_stat.st_gid)
                except OSError:  # not ours to give: the new file is this user's
                    pass
            os.fsync(fd)
        finally:
            os.close(fd)
        _still_as_read(edit)
        if edit.old_stat is not None:
            os.replace(tmp, edit.abs_path)
        else:
            try:
                os.link(tmp, edit.abs_path)  # fails if the name exists: nothing is replaced
            except FileExistsError:
                raise SidecarRefused(f"{edit.abs_path} appeared while set-meta ran; it was left as it is") from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EXDEV):
                    raise
                os.replace(tmp, edit.abs_path)  # a file system without hard links
            else:
                os.unlink(tmp)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _still_as_read(edit: SidecarEdit) -> None:
    try:
        st = os.lstat(edit.abs_path)
    except FileNotFoundError:
        st = None
    before = edit.old_stat
    if before is None and st is None:
        return
    if before is None or st is None or (st.st_ino, st.st_size, st.st_mtime_ns) != (before.st_ino, before.st_size, before.st_mtime_ns):
        raise SidecarRefused(f"{edit.abs_path} changed while set-meta ran; it was left as it is", hint="run set-meta again")
