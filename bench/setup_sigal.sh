#!/usr/bin/env bash
# Create bench/.venv-sigal with Sigal 2.6.1 (the reference the benchmark compares against).
# Usage (from anywhere): bash bench/setup_sigal.sh        PYTHON=python3.11 to choose the interpreter.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv-sigal"
py="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements-sigal.txt"
"$venv/bin/python" - <<'PY'
import PIL, pilkit, sigal
from sigal.settings import _DEFAULT_CONFIG as d
print(f"sigal {sigal.__version__} with Pillow {PIL.__version__}, pilkit {pilkit.__version__}")
print(f"sigal built-in defaults: img_size={d['img_size']} thumb_size={d['thumb_size']} jpg_options={d['jpg_options']}")
PY
"$venv/bin/sigal" --version
