"""`albumen serve`: build, serve the output over HTTP, watch, rebuild what changed, reload browsers.

serve() takes the builder and the change classifier as values, so tests can drive it.
A failed rebuild (bad config, broken template) keeps the last good site on screen and
shows the error in the terminal and over the page; fixing the file recovers.
"""

from __future__ import annotations

import ipaddress
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..config import LoadedConfig, load_config
from ..errors import AlbumenError
from ..locks import hold_output
from ..report import rebuild_line
from .classify import Action, Decision, classify_changes
from .http import SiteServer

__all__ = ["Action", "Decision", "ServeOptions", "classify_changes", "serve"]


@dataclass
class ServeOptions:
    source: Path
    output: Path
    config_path: Path | None
    host: str = "127.0.0.1"
    port: int = 8000
    watch: bool = True
    open_browser: bool = False
    jobs: int = 0
    debounce_ms: int = 600
    settle_seconds: float = 1.0  # a file must stop growing this long before it is processed
    stop: threading.Event = field(default_factory=threading.Event)
    ready: threading.Event = field(default_factory=threading.Event)  # set once the server listens


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def wait_until_settled(paths: set[str], settle: float, stop: threading.Event, timeout: float = 600) -> None:
    """Wait until none of these files changed size or mtime for `settle` seconds (a copy in progress)."""
    if not paths:
        return
    deadline = time.monotonic() + timeout

    def state():
        out = {}
        for p in paths:
            try:
                st = os.stat(p)
                out[p] = (st.st_size, st.st_mtime_ns)
            except OSError:
                out[p] = None
        return out

    last = state()
    quiet_since = time.monotonic()
    while time.monotonic() < deadline and not stop.is_set():
        time.sleep(min(0.2, settle))
        now = state()
        if now != last:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since >= settle:
            return


def serve(
    options: ServeOptions,
    builder: Callable,
    echo: Callable[[str], None] = print,
    classify: Callable[..., Decision] = classify_changes,
) -> int:
    """Run until stopped (Ctrl-C or options.stop). Returns the exit status.

    The output folder is the server's while it runs: a build into it refuses, naming the server
    (see locks), and the server refuses to start while a build writes it."""
    from ..paths import check_paths

    loaded: LoadedConfig = load_config(options.config_path)
    check_paths(options.source, options.output)  # usage errors stop here, before anything is served
    with hold_output(_prepare_output(options.output), can_wait=False) as unlocked:
        for warning in unlocked:
            echo(f"warning: {warning}")
        return _serve(options, loaded, builder, echo, classify)


def _serve(options: ServeOptions, loaded: LoadedConfig, builder: Callable, echo: Callable[[str], None],
           classify: Callable[..., Decision]) -> int:
    from ..build import BuildOptions
    from ..render.env import site_path

    def build_options() -> BuildOptions:
        return BuildOptions(source=options.source, output=options.output, jobs=options.jobs)

    theme = loaded.resolve(loaded.config.theme.path)
    server = SiteServer(str(options.output), options.host, options.port, live=options.watch)
    server.base_path = site_path(loaded.config.url)

    built = False  # whether a build succeeded yet: before, there is no good site to keep serving

    def failed(message: str, shown: str) -> None:
        """Keep serving the last good site, with the error shown over its pages and in the log."""
        server.error = message
        server.hub.publish("failed", message)
        echo(shown)

    def keeping() -> str:
        if built:
            return "still serving the last good site"
        if (Path(options.output) / "index.html").is_file():
            return "serving what the output folder held before, not this build"
        return "the site is not built yet" + ("; fix this and save" if options.watch else "")

    def rebuild(why: str | None) -> None:
        """why: what changed, or None for the first build (a build, not a rebuild)."""
        nonlocal built
        started = time.perf_counter()
        what, because = ("rebuild", f" ({why})") if why else ("build", "")
        try:
            report = builder(loaded, build_options())
        except AlbumenError as exc:
            failed(str(exc), f"{what} failed{because}; {keeping()}:\n{exc}")
            return
        except Exception as exc:  # a bug, not the photos: the server keeps serving the last good site
            import traceback

            failed(f"{type(exc).__name__}: {exc}",
                   f"{what} failed unexpectedly{because}; {keeping()}:\n{traceback.format_exc()}")
            return
        built = True
        server.error = None
        server.hub.publish("reload")
        echo(rebuild_line(report, time.perf_counter() - started, why))
        for skipped in report.skipped:
            echo(f"  skipped: {skipped.src_uri}: {skipped.reason}")

    rebuild(None)
    if options.watch:
        from ..pool import warm_fork_server

        warm_fork_server()  # later rebuilds run beside the server's threads: their workers come from it
    server.start()
    if not is_loopback(options.host):
        echo(f"warning: serving on {options.host}: other computers on the network can see this site")
    echo(f"serving {options.output} at {server.url}" + (" (watching for changes; Ctrl-C stops)" if options.watch else ""))
    if not options.watch:
        options.ready.set()
    if options.open_browser:
        import webbrowser

        webbrowser.open(server.url)
    try:
        if not options.watch:
            options.stop.wait()
            return 0
        from watchfiles import Change, watch

        watched = [str(options.source)]
        if options.config_path is not None:
            watched.append(str(Path(options.config_path).resolve()))
        config_files = _config_files(loaded)  # (those of the config served first: a new one is watched after a restart)
        watched += [f for f in config_files if not Path(f).is_relative_to(options.source.resolve())]
        if theme is not None:  # its templates and static files, not whatever else the folder holds
            watched += [str(theme / part) for part in ("templates", "static") if (theme / part).is_dir()]
        names = {Change.added: "added", Change.modified: "modified", Change.deleted: "deleted"}
        for batch in watch(
            *watched, stop_event=options.stop, debounce=options.debounce_ms, step=50, rust_timeout=500,
            yield_on_timeout=True, raise_interrupt=True,
        ):
            options.ready.set()  # the first (empty) batch comes once the watcher is really watching
            if not batch:
                continue
            changes = {(names[c], os.path.abspath(p)) for c, p in batch}
            decision = classify(
                changes, str(options.source), str(options.config_path) if options.config_path else None,
                str(theme) if theme else None, str(options.output), config_files=config_files,
            )
            if decision.action == Action.NOTHING:
                continue
            wait_until_settled(decision.media, options.settle_seconds, options.stop)
            if decision.action == Action.CONFIG:
                try:
                    loaded = load_config(options.config_path)
                    theme = loaded.resolve(loaded.config.theme.path)
                    server.base_path = site_path(loaded.config.url)
                except AlbumenError as exc:
                    failed(str(exc), f"config not reloaded; {keeping()}:\n{exc}")
                    continue
            rebuild(decision.summary())
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        echo("stopped")
    return 0


def _config_files(loaded: LoadedConfig) -> list[str]:
    """The files the config's plugins read when it is loaded (a watermark's PNG): a change to one loads
    the config again, so that the images it marks are made again."""
    if not loaded.config.loaded_plugins:
        return []
    from ..plugins.options import option_files

    return option_files(loaded.config.loaded_plugins)


def _prepare_output(output: Path) -> Path:
    output.mkdir(parents=True, exist_ok=True)
    return output
