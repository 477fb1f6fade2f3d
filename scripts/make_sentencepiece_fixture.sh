#!/usr/bin/env bash
# Writes tests/data/sentencepiece/tokenizer.model and expected.json (see
# scripts/make_sentencepiece_fixture.py). Installs python3-sentencepiece from
# Debian 12 with apt-get (sudo where not root) and runs Debian's /usr/bin/python3.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

"$root/scripts/deps.sh" python3-sentencepiece

exec /usr/bin/python3 "$root/scripts/make_sentencepiece_fixture.py" "$@"
