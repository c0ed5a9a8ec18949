"""Markdown sidecars, compatible with Sigal galleries.

Header styles read: Sigal's (Python-Markdown meta) `Key: value` lines at the top,
ended by a blank line, a YAML front-matter block between `---` lines, and a TOML
one between `+++` lines (Hugo's). Blank lines before the header and spaces after a
fence or before a colon are allowed. A `private` mark in a header that is not read
whole keeps the item private (see parse_sidecar_text).
The body is Markdown rendered to HTML. Raw HTML in it (Sigal renders it, and Sigal galleries
use it for links and emphasis) is kept only through a sanitizer (nh3, the binding of Rust's
Ammonia) with a short allow-list: text markup, lists, tables, links to http(s) and mailto
addresses or to relative paths, and images by relative path. Script, styles, event handlers,
frames, forms and any other URL scheme are removed. Relative links and images are resolved when
pages are rendered (render.richtext): an image is shown only when it names a published photo of
the album.
"""

from __future__ import annotations

import codecs
import errno
import re
import unicodedata
from functools import lru_cache

from ..errors import first_line
from ..fsutil import open_regular
from ..model import Sidecar

_META_LINE = re.compile(r"^ {0,3}([A-Za-z0-9_-]+)[ \t]*:\s*(.*)$")  # indented up to 3 spaces, as Python-Markdown reads
_MAX_TEXT = 10_000  # a header value turned into text is cut here (a title, a list of tags)
_CONTINUATION = re.compile(r"^(?: {4,}|\t)(.*)$")
_MAX_SIDECAR_BYTES = 1 << 20


@lru_cache(maxsize=1)
def _markdown():
    # imported here, as yaml below: worker processes import this module for clean_text only
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True, "linkify": False, "typographer": True}).enable(
        ["table", "strikethrough", "replacements", "smartquotes"]
    )


# What a description may hold once sanitized. Attributes not listed go (style, on*, id, class, srcset,
# target, rel: external links get rel="noopener nofollow" when pages are rendered).
ALLOWED_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "cite", "code", "dd", "del", "dl", "dt", "em", "h1", "h2", "h3", "h4",
    "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "small", "span",
    "strong", "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul",
})
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "abbr": {"title"}, "ol": {"start"}}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
# removed with everything inside them (other tags not allowed go, their text stays): the text of a
# frame, a <noscript> or an SVG is not prose, and shown as text it would read as markup
_DROPPED_WHOLE = frozenset({
    "script", "style", "iframe", "frame", "frameset", "noscript", "noembed", "noframes", "object", "embed",
    "template", "svg", "math", "textarea", "select", "title", "xmp", "plaintext", "head",
})


@lru_cache(maxsize=1)
def _cleaner():
    import nh3

    return nh3.Cleaner(
        tags=set(ALLOWED_TAGS), attributes={k: set(v) for k, v in ALLOWED_ATTRIBUTES.items()},
        url_schemes=set(URL_SCHEMES), link_rel=None, strip_comments=True, clean_content_tags=set(_DROPPED_WHOLE),
    )


def sanitize_html(html: str) -> str:
    """HTML reduced to the allow-list above (nh3/Ammonia: parsed as a browser would, then rebuilt)."""
    return _cleaner().clean(html)


_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def clean_text(text: str) -> str:
    """Without the characters HTML and XML cannot carry (control codes, lone surrogates)."""
    return _ILLEGAL.sub("", text)


def render_markdown(text: str) -> str:
    """A sidecar's Markdown body as sanitized HTML (raw HTML in it included, see sanitize_html)."""
    return sanitize_html(_markdown().render(text)).strip() if text.strip() else ""


