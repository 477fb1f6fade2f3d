#!/usr/bin/env bash
# The interactive page at GPT-2 small's size (144 heads, 512 tokens): its size, the render, its first paint in
# Debian's chromium, and BertViz's JSON of the same maps in the same run (scripts/page_bench.py).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
"$root/scripts/deps.sh" chromium python3-numpy
modules="$root/build/npm/node_modules"
grep -qs '"version": "24.43.1"' "$modules/puppeteer-core/package.json" ||
  npm install --prefix "$root/build/npm" puppeteer-core@24.43.1 --no-audit --no-fund --loglevel=error
exec /usr/bin/python3 "$root/scripts/page_bench.py" --attnlab "$root/build/attnlab" --modules "$modules" "$@"
