#!/usr/bin/env bash
# bench/device.sh — the GPU checks and figures of docs/gpu.md in one call on a machine with a GPU
# (issue 61's device run): the CUDA tests, then the 2-D and 3-D reference cases' forward with shot
# batches against one shot a task (STARWAVE_SHOT_BATCH=1: the A/B row), the gradients, and every CPU
# core beside the GPU. Prints each command before its output; stops at the first failing test.
#
#   bench/device.sh RUN [quick]
#
# RUN runs a program of the build by name: `.device/run` for a bundle made by ../shared/gpu/pack
# (the device machine has none of our libraries); elsewhere a wrapper that runs build/tests/NAME or
# build/bench/NAME with its arguments.
# `quick`: one repetition, 300 3-D steps, no CPU+GPU row (a device call with little time left).
set -euo pipefail

run="${1:?usage: bench/device.sh RUN [quick]  (RUN: .device/run, or a wrapper that runs the build programs)}"
quick="${2:-}"
reps=3 steps2=2000 steps3=1000
if [ "$quick" = quick ]; then reps=1 steps3=300; fi
export STARPU_SILENT=1

step() {
  echo
  echo "### $*"
  "$@"
}

step "$run" test_cuda_device
# 2-D reference case, 32 shots: batches (the plan's: 32 shots over 1 or 8 CUDA workers → 16 or 4 a
# task) against one shot a task; then every core beside the GPU (its last line).
step env STARWAVE_SHOT_BATCH=1 "$run" bench_forward "$steps2" "$reps" 32 --gpu-only 1,8
step "$run" bench_forward "$steps2" "$reps" 32 --gpu-only 1,8
step env STARWAVE_SHOT_BATCH=8 "$run" bench_forward "$steps2" "$reps" 32 --gpu-only 1,4
# 3-D reference case (160³ + PML 20), 4 shots.
step env STARPU_NCPU=2 STARWAVE_SHOT_BATCH=1 "$run" bench_forward --3d "$steps3" "$reps" 4 --gpu-only 1,4
step env STARPU_NCPU=2 "$run" bench_forward --3d "$steps3" "$reps" 4 --gpu-only 1,4
# Gradients (one shot a task: the gradient's chain is not batched), 2-D and 3-D.
step "$run" bench_gradient "$steps2" "$reps" 32 --gpu-only
step env STARPU_NCPU=2 "$run" bench_gradient --3d 100 "$reps" 4 --gpu-only
# Every CPU core beside the GPU, modelling with the plan's batches.
if [ "$quick" != quick ]; then step "$run" bench_forward "$steps2" "$reps" 32; fi
