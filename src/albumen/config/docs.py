"""Documentation generated from the setting declarations: the settings table and an annotated config.

Regenerate docs/SETTINGS.md with:  python -m albumen.config.docs > docs/SETTINGS.md
"""

from __future__ import annotations

import textwrap
from dataclasses import fields

from .schema import SECTIONS, iter_settings


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, int):
        return f"{value:_}" if value >= 100_000 else str(value)
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):  # a table: (key, value) pairs
        return "{ " + ", ".join(f"{_toml_value(k)} = {_toml_value(v)}" for k, v in value) + " }"
    if isinstance(value, tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _default(f) -> str:
    return "{}" if f.metadata.get("kind") in ("rotations", "passwords") else _toml_value(f.default)


def settings_markdown() -> str:
    lines = [
        "# Settings",
        "",
        "Every key of `albumen.toml`, its default and what it does. Generated from the code that",
        "validates them (`python -m albumen.config.docs > docs/SETTINGS.md`).",
        "",
        "| key | default | meaning |",
        "| --- | --- | --- |",
    ]
    for key, f in iter_settings():
        lines.append(_row(key, f))
    bundled = bundled_options()
    if bundled:
        lines += [
            "",
            "## Bundled plugins",
            "",
            "Turned on by name in `plugins`; each takes its options from its own table, `[plugin.NAME]`.",
            "How to write a plugin: [PLUGINS.md](PLUGINS.md).",
        ]
        for name, doc, schema in bundled:
            lines += ["", f"### {name}", "", doc, ""]
            if schema is None:
                lines.append("No options.")
                continue
            lines += ["| key | default | meaning |", "| --- | --- | --- |"]
            lines += [_row(f"plugin.{name}.{f.name}", f) for f in fields(schema)]
    return "\n".join(lines) + "\n"


def _row(key: str, f) -> str:
    doc = f.metadata.get("doc", "").replace("|", "\\|")
    choices = f.metadata.get("choices") or f.metadata.get("item_choices")
    if choices:
        doc += " Allowed: " + ", ".join(f"`{c}`" for c in choices) + "."
    return f"| `{key}` | `{_default(f)}` | {doc} |"


def bundled_options() -> list[tuple[str, str, type | None]]:
    """(name, first line of its docstring, options dataclass or None) of each bundled plugin."""
    import importlib

    from ..plugins.manager import BUNDLED

    out = []
    for name, target in sorted(BUNDLED.items()):
        module = importlib.import_module(target)
        schema = module.albumen_options() if hasattr(module, "albumen_options") else None
        doc = (module.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        out.append((name, doc, schema))
    return out


def annotated_toml() -> str:
    """Every setting with its default, commented out, under its section."""
    out = ["# albumen.toml: every setting with its default. Uncomment what you change.", ""]
    current = ""
    for key, f in iter_settings():
        section, _, name = key.rpartition(".")
        if section != current:
            current = section
            out += ["", f"[{section}]"]
            section_doc = SECTIONS[section].__doc__
            if section_doc and not section_doc.startswith(SECTIONS[section].__name__):
                out.append(f"# {section_doc.strip()}")
        for line in textwrap.wrap(f.metadata.get("doc", ""), 96):
            out.append(f"# {line}")
        out.append(f"# {name} = {_default(f)}")
        out.append("")
    for name, doc, schema in bundled_options():  # commented out whole: a table of a plugin not enabled is an error
        out += [f"# [plugin.{name}]"] + [f"# {line}" for line in textwrap.wrap(doc, 96)]
        for f in fields(schema) if schema is not None else ():
            out += [f"#   {line}" for line in textwrap.wrap(f.metadata.get("doc", ""), 94)]
            out.append(f"# {f.name} = {_default(f)}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(settings_markdown(), end="")
