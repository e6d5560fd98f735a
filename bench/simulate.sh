#!/usr/bin/env bash
# bench/simulate.sh — a gradient measured on this machine against the same gradient simulated by
# StarPU-SimGrid from performance models calibrated here (docs/cluster.md, "Simulated runs").
#
#   bench/simulate.sh [BUILD] [SIM_BUILD] [SHOTS] [NZ NX]
#
# BUILD: a normal build (default build), SIM_BUILD: one configured with -DSTARWAVE_SIMGRID=ON
# against scripts/setup --simgrid's StarPU (default build-sim). A layered model of NZ × NX cells
# (default 100 × 200) at 10 m, SHOTS shots (default 4) of 0.5 s; the models are calibrated by
# real runs on 2 workers (gradients, and the modelling of fwi's pictures) until StarPU has 10
# measurements of each task size. Then each row is timed three times for real (the median) and
# once simulated: a gradient on 1 and 2 workers; an fwi iteration (adam: one gradient and a step;
# the median of iterations 2 and 3) on 1 and 2 workers; with MPI in BUILD, a gradient on 2 and 3
# ranks of 1 worker, simulated as one rank's share of the shots (the simulation has no MPI: the
# busiest rank's ⌈SHOTS/RANKS⌉ shots on its worker; the reduction's messages on one machine take ~0).
set -euo pipefail

build="${1:-build}"
sim="${2:-build-sim}"
shots="${3:-4}"
nz="${4:-100}"
nx="${5:-200}"
real="$build/bin/starwave"
simulated="$sim/bin/starwave-sim"
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
# An fwi run's iteration seconds: the median of iterations 2 and 3 (each one gradient).
iteration_seconds() { sed -n 's/^iteration *[23] .*  \([0-9.e+-]*\) s (1 gradients).*/\1/p' | sort -g | head -1; }
run() {  # run BINARY STARPU_HOME WORKERS [env…] -- ARGS…: its output in $work/out
  local bin="$1" home="$2" n="$3"
  shift 3
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  rm -rf "$work/g.h5" "$work/f.h5" "$work/f.h5.state" "$work/f_figures"
  if ! env STARPU_HOME="$home" STARPU_HOSTNAME="$host" STARPU_NCPU="$n" "${vars[@]}" \
    "$bin" "$@" >"$work/out" 2>"$work/err"; then
    echo "bench/simulate.sh: $bin $1 on $n workers failed:" >&2
    grep -v 'xbt_cfg\|surf_parse\|simgrid_update_xml\|^$' "$work/err" | tail -5 >&2
    exit 1
  fi
}
gradient() {  # gradient BINARY STARPU_HOME WORKERS [env…]: its seconds
  local bin="$1" home="$2" n="$3"
  shift 3
  run "$bin" "$home" "$n" "$@" -- gradient --model "$work/sm.h5" --data "$work/d.h5" --out "$work/g.h5"
  seconds <"$work/out"
}
fwi_iteration() {  # fwi_iteration BINARY STARPU_HOME WORKERS: seconds of one iteration
  run "$1" "$2" "$3" -- fwi --model "$work/sm.h5" --data "$work/d.h5" --out "$work/f.h5" --optimizer adam \
    --iterations 3 --figures-every 0
  iteration_seconds <"$work/out"
}

# Calibrated when every history entry of every codelet has 10 measurements (a task that runs
# once a gradient needs 10 runs).
calibrated() {  # calibrated [LEAST]: every entry of every model has LEAST (10) measurements
  local f
  for f in "$work/cal/.starpu/sampling/codelets/45/"*".$host"; do
    [ -f "$f" ] || return 1
    awk -v least="${1:-10}" -f "$(dirname "$0")/calibrated.awk" "$f" || return 1
  done
}
for run in $(seq 20); do
  gradient "$real" "$work/cal" 2 STARPU_CALIBRATE=1 >/dev/null
  # fwi's pictures model the middle shot: the forward codelet too
  run "$real" "$work/cal" 2 STARPU_CALIBRATE=1 -- model --model "$work/sm.h5" --survey "$work/s.h5" --out "$work/g.h5"
  if calibrated; then break; fi
  if [ "$run" -eq 20 ]; then  # StarPU records most runs' tasks, not always every one
    calibrated 5 || { echo "bench/simulate.sh: the models are not calibrated after 20 runs" >&2; exit 1; }
    echo "bench/simulate.sh: some task sizes have 5–9 measurements after 20 runs; simulating with them" >&2
  fi
done

row() {  # row WHAT MEASURED… -- SIMULATED
  local what="$1" t=()
  shift
  while [ "$1" != -- ]; do t+=("$1"); shift; done
  local measured simulated_s="$2"
  measured=$(printf '%s\n' "${t[@]}" | sort -g | sed -n 2p)
  awk -v w="$what" -v m="$measured" -v p="$simulated_s" \
    'BEGIN { printf "%-34s %12.4f %12.4f %+7.1f%%\n", w, m, p, 100 * (p - m) / m }'
}
printf '%-34s %12s %12s %8s\n' "$shots shots, $nz × $nx" "measured s" "simulated s" error
for n in 1 2; do
  t=()
  for _ in 1 2 3; do t+=("$(gradient "$real" "$work/real" "$n")"); done
  row "gradient, $n worker(s)" "${t[@]}" -- "$(gradient "$simulated" "$work/cal" "$n")"
done
for n in 1 2; do
  t=()
  for _ in 1 2 3; do t+=("$(fwi_iteration "$real" "$work/real" "$n")"); done
  row "fwi iteration (adam), $n worker(s)" "${t[@]}" -- "$(fwi_iteration "$simulated" "$work/cal" "$n")"
done
if "$real" info 2>/dev/null | grep -q '^  MPI *compiled in'; then
  for ranks in 2 3; do
    # The busiest rank's share: the first ⌈SHOTS/RANKS⌉ shots (every shot has the same sizes).
    share=$(((shots + ranks - 1) / ranks))
    "$real" survey --model "$work/m.h5" --nshots "$share" --dt 0.002 --t-max 0.5 --out "$work/s2.h5" --overwrite >/dev/null
    "$real" model --model "$work/m.h5" --survey "$work/s2.h5" --out "$work/d2.h5" --overwrite >/dev/null
    t=()
    for _ in 1 2 3; do
      rm -f "$work/g.h5"
      mpirun --allow-run-as-root --oversubscribe -n "$ranks" --bind-to none -x STARPU_SILENT=1 -x STARPU_NCPU=1 \
        -x STARPU_HOME="$work/real" "$real" gradient --model "$work/sm.h5" --data "$work/d.h5" \
        --out "$work/g.h5" >"$work/out" 2>"$work/err" || { tail -5 "$work/err" >&2; exit 1; }
      t+=("$(seconds <"$work/out")")
    done
    run "$simulated" "$work/cal" 1 -- gradient --model "$work/sm.h5" --data "$work/d2.h5" --out "$work/g.h5"
    row "gradient, $ranks ranks × 1 worker" "${t[@]}" -- "$(seconds <"$work/out")"
  done
fi
