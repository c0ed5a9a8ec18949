"""Find, read and validate `albumen.toml`, reporting every problem at once."""

from __future__ import annotations

import codecs
import difflib
import re
import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import ConfigError
from ..fsutil import open_regular
from .schema import SECTIONS, Config, iter_settings

CONFIG_NAME = "albumen.toml"
_SORT_RE = re.compile(r"^-?[A-Za-z_][A-Za-z0-9_-]*$")


@dataclass(frozen=True)
class LoadedConfig:
    """A validated configuration and where it came from (None: defaults only)."""

    config: Config
    path: Path | None

    @property
    def base_dir(self) -> Path:
        """Folder that relative paths in the config resolve against."""
        return self.path.parent if self.path else Path.cwd()

    def resolve(self, value: str) -> Path | None:
        """Resolve a path setting against the config's own folder; '' means unset."""
        if not value:
            return None
        return (self.base_dir / Path(value).expanduser()).resolve()


def find_config(explicit: str | Path | None, cwd: Path) -> Path | None:
    """The config file to use: the one given with -c, else ./albumen.toml if present."""
    if explicit is not None:
        return Path(explicit)
    candidate = cwd / CONFIG_NAME
    return candidate if candidate.exists() else None  # not a regular file: load_config says so


def load_config(explicit: str | Path | None = None, cwd: Path | None = None, overrides: dict | None = None) -> LoadedConfig:
    """Read and validate the config (if any) and apply command-line overrides (dotted keys)."""
    cwd = cwd or Path.cwd()
    path = find_config(explicit, cwd)
    data: dict[str, Any] = {}
    if path is not None:
        try:
            with open_regular(str(path)) as f:  # a FIFO would make the command wait forever
                raw = f.read()
        except FileNotFoundError:
            raise ConfigError([f"config file not found: {path}"], path=str(path)) from None
        except OSError as exc:
            raise ConfigError([f"cannot read config file: {exc.strerror}"], path=str(path)) from None
        try:
            data = tomllib.loads(_decode(raw))
        except UnicodeDecodeError:
            raise ConfigError(["the file is not UTF-8 text (save it as UTF-8)"], path=str(path)) from None
        except tomllib.TOMLDecodeError as exc:
            hint = ""
            if "Cannot declare ('plugins'" in str(exc):
                hint = " (a plugin's options go in a [plugin.NAME] table: 'plugin', not 'plugins')"
            raise ConfigError([f"invalid TOML: {exc}{hint}"], path=str(path)) from None
    for dotted, value in (overrides or {}).items():
        section, _, key = dotted.rpartition(".")
        target = data.setdefault(section, {}) if section else data
        target[key] = value
    config = validate_config(data, path=str(path) if path else None)
    return LoadedConfig(config=config, path=path.resolve() if path else None)


_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def _decode(raw: bytes) -> str:
    """TOML is UTF-8; a byte-order mark (Notepad's UTF-8 one, or PowerShell's UTF-16 for
    `... > albumen.toml`) says how the file was saved, and is not part of the text."""
    for bom, encoding in _BOMS:  # UTF-32 LE first: its mark starts with UTF-16 LE's
        if raw.startswith(bom):
            return raw[len(bom):].decode(encoding)
    return raw.decode("utf-8")


def validate_config(data: dict[str, Any], path: str | None = None) -> Config:
    """Turn a parsed TOML table into a Config, or raise ConfigError listing every problem."""
    problems: list[str] = []
    all_keys = [key for key, _ in iter_settings()]
    top_values: dict[str, Any] = {}
    section_values: dict[str, dict[str, Any]] = {name: {} for name in SECTIONS}
    top_fields = {f.name: f for f in fields(Config) if f.name not in SECTIONS and not f.metadata.get("internal")}

    if isinstance(data.get("theme"), str):  # the short form of [theme] path, the only one before [theme]
        data = {**data, "theme": {"path": data["theme"]}}
    for key, value in data.items():
        if key in ("plugins", "plugin"):
            continue  # below: the plugins' own schemas are known once they are loaded
        if key in SECTIONS:
            if not isinstance(value, dict):
                problems.append(f"{key}: expected a table ([{key}]), got {_describe(value)}")
                continue
            section_fields = {f.name: f for f in fields(SECTIONS[key])}
            for sub, subvalue in value.items():
                dotted = f"{key}.{sub}"
                if sub not in section_fields:
                    problems.append(_unknown(dotted, all_keys))
                    continue
                checked = _check(dotted, section_fields[sub], subvalue, problems)
                if checked is not _INVALID:
                    section_values[key][sub] = checked
        elif key in top_fields:
            checked = _check(key, top_fields[key], value, problems)
            if checked is not _INVALID:
                top_values[key] = checked
        else:
            problems.append(_unknown(key, all_keys))

    loaded_plugins = None
    if "plugins" in data or "plugin" in data:  # imported only then: a gallery without plugins loads nothing of them
        from ..plugins.manager import load_plugins

        base_dir = Path(path).resolve().parent if path else Path.cwd()
        source = data.get("source")
        source_dir = (base_dir / Path(source).expanduser()).resolve() if isinstance(source, str) and source else None
        names, loaded_plugins, more = load_plugins(data.get("plugins", []), data.get("plugin", {}), base_dir, source_dir)
        problems += more
        top_values["plugins"] = names
    if problems:
        raise ConfigError(problems, path=path)
    config = Config(**top_values)
    config = replace(config, **{name: SECTIONS[name](**values) for name, values in section_values.items() if values})
    return replace(config, loaded_plugins=loaded_plugins) if loaded_plugins else config


