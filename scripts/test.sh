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

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[test]'
exec .venv/bin/python -m pytest -n 2 -p no:cacheprovider "$@"
