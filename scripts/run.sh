#!/usr/bin/env bash
# Installs what is missing, builds, and opens AttnLab on the default scene.
# Arguments are passed to attnlab (e.g. scripts/run.sh gui --variant local-p).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
exec "$root/build/attnlab" "$@"
