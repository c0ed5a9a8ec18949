"""`albumen deploy OUTPUT DEST`: publish a built site to where visitors read it, moving only what changed.

DEST is `s3://bucket/prefix` (any S3-compatible store, through boto3: see s3.py) or an rsync
destination (`host:/var/www/photos`, a local folder: see rsync.py). Either way: the files that
are not pages first, then the pages that link to them, then, once the pages no longer link to
them, the deletion of what the site no longer has: only objects this tool put there itself, as
its record of them says (files.Record), never a guess from a listing. `--dry-run` says what it
would do and does nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from ...errors import UsageError
from ...report import plural, some
from .files import LocalFile, Record, is_page, list_output

Echo = Callable[[str], None]


@dataclass
class DeployReport:
    dest: str
    uploaded: int = 0
    uploaded_bytes: int = 0
    deleted: int = 0
    unchanged: int = 0
    requests: int | None = None  # S3: every HTTP request made
    dry_run: bool = False
    warnings: list[str] = field(default_factory=list)
    planned: list[str] = field(default_factory=list)  # --dry-run: what would be done, one line each

    def line(self) -> str:
        verb = "would deploy" if self.dry_run else "deployed"
        up = "would upload" if self.dry_run else "uploaded"
        size = f" ({_size(self.uploaded_bytes)})" if self.uploaded_bytes else ""
        requests = f"; {plural(self.requests, 'request')}" if self.requests is not None else ""
        return (f"{verb} to {self.dest}: {up} {plural(self.uploaded, 'file')}{size}, deleted {self.deleted}, "
                f"{self.unchanged} unchanged{requests}")


def _size(n: int) -> str:
    for unit in ("bytes", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n} bytes"  # pragma: no cover


def parse_s3(dest: str) -> tuple[str, str] | None:
    """s3://bucket/prefix -> (bucket, 'prefix/'); None for an rsync destination."""
    if not dest.startswith("s3://"):
        return None
    parts = urlsplit(dest)
    if not parts.netloc:
        raise UsageError(f"no bucket in {dest!r}", hint="write s3://BUCKET or s3://BUCKET/PREFIX")
    prefix = parts.path.strip("/")
    return parts.netloc, prefix + "/" if prefix else ""


def join_dest(dest: str, name: str) -> str:
    """The destination of one gallery of --each: DEST/<name>."""
    return dest.rstrip("/") + "/" + name if name else dest


def check_output(output: Path) -> None:
    from ...write.leftovers import albumen_was_here

    if not output.is_dir():
        raise UsageError(f"no such folder: {output}", hint="build the site first, then deploy its output folder")
    if not albumen_was_here(output):
        raise UsageError(f"{output} is not a site Albumen built (no static/albumen.css)",
                         hint="give the output folder of 'albumen build' (nothing was deployed)")


def deploy(output: Path, dest: str, dry_run: bool = False) -> DeployReport:
    """Deploy the site in output to dest. The caller holds the output (no build writes it meanwhile)."""
    check_output(output)
    local = list_output(output)
    record = Record.load(dest)
    s3 = parse_s3(dest)
    report = DeployReport(dest, dry_run=dry_run)
    try:
        if s3 is not None:
            _deploy_s3(local, record, report, *s3)
        else:
            _deploy_rsync(output, local, record, report, dest)
    finally:
        if not dry_run:
            record.save(local)
    return report


def _deploy_s3(local: dict[str, LocalFile], record: Record, report: DeployReport, bucket: str, prefix: str) -> None:
    from .s3 import S3Store, plan_s3

    store = S3Store(bucket, prefix)
    try:
        remote = store.listing()
        if remote is None:
            report.warnings.append(f"cannot list s3://{bucket}/{prefix} (no s3:ListBucket right): the record of "
                                   "earlier deploys alone says what is there")
        uploads, deletions, changed, foreign = plan_s3(local, remote, record)
        report.unchanged = len(local) - len(uploads)
        for key in changed:  # replaced by someone else since this tool put it: theirs now
            del record.objects[key]
        if changed:
            report.warnings.append(f"left {plural(len(changed), 'object')} no longer part of the site that someone "
                                   f"changed since Albumen uploaded them: {some(sorted(changed))}")
        if foreign:
            report.warnings.append(f"left {plural(foreign, 'object')} under s3://{bucket}/{prefix} that Albumen did "
                                   "not put there")
        if store.anyone_can_list():
            report.warnings.append(
                f"anyone can list the objects of s3://{bucket}/{prefix}: the links of private albums (p/...) can "
                "be found that way; let visitors get objects (s3:GetObject) but not list them (s3:ListBucket)")
        report.planned = [f"upload {f.key}" for f in uploads] + [f"delete {key}" for key in deletions]
        if report.dry_run:
            report.uploaded, report.deleted = len(uploads), len(deletions)
            report.uploaded_bytes = sum(f.size for f in uploads)
            return

        def done(f: LocalFile, etag: str) -> None:
            record.put(f, etag)
            report.uploaded += 1
            report.uploaded_bytes += f.size

        store.put_all([f for f in uploads if not is_page(f.key)], done)  # what pages link to first
        store.put_all([f for f in uploads if is_page(f.key)], done)
        failed = set(store.delete(deletions))  # after the pages no longer link to them
        for key in deletions:
            if key not in failed:
                del record.objects[key]
        report.deleted = len(deletions) - len(failed)
        if failed:
            report.warnings.append(f"could not delete {plural(len(failed), 'object')}: {some(sorted(failed))}")
    finally:
        report.requests = store.requests.count


def _deploy_rsync(output: Path, local: dict[str, LocalFile], record: Record, report: DeployReport, dest: str) -> None:
    from .rsync import deleted, run_rsync, sent

    gone = sorted(key for key in record.objects if key not in local)
    assets = [key for key in local if not is_page(key)]
    pages = [key for key in local if is_page(key)]
    dry = report.dry_run
    lines = run_rsync(output, dest, assets, dry_run=dry)
    for key in assets if not dry else ():
        record.put(local[key])
    lines += run_rsync(output, dest, pages, dry_run=dry)
    for key in pages if not dry else ():
        record.put(local[key])
    removed = run_rsync(output, dest, gone, "--delete-missing-args", dry_run=dry)
    for key in gone if not dry else ():
        del record.objects[key]
    report.uploaded = sent(lines)
    report.deleted = deleted(removed)
    report.unchanged = len(local) - report.uploaded
    report.planned = lines + removed


def deploy_after_build(dest: str) -> Callable:
    """For `albumen watch --deploy DEST`: deploy a gallery's output after a build changed it; the
    line to log. (The watcher holds the output: no build writes it meanwhile.)"""
    parse_s3(dest)  # a bad destination is a usage error at the start, not at the first build

    def deploy_site(site) -> str:
        report = deploy(site.output, join_dest(dest, site.name))
        return report.line() + "".join(f"; warning: {w}" for w in report.warnings)

    return deploy_site
