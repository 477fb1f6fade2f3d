#!/usr/bin/env bash
# Trains the copy-task Neural Turing Machine that AttnLab ships as
# assets/trained/ntm-copy.safetensors, and writes the torch cross-check
# tests/data/ntm_copy_forward.json (see scripts/train_ntm_copy.py). Installs
# what it needs from Debian 12 with apt-get (sudo where not root):
# python3-torch, and libopenblas0-openmp, since torch calls the system BLAS and
# the reference libblas3 is much slower. Runs Debian's /usr/bin/python3.
# Arguments go to the Python script (e.g. --seed, --steps, --threads).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

"$root/scripts/deps.sh" python3-torch libopenblas0-openmp

exec /usr/bin/python3 "$root/scripts/train_ntm_copy.py" "$@"
