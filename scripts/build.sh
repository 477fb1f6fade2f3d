#!/usr/bin/env bash
# Installs what is missing, configures and builds AttnLab into build/
# (Release, -march=native): the attnlab program alone, or with --all every
# target (the test binaries too: scripts/test.sh). Other arguments go to the
# CMake configure step.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
targets=(--target attnlab)
if [ "${1:-}" = "--all" ]; then
  targets=()
  shift
fi
"$root/scripts/deps.sh"
"$root/scripts/configure.sh" "$root/build" -DCMAKE_BUILD_TYPE=Release "$@"
cmake --build "$root/build" -j"$(nproc)" "${targets[@]}"
