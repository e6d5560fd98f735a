#!/usr/bin/env bash
# bench/calibrate.sh — StarPU's measurements of this machine for simulated runs and projections
# (docs/cluster.md, "Projected scaling"): the codelets' performance models of the reference
# cases' gradients (bench_project, 2-D and 3-D) and the bus, plus the measured gradient times
# that bench/project.py fits its throughput factor to, kept in a folder like
# bench/calibration/h200-2026-11-27.
#
#   bench/calibrate.sh [BUILD] OUT_DIR [STEPS_2D SHOTS_2D STEPS_3D SHOTS_3D]
#
# BUILD: a normal build with bench_project (default build). OUT_DIR must not exist. The GPU
# alone by default (STARPU_NCPU=0, as the projections simulate; set STARPU_NCPU to keep CPU
# workers). Runs each case with STARPU_CALIBRATE=1 until every task size has 10 measurements
# (20 runs at most), then times it three times (the median goes to OUT_DIR/measured).
# Defaults: 2000 steps × 32 shots (2-D), 100 steps × 4 shots (3-D), the calibration's sizes.
set -euo pipefail

build=build
if [ $# -ge 2 ] && [ -x "$1/bench/bench_project" ]; then build="$1"; shift; fi
out="${1:?usage: bench/calibrate.sh [BUILD] OUT_DIR [STEPS_2D SHOTS_2D STEPS_3D SHOTS_3D]}"
steps2="${2:-2000}" shots2="${3:-32}" steps3="${4:-100}" shots3="${5:-4}"
bin="$build/bench/bench_project"
[ -x "$bin" ] || { echo "bench/calibrate.sh: $bin: no such program (build the target bench_project)" >&2; exit 2; }
[ ! -e "$out" ] || { echo "bench/calibrate.sh: $out exists already: name a new folder" >&2; exit 2; }

home="$(mktemp -d /tmp/starwave-calibrate.XXXXXX)"
trap 'rm -rf "$home"' EXIT
export STARPU_HOME="$home" STARPU_HOSTNAME=calibrated STARPU_SILENT=1 STARPU_NCPU="${STARPU_NCPU:-0}"
models="$home/.starpu/sampling/codelets/45"

calibrated() {  # every history entry of every model has 10 measurements
  local f
  for f in "$models"/*.calibrated; do
    [ -f "$f" ] || return 1
    awk -f "$(dirname "$0")/calibrated.awk" "$f" || return 1
  done
}
seconds() { sed -n 's/.*: \([0-9.e+-]*\) s$/\1/p'; }

: >"$home/measured"
for case in 2d 3d; do
  if [ "$case" = 2d ]; then args=("$steps2" "$shots2"); else args=(--3d "$steps3" "$shots3"); fi
  for run in $(seq 20); do
    STARPU_CALIBRATE=1 "$bin" "${args[@]}" >/dev/null
    if [ "$run" -ge 2 ] && calibrated; then break; fi
  done
  calibrated || echo "bench/calibrate.sh: $case: some task sizes have fewer than 10 measurements after 20 runs" >&2
  t=()
  for _ in 1 2 3; do t+=("$("$bin" "${args[@]}" | seconds)"); done
  median=$(printf '%s\n' "${t[@]}" | sort -g | sed -n 2p)
  echo "$case $median@${args[-1]}" >>"$home/measured"
  echo "$case: ${args[*]}: gradient ${t[*]} s (median $median)"
done

mkdir -p "$out"
cp -r "$home/.starpu/sampling/bus" "$home/.starpu/sampling/codelets" "$out/"
cp "$home/measured" "$out/measured"
{
  echo "# StarPU's measurements of $(hostname) ($(date +%F))"
  echo
  echo "Made by \`bench/calibrate.sh $*\` with STARPU_NCPU=$STARPU_NCPU, host name \`calibrated\`"
  echo "(\`bench/project.py --calibration $out --host calibrated\`)."
  command -v nvidia-smi >/dev/null && echo && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/GPU: /'
  echo
  echo "\`measured\`: each case's gradient, median of three, as SECONDS@SHOTS (2-D: $steps2 steps, 3-D: $steps3)."
} >"$out/README.md"
echo "wrote $out"
