#!/usr/bin/env bash
# bench/field3d.sh — one 3-D gradient shot of an overthrust cube under each way of keeping
# its store: the whole store (--checkpoint-every 0), the whole store in fp16, checkpoints
# under --memory-limit at a quarter of the whole store, the same in fp16, and the plan's own
# choice with no option. For each: wall time, peak RSS, the plan line, and whether the
# gradient has the whole store's bits. A method whose store does not fit is reported as
# refused (the run's own message). First `starwave plan gradient` for the default options.
#   bench/field3d.sh [build dir] [cells per side] [steps] [methods]
# defaults: build 100 1000 "whole fp16 checkpoints checkpoints-fp16 auto" (also: auto-fp16;
# split: --scratch, every step's store in intervals, StarPU's main memory uncapped;
# out-of-core: the same under --memory-limit at the quarter, the intervals moved to disk;
# disk: on a GPU, both the GPU's and main memory's limits at the quarter, the intervals moved
# from the GPU through main memory to disk)
# The cube is N³ cells at 20 m (`synth --kind overthrust`), one shot in its middle, a
# receiver every 4 cells in x and y, a 6 Hz Ricker, dt 0.7 ms, PML 20; the gradient is taken
# in the model smoothed over 200 m. Work files in a temporary folder, removed at the end
# (STARWAVE_BENCH_DIR=DIR keeps the data in DIR and reuses it). 2 CPU workers unless
# STARPU_NCPU says otherwise. The build may be a bundle made by ../shared/gpu/pack (its `run`
# starts the programs); without /usr/bin/time, peak RSS is not reported. On a GPU
# (STARPU_NCPU=0: the GPU alone) the stores live in its memory: STARWAVE_BENCH_LIMIT=cuda
# gives the checkpointed runs STARPU_LIMIT_CUDA_MEM at the quarter instead of --memory-limit.
set -euo pipefail
b="${1:-build}"
n="${2:-100}"
steps="${3:-1000}"
methods="${4:-whole fp16 checkpoints checkpoints-fp16 auto}"
b="$(cd "$b" && pwd)"
if [ -x "$b/run" ]; then sw=("$b/run" starwave); else sw=("$b/bin/starwave"); fi
# timed FILE COMMAND...: COMMAND's status; FILE's last line "<wall s> <peak RSS KiB or ->".
timed() {
  local file="$1" t0 rc=0
  shift
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -o "$file" -f '%e %M' "$@" || rc=$?
  else
    t0="$(date +%s.%N)"
    "$@" || rc=$?
    awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f -\n", b - a }' >"$file"
    [ "$rc" -lt 128 ] || echo "Command terminated by signal $((rc - 128))" >>"$file"
  fi
  return "$rc"
}
if [ -n "${STARWAVE_BENCH_DIR:-}" ]; then
  dir="$STARWAVE_BENCH_DIR"
  mkdir -p "$dir"
else
  dir="$(mktemp -d /tmp/starwave-field3d.XXXXXX)"
  trap 'rm -rf "$dir"' EXIT
fi
export STARPU_SILENT=1 STARPU_FXT_TRACE=0 STARPU_NCPU="${STARPU_NCPU:-2}" STARPU_HOME="$dir/home"
cd "$dir"
mkdir -p scratch
cube=(--kind overthrust --nz "$n" --ny "$n" --nx "$n" --spacing 20)
tmax="$(awk -v s="$steps" 'BEGIN { printf "%.4f", (s - 1) * 0.0007 }')"
if [ ! -f "d$n-$steps.h5" ]; then
  "${sw[@]}" synth --quiet "${cube[@]}" --out "t$n.h5" --overwrite
  "${sw[@]}" synth --quiet "${cube[@]}" --smooth 200 --out "i$n.h5" --overwrite
  "${sw[@]}" survey --quiet --model "t$n.h5" --nshots 1 --receiver-every 4 --frequency 6 --dt 0.0007 --t-max "$tmax" \
    --out "s$n-$steps.h5" --overwrite
  timed model.time "${sw[@]}" model --quiet --model "t$n.h5" --survey "s$n-$steps.h5" --out "d$n-$steps.h5" \
    --overwrite
  echo "data: $(tail -1 model.time | awk '{ print $1 " s, peak RSS " $2 " KiB" }')"
fi
args=(--model "i$n.h5" --data "d$n-$steps.h5" --pml-width 20)
echo "overthrust $n³ cells at 20 m, $steps steps, one shot, $(nproc) cores, STARPU_NCPU=$STARPU_NCPU:"
"${sw[@]}" plan gradient "${args[@]}" --out plan.h5 2>&1 | sed 's/^/  /' || true

