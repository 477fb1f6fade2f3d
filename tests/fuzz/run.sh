#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time from the seed corpus; exits
# non-zero on any crash, hang, leak or sanitizer report, with the input that
# caused it kept as OUT/crash-* (replay: FUZZER OUT/crash-…). A hang is an
# input over 60 s: the engine target's most expensive valid runs (reversible
# stacks at their LSH work bound, lsh at 16 rounds over 4,096 buckets) take
# ~4 s under the sanitizers on a busy 2-core machine.
#   run.sh FUZZER SEEDS OUT SECONDS
set -euo pipefail
fuzzer="$1" seeds="$2" out="$3" seconds="$4"
mkdir -p "$out/corpus"
exec "$fuzzer" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 -print_final_stats=1 \
  -dict="$(dirname "$0")/json.dict" -artifact_prefix="$out/" "$out/corpus" "$seeds"
