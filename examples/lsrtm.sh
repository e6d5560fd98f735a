#!/usr/bin/env bash
# examples/lsrtm.sh — least-squares RTM of the real Marmousi2 model (../shared/data, 12 km × 3 km)
# resampled to 20 m cells (151 × 601): data modeled in the true model (24 shots, 8 Hz Ricker,
# 4 s), migrated in the truth smoothed over 200 m with its water layer kept — RTM, then LSRTM
# for N iterations — and drawn beside the true reflectivity: marmousi2-lsrtm/ in the current
# folder (true_reflectivity.png, rtm.png, lsrtm.png, lsrtm_figures/misfit.png …). The models
# and data are made once. Usage (after scripts/demo or a build; it runs build/bin/starwave, or
# $STARWAVE; the raw model is ../shared/data's, or $MARMOUSI2):
#   examples/lsrtm.sh [N]              # N iterations (default 10)
#   examples/lsrtm.sh N --resume       # continue to N after a crash or Ctrl-C
#   examples/lsrtm.sh N --overwrite    # start LSRTM again
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
sw="${STARWAVE:-$here/../build/bin/starwave}"
raw="${MARMOUSI2:-$here/../../shared/data/marmousi2_vp_7p5m.f32}"
iterations="${1:-10}"
shift $(($# > 0 ? 1 : 0))
out=marmousi2-lsrtm
mkdir -p "$out"
export STARPU_SILENT="${STARPU_SILENT:-1}"
if [ ! -f "$out/observed.h5" ]; then
  "$sw" synth --kind marmousi2 --file "$raw" --spacing 20 --out "$out/true.h5" --overwrite
  "$sw" synth --kind marmousi2 --file "$raw" --spacing 20 --smooth 200 --keep-water --out "$out/smooth.h5" --overwrite
  "$sw" survey --model "$out/true.h5" --nshots 24 --receiver-every 2 --frequency 8 --t-max 4 --out "$out/survey.h5" \
    --overwrite
  "$sw" model --model "$out/true.h5" --survey "$out/survey.h5" --out "$out/observed.h5" --overwrite
  "$sw" plot --in "$out/true.h5" --reflectivity --title "Marmousi2: true reflectivity" \
    --out "$out/true_reflectivity.png" --overwrite
fi
if [ ! -f "$out/rtm.h5" ]; then
  "$sw" rtm --model "$out/smooth.h5" --data "$out/observed.h5" --direct-wave model --out "$out/rtm.h5" --overwrite
  "$sw" plot --in "$out/rtm.h5" --dataset /image --title "RTM (inverse-scattering imaging condition)" --out "$out/rtm.png" \
    --overwrite
fi
# The water layer (the model's top 240 m) is known: the image is held at 0 there.
"$sw" lsrtm --model "$out/smooth.h5" --data "$out/observed.h5" --iterations "$iterations" --fix-top 240 \
  --out "$out/lsrtm.h5" --figures "$out/lsrtm_figures" "$@"
"$sw" plot --in "$out/lsrtm.h5" --dataset /image --title "LSRTM after $iterations iterations (dv, m/s)" \
  --out "$out/lsrtm.png" --overwrite
echo "examples/lsrtm.sh: wrote $out/true_reflectivity.png, rtm.png, lsrtm.png, lsrtm_figures/"
