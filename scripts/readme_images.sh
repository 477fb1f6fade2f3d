#!/usr/bin/env bash
# Regenerates the README's pictures in assets/readme/ from the program as it
# is, with the commands their captions give (`![… `attnlab …` …](assets/readme/X.png)`;
# tests/gui/readme_test.cpp runs the same commands): the GUI on its default scene
# (a screenshot under Xvfb) and an exported figure. Run it after a change to either.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
cd "$root"
grep -o '!\[[^]]*\](assets/readme/[^)]*\.png)' README.md | grep -o '`attnlab [^`]*`' | tr -d '`' |
  while read -r command; do
    read -ra args <<<"${command#attnlab }"
    echo "attnlab ${args[*]}"
    if [ "${args[0]}" = gui ]; then
      xvfb-run -a -s "-screen 0 1920x1200x24" "$root/build/attnlab" "${args[@]}" </dev/null
    else
      "$root/build/attnlab" "${args[@]}" </dev/null
    fi
  done
