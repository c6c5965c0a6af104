#!/usr/bin/env bash
# One command: install everything plus test tools, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
status=0
HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q -p no:cacheprovider "$@" || status=$?
# the Ray tests start a local Ray and must shut it down: fail if anything is left behind
if pgrep -f "ray/core/src/ray/raylet|gcs_server" >/dev/null 2>&1; then
  echo "error: Ray processes are still running after the tests" >&2
  pgrep -af "raylet|gcs_server" >&2 || true
  status=1
fi
exit $status
