"""The galleries a host keeps: one (`albumen watch SOURCE`) or one per top-level folder of a root
(`--each ROOT`), and building one of them with the worker pool they all share.

A gallery of --each is the folder ROOT/<name>: its photos, with an optional albumen.toml inside it
(read as the gallery's own config; its source and output settings are not used), published at
OUTROOT/<slug>/, and at <url>/<slug>/ when a base url is given (the slug is the folder's name made
URL-safe). Each has its own build cache (one per source and output, as always) and its own
namespace of private links (see tokens.secret_namespace).
"""

from __future__ import annotations

import json
import os
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..config import CONFIG_NAME, LoadedConfig, load_config
from ..errors import AlbumenError, UsageError
from ..process.names import slugify
from ..report import BuildReport

Builder = Callable[..., BuildReport]  # (loaded config, BuildOptions, WorkerPool) -> BuildReport


@dataclass(frozen=True)
class Site:
    """One gallery a host keeps built."""

    name: str  # '': the only one; else the slug of its folder (log prefix, link namespace, URL part)
    source: Path
    output: Path
    config_path: Path | None  # the config file to read; for --each, SOURCE/albumen.toml (when there)
    url: str | None = None  # overrides the config's url (--each with a base url)

    @property
    def label(self) -> str:
        """What starts each line about this gallery in the log."""
        return f"{self.name}: " if self.name else ""

    def load(self) -> LoadedConfig:
        if self.name:  # its own albumen.toml or none: never the one of the folder the host runs in
            overrides = {"url": self.url} if self.url else None
            return load_config(None, cwd=self.source, overrides=overrides)
        return load_config(self.config_path)


@dataclass
class SiteBuild:
    """What building one gallery did."""

    site: Site
    report: BuildReport | None
    seconds: float
    error: str = ""  # the build failed: why (the last good site is kept)
    theme: Path | None = None  # the theme folder its config names (watched too)

    @property
    def changed(self) -> bool:
        """Whether the output changed: worth a deploy."""
        r = self.report
        return r is not None and bool(r.derivatives_made or r.derivatives_moved or r.pages_written or r.stale_removed)


def default_builder(loaded: LoadedConfig, options, pool) -> BuildReport:
    from ..build import build

    return build(loaded, options, None, pool)


def build_one(site: Site, pool, builder: Builder = default_builder) -> SiteBuild:
    """Build one gallery with the shared pool; a failure (its config, its photos, a bug) is returned,
    never raised: the other galleries go on. An interrupt (Ctrl-C, SIGTERM) is raised."""
    from ..build import BuildOptions
    from ..tokens import secret_namespace

    started = time.perf_counter()
    theme = None
    try:
        with secret_namespace(site.name or None):
            loaded = site.load()
            theme = loaded.resolve(loaded.config.theme.path)
            options = BuildOptions(source=site.source, output=site.output, jobs=pool.workers)
            report = builder(loaded, options, pool)
    except AlbumenError as exc:
        return SiteBuild(site, None, time.perf_counter() - started, str(exc), theme)
    except Exception as exc:  # a bug, not the photos: reported, and the other galleries go on
        text = f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"
        return SiteBuild(site, None, time.perf_counter() - started, text, theme)
    return SiteBuild(site, report, time.perf_counter() - started, "", theme)


def source_state(source: Path) -> tuple[int, int] | None:
    """The photo folder's identity (device, inode), or None when it is missing or empty: a disk not
    mounted (its mount point is an empty folder) must not be taken for a gallery with no photos,
    which a build would empty."""
    try:
        st = os.stat(source)
        with os.scandir(source) as entries:
            if next(entries, None) is None:
                return None
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


# -- --each ------------------------------------------------------------------------------------
@dataclass
class Galleries:
    """The galleries under a root now."""

    sites: dict[str, Site] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # folders that cannot be galleries, and why
    available: bool = True  # False: the root is missing or has no folder (not mounted?): keep every site


def check_roots(root: Path, outroot: Path) -> tuple[Path, Path]:
    """Refuse a root and an output root inside each other (the output would become a gallery)."""
    if not root.is_dir():
        raise UsageError(f"not a folder: {root}", hint="--each ROOT is the folder that holds one folder per gallery")
    root, outroot = root.resolve(), outroot.resolve()
    if outroot == root or root in outroot.parents or outroot in root.parents:
        raise UsageError(
            f"the output folder {outroot} and the galleries' folder {root} are inside one another",
            hint="publish somewhere else, e.g. -o /var/www/photos",
        )
    return root, outroot


def gallery_url(base: str | None, slug: str) -> str | None:
    return f"{base.rstrip('/')}/{slug}/" if base else None


def find_galleries(root: Path, outroot: Path, base_url: str | None = None) -> Galleries:
    """Every top-level folder of root (hidden ones aside) as a gallery published at outroot/<slug>/."""
    found = Galleries()
    try:
        names = sorted(e.name for e in os.scandir(root) if not e.name.startswith(".") and e.is_dir())
    except OSError:
        names = []
    if not names:
        found.available = False
        return found
    for name in names:
        slug = slugify(name)
        other = found.sites.get(slug)
        if other is not None:
            found.problems.append(
                f"the folders {other.source.name!r} and {name!r} would both be published at {slug}/: "
                f"{name!r} is skipped (rename one of them)"
            )
            continue
        source = root / name
        found.sites[slug] = Site(slug, source, outroot / slug, source / CONFIG_NAME, gallery_url(base_url, slug))
    return found


# -- which galleries were published, for taking down those removed ------------------------------
def record_path(root: Path, outroot: Path) -> Path:
    """A record of the galleries built from root into outroot, beside the build caches."""
    from ..cache import default_cache_dir

    return default_cache_dir(root, outroot) / "galleries.json"


def read_record(path: Path) -> dict[str, dict[str, str]]:
    """slug -> {'output': ..., 'cache': ...} of each gallery published."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def write_record(path: Path, record: dict[str, dict[str, str]]) -> None:
    from ..fsutil import make_private_dirs

    make_private_dirs(path.parent)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(record, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def take_down(output: Path, cache_dir: Path) -> tuple[int, list[str]]:
    """Remove a gallery's site: every file of it its build recorded, while still as written (as a
    build removes stale files), the folders left empty, the output folder when empty, and its cache.
    Returns how many files were removed and those kept (changed since Albumen wrote them)."""
    import shutil

    from ..cache import BuildCache
    from ..locks import hold_output
    from ..write.stale import remove_stale

    if not output.is_dir():
        shutil.rmtree(cache_dir, ignore_errors=True)
        return 0, []
    with hold_output(output, cache_dir):
        cache = BuildCache(cache_dir)
        try:
            outcome = remove_stale(output, list(cache.output_stamps()))
        finally:
            cache.close()
        try:
            output.rmdir()
        except OSError:
            pass
    shutil.rmtree(cache_dir, ignore_errors=True)
    return outcome.removed, outcome.kept
