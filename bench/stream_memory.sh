#!/usr/bin/env bash
# bench/stream_memory.sh — peak memory of a gradient against the number of shots in its
# data file: `gradient` and `rtm` read each shot's observed traces as the shot is
# submitted (issue 16), so the peak should follow the shots in flight, not the file.
# Shots of 400 receivers × 6001 samples (9.6 MB of traces each), 2 CPU workers.
#   bench/stream_memory.sh [build dir] [shot counts...]      defaults: build 4 12 24
set -euo pipefail
b="${1:-build}"; [ $# -gt 0 ] && shift
if [ $# -gt 0 ]; then counts=("$@"); else counts=(4 12 24); fi
sw="$b/bin/starwave"
dir="$(mktemp -d /tmp/starwave-stream.XXXXXX)"; trap 'rm -rf "$dir"' EXIT
export STARPU_SILENT=1 STARPU_FXT_TRACE=0 STARPU_NCPU=2 STARPU_HOME="$dir/home"
"$sw" synth --quiet --kind constant --nz 20 --nx 400 --spacing 10 --out "$dir/m.h5"
echo "shots  traces (MB)  gradient peak RSS (MB)"
for n in "${counts[@]}"; do
  "$sw" survey --quiet --model "$dir/m.h5" --nshots "$n" --receiver-every 1 --frequency 8 --dt 0.001 --t-max 6 \
    --out "$dir/s$n.h5"
  "$sw" model --quiet --model "$dir/m.h5" --survey "$dir/s$n.h5" --out "$dir/d$n.h5"
  kb="$( { /usr/bin/time -f '%M' "$sw" gradient --quiet --model "$dir/m.h5" --data "$dir/d$n.h5" \
            --out "$dir/g$n.h5" >/dev/null; } 2>&1 | tail -1)"
  awk -v n="$n" -v kb="$kb" 'BEGIN { printf "%5d  %11.0f  %22.0f\n", n, n * 400 * 6001 * 4 / 1e6, kb / 1e3 }'
done
