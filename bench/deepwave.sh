#!/usr/bin/env bash
# bench/deepwave.sh SRC OUT — builds Deepwave 0.0.27 from its source tree SRC (a checkout of
# github.com/ar4/deepwave at tag v0.0.27, commit dc2f8af) with its own CMake, CPU only, against
# Debian's python3-torch, into OUT: afterwards PYTHONPATH=OUT imports `deepwave`. For the
# comparisons of bench/deepwave_compare.py; nothing in starwave's build or tests needs it.
#
# Two changes: Deepwave's CMakeLists.txt builds its scalar and scalar Born propagators only
# (not the elastic and acoustic ones, whose 3-D objects take minutes each), and torch 1.13 has no torch._C._functorch, which Deepwave asks only whether a
# tensor is inside vmap; without it, no tensor is.
set -euo pipefail
src="${1:?usage: bench/deepwave.sh SRC OUT}"
out="${2:?usage: bench/deepwave.sh SRC OUT}"
[ -f "$src/src/deepwave/scalar.py" ] || { echo "bench/deepwave.sh: $src is not a Deepwave source tree" >&2; exit 2; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
rm -rf "$out/deepwave" "$out/build" "$out/source"
cp -r "$src/src/deepwave" "$out/deepwave"
mkdir -p "$out/source"
ln -s "$(cd "$src" && pwd)/src" "$out/source/src"
grep -v -E 'object_library\((elastic|acoustic) ' "$src/CMakeLists.txt" >"$out/source/CMakeLists.txt"
python3 - "$out/deepwave/common.py" <<'EOF'
import sys
path = sys.argv[1]
text = open(path).read()
old = "import torch._C._functorch as _functorch\n"
new = ("try:\n    import torch._C._functorch as _functorch\nexcept ImportError:  # torch < 2: no vmap wrappers\n"
       "    class _functorch:\n        is_functorch_wrapped_tensor = is_batchedtensor = staticmethod(lambda t: False)\n")
if old not in text:
    sys.exit("bench/deepwave.sh: %s has no functorch import to patch (not Deepwave 0.0.27?)" % path)
open(path, "w").write(text.replace(old, new))
EOF
cmake -S "$out/source" -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON >/dev/null
cmake --build "$out/build" -j"$(nproc)" --target deepwave_C
cp "$out/build/libdeepwave_C.so" "$out/deepwave/"
/usr/bin/python3 -c "import sys; sys.path.insert(0, '$out'); import deepwave; print('deepwave', deepwave.__file__)"
