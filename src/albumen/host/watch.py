"""`albumen watch`: keep galleries built on a server, headless, for as long as it runs.

The dev server's watcher and change classifier (serve/) without its HTTP server and live reload:
builds each gallery once, then rebuilds one gallery at a time, in the order their changes arrived,
with one worker pool for all of them. One line per build goes to the log. A bad photo, a bad
sidecar or a broken config edit is reported and the last good site kept until the next change; a
photo folder that goes missing or empty (a disk unmounted) is waited for, its site kept. SIGTERM or
Ctrl-C stop it between or during rebuilds (a build stops as `albumen build` does: its workers
stopped, no temporary file left, every page's images in place).

The output folders are the watcher's while it runs (a build into one refuses, naming it), as
under `albumen serve`. With --each, a gallery folder added to the root starts being built; one
removed has its site taken down (see each.Registry).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import AlbumenError
from ..serve import wait_until_settled
from ..serve.classify import Action, classify_changes
from .each import Registry, report_build
from .sites import Builder, Galleries, Site, build_one, default_builder, find_galleries, source_state

Echo = Callable[[str], None]


@dataclass
class WatchOptions:
    jobs: int = 0
    debounce_ms: int = 600
    settle_seconds: float = 1.0  # a file must stop growing this long before it is processed
    poll_seconds: float = 2.0  # how often the folders themselves are looked at (unmounted, back)
    deploy: Callable[[Site], str] | None = None  # publish a gallery after a build that changed it
    stop: threading.Event = field(default_factory=threading.Event)
    ready: threading.Event = field(default_factory=threading.Event)  # set once built and watching


class OneGallery:
    """`albumen watch SOURCE -o OUTPUT`."""

    outroot: Path | None = None

    def __init__(self, site: Site) -> None:
        self.site = site

    def scan(self) -> Galleries:
        return Galleries({self.site.name: self.site})

    def roots(self) -> list[Path]:
        return [self.site.source] + ([self.site.config_path] if self.site.config_path else [])


class EachGallery:
    """`albumen watch --each ROOT -o OUTROOT`: every top-level folder of ROOT."""

    def __init__(self, root: Path, outroot: Path, base_url: str | None) -> None:
        self.root, self.outroot, self.base_url = root, outroot, base_url
        self.registry = Registry.load(root, outroot)

    def scan(self) -> Galleries:
        return find_galleries(self.root, self.outroot, self.base_url)

    def roots(self) -> list[Path]:
        return [self.root]


@dataclass
class _State:
    site: Site
    lock: ExitStack | None = None  # holding its output folder
    theme: Path | None = None
    stamp: tuple | None = None  # the folder and config as the last build started
    waiting: bool = False  # said that its photo folder is missing or empty
    blocked: list[str | None] | None = None  # why it is to be built, while another process holds its output
    deployed: bool = False  # deployed once since the start
    warned: set[str] = field(default_factory=set)  # the warnings of its last build, said once


def _stamp(site: Site) -> tuple:
    try:
        st = os.stat(site.config_path) if site.config_path else None
        config = (st.st_ino, st.st_size, st.st_mtime_ns) if st else None
    except OSError:
        config = None
    return source_state(site.source), config


class _Watcher:
    """watchfiles over a set of paths, started again when the set (or a folder's identity) changes."""

    def __init__(self, options: WatchOptions) -> None:
        self.options = options
        self.key: tuple = ()
        self.gen = None

    def ensure(self, paths: list[Path]) -> None:
        key = []
        for path in sorted(set(paths)):
            try:
                st = os.stat(path)
            except OSError:
                continue
            key.append((str(path), st.st_dev, st.st_ino))
        if tuple(key) == self.key and (self.gen is not None or not key):
            return
        self.close()
        self.key = tuple(key)
        if key:
            from watchfiles import watch

            self.gen = watch(
                *[k[0] for k in key], stop_event=self.options.stop, debounce=self.options.debounce_ms, step=50,
                rust_timeout=500, yield_on_timeout=True, raise_interrupt=True,
            )

    def next(self) -> set:
        if self.gen is None:
            self.options.stop.wait(0.5)
            return set()
        try:
            return next(self.gen)
        except StopIteration:
            return set()
        except OSError:  # a watched folder went away under the watcher: watch again at the next look
            self.close()
            return set()

    def close(self) -> None:
        if self.gen is not None:
            self.gen.close()
        self.gen, self.key = None, ()


class Host:
    """The loop: look at the folders, route changes to galleries, build those waiting, in order."""

    def __init__(self, galleries: OneGallery | EachGallery, options: WatchOptions, pool, echo: Echo,
                 error: Echo, builder: Builder) -> None:
        self.galleries, self.options, self.pool = galleries, options, pool
        self.echo, self.error, self.builder = echo, error, builder
        self.known: dict[str, _State] = {}
        self.pending: dict[str, list[str | None]] = {}  # in the order changes arrived
        self.said: set[str] = set()
        self.watcher = _Watcher(options)
        self.last_look = 0.0
        self.building: Site | None = None

    def run(self) -> None:
        self.look()
        self.watcher.ensure(self.watched())
        self.watcher.next()  # the first batch (empty or not) comes once the watcher is really watching
        self.build_waiting()
        self.options.ready.set()
        while not self.options.stop.is_set():
            batch = self.watcher.next()
            if batch:
                self.route(batch)
            if time.monotonic() - self.last_look >= self.options.poll_seconds:
                self.look()
            self.watcher.ensure(self.watched())  # before a build reads the folders: no change is missed
            self.build_waiting()
            self.watcher.ensure(self.watched())  # a theme a build's config names now

    def close(self) -> None:
        self.watcher.close()
        for state in self.known.values():
            if state.lock is not None:
                state.lock.close()

    # -- which galleries, and what changed ----------------------------------------------------
    def watched(self) -> list[Path]:
        roots = [p for p in self.galleries.roots() if source_state(p) is not None or p.is_file()]
        themes = [s.theme for s in self.known.values() if s.theme is not None and s.theme.is_dir()]
        return roots + themes

    def look(self) -> None:
        """The galleries now: new ones built, removed ones taken down, folders back or changed rebuilt."""
        self.last_look = time.monotonic()
        found = self.galleries.scan()
        for problem in found.problems:
            self.say_once(f"warning: {problem}")
        if not found.available and isinstance(self.galleries, EachGallery):
            self.say_once(f"warning: {self.galleries.root} is missing or has no gallery folder (a disk not mounted?): "
                          "keeping every site, waiting for it")
        else:
            for name in [n for n in self.known if n not in found.sites]:
                self.remove(name)
        for name, site in found.sites.items():
            state = self.known.get(name)
            if state is not None and state.blocked is not None and name not in self.pending:
                self.pending[name], state.blocked = state.blocked, None  # is its output free now?
            if state is None:
                state = self.known[name] = _State(site)
                self.hold(state)
                self.enqueue(name, None)
            elif state.stamp is not None and _stamp(site) != state.stamp and name not in self.pending:
                folder, config = _stamp(site)
                self.enqueue(name, "photo folder is back" if folder and not state.stamp[0]
                             else "photo folder changed" if folder != state.stamp[0] else "config changed")

    def route(self, batch: set) -> None:
        from watchfiles import Change

        names = {Change.added: "added", Change.modified: "modified", Change.deleted: "deleted"}
        changes = {(names[c], os.path.abspath(p)) for c, p in batch}
        if isinstance(self.galleries, EachGallery):
            root = str(self.galleries.root)
            if any(os.path.dirname(p) == root for _, p in changes):
                self.look()  # a gallery folder added or removed
        for name, state in self.known.items():
            site, theme = state.site, state.theme
            config = str(site.config_path) if site.config_path else None
            mine = {(k, p) for k, p in changes
                    if _inside(p, str(site.source)) or p == config or (theme and _inside(p, str(theme)))}
            if not mine:
                continue
            decision = classify_changes(mine, str(site.source), config, str(theme) if theme else None, str(site.output))
            if decision.action == Action.NOTHING:
                continue
            wait_until_settled(decision.media, self.options.settle_seconds, self.options.stop)
            self.enqueue(name, decision.summary())

    def enqueue(self, name: str, why: str | None) -> None:
        self.pending.setdefault(name, []).append(why)

    # -- building --------------------------------------------------------------------------------
    def build_waiting(self) -> None:
        while self.pending and not self.options.stop.is_set():
            name = next(iter(self.pending))
            reasons = self.pending.pop(name)
            state = self.known.get(name)
            if state is not None:
                self.build(state, reasons)

    def build(self, state: _State, reasons: list[str | None]) -> None:
        site = state.site
        state.stamp = _stamp(site)
        if state.stamp[0] is None:
            if not state.waiting:
                self.error(f"{site.label}the photo folder {site.source} is missing or empty (a disk not mounted?): "
                           "keeping the last site; waiting for it")
            state.waiting = True
            return
        state.waiting = False
        if state.lock is None and not self.hold(state):
            state.blocked = reasons  # tried again at the next look at the folders
            return
        why = None if None in reasons else "; ".join(dict.fromkeys(r for r in reasons if r))
        self.building = site
        result = build_one(site, self.pool, self.builder)
        self.building = None
        report_build(result, why, self.echo, self.error, state.warned)
        if result.report is not None or result.theme is not None:  # (a config that failed names none)
            state.theme = result.theme
        if result.report is None:
            return
        if isinstance(self.galleries, EachGallery):
            self.galleries.registry.built(result)
        if self.options.deploy is not None and (result.changed or not state.deployed):
            self.deploy(state)

    def deploy(self, state: _State) -> None:
        try:
            self.echo(state.site.label + self.options.deploy(state.site))
            state.deployed = True
        except AlbumenError as exc:
            self.error(f"{state.site.label}deploy failed; it is tried again after the next rebuild: {exc}")
        except Exception as exc:  # the network, the store: said, never the end of the watch
            self.error(f"{state.site.label}deploy failed; it is tried again after the next rebuild: "
                       f"{type(exc).__name__}: {exc}")

    # -- output folders ------------------------------------------------------------------------
    def hold(self, state: _State) -> bool:
        """Hold the gallery's output folder while watching it (a build into it refuses, naming us)."""
        from ..locks import hold_output

        stack = ExitStack()
        try:
            state.site.output.mkdir(parents=True, exist_ok=True)
            for warning in stack.enter_context(hold_output(state.site.output, can_wait=False)):
                self.say_once(f"{state.site.label}warning: {warning}")
        except (AlbumenError, OSError) as exc:
            stack.close()
            self.say_once(f"{state.site.label}not built yet: {exc} (tried again every few seconds)")
            return False
        state.lock = stack
        return True

    def remove(self, name: str) -> None:
        state = self.known.pop(name)
        self.pending.pop(name, None)
        galleries = self.galleries
        if isinstance(galleries, EachGallery) and name in galleries.registry.record:
            galleries.registry.take_down(name, galleries.outroot, self.echo, self.error)
        elif state.site.output.is_dir():
            try:
                state.site.output.rmdir()  # never built: its empty folder
            except OSError:
                pass
        if state.lock is not None:
            state.lock.close()

    def say_once(self, text: str) -> None:
        if text not in self.said:
            self.said.add(text)
            self.error(text)


def _inside(path: str, folder: str) -> bool:
    folder = folder.rstrip(os.sep)
    return path == folder or path.startswith(folder + os.sep)


def watch_galleries(
    galleries: OneGallery | EachGallery, options: WatchOptions, echo: Echo, error: Echo | None = None,
    builder: Builder = default_builder,
) -> int:
    """Run until stopped (SIGTERM or Ctrl-C as KeyboardInterrupt, or options.stop). Returns 0."""
    from ..locks import hold_output
    from ..pool import WorkerPool

    error = error or echo
    with ExitStack() as stack:
        if galleries.outroot is not None:  # one host at a time publishes into an output root
            galleries.outroot.mkdir(parents=True, exist_ok=True)
            stack.enter_context(hold_output(galleries.outroot, can_wait=False))
        pool = WorkerPool(options.jobs)
        host = Host(galleries, options, pool, echo, error, builder)
        try:
            host.run()
        except KeyboardInterrupt:
            if host.building is not None:
                error(f"{host.building.label}stopped during a rebuild: its site is as the last build left it, "
                      "with what this one finished; the next start finishes it")
        finally:
            pool.stop()
            host.close()
    echo("stopped")
    return 0
