#!/usr/bin/env bash
# One command: install everything plus test tools, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev
HF_HUB_OFFLINE=1 .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
