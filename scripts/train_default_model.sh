#!/usr/bin/env bash
# Trains the default model that AttnLab opens on and writes assets/model/
# (see scripts/train_default_model.py). Installs what it needs from Debian 12
# with apt-get (sudo where not root): python3-torch; libopenblas0-openmp, since
# torch calls the system BLAS and the reference libblas3 is ~15x slower; and the
# corpus, the King James Version in bible-kjv-text with its reader bible-kjv.
# Runs Debian's /usr/bin/python3 (torch comes from python3-torch, not pip).
# Arguments go to the Python script (e.g. --seed, --steps, --threads).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

"$root/scripts/deps.sh" python3-torch libopenblas0-openmp bible-kjv bible-kjv-text

exec /usr/bin/python3 "$root/scripts/train_default_model.py" "$@"
