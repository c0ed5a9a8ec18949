"""Where a build reads and writes, checked before anything is: the photo folder and the output never
inside each other, the cache and Albumen's own folder (the private links' secret) inside neither."""

from __future__ import annotations

from pathlib import Path

from .cache import default_cache_dir
from .config import LoadedConfig
from .errors import SourceError, UsageError
from .tokens import albumen_home


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def check_paths(source: Path, output: Path) -> tuple[Path, Path]:
    """Refuse impossible or dangerous source/output pairs before anything is written."""
    if not source.exists():
        raise SourceError(f"photo folder not found: {source}", hint="check the path, or set 'source' in albumen.toml")
    if not source.is_dir():
        raise SourceError(f"not a folder: {source}", hint="SOURCE must be the folder that holds your photos")
    src = source.resolve()
    out = output.resolve()
    if _inside(out, src):
        raise UsageError(
            f"the output folder {out} is inside the photo folder {src}; Albumen never writes into the photo folder",
            hint=f"build somewhere else, e.g. -o ../site from inside the photo folder, or -o {src.parent / 'site'}",
        )
    if _inside(src, out):
        raise UsageError(
            f"the photo folder {src} is inside the output folder {out}",
            hint="choose an output folder outside the photos, e.g. -o ../site",
        )
    if out.exists() and not out.is_dir():
        raise UsageError(f"the output path exists and is not a folder: {out}")
    return src, out


def cache_location(loaded: LoadedConfig, source: Path, output: Path) -> Path:
    """The build cache folder of this source and output; never inside either."""
    cache_dir = default_cache_dir(source, output, loaded.resolve(loaded.config.cache_dir)).resolve()
    if _inside(cache_dir, source) or _inside(cache_dir, output):
        raise UsageError(
            f"the cache folder {cache_dir} is inside the photo folder or the output",
            hint="the cache holds private metadata: keep it out of both (cache_dir setting, ALBUMEN_CACHE_DIR)",
        )
    return cache_dir


def check_home(source: Path, output: Path) -> None:
    """Albumen's own folder (the secret behind private links, their rotations) is never inside the
    photo folder (never written) or the output (it would be published with the site)."""
    home = albumen_home().resolve()
    if _inside(home, source) or _inside(home, output):
        raise UsageError(
            f"Albumen's own folder {home} (it holds the secret of private links) is inside the "
            f"{'photo folder' if _inside(home, source) else 'output folder'}",
            hint="set ALBUMEN_HOME to a folder outside both, or unset it to use the default",
        )
