#!/usr/bin/env bash
# Configures one AttnLab build tree: configure.sh DIR [CMAKE ARGS...].
# A new tree uses Ninja (Debian's ninja-build, which scripts/deps.sh
# installs); a tree configured before keeps the generator it has.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$1"
shift
generator=()
[ -f "$dir/CMakeCache.txt" ] || generator=(-G Ninja)
cmake -S "$root" -B "$dir" "${generator[@]}" "$@" >/dev/null