# MiB of the first "<number> <K|M|G|T>iB" after `words` in a file's text (empty if none).
mib_after() {  # words, file
  sed -n "s/.*$1 \\([0-9.e+]*\\) \\([KMGT]\\)iB.*/\\1 \\2/p" "$2" | head -1 |
    awk '{ m = $2 == "T" ? 1048576 : $2 == "G" ? 1024 : $2 == "K" ? 1 / 1024 : 1; print $1 * m }'
}
# The whole store's bytes for one shot: the plan line of a run that keeps it, or its refusal.
"${sw[@]}" plan gradient "${args[@]}" --out plan.h5 --checkpoint-every 0 >whole-plan.log 2>&1 || true
whole="$(mib_after 'of which the boundary store' whole-plan.log)"
[ -n "$whole" ] || whole="$(mib_after 'the stored forward wavefield' whole-plan.log)"
if [ -z "$whole" ]; then
  echo "bench/field3d.sh: no store size in the plan: $(tail -1 whole-plan.log)" >&2
  exit 1
fi
quarter="$(awk -v w="$whole" 'BEGIN { v = int(w / 4); print (v < 1 ? 1 : v) "M" }')"
cuda_limit=0
[ "${STARWAVE_BENCH_LIMIT:-}" = cuda ] && cuda_limit=1
limit_name=--memory-limit
[ "$cuda_limit" = 1 ] && limit_name=STARPU_LIMIT_CUDA_MEM
echo "  whole store: $whole MiB a shot; the checkpointed runs get $limit_name $quarter"
printf '%-24s %8s %13s  %s\n' method "wall s" "peak RSS MiB" "plan (or why refused); same bits as whole"
for m in $methods; do
  extra=(--out "$m.h5")
  case "$m" in
    whole) extra+=(--checkpoint-every 0) ;;
    fp16) extra+=(--checkpoint-every 0 --store-compression fp16) ;;
    checkpoints) ;;
    checkpoints-fp16) extra+=(--store-compression fp16) ;;
    auto-fp16) extra+=(--store-compression fp16) ;;
    auto) ;;
    # every slot kept, in intervals: split with StarPU's memory uncapped, out-of-core under the
    # quarter (intervals go to disk), disk with the GPU and main memory both under it
    split | out-of-core | disk) extra+=(--scratch "$dir/scratch") ;;
    *) echo "bench/field3d.sh: unknown method '$m'" >&2 && exit 2 ;;
  esac
  name="$m"
  lim="$quarter"
  capped=0  # run under the quarter (or the least it needs)
  if [[ "$m" == checkpoints* || "$m" == out-of-core || "$m" == disk ]]; then capped=1; fi
  for try in 1 2; do
    rm -f "$m.h5"
    rc=0
    run=("${sw[@]}" gradient "${args[@]}" "${extra[@]}")
    if [ "$capped" = 1 ]; then
      if [ "$cuda_limit" = 1 ]; then run=(env "STARPU_LIMIT_CUDA_MEM=${lim%M}" "${run[@]}"); else run+=(--memory-limit "$lim"); fi
      if [ "$m" = disk ] && [ "$cuda_limit" = 1 ]; then run+=(--memory-limit "$quarter"); fi
    fi
    timed "$m.time" "${run[@]}" >"$m.log" 2>&1 || rc=$?
    # A limit below the least a checkpointed shot needs: once more at that least, plus what
    # the process holds (the refusal says both).
    least="$(mib_after 'this run needs' "$m.log")"
    if [ "$rc" = 0 ] || [ "$try" = 2 ] || [ -z "$least" ] || [ "$capped" = 0 ]; then
      break
    fi
    held="$(mib_after 'leaves beside the' "$m.log")"
    limit="$(awk -v a="$least" -v b="${held:-64}" 'BEGIN { print int((a + b) * 1.02) + 1 "M" }')"
    printf '%-24s %8s %13s  refused at %s: %s\n' "$m" - - "$quarter" "$(tail -1 "$m.log")"
    lim="$limit"
    name="$m ($limit)"
  done
  if [ "$rc" -ge 128 ] || grep -q '^Command terminated by signal' "$m.time"; then
    printf '%-24s %8s %13s  killed: %s\n' "$name" - - "$(head -1 "$m.time")"
    continue
  elif [ "$rc" != 0 ]; then
    printf '%-24s %8s %13s  refused: %s\n' "$name" - - "$(tail -1 "$m.log")"
    continue
  fi
  read -r wall rss < <(tail -1 "$m.time")
  plan="$(grep -m1 '^gradient:' "$m.log" || true)"
  same="-"
  if [[ "$m" == *fp16 ]]; then
    same="no (a 16-bit store)"
  elif [ "$m" = whole ]; then
    mv whole.h5 "whole-$n-$steps.h5"
  elif [ -f "whole-$n-$steps.h5" ]; then
    same="?"
    if command -v h5diff >/dev/null; then
      h5diff -q "whole-$n-$steps.h5" "$m.h5" >/dev/null 2>&1 && same=yes || same=no
    fi
  fi
  [ "$rss" = - ] || rss=$((rss / 1024))
  printf '%-24s %8.1f %13s  %s; same bits: %s\n' "$name" "$wall" "$rss" "${plan#gradient: }" "$same"
done
