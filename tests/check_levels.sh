#!/usr/bin/env bash
# tests/check_levels.sh NM LEVEL OBJ:OBJ… [LEVEL OBJ:OBJ… …] — each instruction-set level's
# kernel objects (kernels/cpu/levels.hpp) must hold their entry points and no weak or
# unique symbol outside their own namespace: such a symbol (an inline function, a template
# instance) is shared by name with the rest of the program, and the linker may keep the
# AVX-512 copy for every caller, which then fails on a CPU without AVX-512.
set -uo pipefail
nm=$1
shift
status=0
while [ $# -ge 2 ]; do
  level=$1 objects=$2
  shift 2
  IFS=: read -ra files <<<"$objects"
  symbols=$("$nm" -C --defined-only "${files[@]}") || { echo "$level: nm failed"; exit 1; }
  shared=$(awk '$2 ~ /^[WVwuv]$/' <<<"$symbols" | grep -v "starwave::cpu::$level::" |
    grep -v "DW.ref.__gxx_personality_v0")
  if [ -n "$shared" ]; then
    echo "level $level: symbols shared by name with the rest of the program:"
    echo "$shared"
    status=1
  fi
  if ! grep -q "starwave::cpu::$level::forward<8, float>" <<<"$symbols"; then
    echo "level $level: no starwave::cpu::$level::forward<8, float> in ${files[*]}"
    status=1
  fi
done
[ "$status" = 0 ] && echo "every level self-contained"
exit $status
