#!/usr/bin/env bash
# tests/check_install.sh CMAKE BUILD_DIR VERSION — `cmake --install BUILD_DIR --prefix P` into
# a fresh folder gives P/bin/starwave, which runs from there (StarPU found through its run
# path) and says VERSION, and the documents under P/share/doc/starwave.
set -uo pipefail
cmake=$1 build=$2 version=$3
prefix=$(mktemp -d "${TMPDIR:-/tmp}/starwave-install.XXXXXX") || exit 1
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix" >/dev/null || { echo "cmake --install failed"; exit 1; }
status=0
out=$(env -u LD_LIBRARY_PATH "$prefix/bin/starwave" --version 2>&1) || { echo "installed starwave: $out"; status=1; }
case "$out" in
  "starwave $version ("*) ;;
  *) echo "installed starwave --version says '$out', not 'starwave $version (…)'"; status=1 ;;
esac
for f in README.md LICENSE docs/usage.md docs/design.md; do
  [ -s "$prefix/share/doc/starwave/$f" ] || { echo "not installed: share/doc/starwave/$f"; status=1; }
done
[ "$status" = 0 ] && echo "installed: $out"
exit $status
