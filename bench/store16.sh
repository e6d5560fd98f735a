#!/usr/bin/env bash
# bench/store16.sh — the 16-bit store (--store-compression) on the demo's inversion: the demo's
# model, survey, data and smooth starting model (scripts/demo), then its `fwi` (L-BFGS, bands
# 4, 7, 10 Hz, the water layer fixed) with the store kept as computed, in IEEE half and in
# bfloat16 (and ZFP at 16 and 8 bits a value): wall time, peak RSS, the plan line and the final
# model's error against the truth.
#   bench/store16.sh [build dir] [iterations per band] [stores]
#   defaults: build 15 "none fp16 bf16"; also zfp16, zfp12, zfp8
set -euo pipefail
b="${1:-build}"
iterations="${2:-15}"
stores="${3:-none fp16 bf16}"
sw="$(cd "$b" && pwd)/bin/starwave"
dir="$(mktemp -d /tmp/starwave-store16.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
export STARPU_SILENT=1 STARPU_FXT_TRACE=0 STARPU_HOME="$dir/home"
cd "$dir"
"$sw" synth --quiet --kind marmousi-like --out true.h5
"$sw" survey --quiet --model true.h5 --nshots 8 --frequency 10 --out survey.h5
"$sw" model --quiet --model true.h5 --survey survey.h5 --out data.h5
"$sw" synth --quiet --kind marmousi-like --smooth 100 --keep-water --out smooth.h5
for c in $stores; do
  t0=$(date +%s.%N)
  /usr/bin/time -f "%M" -o rss "$sw" fwi --model smooth.h5 --data data.h5 --out "inv-$c.h5" --bands 4,7,10 \
    --iterations "$iterations" --fix-top 180 --true-model true.h5 --store-compression "$c" >"log-$c" 2>&1
  t1=$(date +%s.%N)
  echo "== --store-compression $c: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s, peak RSS" \
    "$(($(cat rss) / 1024)) MB"
  grep -m1 "in flight" "log-$c" || true
  grep -i "model error" "log-$c" | tail -1 || true
done
