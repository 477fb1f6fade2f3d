#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs every
# test: engine, CLI and GUI (the GUI tests start their own Xvfb servers).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh" -DATTNLAB_WERROR=ON
cd "$root/build"
ctest --output-on-failure -j"$(nproc)" --timeout 600
