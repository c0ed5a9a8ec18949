"""Find, load and check the plugins a gallery turns on, and call their hooks one plugin at a time.

A name in the config's `plugins` is, in this order: a plugin bundled with Albumen (BUNDLED), a plugin an
installed package declares in the entry point group 'albumen.plugins', or a module's import path
('my_pkg.plugin', or 'my_pkg.plugin:object'). Loading happens when the config is validated: an
unknown name, a plugin that cannot be imported, hooks that do not match their specification and
options that do not match the plugin's schema are configuration errors, all told at once, before
anything is read or written.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import importlib
import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config.load import _describe
from ..errors import PluginError, described
from ..process.specs import FilterCall, MediaFacts
from ..scan.kinds import CORE_KINDS, KindReader
from . import hookspecs
from .options import INVALID, check_options, digest
from .types import FACTS, ROLES, ImageFilter, MediaKind

ENTRY_POINT_GROUP = "albumen.plugins"
# Plugins bundled with Albumen: short name -> import path.
BUNDLED: dict[str, str] = {
    "adjust": "albumen.plugins.bundled.adjust",
    "compress": "albumen.plugins.bundled.compress",
    "copyright": "albumen.plugins.bundled.copyright",
    "documents": "albumen.plugins.bundled.documents",
    "frame": "albumen.plugins.bundled.frame",
    "titles": "albumen.plugins.bundled.titles",
    "watermark": "albumen.plugins.bundled.watermark",
    "zip": "albumen.plugins.bundled.zip",
}


@dataclass(frozen=True)
class PluginInfo:
    """One plugin turned on, as plain data: part of the config (its repr is in the build's fingerprint
    and in every page's key), so a new version or option of a plugin is a changed config."""

    name: str  # as the config's `plugins` names it
    target: str  # what is registered: 'module' or 'module:attribute'
    version: str  # the plugin's __version__, else its package's
    origin: str  # 'bundled', 'package NAME VERSION', 'module'
    options: Any = None  # the validated options (a frozen dataclass), None without a schema
    recipe: str = ""  # name@version and a digest of the options (and of the files they name)


PluginFailed = PluginError  # a plugin's hook raised: what it was working on fails, named after the plugin


# -- loading (when the config is validated) ---------------------------------------------------


def load_plugins(
    names: Any, tables: Any, base_dir: Path, source_dir: Path | None = None,
) -> tuple[tuple[str, ...], tuple[PluginInfo, ...], list[str]]:
    """The config's `plugins` (a list of names) and `plugin` (a table of options per plugin:
    [plugin.NAME]) -> (the names, the plugins loaded, problems). base_dir: the config's folder, which
    paths are relative to; source_dir: the photo folder the config names, if it does (a path option
    declared `inside=True` must name a file in one of the two)."""
    problems: list[str] = []
    if isinstance(names, dict):  # [plugins.NAME] tables, or a [plugins] table
        problems.append("plugins: expected a list of plugin names, e.g. plugins = [\"frame\"]; a plugin's options go "
                        "in a [plugin.NAME] table ('plugin', not 'plugins')")
        names = []
    elif not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        problems.append(f"plugins: expected a list of plugin names, got {_describe(names)}")
        names = []
    if not isinstance(tables, dict):
        problems.append(f"plugin: expected tables of plugins' options ([plugin.NAME]), got {_describe(tables)}")
        tables = {}
    enabled: list[str] = []
    for name in names:
        if name in enabled:
            problems.append(f"plugins: {name!r} is listed twice")
        else:
            enabled.append(name)
    for key, table in tables.items():
        if not isinstance(table, dict):
            problems.append(f"plugin.{key}: expected a table ([plugin.{key}]) of the plugin's options, got {_describe(table)}")
        elif key not in enabled:
            near = difflib.get_close_matches(key, enabled, n=1)
            hint = f"did you mean '{near[0]}'? " if near else ""
            problems.append(f"plugin.{key}: options of a plugin that is not turned on ({hint}add {key!r} to plugins)")
    found: list[tuple[str, object, str, str, str]] = []
    for name in enabled:
        try:
            found.append((name, *_find(name)))
        except _Problem as exc:
            problems.append(str(exc))
    checked = _check_hooks(found, problems)
    infos = []
    for name, obj, target, version, origin in checked:
        table = tables.get(name)
        options = _options(name, obj, table if isinstance(table, dict) else {}, (base_dir, source_dir), problems)
        if options is INVALID:
            continue
        recipe = f"{name}@{version}:{digest(options)}"
        infos.append(PluginInfo(name, target, version, origin, options, recipe))
    return tuple(enabled), tuple(infos), problems


class _Problem(Exception):
    pass


def installed() -> dict[str, Any]:
    """Entry points of the group 'albumen.plugins' of the installed packages, by name."""
    from importlib.metadata import entry_points

    found: dict[str, Any] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(ep.name, ep)
    return found


def _find(name: str) -> tuple[object, str, str, str]:
    """(the object to register, its import path, version, origin) of a plugin named in the config."""
    if name in BUNDLED:
        target = BUNDLED[name]
        obj = _import(name, target)
        return obj, target, _own_version(obj) or _albumen_version(), "bundled"
    entries = installed()
    if name in entries:
        ep = entries[name]
        dist = getattr(ep, "dist", None)
        origin = f"package {dist.name} {dist.version}" if dist is not None else "package"
        try:
            obj = ep.load()
        except Exception as exc:  # noqa: BLE001 - any import failure is the plugin's, told as such
            raise _Problem(
                f"plugins: {name!r} ({origin}, entry point {ep.value}) cannot be imported: {described(exc)}"
            ) from None
        return obj, ep.value, _own_version(obj) or (dist.version if dist is not None else ""), origin
    module = name.partition(":")[0]
    if not module or not all(part.isidentifier() for part in module.split(".")):
        raise _Problem(_unknown(name, entries))
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and (module == exc.name or module.startswith(exc.name + ".")):
            raise _Problem(_unknown(name, entries)) from None
        raise _Problem(f"plugins: {name!r} cannot be imported: {described(exc)}") from None
    except Exception as exc:  # noqa: BLE001
        raise _Problem(f"plugins: {name!r} cannot be imported: {described(exc)}") from None
    obj = _import(name, name)
    return obj, name, _own_version(obj) or _package_version(module), "module"


def _import(name: str, target: str) -> object:
    module, _, attribute = target.partition(":")
    try:
        obj: object = importlib.import_module(module)
        for part in attribute.split(".") if attribute else ():
            obj = getattr(obj, part)
    except Exception as exc:  # noqa: BLE001
        raise _Problem(f"plugins: {name!r} cannot be imported: {described(exc)}") from None
    return obj


def _unknown(name: str, entries: dict) -> str:
    known = sorted(BUNDLED) + sorted(entries)
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"did you mean {near[0]!r}? " if near else ""
    listed = f"bundled: {', '.join(sorted(BUNDLED)) or 'none'}; installed: {', '.join(sorted(entries)) or 'none'}"
    return (f"plugins: unknown plugin {name!r} ({hint}{listed}; or give a module's import path, "
            "e.g. 'my_package.plugin')")


def _own_version(obj: object) -> str:
    version = getattr(obj, "__version__", None)
    if version is None and not isinstance(obj, type(os)):
        version = getattr(importlib.import_module(type(obj).__module__), "__version__", None)
    return str(version) if version is not None else ""


def _albumen_version() -> str:
    from .. import __version__

    return __version__


def _package_version(module: str) -> str:
    from importlib.metadata import PackageNotFoundError, packages_distributions, version

    for dist in packages_distributions().get(module.partition(".")[0], []):
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return ""


def _check_hooks(found: list, problems: list[str]) -> list:
    """Register each plugin with pluggy, which checks its hooks against the specifications; the ones
    that pass, in order."""
    import pluggy

    good = []
    for item in found:
        name, obj = item[0], item[1]
        pm = _new_manager()
        try:
            pm.register(obj, name=name)
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            problems.append(f"plugins: {name!r} does not match Albumen's hooks: {exc}")
            continue
        except ValueError as exc:
            problems.append(f"plugins: {name!r} cannot be registered: {exc}")
            continue
        impls = [impl for hook in pm.hook.__dict__.values() for impl in getattr(hook, "get_hookimpls", list)()]
        wrappers = [impl.function.__name__ for impl in impls if impl.hookwrapper or impl.wrapper]
        if not impls:
            problems.append(f"plugins: {name!r} implements none of Albumen's hooks (is it a plugin? see docs/PLUGINS.md)")
            continue
        if wrappers:
            problems.append(f"plugins: {name!r}: hook wrappers are not supported ({', '.join(wrappers)})")
            continue
        good.append(item)
    return good


def _new_manager():
    import pluggy

    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _options(name: str, obj: object, table: dict, folders: tuple[Path, Path | None], problems: list[str]) -> Any:
    """The plugin's options from its table, validated against the schema it declares (see options)."""
    pm = _new_manager()
    pm.register(obj, name=name)
    schemas = [impl.function() for impl in pm.hook.albumen_options.get_hookimpls()]
    return check_options(name, schemas[0] if schemas else None, table, folders, problems)


# -- running (one build) -------------------------------------------------------------------


_MANAGERS: dict[tuple[PluginInfo, ...], Any] = {}
# extensions a web server runs, or shows as a page: never those of a published file of a media kind
_SERVED_AS_CODE = {"html", "htm", "xhtml", "shtml", "svg", "svgz", "xml", "xsl", "js", "mjs", "css", "php", "phtml",
                   "php3", "php4", "php5", "phar", "asp", "aspx", "jsp", "cgi", "pl", "py", "rb", "sh", "htaccess"}


class Plugins:
    """The plugins of one build. Their hooks are called one plugin at a time, in the order of
    the config's `plugins` (tryfirst and trylast honoured, as pluggy orders them), so that a failure names
    its plugin; problems that did not stop the build are kept for its report."""

    def __init__(self, infos: Sequence[PluginInfo] = ()) -> None:
        self.infos = {info.name: info for info in infos}
        self.problems: list[str] = []
        self._pm = None
        if infos:
            key = tuple(infos)
            if key not in _MANAGERS:
                pm = _new_manager()
                for info in reversed(key):  # pluggy calls the last registered first
                    pm.register(_import(info.name, info.target), name=info.name)
                _MANAGERS.clear()  # one config at a time (a server that reloads it keeps no old one)
                _MANAGERS[key] = pm
            self._pm = _MANAGERS[key]
        self._interned: dict = {}
        self._calls: dict = {}  # the FilterCall of each different ImageFilter (see _filter_call)
        self._kinds: dict | None = None

    def __bool__(self) -> bool:
        return bool(self.infos)

    def has(self, hook: str) -> bool:
        return self._pm is not None and bool(getattr(self._pm.hook, hook).get_hookimpls())

    def call(
        self, hook: str, failed: Callable[[PluginFailed], None] | None = None, **kwargs: Any
    ) -> Iterator[tuple[PluginInfo, Any]]:
        """(plugin, result) of each plugin implementing the hook. A plugin that raises: PluginFailed
        (the caller decides what fails with it), or, given `failed`, that is told it and the other
        plugins are still called."""
        if self._pm is None:
            return
        for impl in reversed(getattr(self._pm.hook, hook).get_hookimpls()):
            info = self.infos[impl.plugin_name]
            args = {**kwargs, "options": info.options}
            try:
                result = impl.function(*(args[name] for name in impl.argnames))
            except Exception as exc:  # noqa: BLE001 - a plugin's failure is told, never a crash
                failure = PluginFailed(info.name, described(exc))
                if failed is None:
                    raise failure from exc
                failed(failure)
                continue
            yield info, result

    def warn(self, failure: PluginFailed, what: str = "") -> None:
        """A plugin's failure that the build went on from: a warning of its report."""
        self.problems.append(f"{failure}" + (f" ({what})" if what else ""))

    def each(self, hook: str, what: str, **kwargs: Any) -> Iterator[tuple[PluginInfo, Any]]:
        """As call, a plugin that raises being told (a warning naming it, and what failed) and skipped."""
        return self.call(hook, failed=lambda failure: self.warn(failure, what), **kwargs)

    # -- the planner's: image filters ----------------------------------------------------
    def image_filters(self, media: MediaFacts) -> tuple[FilterCall, ...]:
        """The filters the plugins apply to one media, as plain data for its job (the same tuple
        for media that get the same filters). A plugin that raises fails the media: a FilterCall
        with the error, which its job reports."""
        calls: list[FilterCall] = []
        try:
            for info, result in self.call("albumen_image_filters", media=media):
                for item in _as_list(result):
                    calls.append(self._filter_call(info, item, media))
        except PluginFailed as exc:
            calls = [_failed(exc)]
        except Exception as exc:  # noqa: BLE001 - what a plugin returned broke its checks: its media fails
            calls = [_failed(PluginFailed(info.name, described(exc)))]
        out = tuple(calls)
        return self._interned.setdefault(out, out)

    def _filter_call(self, info: PluginInfo, item: Any, media: MediaFacts) -> FilterCall:
        if not isinstance(item, ImageFilter):
            raise PluginFailed(info.name, f"albumen_image_filters returned {item!r}, not an ImageFilter")
        # checked and made once per different filter: the hook is asked for every media of the gallery
        key = (info.name, item.function, tuple(item.roles), tuple(item.facts), item.version,
               None if item.options is None else repr(item.options))
        made = self._calls.get(key)
        if made is None:
            function = function_path(info.name, item.function)
            roles = tuple(item.roles)
            bad = [r for r in roles if r not in ROLES] + [f for f in item.facts if f not in FACTS]
            if bad:
                raise PluginFailed(info.name, f"unknown role or fact {bad[0]!r} in {item!r}")
            if item.options is None:
                options, used = info.options, info.recipe
            else:  # the options the filter reads, and the files the plugin's options name
                options, used = item.options, f"{info.name}@{info.version}:{digest(item.options, info.options)}"
            made = self._calls[key] = FilterCall(info.name, function, roles, options, None, f"{used}:{function}@{item.version}:-")
        if not item.facts:
            return made
        facts = MediaFacts(**{f: getattr(media, f) for f in item.facts})
        shown = json.dumps(dataclasses.asdict(facts), sort_keys=True, default=str)
        return dataclasses.replace(made, media=facts, recipe=made.recipe[:-1] + hashlib.sha256(shown.encode()).hexdigest()[:16])

    # -- the scanner's, the planner's and the renderer's: media kinds -------------------------
    def media_kinds(self) -> dict[str, tuple[PluginInfo, MediaKind, str, str, str]]:
        """kind name -> (plugin, kind, read's path, thumbnail's path, published extension), asked for
        once per build. A plugin that raises, or a kind that cannot be used, adds none, with a warning."""
        if self._kinds is not None:
            return self._kinds
        self._kinds = {}
        for info, result in self.each("albumen_media_kinds", "its media kinds are not read"):
            for kind in _as_list(result):
                try:
                    self._kinds[kind.name] = (info, kind, *self._kind_parts(info, kind))
                except PluginFailed as failure:
                    self.warn(failure, "that media kind is not read")
        return self._kinds

    def _kind_parts(self, info: PluginInfo, kind: Any) -> tuple[str, str, str]:
        if not isinstance(kind, MediaKind):
            raise PluginFailed(info.name, f"albumen_media_kinds gave {kind!r}, not a MediaKind")
        if not kind.name.isidentifier() or kind.name in CORE_KINDS or kind.name in self._kinds:
            raise PluginFailed(info.name, f"media kind name {kind.name!r} is taken or not a plain word")
        if not kind.extensions or not all(e.startswith(".") and e == e.lower() for e in kind.extensions):
            raise PluginFailed(info.name, f"media kind {kind.name!r}: extensions must be lower case, with their dot")
        ext = (kind.ext or kind.extensions[0]).lstrip(".")
        if not ext.isalnum() or not ext.isascii() or ext.lower() in _SERVED_AS_CODE:
            raise PluginFailed(info.name, f"media kind {kind.name!r}: {ext!r} cannot be a published file's extension"
                                          " (a web server would run or show it as a page)")
        return function_path(info.name, kind.read), function_path(info.name, kind.thumbnail), ext.lower()

    def kind_readers(self) -> tuple[KindReader, ...]:
        """The media kinds as the workers reading files get them (plain data)."""
        return tuple(
            KindReader(info.name, name, tuple(kind.extensions), read, *_kind_options(info, kind, read))
            for name, (info, kind, read, _, _) in self.media_kinds().items()
        )

    def maker(self, kind_name: str) -> tuple[FilterCall, str]:
        """The function that draws a kind's pictures (a FilterCall for its items' jobs), and the
        extension its files are published under."""
        info, kind, _, thumbnail, ext = self.media_kinds()[kind_name]
        options, recipe = _kind_options(info, kind, thumbnail)
        return FilterCall(info.name, thumbnail, ("thumb",), options, None, recipe), ext

    def kind_labels(self) -> dict[str, tuple[str, str]]:
        """kind name -> (its label, its media type), for the tiles of its items."""
        return {name: (kind.label, kind.mime) for name, (_, kind, _, _, _) in self.media_kinds().items()}


def _kind_options(info: PluginInfo, kind: MediaKind, function: str) -> tuple[Any, str]:
    """What a media kind's function gets as ctx.options, and its recipe: the plugin's, with the kind's
    options (all the plugin's by default, and the files its path options name), function and version."""
    if kind.options is None:
        return info.options, f"{info.recipe}:{function}@{kind.version}"
    return kind.options, f"{info.name}@{info.version}:{digest(kind.options, info.options)}:{function}@{kind.version}"


def _failed(failure: PluginFailed) -> FilterCall:
    """A filter the plugin could not give for a media: its job fails with the reason. It applies to every
    role, so that the media's outputs get names of their own and the job runs (and fails)."""
    digest = hashlib.sha256(str(failure).encode()).hexdigest()[:16]
    return FilterCall(failure.plugin, "", ROLES, error=str(failure), recipe=f"failed:{digest}")


def _as_list(result: Any) -> list:
    if result is None:
        return []
    if isinstance(result, (list, tuple)):
        return list(result)
    return [result]


def function_path(plugin: str, function: Any) -> str:
    """'module:function' of a function given by path or as a module-level function (a worker imports
    it by that name)."""
    if isinstance(function, str):
        module, sep, name = function.partition(":")
        if sep and module and name:
            return function
        raise PluginFailed(plugin, f"{function!r} is not 'package.module:function'")
    qualname = getattr(function, "__qualname__", "")
    module = getattr(function, "__module__", None)
    if not module or not qualname or "<" in qualname or module == "__main__":
        raise PluginFailed(plugin, f"{function!r} is not a module-level function a worker can import")
    return f"{module}:{qualname}"