_INVALID = object()


def _unknown(dotted: str, known: list[str]) -> str:
    leaf = dotted.rpartition(".")[2]
    guesses = difflib.get_close_matches(dotted, known, n=1, cutoff=0.6)
    if not guesses:
        guesses = [k for k in known if k.rpartition(".")[2] == leaf]
    if not guesses:
        by_leaf = {k.rpartition(".")[2]: k for k in known}
        leaf_guess = difflib.get_close_matches(leaf, list(by_leaf), n=1, cutoff=0.7)
        guesses = [by_leaf[g] for g in leaf_guess]
    hint = f"; did you mean '{guesses[0]}'?" if guesses else ""
    return f"{dotted}: unknown setting{hint}"


def _describe(value: Any) -> str:
    kind = {bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "a table"}
    return f"{kind.get(type(value), type(value).__name__)} ({value!r})" if not isinstance(value, dict) else "a table"


def _check(key: str, f, value: Any, problems: list[str]) -> Any:
    """Validate one value against its declaration; record a problem and return _INVALID on failure."""
    rules = f.metadata
    default = f.default
    n_before = len(problems)

    def bad(expected: str) -> Any:
        problems.append(f"{key}: expected {expected}, got {_describe(value)}")
        return _INVALID

    if isinstance(default, bool):
        if not isinstance(value, bool):
            return bad("true or false")
    elif isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            return bad(_int_expectation(rules))
        if ("min" in rules and value < rules["min"]) or ("max" in rules and value > rules["max"]):
            return bad(_int_expectation(rules))
    elif isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return bad(_int_expectation(rules, "a number"))
        if ("min" in rules and value < rules["min"]) or ("max" in rules and value > rules["max"]):
            return bad(_int_expectation(rules, "a number"))
        value = float(value)
    elif isinstance(default, str):
        if not isinstance(value, str):
            return bad("a string" if "choices" not in rules else _choices(rules["choices"]))
        if "choices" in rules and value not in rules["choices"]:
            return bad(_choices(rules["choices"]))
        value = _check_kind(key, rules.get("kind"), value, problems)
    elif rules.get("kind") == "rotations":
        return _check_rotations(key, value, problems)
    elif rules.get("kind") == "passwords":
        return _check_passwords(key, value, problems)
    elif rules.get("kind") == "tables":
        return _check_tables(key, rules["item"], value, problems)
    elif isinstance(default, tuple):
        item_type = int if "int" in str(f.type) else str
        if not isinstance(value, list):
            return bad(f"a list of {'integers' if item_type is int else 'strings'}")
        for item in value:
            if item_type is int and (isinstance(item, bool) or not isinstance(item, int)):
                return bad("a list of integers")
            if item_type is str and not isinstance(item, str):
                return bad("a list of strings")
            if item_type is int and (("min" in rules and item < rules["min"]) or ("max" in rules and item > rules["max"])):
                return bad(f"a list of integers from {rules.get('min')} to {rules.get('max')}")
            if "item_choices" in rules and item not in rules["item_choices"]:
                problems.append(f"{key}: {item!r} is not one of {', '.join(rules['item_choices'])}")
                return _INVALID
        if item_type is int and not value:
            return bad("at least one size")
        if rules.get("kind") == "relpath":
            bad_items = [item for item in value if _bad_folder(item)]
            for item in bad_items:  # every one of them, not one per run
                problems.append(f"{key}: {item!r} must be a folder path inside the photo folder, relative to it")
            if bad_items:
                return _INVALID
            value = [album_path(item) for item in value]
        value = tuple(value)
    return _INVALID if len(problems) > n_before else value


def album_path(item: str) -> str:
    """An album's folder path as the model keys it: 'Trips/Family' for './Trips//Family/' or
    'Trips\\Family' ('.' segments, empty segments and backslashes do not name anything else).
    The one spelling rule of every setting and option that names an album (private,
    private_rotations, --force-album, links --rotate)."""
    return "/".join(part for part in item.replace("\\", "/").split("/") if part not in ("", "."))


def _bad_folder(item: str) -> bool:
    slashed = item.replace("\\", "/")
    return slashed.startswith(("/", "~")) or ".." in slashed.split("/") or not album_path(item)


def _check_rotations(key: str, value: Any, problems: list[str]) -> Any:
    """A table of album path -> how many times its private link was rotated (1 or more)."""
    if not isinstance(value, dict):
        problems.append(f'{key}: expected a table such as {{ "Holidays/Family" = 1 }}, got {_describe(value)}')
        return _INVALID
    out = []
    for album, count in value.items():
        if _bad_folder(album):
            problems.append(f"{key}: {album!r} must be a folder path inside the photo folder, relative to it")
        elif isinstance(count, bool) or not isinstance(count, int) or count < 0:
            problems.append(f"{key}.{album}: expected a count of rotations (0 or more), got {_describe(count)}")
        else:
            out.append((album_path(album), count))
    return tuple(sorted(out)) if len(out) == len(value) else _INVALID


