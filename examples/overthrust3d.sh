#!/usr/bin/env bash
# examples/overthrust3d.sh — a small 3-D study on a 2-core laptop in minutes: an
# overthrust-like land cube (young sediments cut by a meandering channel, older strata
# stacked by three curved thrusts, a fast basement; 40 × 40 × 60 cells at 25 m:
# 1 × 1 × 1.5 km), an areal survey (3 × 3 shots, a receiver every 50 m in x and y: 600 per
# shot, 8 Hz Ricker, 1.2 s), the observed data, an RTM image in the smoothed model, and a
# short FWI from it (settings in examples/overthrust3d.ini). Every 3-D picture shows three
# slices: the section (z, x), the section (z, y) and the plan (y, x). Writes overthrust3d-run/ in the current folder; the
# models and data are made once. Usage (after scripts/demo or a build; it runs
# build/bin/starwave, or $STARWAVE):
#   examples/overthrust3d.sh              # data, RTM and the inversion
#   examples/overthrust3d.sh --resume     # continue the inversion after a crash or Ctrl-C
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
sw="${STARWAVE:-$here/../build/bin/starwave}"
out=overthrust3d-run
mkdir -p "$out"
export STARPU_SILENT="${STARPU_SILENT:-1}"
cube=(--kind overthrust --nz 40 --ny 40 --nx 60 --spacing 25)
if [ ! -f "$out/observed.h5" ]; then
  "$sw" synth "${cube[@]}" --out "$out/true.h5" --overwrite
  "$sw" synth "${cube[@]}" --smooth 150 --out "$out/initial.h5" --overwrite
  "$sw" survey --model "$out/true.h5" --nshots 3 --nshots-y 3 --receiver-every 2 --frequency 8 --t-max 1.2 \
    --out "$out/survey.h5" --overwrite
  "$sw" model --model "$out/true.h5" --survey "$out/survey.h5" --pml-width 10 --out "$out/observed.h5" --overwrite
  "$sw" plot --in "$out/true.h5" --out "$out/true.png" --overwrite
  "$sw" plot --in "$out/initial.h5" --out "$out/initial.png" --overwrite
  "$sw" plot --in "$out/observed.h5" --shot 4 --out "$out/gather.png" --overwrite  # the middle shot's 20 lines
fi
if [ ! -f "$out/rtm.h5" ]; then
  # The migration model is smooth: subtract what it predicts (the direct wave) before migrating.
  "$sw" rtm --model "$out/initial.h5" --data "$out/observed.h5" --pml-width 10 --direct-wave model \
    --out "$out/rtm.h5" --overwrite
  "$sw" plot --in "$out/rtm.h5" --dataset /image --out "$out/rtm.png" --overwrite
fi
"$sw" fwi --config "$here/overthrust3d.ini" "$@"
"$sw" plot --in "$out/inverted.h5" --out "$out/inverted.png" --overwrite
