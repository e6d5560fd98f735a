#!/usr/bin/env bash
# bench/mpi_scaling.sh — the same gradient (docs/design.md §8's reference model) on one rank with
# two CPU workers and on two ranks with one worker each (efficiency = the ratio of the
# times), then the per-shot and fixed costs on one worker, and the projection of
# shot-parallel scaling that bench_mpi derives from them (docs/benchmarks.md "MPI").
#   bench/mpi_scaling.sh [build dir] [steps] [shots] [reps]     defaults: build 2000 8 5
set -euo pipefail
b="${1:-build}"; steps="${2:-2000}"; shots="${3:-8}"; reps="${4:-5}"
export STARPU_SILENT=1 STARPU_FXT_TRACE=0
bench="$b/bench/bench_mpi"
launch="mpirun --allow-run-as-root --oversubscribe -x STARPU_SILENT=1 -x STARPU_FXT_TRACE=0 -x STARPU_NCPU=1"
median() { sed -n 's/.*median_s \([0-9.]*\).*/\1/p'; }

echo "gradient of $shots shots, $steps steps, median of $reps:"
a="$(STARPU_NCPU=2 "$bench" gradient "$steps" "$shots" "$reps")"; echo "  1 rank  x 2 workers: $a"
c="$($launch -n 2 "$bench" gradient "$steps" "$shots" "$reps")"; echo "  2 ranks x 1 worker:  $c"
ta="$(echo "$a" | median)"; tc="$(echo "$c" | median)"
awk -v a="$ta" -v c="$tc" 'BEGIN { printf "  efficiency of 2 ranks x 1 worker against 1 rank x 2 workers: %.3f\n", a / c }'

t1="$(STARPU_NCPU=1 "$bench" gradient "$steps" 1 "$reps" | median)"
t4="$(STARPU_NCPU=1 "$bench" gradient "$steps" 4 "$reps" | median)"
read -r shot fixed < <(awk -v a="$t1" -v b="$t4" 'BEGIN { s = (b - a) / 3; print s, a - s }')
echo "one worker: 1 shot $t1 s, 4 shots $t4 s -> per shot $shot s, fixed $fixed s"
"$bench" project "$shot" "$fixed"
