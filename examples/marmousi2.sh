#!/usr/bin/env bash
# examples/marmousi2.sh — a synthetic inversion of the real Marmousi2 model (../shared/data,
# 12 km × 3 km) resampled to 20 m cells (151 × 601): observed data modeled from the true
# model (24 shots, 5 Hz Ricker, 4 s), inversion from the truth smoothed over 200 m with its
# water layer, settings in examples/marmousi2.ini. Writes marmousi2-run/ in the current
# folder; the models and data are made once. Usage (after scripts/demo or a build; it runs
# build/bin/starwave, or $STARWAVE; the raw model is ../shared/data's, or $MARMOUSI2):
#   examples/marmousi2.sh              # the whole inversion (about 20 minutes on 2 cores)
#   examples/marmousi2.sh --resume     # continue it after a crash or Ctrl-C
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
sw="${STARWAVE:-$here/../build/bin/starwave}"
raw="${MARMOUSI2:-$here/../../shared/data/marmousi2_vp_7p5m.f32}"
out=marmousi2-run
mkdir -p "$out"
export STARPU_SILENT="${STARPU_SILENT:-1}"
if [ ! -f "$out/observed.h5" ]; then
  "$sw" synth --kind marmousi2 --file "$raw" --spacing 20 --out "$out/true.h5" --overwrite
  "$sw" synth --kind marmousi2 --file "$raw" --spacing 20 --smooth 200 --keep-water --out "$out/initial.h5" --overwrite
  "$sw" survey --model "$out/true.h5" --nshots 24 --receiver-every 2 --frequency 5 --t-max 4 --out "$out/survey.h5" \
    --overwrite
  "$sw" model --model "$out/true.h5" --survey "$out/survey.h5" --out "$out/observed.h5" --overwrite
  "$sw" plot --in "$out/true.h5" --out "$out/true.png" --overwrite
fi
"$sw" fwi --config "$here/marmousi2.ini" "$@"
