#!/usr/bin/env bash
# One command: install everything plus test tools, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
status=0
# this checkout's Ray only (its .venv): another Ray on the machine (a cluster someone started) is not the tests'
ray_procs() { pgrep -f "$PWD/\.venv/lib/[^ ]*/ray/core/src/ray/(raylet/raylet|gcs/gcs_server)" | sort || true; }
before=$(ray_procs)
HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q -p no:cacheprovider "$@" || status=$?
# the Ray tests start a local Ray and must shut it down: fail if anything is left behind
after=$(ray_procs)
left=$(comm -13 <(echo "$before") <(echo "$after") | grep -v '^$' || true)
if [ -n "$left" ]; then
  echo "error: Ray processes started by the tests are still running: $left" >&2
  status=1
fi
exit $status
