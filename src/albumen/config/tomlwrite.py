"""TOML written by hand, for the files Albumen writes with comments (an imported albumen.toml, a
sidecar's front matter): values are turned into TOML text here, and the caller checks that tomllib
reads them back as meant."""

from __future__ import annotations

import math
import re
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_key(key: str) -> str:
    """A key, quoted only when it is not a bare key."""
    return key if _BARE_KEY.match(key) else toml_string(key)


def toml_string(text: str) -> str:
    """A TOML string: a literal one ('...') when it has backslashes and nothing a literal string cannot
    hold (regular expressions read as written), else a basic one with escapes."""
    if "\\" in text and "'" not in text and text.isprintable():
        return f"'{text}'"  # a literal string: regular expressions read as written
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif not ch.isprintable() and ch != " ":
            out.append(f"\\u{ord(ch):04X}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_value(value: Any, nested: bool = False) -> str:
    """A value as TOML. A list of tables spans lines, one table a line."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(str(k))} = {toml_value(v, True)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, dict) for v in value) and not nested:
            return "[\n" + "".join(f"    {toml_value(v, True)},\n" for v in value) + "]"
        return "[" + ", ".join(toml_value(v, True) for v in value) + "]"
    raise TypeError(f"no TOML form for {value!r}")
