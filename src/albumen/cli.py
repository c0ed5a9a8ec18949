"""Command line: click commands on top of build(); AlbumenError becomes a message and an exit code."""

from __future__ import annotations

import atexit
import contextlib
import errno
import gc
import signal
import sys
from pathlib import Path

import click

from . import __version__
from .config import CONFIG_NAME, load_config
from .errors import AlbumenError, UsageError
from .report import plural
from .terminal import RichReporter, ignored_line, reporter_for, say

EXIT_FAILED, EXIT_INTERRUPTED = 1, 130  # usage and config errors carry their own status (2)
@contextlib.contextmanager
def _sigterm_as_interrupt():
    """SIGTERM (a service manager, `timeout`, a CI job cancelled) stops a build or the server as Ctrl-C
    does: workers stopped, temporary files removed, the cache consistent. By default the process would
    vanish at once and leave its workers running."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: nothing to install
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def fail(exc: AlbumenError) -> None:
    say(f"error: {exc}", err=True)
    sys.exit(exc.exit_code)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="albumen")
def main() -> None:
    """Albumen turns a folder tree of photos into a fast static gallery website.

    \b
    Examples:
      albumen demo demo-photos          # write a small sample photo tree
      albumen build demo-photos         # build it into ./_build
      albumen build ~/Pictures -o ../site -j 4
    """


@main.command()
@click.argument("source", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default: _build).")
@click.option("-c", "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help=f"Config file (default: ./{CONFIG_NAME} when present).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: all cores).")
@click.option("--scheduler", metavar="ADDRESS",
              help="Make the images on a Dask cluster: 'tcp://HOST:8786' (an existing scheduler whose workers share "
              "the photo folder and OUTPUT) or 'local:N' (N local worker processes). Overrides the 'scheduler' "
              "setting; '' turns it off. See docs/CLUSTER.md.")
@click.option("--strict", is_flag=True, help="Exit with status 1 when any file was skipped or any warning was given.")
@click.option("--force", is_flag=True, help="Redo everything: every image and every page.")
@click.option("--force-album", "force_albums", multiple=True, metavar="GLOB",
              help="Redo the albums whose path (relative to SOURCE) matches GLOB, e.g. 'Trips/2024*'. Repeatable.")
@click.option("--wait", is_flag=True,
              help="When another Albumen process is writing OUTPUT, wait for it to finish (default: exit with status 2).")
@click.option("-q", "--quiet", is_flag=True, help="Print only problems and the summary.")
@click.option("-v", "--verbose", count=True, help="Print every file as it is processed.")
@click.option("--each", "each_root", type=click.Path(file_okay=False, path_type=Path), metavar="ROOT",
              help="Build every top-level folder of ROOT as a gallery of its own, into OUTPUT/<folder>/ (see 'albumen watch').")
@click.option("--url", "base_url", metavar="URL", help="With --each: each gallery's address is URL/<folder>/.")
def build(source, output, config_path, jobs, scheduler, strict, force, force_albums, wait, quiet, verbose, each_root,
          base_url) -> None:
    """Build the gallery from SOURCE (a folder of photos) into OUTPUT.

    \b
    Examples:
      albumen build ~/Pictures/Trips             # writes ./_build
      albumen build ~/Pictures -o ../site        # choose the output folder
      albumen build -c albumen.toml --strict     # source and output from the config; fail on any skip
      albumen build ~/Pictures --force-album 'Trips/2024*'   # redo some albums from scratch
      albumen build /shared/photos -o /shared/site --scheduler tcp://head:8786   # on a Dask cluster
      albumen build --each /srv/photos -o /var/www/photos   # one gallery per folder of /srv/photos

    One build at a time writes an output folder: while another build or 'albumen serve' writes
    OUTPUT, this one exits with status 2 naming it (or waits for it, with --wait).

    Exit status: 0 built (skipped files are listed), 1 build failed or --strict found problems,
    2 usage or configuration error, or OUTPUT in use by another process (nothing written),
    130 interrupted.
    """
    from .pool import WorkerPool

    if each_root is not None or base_url is not None:
        _each_options("build", source, each_root, base_url, config_path, force or force_albums or wait)
        sys.exit(_build_each(each_root, output or Path("_build"), base_url, jobs, strict))
    verbosity = 0 if quiet else 1 + verbose
    try:
        loaded, src, out = _locations(source, output, config_path, "build")
    except AlbumenError as exc:
        fail(exc)
        return
    # imported before the workers are forked, which then have it too (~80 ms of imports less each)
    from .build import BuildOptions
    from .build import build as run_build

    _freeze_at_exit()
    reporter = None
    try:
        with _sigterm_as_interrupt():  # from here to the summary: SIGTERM at any moment stops as Ctrl-C does
            with WorkerPool(jobs or 0) as pool:
                if force or not (out / "index.html").is_file():
                    pool.start()  # a first build has work for the workers: they start while the build gets ready

                options = BuildOptions(
                    source=src, output=out, jobs=jobs or 0, strict=strict, force=force,
                    force_albums=tuple(force_albums), wait=wait, scheduler=scheduler,
                )
                reporter = reporter_for(verbosity)
                if isinstance(reporter, RichReporter):
                    if pool.started:
                        reporter.keep_redrawing()
                    else:
                        pool.on_start.append(reporter.keep_redrawing)
                try:
                    report = run_build(loaded, options, reporter, pool)
                except AlbumenError as exc:
                    reporter.close()
                    fail(exc)
                    return
            reporter.close()
            _print_report(report, verbosity)
    except KeyboardInterrupt:
        if reporter is not None:
            reporter.close()
        say("interrupted: the site may be incomplete; build again to finish it", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if strict and report.problems:
        say("--strict: failing because files were skipped or warnings were given", err=True)
        sys.exit(EXIT_FAILED)


_exit_frozen = False


def _freeze_at_exit() -> None:
    """What is left when the process ends is left to the exit, not walked by the cyclic collector as the
    interpreter shuts down: a build's gallery and its plan hold each other (at a million photos, 1.3 s
    after the summary was printed). Asked for at exit only: a caller that runs a build in its own
    process (the tests) gets its collector as it was (see build._collector_paused)."""
    global _exit_frozen
    if not _exit_frozen:
        _exit_frozen = True
        atexit.register(gc.freeze)


def _each_options(command: str, source, each_root, base_url, config_path, other=False) -> None:
    """--each ROOT takes the place of SOURCE and of the config (each gallery has its own)."""
    problem = (
        "--url is for --each (a single gallery takes its address from its config)" if each_root is None
        else "give either SOURCE or --each ROOT, not both" if source is not None
        else "with --each, each gallery reads its own albumen.toml (inside its folder): -c has no use" if config_path
        else f"--force, --force-album and --wait are not for 'albumen {command} --each'" if other else ""
    )
    if problem:
        fail(UsageError(problem, hint=f"see 'albumen {command} --help'"))
    if base_url:
        from .config import validate_config

        try:
            validate_config({"url": base_url}, path=None)
        except AlbumenError as exc:
            fail(UsageError(f"--url: {exc}"))


def _build_each(root: Path, outroot: Path, base_url: str | None, jobs: int | None, strict: bool) -> int:
    """albumen build --each: every gallery once; the exit status."""
    from .host.each import build_each
    from .pool import WorkerPool

    try:
        with _sigterm_as_interrupt(), WorkerPool(jobs or 0) as pool:
            results = build_each(root, outroot, base_url, pool, say, lambda text: say(text, err=True))
    except AlbumenError as exc:
        fail(exc)
    except KeyboardInterrupt:
        say("interrupted: the gallery being built may be incomplete; build again to finish it", err=True)
        return EXIT_INTERRUPTED
    failed = [r.site.name for r in results if r.report is None]
    problems = [r.site.name for r in results if r.report is not None and r.report.problems]
    built = len(results) - len(failed)
    say(f"built {built} of {len(results)} galleries -> {outroot}" + (f"; failed: {', '.join(failed)}" if failed else ""))
    if strict and problems:
        say(f"--strict: failing because files were skipped or warnings were given in {', '.join(problems)}", err=True)
    return EXIT_FAILED if failed or (strict and problems) else 0


def _locations(source: Path | None, output: Path | None, config_path: Path | None, command: str):
    """The config, photo folder and output folder, from the command line first, then the config."""
    loaded = load_config(config_path)
    config = loaded.config
    src = source if source is not None else loaded.resolve(config.source)
    if src is None:
        raise UsageError(
            "no photo folder given",
            hint=f"type 'albumen {command} PHOTOS' with the folder that holds your photos, "
            f"or set source = \"...\" in {CONFIG_NAME}",
        )
    out = output if output is not None else (loaded.resolve(config.output) if loaded.path else None)
    return loaded, src, out or Path("_build")


def _print_report(report, verbosity: int) -> None:
    from .build import BuildReport

    assert isinstance(report, BuildReport)
    limit = None if verbosity >= 2 else 20
    shown = report.warnings if limit is None else report.warnings[:limit]
    for warning in shown:
        say(f"warning: {warning}", err=True)
    if limit is not None and len(report.warnings) > limit:
        say(f"warning: … and {len(report.warnings) - limit} more warnings (use -vv to see all)", err=True)
    for note in report.notes:
        if verbosity >= 1:
            say(f"note: {note}")
    for skipped in report.skipped:
        say(f"skipped: {skipped.src_uri}: {skipped.reason}", err=True)
    if report.ignored and verbosity >= 1:
        say(ignored_line(report.ignored, verbosity))
    if verbosity >= 1 and report.unchanged:
        say("nothing changed since the last build")
    if verbosity >= 1:
        made = plural(report.derivatives_made, "derivative")
        say(
            (f"made {made} of {report.processed}" if report.photos_processed + report.videos_processed else f"made {made}")
            + (f" ({report.derivatives_moved} more moved, not re-made)" if report.derivatives_moved else "")
            + "; "
            f"rendered {plural(report.pages_rendered, 'page')}, wrote {plural(report.pages_written, 'file')}; "
            f"removed {plural(report.stale_removed, 'stale file')}"
        )
    say(
        f"built {plural(report.albums, 'album')}, {plural(report.photos, 'photo')}, {plural(report.videos, 'video')}, "
        f"{len(report.skipped)} skipped in {report.seconds:.1f} s -> {report.output}"
    )


@main.command()
@click.argument("source", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default: _build).")
@click.option("-c", "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help=f"Config file (default: ./{CONFIG_NAME} when present).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (other than loopback: a warning).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port (0: any free port).")
@click.option("--open", "open_browser", is_flag=True, help="Open the site in a web browser.")
@click.option("--no-watch", is_flag=True, help="Build and serve, without watching for changes.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: all cores).")
def serve(source, output, config_path, host, port, open_browser, no_watch, jobs) -> None:
    """Build SOURCE, serve the site, and rebuild what changes as you edit.

    Watches the photo folder, the config file and the theme: a new or changed photo is
    processed, a deleted one removed, a sidecar or template edit re-renders pages, a config
    edit rebuilds with the usual checks. Open pages reload by themselves after each rebuild.
    The output is exactly what 'albumen build' writes (the reload script is added to pages
    while serving, never written).

    \b
    Examples:
      albumen serve ~/Pictures/Trips --open
      albumen serve --port 8080                  # source and output from ./albumen.toml
    """
    from .build import build as run_build
    from .serve import ServeOptions
    from .serve import serve as run_serve

    try:
        loaded, src, out = _locations(source, output, config_path, "serve")
        options = ServeOptions(
            source=src.resolve(), output=out.resolve(), config_path=loaded.path, host=host, port=port,
            watch=not no_watch, open_browser=open_browser, jobs=jobs or 0,
        )

        def builder(loaded_config, build_options):
            return run_build(loaded_config, build_options)

        with _sigterm_as_interrupt():
            status = run_serve(
                options, builder,
                echo=lambda text: say(text, err=text.startswith(("warning", "rebuild failed", "build failed", "config not"))),
            )
    except AlbumenError as exc:
        fail(exc)
        return
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, errno.EADDRNOTAVAIL, errno.EACCES):
            fail(UsageError(f"cannot serve on {host}:{port}: {exc.strerror}", hint="try another --port"))
        else:
            fail(UsageError(f"serving stopped: {exc.strerror or exc}"))
        return
    sys.exit(status)


@main.command()
@click.argument("source", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default: _build).")
@click.option("-c", "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help=f"Config file (default: ./{CONFIG_NAME} when present).")
@click.option("--each", "each_root", type=click.Path(file_okay=False, path_type=Path), metavar="ROOT",
              help="Every top-level folder of ROOT is a gallery of its own (its own albumen.toml inside it), "
              "published at OUTPUT/<folder>/.")
@click.option("--url", "base_url", metavar="URL", help="With --each: each gallery's address is URL/<folder>/.")
@click.option("--deploy", "dest", metavar="DEST",
              help="After each build that changed a site, deploy it to DEST (s3://bucket/prefix or host:/path; "
              "with --each, DEST/<folder>/). See 'albumen deploy'.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes, for all galleries (default: all cores).")
def watch(source, output, config_path, each_root, base_url, dest, jobs) -> None:
    """Build SOURCE, then rebuild what changes, for as long as it runs (a server's daemon).

    The dev server's watcher without the web server: one line per build in the log (what
    changed, what was written, seconds, skipped files). A bad photo, sidecar or config edit is
    reported and the last good site kept until the next change; a photo folder missing or
    empty (a disk not mounted) is waited for. SIGTERM or Ctrl-C stop it, also mid-build, with
    no worker left and every page's images in place. See docs/HOSTING.md for a systemd unit.

    \b
    Examples:
      albumen watch ~/Pictures -o /var/www/photos
      albumen watch --each /srv/photos -o /var/www/photos --url https://photos.example.org/
      albumen watch ~/Pictures -o site --deploy s3://my-bucket/photos

    With --each, the galleries share one worker pool and are rebuilt one at a time, in the order
    their changes arrived; a folder added to ROOT is built, one removed has its site taken down.
    Exit status: 0 stopped, 2 usage error (nothing watched).
    """
    from .host.sites import Site, check_roots
    from .host.watch import EachGallery, OneGallery, WatchOptions, watch_galleries

    try:
        if each_root is not None or base_url is not None:
            _each_options("watch", source, each_root, base_url, config_path)
            root, outroot = check_roots(each_root, output or Path("_build"))
            galleries = EachGallery(root, outroot, base_url)
        else:
            loaded, src, out = _locations(source, output, config_path, "watch")
            if src.exists():
                from .paths import check_paths

                check_paths(src, out)
            galleries = OneGallery(Site("", src.resolve(), out.resolve(), loaded.path))
        options = WatchOptions(jobs=jobs or 0)
        if dest is not None:
            from .host.deploy import deploy_after_build

            options.deploy = deploy_after_build(dest)
        with _sigterm_as_interrupt():
            status = watch_galleries(galleries, options, say, lambda text: say(text, err=True))
    except AlbumenError as exc:
        fail(exc)
        return
    sys.exit(status)


@main.command()
@click.argument("output", type=click.Path(file_okay=False, path_type=Path))
@click.argument("dest")
@click.option("--dry-run", is_flag=True, help="Say what would be uploaded and deleted; change nothing.")
@click.option("-v", "--verbose", is_flag=True, help="List every file uploaded or deleted (with --dry-run: that would be).")
def deploy(output: Path, dest: str, dry_run: bool, verbose: bool) -> None:
    """Publish the site in OUTPUT to DEST, moving only what changed.

    DEST is s3://BUCKET/PREFIX (any S3-compatible store: endpoint and credentials from the
    usual AWS variables and files, AWS_ENDPOINT_URL, AWS_PROFILE, ~/.aws/) or an rsync
    destination (HOST:/var/www/photos, a local folder). Files that differ are uploaded with
    their Content-Type and Cache-Control (immutable for Albumen's hashed names, no-cache for
    pages, feeds and the sitemap), the pages after what they link to; then what the site no
    longer has is deleted, and only what this command uploaded there itself (its record, kept
    beside the build caches). Nothing is made public and no listing is needed; a warning says
    when anyone can list the bucket (private albums' links would be found that way).

    \b
    Examples:
      albumen deploy _build s3://my-photos/site
      AWS_ENDPOINT_URL=https://<account>.r2.cloudflarestorage.com albumen deploy _build s3://photos
      albumen deploy _build www.example.org:/var/www/photos --dry-run

    Exit status: 0 deployed, 1 the upload failed, 2 usage error (nothing deployed), or OUTPUT
    being built (by 'albumen build', 'serve' or 'watch': use 'albumen watch --deploy').
    """
    from .host.deploy import deploy as run_deploy
    from .locks import hold_output

    try:
        if not output.is_dir():
            raise UsageError(f"no such folder: {output}", hint="build the site first, then deploy its output folder")
        with _sigterm_as_interrupt(), hold_output(output.resolve(), can_wait=False):
            report = run_deploy(output.resolve(), dest, dry_run)
    except AlbumenError as exc:
        fail(exc)
        return
    except KeyboardInterrupt:
        say("interrupted: deploy again to finish (what was uploaded is recorded)", err=True)
        sys.exit(EXIT_INTERRUPTED)
    for line in report.planned if (dry_run or verbose) else ():
        say(f"  {line}")
    for warning in report.warnings:
        say(f"warning: {warning}", err=True)
    say(report.line() + ("; dry run: nothing changed" if dry_run else ""))


@main.command()
@click.argument("directory", required=False, default=".", type=click.Path(file_okay=False, path_type=Path))
@click.option("--source", type=click.Path(file_okay=False, path_type=Path), help="The photo folder, written into the file.")
def init(directory: Path, source: Path | None) -> None:
    """Write an annotated albumen.toml listing every setting with its default.

    Never overwrites an existing file, and never writes into the photo folder.

    \b
    Examples:
      albumen init                          # ./albumen.toml
      albumen init ~/gallery --source ~/Pictures/Published
    """
    import os

    from .config.docs import annotated_toml

    target = directory / CONFIG_NAME
    if target.exists():
        fail(UsageError(f"{target} already exists; it was left as it is", hint="edit it, or remove it first"))
    if source is not None:
        src = source.resolve()
        here = directory.resolve()
        if here == src or src in here.parents:
            fail(UsageError(
                f"{directory} is inside the photo folder {source}; Albumen never writes there",
                hint="put the config beside the photo folder, e.g. albumen init .. --source Photos",
            ))
    text = annotated_toml()
    if source is not None:
        rel = os.path.relpath(source.resolve(), directory.resolve())
        text = text.replace('# source = ""', f'source = "{rel}"', 1)
    directory.mkdir(parents=True, exist_ok=True)
    with open(target, "x", encoding="utf-8") as f:
        f.write(text)
    say(f"wrote {target}: every setting with its default, commented out")


@main.command("import-sigal")
@click.argument("sigal_conf", type=click.Path(dir_okay=False, path_type=Path))
@click.option("-o", "--output", "toml_path", default=CONFIG_NAME, show_default=True,
              type=click.Path(dir_okay=False, path_type=Path), help="The albumen.toml to write.")
@click.option("--force", is_flag=True, help="Replace OUTPUT when it exists.")
@click.option("-v", "--verbose", is_flag=True, help="Also list the settings that need nothing in Albumen.")
def import_sigal(sigal_conf: Path, toml_path: Path, force: bool, verbose: bool) -> None:
    """Write an albumen.toml from a Sigal configuration (sigal.conf.py), without running it.

    The file is read as Python source: settings given as literals (strings, numbers, tuples,
    lists, dicts) are carried over, each under a comment naming its line; a value only running
    the file would give (a call, a name, an f-string...) is reported, not run. Every setting that
    is not carried over is listed with the reason, here and at the end of the file. Paths are
    rewritten relative to OUTPUT. Never replaces an existing file without --force, and never
    writes into the photo folder.

    \b
    Examples:
      albumen import-sigal sigal.conf.py && albumen build
      albumen import-sigal ~/gallery/sigal.conf.py -o ~/gallery/albumen.toml

    Exit status: 0 written, 2 the file is not valid Python (the line is named), cannot be read,
    or OUTPUT exists.
    """
    import os

    from .fsutil import write_atomic
    from .importers.sigal import import_sigal as run_import

    try:
        if toml_path.exists() and not force:
            raise UsageError(f"{toml_path} already exists; it was left as it is", hint="pass --force to replace it")
        if toml_path.exists() and sigal_conf.exists() and os.path.samefile(toml_path, sigal_conf):
            raise UsageError(f"{toml_path} is the Sigal configuration itself", hint="write the albumen.toml elsewhere (-o)")
        result, text = run_import(sigal_conf, toml_path)
        here = toml_path.resolve().parent
        if result.source is not None and (here == result.source or result.source in here.parents):
            raise UsageError(
                f"{toml_path} would be inside the photo folder {result.source}; Albumen never writes there",
                hint="write it beside the photo folder (-o)",
            )
    except AlbumenError as exc:
        fail(exc)
        return
    write_atomic(str(toml_path.absolute()), text.encode("utf-8"))
    lost = [left for left in result.left if left.lost]
    same = [left for left in result.left if not left.lost]
    say(f"wrote {toml_path} from {sigal_conf}: {plural(len(result.lines), 'setting')}, "
         f"{len(result.approximate)} of them approximately; {len(lost)} not carried over"
         + (f", {len(same)} needing no setting in Albumen" if same else ""))
    for line in result.approximate:
        where = f"{line.table}.{line.key}" if line.table else line.key
        say(f"approximately: {where}: {line.notes[0] if line.notes else line.origin}")
    for left in lost:
        say(f"not carried over: {left.name}{f' ({left.where})' if left.where else ''}: {left.reason}")
    for left in same if verbose else []:
        say(f"not needed: {left.name}{f' ({left.where})' if left.where else ''}: {left.reason}")
    if same and not verbose:
        say(f"({plural(len(same), 'setting')} needing no setting in Albumen are listed in {toml_path}, or with -v)")
    config = "" if toml_path.resolve() == (Path.cwd() / CONFIG_NAME).resolve() else f" -c {toml_path}"
    say(f"next: albumen build{config}" + ("" if result.source is not None else " PHOTOS (the photo folder)"))


@main.command("set-meta")
@click.argument("path", type=click.Path(path_type=Path))
@click.argument("assignments", nargs=-1, required=True, metavar="KEY=VALUE...")
@click.option("--dry-run", is_flag=True, help="Show the change as a diff; write nothing.")
def set_meta(path: Path, assignments: tuple[str, ...], dry_run: bool) -> None:
    """Set keys in the sidecar of a photo or an album (a folder: its index.md); KEY= removes KEY.

    The one command that writes into the photo folder: only the sidecar, only when asked. It is
    found as the build finds it (photo.jpg.md, else photo.md; a new one is photo.md, or
    photo.jpg.md when another file is named photo too). The rest of an existing sidecar is kept
    byte for byte (its text, other keys, comments, line endings, encoding, and its header style:
    'Key: value' lines, YAML between '---' or TOML between '+++'); it is written atomically. A
    sidecar that cannot be read whole and trusted is left as it is, saying why.

    \b
    Examples:
      albumen set-meta Trips/beach.jpg title="The beach at noon" tags="sea, sand"
      albumen set-meta Trips/2024 album_sort=-date sort=   # an album's index.md; sort= removes sort
      albumen set-meta Trips/beach.jpg description="$(cat note.txt)" --dry-run

    Exit status: 0 written (or nothing to change), 1 the sidecar cannot be changed safely,
    2 usage error (no such photo or folder, a bad KEY=VALUE). Nothing is written unless 0.
    """
    from .setmeta import diff, parse_assignments, plan_set_meta, write_sidecar

    try:
        edit = plan_set_meta(str(path), parse_assignments(assignments))
        for note in edit.notes:
            say(f"note: {note}")
        if not edit.changed:
            say(f"{edit.abs_path} already says so; nothing written")
            return
        if dry_run:
            say(diff(edit))
            say("dry run: nothing written")
            return
        write_sidecar(edit)
    except AlbumenError as exc:
        fail(exc)
        return
    except OSError as exc:
        fail(AlbumenError(f"cannot write {exc.filename or path}: {exc.strerror or exc}; nothing was written"))
        return
    what = "wrote" if edit.old is None else "updated"
    say(f"{what} {edit.abs_path} (the sidecar of {edit.describes}): {', '.join(edit.changes)}")


@main.command()
@click.argument("source", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), help="Output folder (default: _build).")
@click.option("-c", "--config", "config_path", type=click.Path(dir_okay=False, path_type=Path),
              help=f"Config file (default: ./{CONFIG_NAME} when present).")
@click.option("--rotate", metavar="ALBUM", help="Give ALBUM (its path relative to SOURCE) a new link; the old one stops working at the next build.")
@click.option("--each", "each_root", type=click.Path(file_okay=False, path_type=Path), metavar="ROOT",
              help="The galleries of 'albumen build/watch --each ROOT' (each has links of its own); "
              "--rotate then takes FOLDER/ALBUM.")
@click.option("--url", "base_url", metavar="URL", help="With --each: the URL given to build or watch.")
def links(source, output, config_path, rotate, each_root, base_url) -> None:
    """List the private albums of SOURCE with their links.

    An album is private when its index.md says 'private: true' or the config lists it in
    'private'. Its link holds a 128-bit token made from your secret ($ALBUMEN_SECRET, or a file
    Albumen creates on first use); links are absolute when 'url' is set.

    \b
    Examples:
      albumen links ~/Pictures
      albumen links ~/Pictures --rotate "Holidays/Family"
      albumen links --each /srv/photos -o /var/www/photos --rotate "Alice/Family"
    """
    if each_root is None and base_url is None:
        try:
            loaded, src, out = _locations(source, output, config_path, "links")
        except AlbumenError as exc:
            fail(exc)
            return
        _links_of(loaded, src, out, rotate)
        return
    from .host.sites import check_roots, find_galleries
    from .process.names import slugify
    from .tokens import secret_namespace

    _each_options("links", source, each_root, base_url, config_path)
    try:
        root, outroot = check_roots(each_root, output or Path("_build"))
    except AlbumenError as exc:
        fail(exc)
        return
    folder, _, album = (rotate or "").partition("/")
    found = find_galleries(root, outroot, base_url)
    if rotate is not None and (not album or slugify(folder) not in found.sites):
        fail(UsageError(f"{rotate!r} is not FOLDER/ALBUM of a gallery in {root}",
                        hint="give the gallery's folder, then the album's path in it: 'Alice/Holidays/Family'"))
    for site in found.sites.values():
        if rotate is not None and site.name != slugify(folder):
            continue
        say(f"{site.name} ({site.source}):")
        with secret_namespace(site.name):
            try:
                loaded = site.load()
            except AlbumenError as exc:
                say(f"error: {exc}", err=True)
                continue
            _links_of(loaded, site.source, site.output, album if rotate is not None else None)


def _links_of(loaded, src: Path, out: Path, rotate: str | None) -> None:
    """The private albums of one gallery and their links (albumen links)."""
    from .cache import BuildCache
    from .config import album_path
    from .paths import cache_location, check_home, check_paths
    from .render.env import absolute_url
    from .scan import scan_source
    from .scan.arrange import is_published
    from .tokens import (
        PRIVATE_DIR,
        load_secret,
        marked_private,
        private_links,
        rotation_warnings,
        rotations_path,
    )
    from .tokens import rotate as rotate_link

    try:
        src, out = check_paths(src, out)
        check_home(src, out)
        config = loaded.config
        cache = BuildCache(cache_location(loaded, src, out))
        try:
            gallery = scan_source(str(src), config, cache, config_path=str(loaded.path) if loaded.path else None)
        finally:
            cache.close()
        if rotate is not None:
            wanted = album_path(rotate)
            album = gallery.albums.get(wanted)
            if album is None or not album.marked_private:
                raise UsageError(
                    f"{rotate!r} is not a private album of {src}",
                    hint="give the album's folder path relative to the photo folder, as 'albumen links' lists it",
                )
            load_secret()
            rotations = rotate_link(wanted, config.private_rotations)
        dirs = private_links(gallery, config)
        for warning in rotation_warnings(marked_private(gallery), config):
            say(f"warning: {warning}", err=True)
    except AlbumenError as exc:
        fail(exc)
        return
    if not dirs:
        say("no private albums (mark one with 'private: true' in its index.md, or list it in 'private')")
        return
    from .seal.keys import find_units

    secret = load_secret(create=False)
    say(f"secret: {secret.origin}")
    sealed = find_units(gallery, config)
    for uri, folder in dirs.items():
        album = gallery.albums[uri]
        link = absolute_url(config.url, f"{folder}/") if config.url else f"{folder}/"
        state = "" if is_published(album) else "  (nothing to show yet: not published)"
        if uri in sealed:  # (a rotation gives it a new key too: every file is encrypted again)
            state += "  (password)"
        marker = " <- new link" if rotate is not None and uri == album_path(rotate) else ""
        say(f"{uri}: {link}{state}{marker}")
    if rotate is not None:
        say(f"build again to publish the new link; the old {PRIVATE_DIR}/… folder is then removed")
        # this gallery's private albums only (the local record is shared by every gallery of this machine)
        table = ", ".join(f"{_toml_string(uri)} = {rotations[uri]}" for uri in sorted(dirs) if rotations.get(uri))
        where = loaded.path or f"{CONFIG_NAME} in the folder you build from (or the file you give with -c)"
        say(
            f"the rotation is recorded on this machine only ({rotations_path()}); for every machine that builds "
            f"the site (CI with ALBUMEN_SECRET too) to publish the new link, put this line in {where}, "
            f"above its first [section]:\nprivate_rotations = {{ {table} }}"
        )


def _toml_string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped, the rest as is."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'



@main.command()
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Write into DIRECTORY even if it is not empty (never over an existing file).")
def demo(directory: Path, force: bool) -> None:
    """Write a small demo photo tree into DIRECTORY (drawn pictures, dates, sidecars, a nested album).

    \b
    Example:
      albumen demo demo-photos && albumen build demo-photos && python -m http.server -d _build
    """
    from .demo import MARKER, write_demo

    if (directory / MARKER).exists() and not force:
        say(f"{directory} already holds the demo photos; left as they are")
        return
    if directory.exists() and any(directory.iterdir()) and not force:
        fail(UsageError(f"{directory} is not empty", hint="choose a new folder, or pass --force (existing files are kept)"))
    count = write_demo(directory)
    say(f"wrote {count} demo files to {directory}")


if __name__ == "__main__":  # pragma: no cover
    main()