def read_sidecar(abs_path: str, src_uri: str) -> tuple[Sidecar, list[str]]:
    """Parse one sidecar file. Returns the sidecar and any problems worth a warning. Raises OSError
    when it cannot be read, NotText included."""
    notes: list[str] = []
    with open_regular(abs_path) as f:  # a FIFO would make the build wait forever
        raw = f.read(_MAX_SIDECAR_BYTES + 1)
    cut = len(raw) > _MAX_SIDECAR_BYTES
    if cut:
        notes.append(f"{src_uri}: sidecar larger than 1 MiB, only its first 1 MiB is read")
        raw = raw[:_MAX_SIDECAR_BYTES]
    decoded, doubt = decode_text(raw, abs_path, cut)
    if doubt:
        notes.append(f"{src_uri}: {doubt}")
    meta, body = parse_sidecar_text(clean_text(decoded), src_uri, notes)
    _check_date(meta, src_uri, notes)
    return Sidecar(src_uri=src_uri, meta=meta, body_html=render_markdown(body)), notes


class NotText(OSError):
    """A file read as text (a sidecar, a .nomedia) that has NUL bytes: UTF-16 or UTF-32 without a
    byte-order mark, or not text at all. What it says cannot be known, so it is refused as an
    unreadable file is (an album's index.md then keeps its album private)."""


