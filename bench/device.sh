#!/usr/bin/env bash
# bench/device.sh — the GPU checks and figures of docs/gpu.md in one call on a machine with a GPU:
# the CUDA tests, the 2-D and 3-D reference cases' forward with shot batches against one shot a task
# (STARWAVE_SHOT_BATCH=1: the A/B row) and with the 3-D march (STARWAVE_CUDA_MARCH_PLANES) against
# the interior runs, the gradients (batches against one shot a task), every CPU core beside the GPU, the out-of-core 3-D gradient from
# the GPU, and the simulation's GPU validation rows. Prints each command before its output, and
# "### rc=N" after one that fails (the next ones still run).
#
#   bench/device.sh BUILD [SECTION...]
#
# BUILD: a bundle made by ../shared/gpu/pack (its `run` starts the programs: the device machine
# has none of our libraries), or a build folder. SECTIONs, in the order given (default: tests
# forward gradient mixed): tests, forward, gradient, mixed (every core + the GPU), field3d
# (bench/field3d.sh's `whole disk`, 100³ × 1000 steps), validation (bench/gpu_validation.sh
# measure into BUILD/validation), born (J against F on the GPU: `starwave born` and `starwave model`
# as whole processes, 2-D and 3-D), quick (tests, then forward and gradient with one repetition).
# Sections' programs: tests … quick: test_cuda_device bench_forward bench_gradient; field3d,
# validation, born: starwave bench_project. A bundle of all five from `cmake -S . -B build-device
# -DCMAKE_BUILD_TYPE=Release -DSTARWAVE_USE_MPI=OFF -DSTARWAVE_NATIVE=OFF -DCMAKE_CUDA_ARCHITECTURES=90-real`
# is 92 MiB, over the 64 MiB a call carries; an xz archive of it is 21 MiB (measured 2026-11-30):
#   pack --only 'test_cuda_device bench_forward bench_gradient starwave bench_project' build-device .device
#   (ignored folder X) tar cf - .device | xz -T2 > X/device.tar.xz   # carry X; there: tar xJf X/device.tar.xz
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
export STARPU_SILENT=1
reps=3
build=

run() {  # run NAME ARGS...: the build's program NAME
  if [ -x "$build/run" ]; then
    "$build/run" "$@"
  else
    local p
    for p in "$build/tests/$1" "$build/bench/$1" "$build/bin/$1"; do
      if [ -x "$p" ]; then
        shift
        "$p" "$@"
        return
      fi
    done
    echo "bench/device.sh: $build: no program $1" >&2
    return 2
  fi
}
step() {
  echo
  echo "### $*"
  "$@" || echo "### rc=$?"  # a failing row is reported; the next ones still run
}