def _check_passwords(key: str, value: Any, problems: list[str]) -> Any:
    """A table of album path -> password (never repeated in a message)."""
    if not isinstance(value, dict):
        problems.append(f'{key}: expected a table such as [passwords] "Holidays/Family" = "...", got {_describe(value)}'
                        if not isinstance(value, str) else f"{key}: expected a table of album paths and passwords")
        return _INVALID
    out = []
    for album, password in value.items():
        if _bad_folder(album):
            problems.append(f"{key}: {album!r} must be a folder path inside the photo folder, relative to it")
        elif not isinstance(password, str) or not password:
            problems.append(f"{key}.{album}: expected the password as a non-empty string")
        else:
            out.append((album_path(album), password))
    return tuple(sorted(out)) if len(out) == len(value) else _INVALID


def _check_tables(key: str, item: type, value: Any, problems: list[str]) -> Any:
    """A list of tables (a plugin's rules, say), each checked against `item`, a frozen dataclass of
    settings: a tuple of its instances. Tables are numbered from 1 in messages ('rules[1].pattern');
    what item's __post_init__ raises names its key when it starts with 'KEY: '."""
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        problems.append(f"{key}: expected a list of tables ([{{ ... }}, ...]), got {_describe(value)}")
        return _INVALID
    known = {f.name: f for f in fields(item)}
    before = len(problems)
    out = []
    for number, table in enumerate(value, start=1):
        where = f"{key}[{number}]"
        mine = len(problems)
        values = {}
        for sub, subvalue in table.items():
            if sub not in known:
                problems.append(_unknown(f"{where}.{sub}", [f"{where}.{k}" for k in known]))
                continue
            checked = _check(f"{where}.{sub}", known[sub], subvalue, problems)
            if checked is not _INVALID:
                values[sub] = checked
        problems.extend(f"{where}.{k}: required" for k, f in known.items() if f.metadata.get("required") and k not in table)
        if len(problems) > mine:
            continue
        try:
            out.append(item(**values))
        except (ValueError, TypeError) as exc:
            head, sep, rest = str(exc).partition(": ")
            problems.append(f"{where}.{head}: {rest}" if sep and head in known else f"{where}: {exc}")
    return tuple(out) if len(problems) == before else _INVALID


def _check_kind(key: str, kind: str | None, value: str, problems: list[str]) -> str:
    if kind == "url" and value:
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            problems.append(f"{key}: expected an absolute http(s) address such as 'https://photos.example.org/', got {value!r}")
        elif not value.endswith("/"):
            value += "/"
    elif kind == "timezone" and value:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            problems.append(f"{key}: expected a time zone name such as 'Europe/Paris' or 'UTC', got {value!r}")
    elif kind == "segment" and not re.match(r"^[a-z0-9][a-z0-9_-]*$", value):
        problems.append(f"{key}: expected one URL segment of lower-case letters, digits, '-' or '_', got {value!r}")
    elif kind == "colour" and value and not re.fullmatch(r"#[0-9a-fA-F]{6}", value):
        problems.append(f"{key}: expected a colour written '#rrggbb' (such as '#c0392b'), got {value!r}")
    elif kind == "scheduler" and value and scheduler_target(value) is None:
        problems.append(f"{key}: expected 'local', 'local:N' or a Dask scheduler's address such as "
                        f"'tcp://HOST:8786', got {value!r}")
    elif kind == "sort" and not _SORT_RE.match(value):
        problems.append(f"{key}: expected 'date', 'name', 'title' or a sidecar key, optionally prefixed by '-', got {value!r}")
    return value


_LOCAL_SCHEDULER = re.compile(r"^local(?::([1-9][0-9]{0,4}))?$")


def scheduler_target(value: str) -> tuple[str, int | str] | None:
    """What the scheduler setting names: ('local', N) for a LocalCluster of N worker processes (0: one
    per core), ('remote', 'tcp://HOST:PORT') for a Dask scheduler; None when it is neither."""
    value = value.strip()
    local = _LOCAL_SCHEDULER.match(value)
    if local:
        return "local", int(local.group(1) or 0)
    address = value if "://" in value else f"tcp://{value}"
    parts = urlsplit(address)
    try:
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("tcp", "tls") or not parts.hostname or not port or parts.path not in ("", "/"):
        return None
    return "remote", address.rstrip("/")


def _int_expectation(rules, what: str = "an integer") -> str:
    lo, hi = rules.get("min"), rules.get("max")
    if lo is not None and hi is not None:
        return f"{what} from {lo} to {hi}"
    if lo is not None:
        return f"{what} of at least {lo}"
    if hi is not None:
        return f"{what} of at most {hi}"
    return what


def _choices(choices) -> str:
    return "one of " + ", ".join(repr(c) for c in choices)
