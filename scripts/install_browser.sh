#!/usr/bin/env bash
# Install headless Chromium (Debian/Ubuntu packages `chromium` and `chromium-driver`) for the
# report browser test (tests/test_report.py). Idempotent: does nothing when chromium is present.
# Needs root (or sudo). Usage: scripts/install_browser.sh
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }

if have chromium || have chromium-browser || have google-chrome || have google-chrome-stable; then
    echo "chromium already installed: $(command -v chromium || command -v chromium-browser || command -v google-chrome || command -v google-chrome-stable)"
    exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if have sudo; then SUDO="sudo"; else
        echo "error: installing chromium needs root; rerun as root or install sudo" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
# Debian names the package `chromium`; on Ubuntu the deb is a snap shim, so try chromium-browser as fallback.
if ! $SUDO apt-get install -y -q --no-install-recommends chromium chromium-driver fonts-dejavu-core; then
    $SUDO apt-get install -y -q --no-install-recommends chromium-browser chromium-chromedriver
fi
echo "installed: $(command -v chromium || command -v chromium-browser)"