tests() { step run test_cuda_device; }
forward() {
  # 2-D, 32 shots: one shot a task, then the plan's choice (batches of 16 on one CUDA worker,
  # one shot a task on 8), then 8 a task on 4 workers.
  step env STARWAVE_SHOT_BATCH=1 "$0" --run "$build" bench_forward 2000 "$reps" 32 --gpu-only 1,8
  step "$0" --run "$build" bench_forward 2000 "$reps" 32 --gpu-only 1,8
  step env STARWAVE_SHOT_BATCH=8 "$0" --run "$build" bench_forward 2000 "$reps" 32 --gpu-only 4
  # 3-D (160³ + PML 20), 4 shots: one a task; batches; batches with the interior marching.
  step env STARPU_NCPU=2 STARWAVE_SHOT_BATCH=1 "$0" --run "$build" bench_forward --3d 1000 "$reps" 4 --gpu-only 1,4
  step env STARPU_NCPU=2 "$0" --run "$build" bench_forward --3d 1000 "$reps" 4 --gpu-only 1,4
  step env STARPU_NCPU=2 STARWAVE_CUDA_MARCH_PLANES=16 "$0" --run "$build" bench_forward --3d 1000 "$reps" 4 \
    --gpu-only 1,4
}
gradient() {
  # 2-D, 32 shots: one shot a forward and an adjoint task (the default), then batches of 4 (asked
  # only: on an H200 a graph of them stalled ~8.5 s, docs/gpu.md), each with starwave's setting of
  # StarPU's background copies of dirty buffers (off) and StarPU's own (on); 3-D the same, and marching.
  step "$0" --run "$build" bench_gradient 2000 "$reps" 32 --gpu-only
  # StarPU's own background copies of dirty buffers (starwave turns them off): the A/B row
  step env STARPU_MINIMUM_CLEAN_BUFFERS=5 STARPU_TARGET_CLEAN_BUFFERS=10 "$0" --run "$build" bench_gradient 2000 \
    "$reps" 32 --gpu-only
  step env STARWAVE_SHOT_BATCH=4 "$0" --run "$build" bench_gradient 2000 "$reps" 32 --gpu-only
  step env STARPU_MINIMUM_CLEAN_BUFFERS=5 STARPU_TARGET_CLEAN_BUFFERS=10 STARWAVE_SHOT_BATCH=4 "$0" --run "$build" \
    bench_gradient 2000 "$reps" 32 --gpu-only
  step env STARPU_NCPU=2 "$0" --run "$build" bench_gradient --3d 100 "$reps" 4 --gpu-only
  step env STARPU_NCPU=2 STARWAVE_SHOT_BATCH=4 "$0" --run "$build" bench_gradient --3d 100 "$reps" 4 --gpu-only
  step env STARPU_NCPU=2 STARWAVE_CUDA_MARCH_PLANES=16 "$0" --run "$build" bench_gradient --3d 100 "$reps" 4 --gpu-only
}
mixed() { step "$0" --run "$build" bench_forward 2000 "$reps" 32; }
field3d() { step env STARPU_NCPU=0 STARWAVE_BENCH_LIMIT=cuda bash "$here/field3d.sh" "$build" 100 1000 "whole disk"; }
timed() {
  local TIMEFORMAT="wall %R s"
  time "$@"
}
born() {
  # J against F on the GPU alone (STARPU_NCPU=0), whole processes: `starwave born` (the model
  # itself as the perturbation: J is linear, its cost does not depend on δv) against `starwave
  # model`, the 2-D reference case with 32 shots and the 3-D one with 4; the first run of each
  # calibrates StarPU's perf models, the next ones are the figures.
  local d="$build/born" three
  for three in "" --3d; do
    rm -rf "$d"
    mkdir -p "$d"
    if [ -z "$three" ]; then
      run bench_project --write "$d" 2000 32
    else
      run bench_project --3d --write "$d" 1000 4
    fi
    local i
    for i in $(seq 0 "$reps"); do
      step timed env STARPU_NCPU=0 "$0" --run "$build" starwave model --model "$d/model.h5" --survey "$d/data.h5" \
        --out "$d/f.h5" --overwrite --quiet
      step timed env STARPU_NCPU=0 "$0" --run "$build" starwave born --model "$d/model.h5" --perturbation \
        "$d/model.h5" --survey "$d/data.h5" --out "$d/j.h5" --overwrite --quiet
    done
  done
}
validation() { step bash "$here/gpu_validation.sh" measure "$build" "$build/validation"; }

if [ "${1:-}" = --run ]; then  # internal: `env VAR=… bench/device.sh --run BUILD NAME ARGS…`
  build="$2"
  shift 2
  run "$@"
  exit
fi
build="${1:?usage: bench/device.sh BUILD [tests|forward|gradient|mixed|field3d|validation|born|quick ...]}"
shift
sections=("$@")
[ ${#sections[@]} -gt 0 ] || sections=(tests forward gradient mixed)
for s in "${sections[@]}"; do
  case "$s" in
    tests | forward | gradient | mixed | field3d | validation | born) "$s" ;;
    quick)
      reps=1
      tests
      forward
      gradient
      ;;
    *)
      echo "bench/device.sh: no section '$s' (tests forward gradient mixed field3d validation born quick)" >&2
      exit 2
      ;;
  esac
done
