#!/usr/bin/env bash
# Generate every benchmark corpus into bench/corpora/ (skips the ones already there).
#   bench/corpora/c24-100       100 x 24 MP camera-like JPEGs:
#                               python ../shared/bench/make_corpus.py bench/corpora/c24-100 --count 100 --size 24mp --seed 1 --jobs 2
#                               (hard-linked from /tmp/bc/c24 instead when that holds the same corpus; --no-reuse to regenerate)
#   bench/corpora/tiny-10000    10,000 tiny 64x48 JPEGs with EXIF dates, 100 per folder
#   bench/corpora/tiny-100000   100,000 of them
# Uses the Albumen venv's python (numpy + Pillow): PYTHON=... to override.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
py="${PYTHON:-}"
if [ -z "$py" ]; then
    if [ -x /work/venv/bin/python ]; then py=/work/venv/bin/python; else py=python3; fi
fi
"$py" bench/corpora.py all "$@"
