#!/usr/bin/env bash
# Regenerates the README's two pictures in assets/readme/ from the program as
# it is: the GUI on its default scene (a screenshot under Xvfb) and an
# exported figure (`attnlab render`). Run it after a change to either.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
out="$root/assets/readme"
mkdir -p "$out"
xvfb-run -a -s "-screen 0 1920x1200x24" \
  "$root/build/attnlab" gui --frames 60 --size 1600x1000 --screenshot "$out/gui.png"
"$root/build/attnlab" render sparse-strided --view image --length 64 --size slide --out "$out/figure.png"
echo "wrote $out/gui.png and $out/figure.png"
