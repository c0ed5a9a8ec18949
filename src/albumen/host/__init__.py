"""Hosting: keep galleries built on a server (`albumen watch`, `--each`) and publish them (`albumen deploy`).

sites.py    the galleries a host keeps: one, or one per top-level folder of a root (--each)
each.py     build each gallery once (`albumen build --each`), take down those removed
watch.py    the watch loop: the dev server's watcher and change classifier, without HTTP
deploy/     publish an output folder to S3 (boto3) or with rsync, moving only what changed
"""
