"""Publish an output folder: to S3 (boto3) or with rsync, moving only what changed. (Coming: issue 23.)"""

from __future__ import annotations

from collections.abc import Callable

from ...errors import UsageError


def deploy_after_build(dest: str) -> Callable:
    raise UsageError("--deploy is not available yet", hint="deploy with your own tool after each build for now")
