"""`albumen build --each ROOT -o OUTROOT`: every top-level folder of ROOT built once as a gallery of
its own (for cron or CI), one at a time with one worker pool, and the sites of galleries removed
since the last run taken down. `albumen watch --each` does the same, then keeps them up to date.

A gallery that cannot be built (a bad config, an unreadable folder) is reported and skipped: the
others are built, and its last good site is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..report import plural, rebuild_line, some
from .sites import (
    Builder,
    Galleries,
    SiteBuild,
    build_one,
    default_builder,
    read_record,
    record_path,
    take_down,
    write_record,
)

Echo = Callable[[str], None]


@dataclass
class Registry:
    """The galleries published into an output root, kept in a record beside the build caches, so that
    a gallery removed from ROOT is taken down even by a later run (only its own files are removed)."""

    path: Path
    record: dict[str, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def load(cls, root: Path, outroot: Path) -> Registry:
        path = record_path(root, outroot)
        return cls(path, read_record(path))

    def built(self, result: SiteBuild) -> None:
        if result.report is not None and result.report.cache is not None:
            entry = {"output": str(result.site.output), "cache": str(result.report.cache)}
            if self.record.get(result.site.name) != entry:
                self.record[result.site.name] = entry
                write_record(self.path, self.record)

    def take_down_removed(self, found: Galleries, outroot: Path, echo: Echo, error: Echo) -> list[str]:
        """Take down the galleries published before and no longer in the root; never while the root
        is not there (a disk not mounted). Returns their names."""
        if not found.available:
            return []
        gone = [name for name in self.record if name not in found.sites]
        for name in gone:
            self.take_down(name, outroot, echo, error)
        return gone

    def take_down(self, name: str, outroot: Path, echo: Echo, error: Echo) -> None:
        entry = self.record.get(name, {})
        output, cache = Path(entry.get("output", "")), Path(entry.get("cache", ""))
        if output.parent != outroot or not entry.get("cache"):  # never anything outside the output root
            error(f"{name}: not taken down: the record of its site names {output}, not a folder of {outroot}")
        else:
            try:
                removed, kept = take_down(output, cache)
            except Exception as exc:  # a busy output, a file system error: said, and tried again next time
                error(f"{name}: its folder was removed, but its site could not be taken down: {exc}")
                return
            kept_note = f"; kept {plural(len(kept), 'file')} changed since Albumen wrote them: {some(kept)}" if kept else ""
            echo(f"{name}: its folder was removed: took its site down (removed {plural(removed, 'file')}{kept_note})")
        del self.record[name]
        write_record(self.path, self.record)


WARNINGS_SHOWN = 20  # a build's new warnings in the log, then how many more


def report_build(result: SiteBuild, why: str | None, echo: Echo, error: Echo, warned: set[str] | None = None) -> None:
    """One line per build for the log (journalctl reads it as it is), the skipped files after it, then
    its warnings (a sidecar it could not read, a link it did not follow): those not in `warned`, the
    warnings of the gallery's last build, which is then made this build's (a watch says a warning
    once, and again if it comes back after it was fixed)."""
    site = result.site
    if result.report is None:
        what = "rebuild" if why else "build"
        because = f" ({why})" if why else ""
        error(f"{site.label}{what} failed{because}; the last good site is kept: {_one_line(result.error)}")
        return
    echo(site.label + rebuild_line(result.report, result.seconds, why))
    for skipped in result.report.skipped:
        error(f"{site.label}  skipped: {skipped.src_uri}: {skipped.reason}")
    new = [w for w in dict.fromkeys(result.report.warnings) if warned is None or w not in warned]
    for warning in new[:WARNINGS_SHOWN]:
        error(f"{site.label}  warning: {_one_line(warning)}")
    if len(new) > WARNINGS_SHOWN:
        error(f"{site.label}  warning: … and {len(new) - WARNINGS_SHOWN} more (albumen build -vv lists them all)")
    if warned is not None:
        warned.clear()
        warned.update(result.report.warnings)


def _one_line(text: str) -> str:
    """A multi-line message (a config's list of problems, a traceback) on one line of the log."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines)


def build_each(
    root: Path, outroot: Path, base_url: str | None, pool, echo: Echo, error: Echo,
    builder: Builder = default_builder,
) -> list[SiteBuild]:
    """Build every gallery of root once, in the order of their names; take down those removed."""
    from ..locks import hold_output
    from .sites import check_roots

    root, outroot = check_roots(root, outroot)
    outroot.mkdir(parents=True, exist_ok=True)
    with hold_output(outroot, can_wait=False):  # one host at a time publishes into an output root
        return _build_each(root, outroot, base_url, pool, echo, error, builder)


def _build_each(root: Path, outroot: Path, base_url: str | None, pool, echo: Echo, error: Echo,
                builder: Builder) -> list[SiteBuild]:
    from .sites import find_galleries

    found = find_galleries(root, outroot, base_url)
    for problem in found.problems:
        error(f"warning: {problem}")
    if not found.available:
        error(f"warning: {root} has no gallery folder (a disk not mounted?): nothing built, nothing taken down")
    registry = Registry.load(root, outroot)
    results = []
    for site in found.sites.values():
        result = build_one(site, pool, builder)
        report_build(result, None, echo, error)
        registry.built(result)
        results.append(result)
    registry.take_down_removed(found, outroot, echo, error)
    return results
