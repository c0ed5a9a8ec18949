#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run them.
#   bash scripts/test.sh            # the whole suite
#   bash scripts/test.sh -k slugs   # extra arguments go to pytest
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  echo "installing Debian's chromium for the browser tests …"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
exec .venv/bin/python -m pytest -n 2 -p no:cacheprovider "$@"
