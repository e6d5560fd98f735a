#!/usr/bin/env bash
# bench/simulate.sh — a gradient measured on this machine against the same gradient simulated by
# StarPU-SimGrid from performance models calibrated here (docs/cluster.md, "Simulated runs").
#
#   bench/simulate.sh [BUILD] [SIM_BUILD] [SHOTS] [NZ NX]
#
# BUILD: a normal build (default build), SIM_BUILD: one configured with -DSTARWAVE_SIMGRID=ON
# against scripts/setup --simgrid's StarPU (default build-sim). A layered model of NZ × NX cells
# (default 100 × 200) at 10 m, SHOTS shots (default 4) of 0.5 s; the models are calibrated by
# real runs on 2 workers until StarPU has 10 measurements of each task size, then each worker count
# is timed three times for real (the median) and once simulated. Prints one row per worker count.
set -euo pipefail

build="${1:-build}"
sim="${2:-build-sim}"
shots="${3:-4}"
nz="${4:-100}"
nx="${5:-200}"
real="$build/bin/starwave"
simulated="$sim/bin/starwave"
for b in "$real" "$simulated"; do
  [ -x "$b" ] || { echo "bench/simulate.sh: $b: no such program (build it first)" >&2; exit 2; }
done

work="$(mktemp -d /tmp/starwave-simulate.XXXXXX)"
trap 'rm -rf "$work"' EXIT
export STARPU_SILENT=1
host=starwave-calibration  # the name the models are kept under (STARPU_HOSTNAME)

"$real" synth --kind layered --nz "$nz" --nx "$nx" --spacing 10 --out "$work/m.h5" >/dev/null
"$real" synth --kind layered --nz "$nz" --nx "$nx" --spacing 10 --smooth 40 --out "$work/sm.h5" >/dev/null
"$real" survey --model "$work/m.h5" --nshots "$shots" --dt 0.002 --t-max 0.5 --out "$work/s.h5" >/dev/null
"$real" model --model "$work/m.h5" --survey "$work/s.h5" --out "$work/d.h5" >/dev/null

# Seconds from a run's last line ("wrote …; 0.287 s on 1 CPU + 0 CUDA workers").
seconds() { sed -n 's/.*; \([0-9.e+-]*\) s on .*/\1/p' | tail -1; }
gradient() {  # gradient BINARY STARPU_HOME WORKERS [env…]: its seconds
  local bin="$1" home="$2" n="$3"
  shift 3
  rm -f "$work/g.h5"
  if ! env STARPU_HOME="$home" STARPU_HOSTNAME="$host" STARPU_NCPU="$n" "$@" \
    "$bin" gradient --model "$work/sm.h5" --data "$work/d.h5" --out "$work/g.h5" >"$work/out" 2>"$work/err"; then
    echo "bench/simulate.sh: $bin gradient on $n workers failed:" >&2
    grep -v 'xbt_cfg\|surf_parse\|simgrid_update_xml\|^$' "$work/err" | tail -5 >&2
    exit 1
  fi
  seconds <"$work/out"
}

# Calibrated when every history entry of every codelet has 10 measurements (a task that runs
# once a gradient needs 10 runs).
calibrated() {
  local f
  for f in "$work/cal/.starpu/sampling/codelets/45/"*".$host"; do
    [ -f "$f" ] || return 1
    awk '/^# hash/ { getline; if ($NF < 10) bad = 1 } END { exit bad }' "$f" || return 1
  done
}
for run in $(seq 20); do
  gradient "$real" "$work/cal" 2 STARPU_CALIBRATE=1 >/dev/null
  if calibrated; then break; fi
  [ "$run" -lt 20 ] || { echo "bench/simulate.sh: the models are not calibrated after 20 runs" >&2; exit 1; }
done

printf '%-8s %-8s %12s %12s %8s\n' workers shots "measured s" "simulated s" error
for n in 1 2; do
  t=()
  for _ in 1 2 3; do t+=("$(gradient "$real" "$work/real" "$n")"); done
  measured=$(printf '%s\n' "${t[@]}" | sort -g | sed -n 2p)
  simulated_s=$(gradient "$simulated" "$work/cal" "$n")
  awk -v n="$n" -v s="$shots" -v m="$measured" -v p="$simulated_s" \
    'BEGIN { printf "%-8d %-8d %12.4f %12.4f %+7.1f%%\n", n, s, m, p, 100 * (p - m) / m }'
done
