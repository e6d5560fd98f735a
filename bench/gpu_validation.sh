#!/usr/bin/env bash
# bench/gpu_validation.sh — a GPU machine's measured gradients and fwi iterations against the
# same runs simulated by StarPU-SimGrid from that machine's own calibration (docs/cluster.md,
# "Simulated runs"). Two halves, because the GPU machine has no simulation build:
#
#   bench/gpu_validation.sh measure BUILD OUT [STEPS]      on the GPU machine
#   bench/gpu_validation.sh simulate BUILD SIM_BUILD OUT   anywhere, on the same OUT
#
# measure: the 2-D reference case (bench_project --write: 600 × 250 cells, order 8, STEPS steps,
# default 2000) with 32 and 64 shots, through `starwave gradient` and `starwave fwi`, under each
# configuration of CONFIGS, in order (default "gpu1:0:1 gpu8:0:8 cpu+gpu1:-:1 gpu4:0:4
# cpu+gpu8:-:8"; NAME:STARPU_NCPU:CUDA workers per GPU, "-" StarPU's default CPU workers, 0 CUDA
# workers no GPU). Each configuration calibrates its own models (STARPU_HOME=OUT/homes/NAME, host
# name `calibrated`, STARPU_CALIBRATE=1 runs until every task size has 10 measurements, 5 at
# most), then times the 32- and 64-shot gradients three times each and, with 1 or 8 CUDA workers,
# fwi iterations 2 and 3 (adam, 32 shots: each one gradient and a step). No configuration starts
# after STARWAVE_VALIDATION_SECONDS (default 240) s. cpu+gpu8 is measured, not simulated (the
# CPU workers beside a GPU's 8: is every core worth adding?). BUILD is a build or a bundle
# (../shared/gpu/pack). Writes OUT/measured ("NAME CPU CUDA WHAT SECONDS…" lines) and the models;
# the data stays behind.
#
# simulate: makes the same model and data files with BUILD's bench_project, then per row:
# one CUDA worker (with or without CPU workers) simulated from its own models as they are; k
# CUDA workers on the GPU alone projected by `starwave plan` with the GPU's concurrency fitted to
# the measured 32-shot gradient (`--measured T@32`: the 32-shot row is right by construction, the
# 64-shot gradient a prediction, and the fwi iteration is set beside that fitted gradient).
set -euo pipefail

mode="${1:-}"
case "$mode" in
measure) [ $# -ge 3 ] || { echo "usage: bench/gpu_validation.sh measure BUILD OUT [STEPS]" >&2; exit 2; } ;;
simulate) [ $# -ge 4 ] || { echo "usage: bench/gpu_validation.sh simulate BUILD SIM_BUILD OUT" >&2; exit 2; } ;;
*) echo "usage: bench/gpu_validation.sh measure BUILD OUT [STEPS] | simulate BUILD SIM_BUILD OUT" >&2; exit 2 ;;
esac
b="$(cd "$2" && pwd)"
if [ -f "$b/run" ]; then  # a bundle (bash: its execute bits may be lost in transit)
  sw=(bash "$b/run" starwave) bp=(bash "$b/run" bench_project)
else
  sw=("$b/bin/starwave") bp=("$b/bench/bench_project")
fi
export STARPU_SILENT=1 STARPU_FXT_TRACE=0 STARPU_HOSTNAME=calibrated
unset STARPU_PERF_MODEL_DIR XDG_CACHE_HOME  # either would take the models away from STARPU_HOME
work="$(mktemp -d /tmp/starwave-gpu-validation.XXXXXX)"
trap 'rm -rf "$work"' EXIT

cases() {  # cases STEPS: the 32- and 64-shot files in $work
  for n in 32 64; do
    mkdir -p "$work/c$n"
    "${bp[@]}" --write "$work/c$n" "$1" "$n" >/dev/null
  done
}
seconds() { sed -n 's/.*; \([0-9.e+-]*\) s on .*/\1/p' | tail -1; }
workers() { sed -n 's/.*s on \([0-9]*\) CPU + \([0-9]*\) CUDA workers.*/\1 \2/p' | tail -1; }
calibrating() {  # calibrating HOME: no model yet, or some task size has fewer than 10 measurements
  local models=("$1/.starpu/sampling/codelets/45/"*)
  [ -f "${models[0]}" ] || return 0
  ! awk -f "$(dirname "$0")/calibrated.awk" "${models[@]}"
}
# Iterations 2 and 3 (one gradient each), as "A B"; their mean is the row's figure.
iterations() { sed -n 's/^iteration *[23] .*  \([0-9.e+-]*\) s (1 gradients).*/\1/p' | tr '\n' ' '; }

