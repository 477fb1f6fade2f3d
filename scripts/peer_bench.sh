#!/usr/bin/env bash
# Times PyTorch (Debian's python3-torch, installed when missing) and AttnLab
# on the same shapes, threads and machine, in the same run, cold and warm,
# and prints the ratios. Arguments go to scripts/peer_bench.py (--json, --quick,
# --only mha|gpt2|llama|gguf, --llama-bf16).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/build.sh"
"$root/scripts/deps.sh" python3-torch python3-numpy
# Debian's interpreter: its dist-packages hold torch, whatever python3 is first on PATH.
exec /usr/bin/python3 "$root/scripts/peer_bench.py" --attnlab "$root/build/attnlab" "$@"
