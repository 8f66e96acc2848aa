#!/usr/bin/env bash
# The installed C++ package, end to end (docs/deploy.md, "C++"): install the build into a
# fresh prefix, build examples/deploy_cpp against it alone (CMAKE_PREFIX_PATH=prefix), run it on
# resnet18 with a plan, and check that it refuses another model's plan (exit 2, one line).
# Usage: deploy_cpp_test.sh BUILD_DIR SOURCE_DIR   (run from SOURCE_DIR by ctest)
set -euo pipefail
build="$1"
src="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/tessera/session.h"
test -f "$tmp/prefix/lib/cmake/tessera/tesseraConfig.cmake"
# Nothing installed may point back into the source or build tree.
if grep -rlE "$src/(src|search|cost_models)|$build" "$tmp/prefix/lib/cmake/tessera"; then
  echo "deploy_cpp_test: the installed package refers to the source or build tree" >&2
  exit 1
fi

# A sanitized build's package (scripts/sanitize.sh) holds ASan+UBSan code: the example is built by
# the same compiler with the same sanitizers, so their runtimes link in.
consumer=()
if grep -q '^TESSERA_SANITIZE:BOOL=ON' "$build/CMakeCache.txt"; then
  cxx="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")"
  consumer=(-DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined")
fi
cmake -S "$src/examples/deploy_cpp" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release ${consumer[@]+"${consumer[@]}"} >/dev/null
cmake --build "$tmp/build" -j2 >/dev/null

"$build/tessera" partition data/models/resnet18.onnx --backends ref,onednn,eigen,blas --cost roofline --plan "$tmp/plan.json"
"$tmp/build/deploy_cpp" data/models/resnet18.onnx "$tmp/plan.json"

"$build/tessera" partition data/models/squeezenet1_1.onnx --backends ref --cost roofline --plan "$tmp/other.json"
set +e
"$tmp/build/deploy_cpp" data/models/resnet18.onnx "$tmp/other.json" 2>"$tmp/err.txt"
status=$?
set -e
cat "$tmp/err.txt"
# Warnings (a clean clone's missing weights) may precede it; the error itself is one line.
if [ "$status" -ne 2 ] || [ "$(grep -vc '^warning:' "$tmp/err.txt")" -ne 1 ]; then
  echo "deploy_cpp_test: another model's plan gave exit $status, expected 2 with one line" >&2
  exit 1
fi
echo "deploy_cpp_test: ok"
