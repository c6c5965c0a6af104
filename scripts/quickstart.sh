#!/usr/bin/env bash
# One command: install everything (default models included) and audit the shipped example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
HF_HUB_OFFLINE=1 .venv/bin/pairaudit scan examples/hh-rlhf-helpful-base-500.jsonl --out pairaudit-out "$@"
echo "open pairaudit-out/report.html"
