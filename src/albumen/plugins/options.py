"""A plugin's options: checked against the schema the plugin declares, with the core settings' checks
and messages (every problem at once), the files its path options name (resolved against the config's
folder, confined when declared so), and their digest, the part of the plugin's recipe they make.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..config.load import _INVALID as _BAD_VALUE
from ..config.load import _check
from ..config.load import _unknown as _unknown_key
from ..errors import described
from .types import OptionsError

INVALID = object()  # options that did not pass: the plugin is not loaded (the problems say why)
_SAME = object()


def check_options(name: str, schema: Any, table: dict, folders: tuple[Path, Path | None], problems: list[str]) -> Any:
    """A plugin's options from its [plugin.NAME] table, checked against the schema it declares (see
    hookspecs.albumen_options), every problem added to problems: the options (an instance of the
    schema), None for a plugin without options, or INVALID. folders: the config's folder, which paths
    are relative to, and the photo folder the config names (or None), the two places a path option
    declared inside=True may lead to."""
    base_dir = folders[0]
    prefix = f"plugin.{name}"
    if schema is None:
        for key in table:
            problems.append(f"{prefix}.{key}: the plugin {name!r} has no options")
        return INVALID if table else None
    if not (isinstance(schema, type) and dataclasses.is_dataclass(schema) and schema.__dataclass_params__.frozen):
        problems.append(f"plugins: {name!r}: albumen_options() must return a frozen dataclass, not {schema!r}")
        return INVALID
    fields = {f.name: f for f in dataclasses.fields(schema)}
    known = [f"{prefix}.{n}" for n in fields]
    values: dict[str, Any] = {}
    before = len(problems)
    for key, value in table.items():
        dotted = f"{prefix}.{key}"
        if key not in fields:
            problems.append(_unknown_key(dotted, known))
            continue
        checked = _check(dotted, fields[key], value, problems)
        if checked is not _BAD_VALUE:
            values[key] = checked
    for key, f in fields.items():  # paths: resolved against the config's folder, and must be files
        if f.metadata.get("kind") != "path":
            continue
        value = values.get(key, f.default)
        if isinstance(value, str) and value:
            resolved = (base_dir / Path(value).expanduser()).resolve()
            outside = _outside(resolved, folders) if f.metadata.get("inside") else None
            if outside:
                problems.append(f"{prefix}.{key}: {outside}")
            elif not resolved.is_file():
                problems.append(f"{prefix}.{key}: file not found: {resolved}")
            values[key] = str(resolved)
    if len(problems) > before:
        return INVALID
    try:
        return schema(**values)
    except OptionsError as exc:  # the plugin's own checks, every problem told
        problems.extend(f"{prefix}.{problem}" for problem in exc.problems)
        return INVALID
    except Exception as exc:  # noqa: BLE001 - the plugin's own checks (__post_init__)
        problems.append(f"{prefix}: {described(exc)}")
        return INVALID


def option_files(infos: Sequence[Any]) -> list[str]:
    """The files the plugins' path options name (read when the config is loaded: their content is part of
    the plugins' recipes), for a server to watch with the config."""
    files = []
    for info in infos:
        options = info.options
        for f in dataclasses.fields(options) if dataclasses.is_dataclass(options) else ():
            value = getattr(options, f.name)
            if f.metadata.get("kind") == "path" and isinstance(value, str) and value:
                files.append(value)
    return files


def _outside(resolved: Path, folders: tuple[Path, Path | None]) -> str | None:
    """Why a path option declared inside=True may not be used: it leads (links followed, '..' taken)
    out of the config's folder and the photo folder. None when it may."""
    for folder in folders:
        if folder is not None:
            root = folder.resolve()
            if resolved == root or root in resolved.parents:
                return None
    where = "the config's folder" + (" or the photo folder" if folders[1] is not None else "")
    return f"{resolved} is outside {where} ({', '.join(str(f.resolve()) for f in folders if f is not None)})"


def digest(options: Any, files_of: Any = _SAME) -> str:
    """The options as stable text (JSON), and the content of each file a 'path' option of files_of (by
    default the options themselves: a plugin's options) names: a new watermark image is a new recipe.
    A file counts by its content, never by where it is: wherever it is found on the options' values, its
    (absolute) path is replaced by the content's digest, so that the same gallery built from another
    folder or on another machine gives the same names."""
    files_of = options if files_of is _SAME else files_of
    if options is None and files_of is None:
        return "-"
    files: dict[str, str] = {}
    for f in dataclasses.fields(files_of) if dataclasses.is_dataclass(files_of) else ():
        value = getattr(files_of, f.name)
        if f.metadata.get("kind") == "path" and isinstance(value, str) and value:
            try:
                with open(value, "rb") as file:
                    files[value] = "file sha256:" + hashlib.file_digest(file, "sha256").hexdigest()
            except OSError:
                files[value] = "file -"
    plain = dataclasses.asdict(options) if dataclasses.is_dataclass(options) else options
    h = hashlib.sha256(json.dumps(_by_content(plain, files), sort_keys=True, default=repr).encode())
    for value in sorted(files.values()):  # (also when the filter's options leave the path out)
        h.update(value.encode())
    return h.hexdigest()[:16]


def _by_content(value: Any, files: dict[str, str]) -> Any:
    if isinstance(value, str):
        return files.get(value, value)
    if isinstance(value, dict):
        return {k: _by_content(v, files) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_by_content(v, files) for v in value]
    return value
