#!/usr/bin/env bash
# Trains the tiny ViT shape classifier that AttnLab ships as
# assets/trained/vit-shapes/ (config.json, model.safetensors,
# preprocessor_config.json and examples/*.png in transformers' layout), and
# writes the torch cross-check tests/data/vit_shapes_expected.json (see
# scripts/train_vit_shapes.py). Installs what it needs from Debian 12 with
# apt-get (sudo where not root): python3-torch, libopenblas0-openmp (torch calls
# the system BLAS and the reference libblas3 is much slower), python3-pil and
# python3-numpy. Runs Debian's /usr/bin/python3.
# Arguments go to the Python script (e.g. --seed, --steps, --threads).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

"$root/scripts/deps.sh" python3-torch libopenblas0-openmp python3-pil python3-numpy

exec /usr/bin/python3 "$root/scripts/train_vit_shapes.py" "$@"
