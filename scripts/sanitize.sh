#!/usr/bin/env bash
# The sanitizer run of the suite, by hand (not in CI: a second, sanitized compile does not fit its
# time on the 2-core CI machine; CI runs the fuzz smoke only, scripts/test.sh). One clang build
# with AddressSanitizer + UndefinedBehaviorSanitizer into build-asan/ that has both the tests and
# the libFuzzer targets (one sanitized compile for both), then
#   1. ctest in build-asan/: by default the unit tests of the libraries the loaders live in (the
#      ones that need neither the CLI nor the oneDNN/Eigen/BLAS backends, which would double the
#      sanitized compile); SANITIZE_TESTS=all builds the whole tree and runs every test,
#   2. a fuzz smoke: each fuzz target for $FUZZ_SECONDS (default 5) from its seed corpus.
# Any ASan/UBSan/LSan report fails the stage. Suppressions (third-party only): fuzz/*.supp.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
build=build-asan
unit_tests="ir_test partition_test backends_test ref_kernels_test cost_test mock_cost_model_test
  roofline_cost_model_test refit_test cost_database_test estimator_test"
fuzz_targets=$(printf 'fuzz_%s ' $(ls tests/fuzz/corpus))
if [ "${SANITIZE_TESTS:-}" = all ]; then
  targets="" regex=""
else
  targets="$(echo $unit_tests) $fuzz_targets" regex="^($(echo $unit_tests | tr ' ' '|'))\$"
fi
mkdir -p "$build"
log=$build/build.log
start=$SECONDS
# -O1: a sanitized build is for finding bugs, not speed; it compiles markedly faster than -O3.
if ! { cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release \
         -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DTESSERA_SANITIZE=ON -DTESSERA_FUZZ=ON &&
       cmake --build "$build" -j"${JOBS:-2}" ${targets:+--target $targets}; } >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "sanitize: build FAILED (full log: $log)" >&2
  exit 1
fi
echo "sanitize: build ok in $((SECONDS - start)) s (log: $log)"

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="suppressions=$PWD/fuzz/ubsan.supp:halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
start=$SECONDS
(cd "$build" && ctest --output-on-failure -j"${JOBS:-2}" ${regex:+-R "$regex"})
echo "sanitize: ctest ok in $((SECONDS - start)) s"

start=$SECONDS
bash scripts/fuzz.sh --build-dir "$build" --no-build --seconds "${FUZZ_SECONDS:-5}"
echo "sanitize: fuzz smoke ok in $((SECONDS - start)) s"
