#!/usr/bin/env bash
# Render every view of every variant and of the three shipped model kinds as
# SVG, with its --describe JSON, into one folder: run it before and after a
# change and compare the folders (diff -r) to see which figures it moved.
#   scripts/figures.sh BINARY OUTDIR
set -euo pipefail
bin=${1:?usage: scripts/figures.sh BINARY OUTDIR}
out=${2:?usage: scripts/figures.sh BINARY OUTDIR}
mkdir -p "$out"
render() {  # NAME ARGS...: one figure and its description
  local name=$1; shift
  # A view that needs the user's own file (learned-pe's table) writes its refusal instead.
  "$bin" render "$@" --size 900x700 --out "$out/$name.svg" --describe "$out/$name.json" >/dev/null 2>"$out/$name.err" ||
    return 0
  rm -f "$out/$name.err"
}
"$bin" list --json | /usr/bin/python3 -c '
import json, sys
for v in json.load(sys.stdin):
    for view in v["views"]:
        print(v["name"], view)' | while read -r variant view; do
  render "variant-$variant-$view" "$variant" --view "$view"
done
# Each model kind's views, from the registry, on its shipped model (the
# encoder–decoder's model view once per kind of attention).
declare -A shipped=([text]=default [encoder-decoder]=t5-toy [vision]=vit-shapes)
declare -A stem=([text]=default [encoder-decoder]=t5 [vision]=vit)
"$bin" list --kinds --json | /usr/bin/python3 -c '
import json, sys
for k in json.load(sys.stdin):
    for view in k["views"]:
        print(k["name"], view["name"])' | while read -r kind view; do
  [ -n "${shipped[$kind]:-}" ] || { echo "scripts/figures.sh: no shipped model of kind '$kind'" >&2; exit 1; }
  if [ "$kind" = encoder-decoder ] && [ "$view" = model ]; then
    for attention in cross encoder decoder; do
      render "t5-model-$attention" --model "shipped:${shipped[$kind]}" --view model --attention-of "$attention"
    done
  else
    render "${stem[$kind]}-$view" --model "shipped:${shipped[$kind]}" --view "$view"
  fi
done
echo "$(ls "$out"/*.svg | wc -l) figures in $out"
