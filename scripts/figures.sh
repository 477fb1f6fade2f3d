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
for view in model heads qk rollout table pattern; do
  render "default-$view" --model shipped:default --view "$view"
done
for view in maps heads table; do
  render "t5-$view" --model shipped:t5-toy --view "$view"
done
for attention in cross encoder decoder; do  # the model view's grid of each kind of attention
  render "t5-model-$attention" --model shipped:t5-toy --view model --attention-of "$attention"
done
for view in picture rollout distance model; do
  render "vit-$view" --model shipped:vit-shapes --view "$view"
done
echo "$(ls "$out"/*.svg | wc -l) figures in $out"
