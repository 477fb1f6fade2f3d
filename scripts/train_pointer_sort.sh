#!/usr/bin/env bash
# Trains the pointer network that sorts numbers and writes
# assets/trained/pointer-sort.safetensors and tests/data/pointer_sort_crosscheck.json
# (see scripts/train_pointer_sort.py). Installs what it needs from Debian 12
# with apt-get (sudo where not root): python3-torch; libopenblas0-openmp, since
# torch calls the system BLAS and the reference libblas3 is ~15x slower.
# Runs Debian's /usr/bin/python3 (torch comes from python3-torch, not pip).
# Arguments go to the Python script (e.g. --seed, --steps, --threads).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

"$root/scripts/deps.sh" python3-torch libopenblas0-openmp

exec /usr/bin/python3 "$root/scripts/train_pointer_sort.py" "$@"
