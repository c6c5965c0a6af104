#!/usr/bin/env bash
# Run the legacy-profile differential test against TRL 0.28.0's own code instead of its transcription.
# TRL 0.28 cannot be installed beside TRL 1.x, so its wheel is downloaded (no dependencies) and unpacked
# into a folder that only the test's subprocess puts on sys.path. Needs PyPI access once.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
dir=${PAIRAUDIT_TRL_LEGACY:-${TMPDIR:-/tmp}/pairaudit-trl-0.28.0}
if [ ! -f "$dir/trl/__init__.py" ]; then
  mkdir -p "$dir/wheel"
  "$PY" -m pip download -q --no-deps --only-binary=:all: trl==0.28.0 -d "$dir/wheel"
  "$PY" -m zipfile -e "$dir"/wheel/trl-0.28.0-*.whl "$dir"
fi
PAIRAUDIT_TRL_LEGACY="$dir" HF_HUB_OFFLINE=1 "$PY" -m pytest -q -p no:cacheprovider \
  tests/test_trl_differential.py -k legacy "$@"