if [ "$mode" = measure ]; then
  out="$3"
  steps="${4:-2000}"
  mkdir -p "$out/homes"
  echo "steps $steps" >"$out/steps"
  cases "$steps"
  : >"$out/measured"
  first=""
  # One configuration's runs: its environment in vars, its name in name; output in $work/out.
  sw_run() {  # sw_run [env…] -- ARGS…
    local e=()
    while [ "$1" != -- ]; do e+=("$1"); shift; done
    shift
    rm -rf "$work/g.h5" "$work/f.h5" "$work/f.h5.state" "$work/f_figures"
    if ! env "${vars[@]}" "${e[@]}" "${sw[@]}" "$@" >"$work/out" 2>"$work/err"; then
      echo "bench/gpu_validation.sh: $name: starwave $1 failed:" >&2
      tail -5 "$work/err" >&2
      return 1
    fi
  }
  gradient() { sw_run "$@" -- gradient --model "$work/c$shots/model.h5" --data "$work/c$shots/data.h5" --out "$work/g.h5"; }
  fwi() {
    sw_run "$@" -- fwi --model "$work/c32/model.h5" --data "$work/c32/data.h5" --out "$work/f.h5" \
      --optimizer adam --iterations 3 --figures-every 0
  }
  for config in ${CONFIGS:-gpu1:0:1 gpu8:0:8 cpu+gpu1:-:1 gpu4:0:4 cpu+gpu8:-:8}; do
    IFS=: read -r name ncpu per_gpu <<<"$config"
    if [ "$SECONDS" -gt "${STARWAVE_VALIDATION_SECONDS:-240}" ]; then
      echo "$name: not started ($SECONDS s gone, STARWAVE_VALIDATION_SECONDS ${STARWAVE_VALIDATION_SECONDS:-240})"
      continue
    fi
    home="$out/homes/$name"
    mkdir -p "$home/.starpu/sampling"
    # The bus is the machine's: measured once, copied to the next homes.
    [ -z "$first" ] || cp -r "$first/.starpu/sampling/bus" "$home/.starpu/sampling/"
    vars=(STARPU_HOME="$home")
    [ "$ncpu" = - ] || vars+=(STARPU_NCPU="$ncpu")
    if [ "$per_gpu" = 0 ]; then vars+=(STARPU_NCUDA=0); else vars+=(STARPU_NWORKER_PER_CUDA="$per_gpu"); fi
    direct=0  # simulated as it runs (one CUDA worker or none), not through plan's fitted concurrency
    [ "$per_gpu" -gt 1 ] || direct=1
    shots=32
    t0=$(date +%s)
    for run in 1 2 3 4 5; do
      # a simulated fwi runs the modelling codelet too (its pictures' shot)
      if [ "$direct" = 1 ]; then
        sw_run STARPU_CALIBRATE=1 -- model --model "$work/c32/model.h5" --survey "$work/c32/data.h5" \
          --out "$work/g.h5" || continue 2
      fi
      gradient STARPU_CALIBRATE=1 || continue 2
      # a CPU+GPU run's CPU workers see few shots a run: on until StarPU has its 10 of each
      if [ "$run" -ge 2 ] && ! calibrating "$home"; then break; fi
      [ "$run" -lt 5 ] || echo "$name: some task sizes have fewer than 10 measurements after 5 runs" >&2
    done
    cpus=? cudas=?
    read -r cpus cudas < <(workers <"$work/out") || true  # the last calibrating gradient's
    echo "$name: calibrated in $(($(date +%s) - t0)) s ($cpus CPU + $cudas CUDA workers)"
    for shots in 32 64; do
      t=()
      for _ in 1 2 3; do gradient && t+=("$(seconds <"$work/out")"); done
      echo "$name $cpus $cudas gradient$shots ${t[*]}" | tee -a "$out/measured"
    done
    if [ "$per_gpu" -le 1 ] || [ "$per_gpu" = 8 ]; then
      fwi && echo "$name $cpus $cudas fwi32 $(iterations <"$work/out")" | tee -a "$out/measured"
    fi
    [ -n "$first" ] || first="$home"
  done
  exit 0
