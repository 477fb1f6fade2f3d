#!/usr/bin/env bash
# Trains the tiny T5 of the toy English → French-like translation that AttnLab
# ships as assets/trained/t5-toy/ (transformers' layout: config.json,
# generation_config.json, model.safetensors, tokenizer.json), and writes the
# torch cross-check tests/data/t5_toy_expected.json (see
# scripts/train_t5_toy.py). Installs what it needs from Debian 12 with apt-get
# (sudo where not root): python3-torch, and libopenblas0-openmp, since torch
# calls the system BLAS and the reference libblas3 is much slower. Runs
# Debian's /usr/bin/python3.
# Arguments go to the Python script (e.g. --seed, --steps, --threads).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

"$root/scripts/deps.sh" python3-torch libopenblas0-openmp

exec /usr/bin/python3 "$root/scripts/train_t5_toy.py" "$@"
