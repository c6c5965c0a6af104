#!/usr/bin/env bash
# One command: install everything plus test tools, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
status=0
before=$(pgrep -f "ray/core/src/ray/raylet|gcs_server" | sort || true)
HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q -p no:cacheprovider "$@" || status=$?
# the Ray tests start a local Ray and must shut it down: fail if anything is left behind
after=$(pgrep -f "ray/core/src/ray/raylet|gcs_server" | sort || true)
left=$(comm -13 <(echo "$before") <(echo "$after") | grep -v '^$' || true)
if [ -n "$left" ]; then
  echo "error: Ray processes started by the tests are still running: $left" >&2
  status=1
fi
exit $status