_BOMS = (  # UTF-32 LE's begins with UTF-16 LE's: looked for first
    (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# every line break of Python's str.splitlines, which YAML (\r, NEL, U+2028, U+2029) and CommonMark (\r)
# read as line breaks too: one kind, so that no reader of the text sees a line another does not
_LINE_BREAKS = re.compile("\r\n?|[\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")


def decode_text(raw: bytes, abs_path: str = "", cut: bool = False) -> tuple[str, str | None]:
    r"""(the text of a sidecar or .nomedia file, a doubt about its encoding worth a warning, or None).

    Decoded by its byte-order mark (UTF-8, UTF-16 or UTF-32, as Windows editors and PowerShell
    write them) when it has one, else as UTF-8, else as Windows-1252; with '\n' for every kind of
    line break (\r\n, an old Mac's lone \r, NEL, U+2028...) and without byte-order marks (one left in
    the text by joined files hides the line it starts). cut: raw is the first part of a longer file
    (a character cut at its end is dropped). Raises NotText when the text has NUL bytes."""
    encoding = None
    for bom, name in _BOMS:
        if raw.startswith(bom):
            raw, encoding = raw[len(bom) :], name
            break
    doubt = None
    try:
        text = _decode(raw, encoding or "utf-8", cut)
    except UnicodeDecodeError:
        if encoding:
            text = raw.decode(encoding, errors="replace")
            doubt = f"not valid {encoding.upper()} text, although it starts with that byte-order mark; what is not is shown as \ufffd"
        else:  # most likely saved by an older Windows editor
            text = raw.decode("cp1252", errors="replace")
            doubt = "not UTF-8 text; read as Windows-1252 (save it as UTF-8 to be sure)"
    if "\x00" in text:
        raise NotText(errno.EILSEQ, "NUL bytes in it: UTF-16 without a byte-order mark, or not text; save it as UTF-8",
                      abs_path)
    return _LINE_BREAKS.sub("\n", text).replace("\ufeff", ""), doubt


def _decode(raw: bytes, encoding: str, cut: bool) -> str:
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        if cut and exc.start >= len(raw) - 3:  # the cut split a character
            return raw[: exc.start].decode(encoding)
        raise


def _check_date(meta: dict, src_uri: str, notes: list[str]) -> None:
    """A date that cannot be read is dropped with a warning, so the photo's own date is used instead."""
    from .dates import parse_date_value

    value = meta.get("date")
    if value is None or (isinstance(value, str) and not value.strip()):
        return
    if parse_date_value(value) is None:
        shown = clean_text(_bounded_text(value, 60))
        notes.append(
            f"{src_uri}: date {shown!r} is not a date (write it as 2024-07-01 or 2024-07-01 14:30); ignored"
        )
        del meta["date"]


def parse_sidecar_text(text: str, src_uri: str = "", notes: list[str] | None = None) -> tuple[dict, str]:
    """Split a sidecar into (header keys, Markdown body). Keys are lower-cased.

    Privacy fails closed: when no header is read, or the header stops before the text does (a '---'
    never closed, a line that is not `Key: value`), a line of the first 50 that reads like
    `private: true` keeps the item private, with a warning. Once a header is read whole (closed by
    its fence, or by a blank line), the body is prose: `private: true` there is text, not a mark."""
    notes = notes if notes is not None else []
    meta, body, unsure = _read_header(text, src_uri, notes)
    if unsure and meta_bool(meta, "private") is not True:
        mark = _private_mark(text)
        if mark:
            number, line = mark
            notes.append(
                f"{src_uri}: line {number} ({line.strip()!r}) is not read as a header line ({unsure}); "
                "kept private to be safe. Fix the header: 'Key: value' lines at the very top, ended by a "
                "blank line, or YAML between two '---' lines"
            )
            meta["private"] = True
    return meta, body


_LEADING_BLANK_LINES = re.compile(r"(?:[ \t]*\n)*")
_OPENING_FENCE = re.compile(r"(---|\+\+\+)[ \t]*(?:\n|$)")
_CLOSING_FENCE = {"---": re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE), "+++": re.compile(r"^\+\+\+[ \t]*$", re.MULTILINE)}
_PRIVATE_MENTION = re.compile(r"^\s*(?:-\s+)?[\"']?private[\"']?\s*[:=]", re.IGNORECASE | re.MULTILINE)
_PRIVATE_LINE = re.compile(r"""^\s*(?:-\s+)?["']?private["']?\s*[:=]\s*["']?([^\s"'#]*)["']?\s*(?:#.*)?$""", re.IGNORECASE)
_SCANNED_LINES = 50


def _read_header(text: str, src_uri: str, notes: list[str]) -> tuple[dict, str, str | None]:
    """(meta, body, why the header may not have been read whole, or None)."""
    rest = text[_LEADING_BLANK_LINES.match(text).end() :]
    fence = _OPENING_FENCE.match(rest)
    if fence is None:
        meta, body, stop = _parse_meta_lines(rest)
        if not meta:
            return {}, text, "no header is read"
        if stop is not None:
            return meta, body, f"the header stops at line {stop}, which is not a 'Key: value' line"
        return meta, body, None
    after = rest[fence.end() :]
    kind = fence.group(1)
    end = _CLOSING_FENCE[kind].search(after)
    if end is None:
        return {}, text, f"the '{kind}' that opens the header is never closed by a '{kind}' line"
    block, body = after[: end.start()], after[end.end() :]
    language = "YAML" if kind == "---" else "TOML"
    try:
        if kind == "---":
            import yaml

            data = yaml.load(block, Loader=_front_matter_loader())
        else:
            import tomllib

            data = tomllib.loads(block)
    except Exception as exc:  # a YAMLError or TOMLDecodeError, or a value yaml itself cannot build
        notes.append(f"{src_uri}: invalid {language} front matter ignored ({_first_line(exc)})")
        data = None
    if data is not None and not isinstance(data, dict):
        notes.append(f"{src_uri}: {language} front matter is not a set of keys; ignored")
        data = None
    if data is None and _PRIVATE_MENTION.search(_visible(block)):
        data = {"private": "unreadable"}  # fail closed: a broken header that mentions privacy hides
    meta = {_visible(str(k)).strip().lower(): v for k, v in (data or {}).items()}
    return meta, body.lstrip("\n"), None


def _private_mark(text: str) -> tuple[int, str] | None:
    """(line number, line) of the first of the first lines that reads like a private mark that is
    not false (`private: true`, `Private : yes`, `private = true`, `"private": 1`, `private: family`)."""
    for number, line in enumerate(text.split("\n", _SCANNED_LINES)[:_SCANNED_LINES], start=1):
        m = _PRIVATE_LINE.match(_visible(line))
        if m and meta_bool({"private": m.group(1)}, "private") is not False:
            return number, line
    return None


def _visible(text: str) -> str:
    r"""text without invisible format characters (zero-width spaces and joiners, soft hyphens,
    direction marks: what a copy from a web page or a chat leaves in): '\u200bprivate: true' is a
    private mark to a reader, and to the private checks. For keys and those checks only: a value
    keeps them (a joiner is part of an emoji)."""
    return "".join(c for c in text if c.isascii() or unicodedata.category(c) != "Cf")


@lru_cache(maxsize=1)
def _front_matter_loader():
    """yaml's SafeLoader, except that dates stay text: `date: 2024-02-30` is then a warning about
    that one key (see _check_date) instead of an error for the whole header; and aliases (`*name`)
    are refused. SafeLoader keeps an alias as a reference to its anchor's value, so a few hundred
    bytes of nested aliases (a "billion laughs") make a value that is gigabytes once turned into
    text. A header has no use for them: one with an alias is an unreadable header."""
    import yaml

    class FrontMatterLoader(yaml.SafeLoader):
        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.composer.ComposerError(
                    None, None, f"aliases (*{event.anchor}) are not allowed in a sidecar header", event.start_mark
                )
            return super().compose_node(parent, index)

    FrontMatterLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    return FrontMatterLoader


def _parse_meta_lines(text: str) -> tuple[dict, str, int | None]:
    """Sigal's `Key: value` lines -> (meta, body, the line number that stopped them if it was not
    blank and not the end: the header may go on past it)."""
    lines = text.split("\n")
    meta: dict = {}
    key = None
    stop = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            break
        m = _META_LINE.match(line)
        cont = _CONTINUATION.match(line)
        if m:
            key = m.group(1).lower()
            meta[key] = m.group(2).strip()
        elif cont and key is not None:
            previous = meta[key]
            values = previous if isinstance(previous, list) else [previous]
            meta[key] = [*values, cont.group(1).strip()]
        else:
            stop = i + 1
            break
        i += 1
    else:
        i = len(lines)
    if not meta:
        return {}, text, stop
    return meta, "\n".join(lines[i:]), stop


def _first_line(exc: Exception) -> str:
    return first_line(exc) or type(exc).__name__


def _bounded_text(value, limit: int = _MAX_TEXT) -> str:
    """A header value as text, cut at limit characters, without ever building more than that: a
    list is joined item by item (YAML aliases are refused when reading, and this stays cheap anyway)."""
    if isinstance(value, list):
        out: list[str] = []
        size = 0
        for item in value:
            if size >= limit:
                break
            part = _bounded_text(item, limit - size)
            out.append(part)
            size += len(part) + 1
        return " ".join(out)[:limit]
    if isinstance(value, str):
        return value[:limit]
    return str(value)[:limit]


def meta_text(meta: dict, key: str) -> str | None:
    """A header value as one string ('' and missing give None)."""
    value = meta.get(key)
    if value is None:
        return None
    text = clean_text(_bounded_text(value)).strip()
    return text or None


def meta_list(meta: dict, key: str) -> tuple[str, ...]:
    """A header value as a list: YAML lists, or comma-separated text."""
    value = meta.get(key)
    if value is None:
        return ()
    items = value[:1000] if isinstance(value, list) else [value]
    parts = (clean_text(part).strip() for item in items for part in _bounded_text(item).split(","))
    return tuple(dict.fromkeys(p for p in parts if p))


def marks_private(meta: dict) -> bool:
    """Whether a header marks its item private: `private` given and not false (an unclear value counts)."""
    return "private" in meta and meta_bool(meta, "private") is not False


def meta_bool(meta: dict, key: str) -> bool | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    text = _bounded_text(value, 100).split("#", 1)[0].strip().lower()  # Sigal headers may carry a comment
    if text in ("true", "yes", "y", "1", "on"):
        return True
    if text in ("false", "no", "n", "0", "off", ""):
        return False
    return None
