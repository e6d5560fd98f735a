#!/usr/bin/env bash
# bench/checkpoints.sh — a shot's whole store against checkpoints, through the CLI: for
# `gradient`, `rtm` (the layers' store) and one `fwi` iteration, the run with every step's
# store (--checkpoint-every 0) and the run under STARPU_LIMIT_CPU_MEM at a quarter of one
# shot's whole store (the memory plan then checkpoints), and the same with --scratch (the
# store out of core): wall time, peak RSS, the plan line, and whether the outputs have the
# same bits (h5diff).
#   bench/checkpoints.sh [build dir] [2d|3d]      defaults: build 2d
# 2d: 600 × 250 cells at 4 m (the reference case's grid), 4 shots, 1.2 s at 0.5 ms;
# 3d: 60 × 60 × 60 cells at 10 m, 2 shots, 0.6 s at 1 ms. 2 CPU workers.
set -euo pipefail
b="${1:-build}"
shape="${2:-2d}"
sw="$(cd "$b" && pwd)/bin/starwave"
dir="$(mktemp -d /tmp/starwave-checkpoints.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
export STARPU_SILENT=1 STARPU_FXT_TRACE=0 STARPU_NCPU=2 STARPU_HOME="$dir/home"
cd "$dir"
mkdir scratch
if [ "$shape" = 3d ]; then
  "$sw" synth --quiet --kind marmousi-like --nz 60 --ny 60 --nx 60 --spacing 10 --out true.h5
  "$sw" survey --quiet --model true.h5 --nshots 2 --receiver-every 3 --frequency 8 --dt 0.001 --t-max 0.6 --out s.h5
  smooth=60
else
  "$sw" synth --quiet --kind marmousi-like --nz 250 --nx 600 --spacing 4 --out true.h5
  "$sw" survey --quiet --model true.h5 --nshots 4 --receiver-every 2 --frequency 15 --dt 0.0005 --t-max 1.2 --out s.h5
  smooth=40
fi
"$sw" model --quiet --model true.h5 --survey s.h5 --out d.h5
"$sw" synth --quiet --kind marmousi-like $([ "$shape" = 3d ] && echo "--nz 60 --ny 60 --nx 60 --spacing 10" ||
  echo "--nz 250 --nx 600 --spacing 4") --smooth "$smooth" --out init.h5

# The whole store of one shot, from the plan line ("… the boundary store 271 MiB …").
whole="$("$sw" gradient --model init.h5 --data d.h5 --out probe.h5 --checkpoint-every 0 2>&1 |
  sed -n 's/.*of which the boundary store \([0-9.]*\) \([KMG]\)iB.*/\1 \2/p' | head -1)"
limit="$(echo "$whole" | awk '{ m = $2 == "G" ? 1024 : $2 == "K" ? 1 / 1024 : 1; v = int($1 * m / 4); print v < 1 ? 1 : v }')"
echo "one shot's whole store: $whole""iB; STARPU_LIMIT_CPU_MEM=$limit (MiB)"
echo "command   store        wall s   peak RSS MB   same bits   plan"
run() {  # name, limit (or ""), command...
  local name="$1" lim="$2"
  shift 2
  local t0 t1 rss plan
  t0="$(date +%s.%N)"
  if [ -n "$lim" ]; then
    STARPU_LIMIT_CPU_MEM="$lim" /usr/bin/time -o "$name.rss" -f '%M' "$@" >"$name.log" 2>&1
  else
    /usr/bin/time -o "$name.rss" -f '%M' "$@" >"$name.log" 2>&1
  fi
  rss="$(tail -1 "$name.rss")"
  t1="$(date +%s.%N)"
  plan="$(grep -o 'one shot in flight.*' "$name.log" | head -1)"
  echo "$name $(echo "$t1 - $t0" | bc) $((rss / 1000)) $plan"
}
for cmd in gradient rtm fwi; do
  extra=""
  [ "$cmd" = rtm ] && extra="--storage boundary"
  [ "$cmd" = fwi ] && extra="--iterations 1"
  model=init.h5
  read -r _ t_whole rss_whole plan_whole <<<"$(run "$cmd-whole" "" "$sw" "$cmd" --model $model --data d.h5 \
    --out "$cmd-whole.h5" --checkpoint-every 0 $extra)"
  read -r _ t_ck rss_ck plan_ck <<<"$(run "$cmd-limited" "$limit" "$sw" "$cmd" --model $model --data d.h5 \
    --out "$cmd-limited.h5" $extra)"
  read -r _ t_oc rss_oc plan_oc <<<"$(run "$cmd-scratch" "$limit" "$sw" "$cmd" --model $model --data d.h5 \
    --out "$cmd-scratch.h5" --scratch scratch $extra)"
  same_as_whole() {  # file
    if [ "$cmd" = fwi ]; then
      h5diff -q "$cmd-whole.h5" "$1" /vp /vp >/dev/null 2>&1 &&
        h5diff -q "$cmd-whole.h5" "$1" /history/misfit /history/misfit >/dev/null 2>&1 && echo yes || echo no
    else
      h5diff -q "$cmd-whole.h5" "$1" >/dev/null 2>&1 && echo yes || echo no
    fi
  }
  printf "%-8s  %-11s  %6.1f   %11s   %-9s   %s\n" "$cmd" whole "$t_whole" "$rss_whole" - "$plan_whole"
  printf "%-8s  %-11s  %6.1f   %11s   %-9s   %s\n" "$cmd" "limit ${limit}M" "$t_ck" "$rss_ck" \
    "$(same_as_whole "$cmd-limited.h5")" "$plan_ck"
  printf "%-8s  %-11s  %6.1f   %11s   %-9s   %s\n" "$cmd" "+ scratch" "$t_oc" "$rss_oc" \
    "$(same_as_whole "$cmd-scratch.h5")" "$plan_oc"
done
