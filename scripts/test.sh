#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run them.
#   bash scripts/test.sh            # the whole suite
#   bash scripts/test.sh -k slugs   # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian packages: chromium for the browser tests, ffmpeg for the videos.ffmpeg tests (Albumen itself
# needs neither: PyAV carries its own FFmpeg)
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
updated=""
apt_install() {  # apt_install [--no-install-recommends] PACKAGE...
  local names="" arg
  for arg in "$@"; do [[ "$arg" == --* ]] || names+=" $arg"; done
  echo "installing Debian's$names for the tests …"
  [ -n "$updated" ] || { $SUDO apt-get update -qq; updated=1; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  apt_install chromium fonts-dejavu-core
fi
if ! command -v ffmpeg >/dev/null 2>&1; then
  apt_install --no-install-recommends ffmpeg
fi
# rsync for the deploy tests, and Ceph's RADOS Gateway: a real S3 server the deploy tests start on
# loopback (../shared/s3/start_rgw.sh); without them those tests skip, saying why
if ! command -v rsync >/dev/null 2>&1; then
  apt_install --no-install-recommends rsync || echo "could not install rsync: the rsync deploy tests will skip"
fi
if ! command -v radosgw >/dev/null 2>&1 || ! command -v ceph-mon >/dev/null 2>&1 || ! command -v ceph-osd >/dev/null 2>&1; then
  apt_install --no-install-recommends radosgw ceph-mon ceph-osd \
    || echo "could not install Ceph's radosgw, ceph-mon and ceph-osd: the S3 deploy tests will skip"
fi

# The standards tests: Java (Debian's default-jre-headless) runs the W3C Nu HTML Checker; npm installs it
# and axe-core at the versions tests/npm/package-lock.json pins (each test skips, saying why, without them)
if ! command -v java >/dev/null 2>&1; then
  apt_install --no-install-recommends default-jre-headless || echo "could not install Java: the HTML checker's test will skip"
fi
if ! command -v npm >/dev/null 2>&1; then
  apt_install --no-install-recommends npm || echo "could not install npm: the HTML checker's test will skip"
fi
if command -v npm >/dev/null 2>&1 && [ ! tests/npm/node_modules/.package-lock.json -nt tests/npm/package-lock.json ]; then
  npm ci --prefix tests/npm --ignore-scripts --no-audit --no-fund --loglevel=error \
    || echo "could not install tests/npm (vnu-jar, axe-core): the HTML checker's test will skip"
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'

# Sigal's own annotated sigal.conf.py, for the import-sigal tests: read from Sigal 2.6.1's wheel (1 MB,
# downloaded once, never installed); without it those tests skip, saying why
export ALBUMEN_TEST_DOWNLOADS="${ALBUMEN_TEST_DOWNLOADS:-${XDG_CACHE_HOME:-$HOME/.cache}/albumen-tests}"
if ! ls "$ALBUMEN_TEST_DOWNLOADS"/sigal-2.6.1-*.whl >/dev/null 2>&1; then
  .venv/bin/python -m pip download -q --no-deps --only-binary=:all: sigal==2.6.1 -d "$ALBUMEN_TEST_DOWNLOADS" \
    || echo "could not download Sigal 2.6.1's wheel: the tests on its sigal.conf.py will skip"
fi
# loadgroup: the tests of a group run in one process, one after the other (test_cluster's share a
# Dask scheduler and two workers); the others are spread as with the default 'load'
exec .venv/bin/python -m pytest -n 2 --dist loadgroup -p no:cacheprovider "$@"