fi

# simulate
sim="$(cd "$3" && pwd)/bin/starwave-sim"
out="$4"
[ -x "$sim" ] || { echo "bench/gpu_validation.sh: $sim: no such program (build the simulation build)" >&2; exit 2; }
steps=$(sed -n 's/^steps \([0-9]*\)$/\1/p' "$out/steps" 2>/dev/null || true)
cases "${steps:-2000}"
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
row() {  # row WHAT MEASURED_MEDIAN SIMULATED
  awk -v w="$1" -v m="$2" -v p="$3" 'BEGIN { printf "| %s | %.3f | %.3f | %+.1f %% |\n", w, m, p, 100 * (p - m) / m }'
}
measured() { awk -v n="$1" -v w="$2" '$1 == n && $4 == w { for (i = 5; i <= NF; i++) print $i }' "$out/measured"; }
projected() {  # projected HOME SHOTS MEASURED32: plan's one-GPU projection of SHOTS shots
  "${sw[@]}" plan gradient --model "$work/c$2/model.h5" --data "$work/c$2/data.h5" --gpus 1 --calibration "$1" \
    --host calibrated --measured "$3@32" --simulator "$sim" </dev/null 2>"$work/simerr" |
    awk '$1 == "1" && NF == 5 && $NF == "%" { print $2; exit }'
}
simulated() {  # simulated HOME NCPU NCUDA WHAT: a direct simulated run's seconds
  local home="$1" ncpu="$2" cudas="$3" what="$4"
  rm -rf "$work/g.h5" "$work/f.h5" "$work/f.h5.state" "$work/f_figures"
  # as measured: these workers, one CUDA worker per GPU, the GPU's own models
  local pin=(STARPU_HOME="$home" STARPU_NCPU="$ncpu" STARPU_NCUDA="$cudas" STARPU_NWORKER_PER_CUDA=1
    STARPU_PERF_MODEL_HOMOGENEOUS_CUDA=1)
  if [ "$what" = fwi32 ]; then
    env "${pin[@]}" "$sim" fwi --model "$work/c32/model.h5" --data "$work/c32/data.h5" --out "$work/f.h5" \
      --optimizer adam --iterations 3 --figures-every 0 </dev/null 2>"$work/simerr" | iterations |
      awk 'NF { for (i = 1; i <= NF; i++) t += $i; print t / NF }' 
  else
    local n="${what#gradient}"
    env "${pin[@]}" "$sim" gradient --model "$work/c$n/model.h5" --data "$work/c$n/data.h5" --out "$work/g.h5" \
      </dev/null 2>"$work/simerr" | seconds
  fi
}
echo "| configuration | measured s (median) | simulated s | error |"
echo "|---|---|---|---|"
while read -r name cpus cudas what rest; do
  [ -n "$rest" ] || continue
  m="$(median $rest)"
  home="$out/homes/$name"
  if [ "$cudas" -le 1 ]; then
    s="$(simulated "$home" "$cpus" "$cudas" "$what")" || s=""
    label="$what, $cpus CPU + $cudas CUDA worker (models as calibrated)"
  elif [ "$cpus" = 0 ]; then
    m32="$(median $(measured "$name" gradient32))"
    n="${what#gradient}"
    [ "$what" = fwi32 ] && n=32
    # The projection's calibration is a run on one GPU with one CUDA worker, as a user makes it
    # (docs/cluster.md): gpu1's models, when measured (with k workers the tasks' times include
    # their contention, and some task sizes may be left unmeasured).
    [ ! -d "$out/homes/gpu1/.starpu/sampling/codelets" ] || home="$out/homes/gpu1"
    s="$(projected "$home" "$n" "$m32")" || s=""
    label="$what, $cudas CUDA workers (concurrency fitted to gradient32)"
    [ "$what" != fwi32 ] || label="fwi32, $cudas CUDA workers, against the fitted gradient32"
  else
    continue  # several CUDA workers beside CPU workers: the projection simulates GPUs alone
  fi
  if [ -n "$s" ]; then
    row "$name: $label" "$m" "$s"
  else
    echo "| $name: $label | $m | (the simulation failed) | |"
    grep -v 'xbt_cfg\|surf_parse\|simgrid_update_xml\|^$' "$work/simerr" | tail -3 >&2
  fi
done <"$out/measured"
