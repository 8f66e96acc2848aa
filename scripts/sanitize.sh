#!/usr/bin/env bash
# The sanitizer stage (docs/fuzzing.md): tests and fuzz targets built with clang + AddressSanitizer
# + UndefinedBehaviorSanitizer into one build dir, then run. CI runs `scripts/sanitize.sh --ci`
# (scripts/test.sh), by hand it runs the same without --ci.
#
# Why one dir, build-fuzz/ (configured -DTESSERA_FUZZ=ON -DTESSERA_SANITIZE=ON): the fuzz targets
# already need the loaders' libraries compiled with ASan+UBSan (-fsanitize=fuzzer-no-link adds
# only coverage hooks, which the test programs link fine), so the tests of those libraries cost
# only their own sources and links. A second sanitized compile of the whole tree (CLI, six backends'
# kernels, Python module) does not fit CI's time on this 2-core machine.
#
#   1. build the fuzz targets and the target `sanitize_tests` (the tests marked SANITIZE in
#      tests/*/CMakeLists.txt, each one unity-built TU: loaders, IR, partitioning, costs, search),
#   2. ctest -L sanitize: those tests, the cases that run the CLI left out ("~[.]~[cli]"),
#   3. the fuzz smoke: scripts/fuzz.sh --no-build on the same dir, $FUZZ_SECONDS (default 5) each.
#
# Any ASan, UBSan or LeakSanitizer report fails the stage. Suppressions, for third-party libraries
# only and each with its reason: fuzz/lsan.supp, fuzz/ubsan.supp.
# Options: --ci (fuzz smoke with seed 1 and a fresh working corpus, as scripts/fuzz.sh --ci).
# Environment: TESSERA_FUZZ_SMOKE=0 leaves out step 3 (and the fuzz targets' build),
# TESSERA_SANITIZE_CTEST=0 leaves out step 2 (and the tests' build); SANITIZE_TESTS=all builds the
# whole tree sanitized and runs every test (a second compile of everything: by hand only, and not
# run since the subset went into CI); SANITIZE_BUILD=DIR another build dir.
set -euo pipefail
cd "$(dirname "$0")/.."
ci_flag=()
[ "${1:-}" = --ci ] && ci_flag=(--ci)
build=${SANITIZE_BUILD:-build-fuzz}
smoke=${TESSERA_FUZZ_SMOKE:-1} tests=${TESSERA_SANITIZE_CTEST:-1}
[ "$smoke" != 0 ] || [ "$tests" != 0 ] || { echo "sanitize: nothing to do (TESSERA_FUZZ_SMOKE=0, TESSERA_SANITIZE_CTEST=0)"; exit 0; }

targets=()
[ "$smoke" = 0 ] || targets+=($(printf 'fuzz_%s ' $(ls tests/fuzz/corpus)))
[ "$tests" = 0 ] || targets+=(sanitize_tests)
[ "${SANITIZE_TESTS:-}" != all ] || targets=()   # every target
mkdir -p "$build"
log=$build/sanitize-build.log
start=$SECONDS
if ! { cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTESSERA_FUZZ=ON -DTESSERA_SANITIZE=ON &&
       cmake --build "$build" -j"${JOBS:-2}" ${targets[@]:+--target "${targets[@]}"}; } >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "sanitize: build FAILED (full log: $log)" >&2
  exit 1
fi
echo "sanitize: build ok in $((SECONDS - start)) s (log: $log)"

export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="suppressions=$PWD/fuzz/ubsan.supp:halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
if [ "$tests" != 0 ]; then
  start=$SECONDS
  label=(-L sanitize)
  [ "${SANITIZE_TESTS:-}" != all ] || label=()
  (cd "$build" && ctest --output-on-failure -j"${JOBS:-2}" "${label[@]}")
  echo "sanitize: ctest ${label[*]:-(all)} ok in $((SECONDS - start)) s"
fi
if [ "$smoke" != 0 ]; then
  start=$SECONDS
  bash scripts/fuzz.sh "${ci_flag[@]}" --build-dir "$build" --no-build --seconds "${FUZZ_SECONDS:-5}"
  echo "sanitize: fuzz smoke ok in $((SECONDS - start)) s"
fi
