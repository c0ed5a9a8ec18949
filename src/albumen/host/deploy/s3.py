"""Deploy to S3 or any S3-compatible store (R2, B2, MinIO, Ceph, ...) with boto3.

Endpoint, region and credentials come from where every AWS tool reads them: AWS_ENDPOINT_URL (or
AWS_ENDPOINT_URL_S3), AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, AWS_PROFILE, ~/.aws/config and
~/.aws/credentials. Nothing is made public by the deploy (no ACL is set): what visitors may read
is the bucket's policy, and it should let them get objects, never list them (the p/<token>/
folders of private albums would be found that way), which is checked with an anonymous request.

Requests: one listing per 1,000 objects under the prefix (what is there, to skip what is already
there), one PUT per file that differs, one DELETE per 1,000 objects removed, one anonymous listing.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from ...errors import AlbumenError, UsageError
from .files import LocalFile, Record

UPLOAD_THREADS = 8


def _client(anonymous: bool = False):
    try:
        import boto3
        from botocore import UNSIGNED
        from botocore.config import Config
    except ImportError:  # pragma: no cover - a dependency
        raise UsageError("deploying to S3 needs boto3", hint="pip install boto3") from None
    options = {
        # the checksums newer botocore adds to every upload by default are refused by some S3-compatible
        # stores; Content-MD5 (sent with each PUT) protects the bytes as well
        "request_checksum_calculation": "when_required", "response_checksum_validation": "when_required",
        "retries": {"max_attempts": 5, "mode": "standard"}, "max_pool_connections": UPLOAD_THREADS * 2,
    }
    if anonymous:
        options["signature_version"] = UNSIGNED
    return boto3.session.Session().client("s3", config=Config(**options))


class Counter:
    """Every HTTP request a client sends (retries included)."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def __call__(self, **kwargs) -> None:
        with self._lock:
            self.count += 1

    def attach(self, client) -> None:
        client.meta.events.register("before-send.s3", self)


def _error(exc: Exception, what: str) -> AlbumenError:
    code = getattr(exc, "response", {}).get("Error", {}).get("Code", "") if hasattr(exc, "response") else ""
    hint = {
        "NoSuchBucket": "create the bucket first, or check its name",
        "AccessDenied": "check the credentials (AWS_ACCESS_KEY_ID, AWS_PROFILE) and their rights on the bucket",
        "InvalidAccessKeyId": "check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
        "SignatureDoesNotMatch": "check AWS_SECRET_ACCESS_KEY",
    }.get(code, "check AWS_ENDPOINT_URL, the credentials and the network")
    return AlbumenError(f"{what}: {exc}", hint=hint)


class S3Store:
    """One bucket and prefix; the operations a deploy needs."""

    def __init__(self, bucket: str, prefix: str) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        self.errors = (BotoCoreError, ClientError)
        self.bucket, self.prefix = bucket, prefix
        self.requests = Counter()
        self.client = _client()
        self.requests.attach(self.client)

    def key(self, rel: str) -> str:
        return self.prefix + rel

    def listing(self) -> dict[str, tuple[str, int]] | None:
        """rel key -> (etag, size) of every object under the prefix; None when listing is not allowed
        (the record alone then says what is there)."""
        found: dict[str, tuple[str, int]] = {}
        token = None
        try:
            while True:
                args = {"Bucket": self.bucket, "Prefix": self.prefix, "MaxKeys": 1000}
                if token:
                    args["ContinuationToken"] = token
                page = self.client.list_objects_v2(**args)
                for obj in page.get("Contents", []):
                    found[obj["Key"][len(self.prefix):]] = (obj["ETag"], obj["Size"])
                if not page.get("IsTruncated"):
                    return found
                token = page["NextContinuationToken"]
        except self.errors as exc:
            if getattr(exc, "response", {}).get("Error", {}).get("Code") == "AccessDenied":
                return None
            raise _error(exc, f"cannot list s3://{self.bucket}/{self.prefix}") from None

    def put(self, f: LocalFile) -> str:
        """Upload one file with its headers; returns the ETag the store gave it."""
        with open(f.abs_path, "rb") as body:
            try:
                answer = self.client.put_object(
                    Bucket=self.bucket, Key=self.key(f.key), Body=body, ContentType=f.content_type,
                    CacheControl=f.cache_control, ContentMD5=base64.b64encode(bytes.fromhex(f.md5)).decode(),
                )
            except self.errors as exc:
                raise _error(exc, f"cannot upload {f.key}") from None
        return answer.get("ETag", "")

    def put_all(self, files: list[LocalFile], done: Callable[[LocalFile, str], None]) -> None:
        """Upload in parallel (a store answers each request in tens of milliseconds)."""
        if not files:
            return
        with ThreadPoolExecutor(UPLOAD_THREADS) as pool:
            for f, etag in zip(files, pool.map(self.put, files), strict=True):
                done(f, etag)

    def delete(self, keys: list[str]) -> list[str]:
        """Delete these objects (1,000 a request); returns those that could not be deleted."""
        failed: list[str] = []
        for start in range(0, len(keys), 1000):
            batch = keys[start:start + 1000]
            try:
                answer = self.client.delete_objects(
                    Bucket=self.bucket, Delete={"Objects": [{"Key": self.key(k)} for k in batch], "Quiet": True})
            except self.errors as exc:
                raise _error(exc, "cannot delete objects") from None
            failed += [e["Key"][len(self.prefix):] for e in answer.get("Errors", [])]
        return failed

    def anyone_can_list(self) -> bool:
        """Whether an anonymous request may list the prefix (one request, counted)."""
        client = _client(anonymous=True)
        self.requests.attach(client)
        try:
            client.list_objects_v2(Bucket=self.bucket, Prefix=self.prefix, MaxKeys=1)
        except self.errors:
            return False
        return True


def plan_s3(local: dict[str, LocalFile], remote: dict[str, tuple[str, int]] | None, record: Record):
    """(uploads, deletions, foreign): the files to upload (those not at the destination as the record
    says this tool put them, headers included), the objects to delete (this tool's, no longer part
    of the site, still as it put them) and how many objects under the prefix are someone else's."""
    uploads = []
    for f in local.values():
        record.digest(f)
        entry = record.objects.get(f.key)
        there = remote.get(f.key) if remote is not None else (entry.get("etag"), entry.get("size")) if entry else None
        if record.same(f) and there == (entry.get("etag"), f.size):
            continue
        uploads.append(f)
    deletions, changed = [], []
    for key, entry in record.objects.items():
        if key in local:
            continue
        there = remote.get(key) if remote is not None else (entry.get("etag"), entry.get("size"))
        if there is None:
            continue  # gone already
        if there == (entry.get("etag"), entry.get("size")):
            deletions.append(key)
        else:
            changed.append(key)  # replaced by someone since: theirs now
    foreign = sum(1 for key in (remote or {}) if key not in record.objects and key not in local)
    return uploads, sorted(deletions), sorted(changed), foreign
