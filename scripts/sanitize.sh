#!/usr/bin/env bash
# The sanitizer stage (docs/fuzzing.md): the whole tree, its tests and the fuzz targets built with
# clang + AddressSanitizer + UndefinedBehaviorSanitizer into one build dir, then run. CI runs
# `scripts/sanitize.sh --ci` (scripts/test.sh), by hand it runs the same without --ci.
#
# One dir, build-fuzz/ (configured -DTESSERA_FUZZ=ON -DTESSERA_SANITIZE=ON): the fuzz targets need
# the loaders' libraries compiled with ASan+UBSan anyway (-fsanitize=fuzzer-no-link adds only
# coverage hooks, which the CLI and the test programs link fine), so one compile serves both.
# Unity-built like every build (CMakeLists.txt): 7.5 min instead of 11 for the whole tree on this
# 2-core machine with the compiler cache cold, at -O3 (Release; -O1 compiles no faster).
#
#   1. build everything (or, with SANITIZE_TESTS=subset, the fuzz targets and the target
#      `sanitize_tests`: the tests marked SANITIZE in tests/*/CMakeLists.txt, a quick check by hand),
#   2. ctest: every test (the subset: ctest -L sanitize),
#   3. the fuzz smoke: scripts/fuzz.sh --no-build on the same dir, $FUZZ_SECONDS (default 5) each.
#
# Any ASan, UBSan or LeakSanitizer report fails the stage. Suppressions, for third-party libraries
# only and each with its reason: fuzz/lsan.supp, fuzz/ubsan.supp. Where leaks cannot be checked
# (Debian's python3 and OpenMPI's unloaded plugins), the tests say why (tests/python/CMakeLists.txt,
# tests/distributed/CMakeLists.txt); ASan's other checks and UBSan still run there.
# Options: --ci (fuzz smoke with seed 1 and a fresh working corpus, as scripts/fuzz.sh --ci).
# Environment: TESSERA_FUZZ_SMOKE=0 leaves out step 3, TESSERA_SANITIZE_CTEST=0 step 2 (and with
# it the tests' build: only the fuzz targets are built); SANITIZE_TESTS=subset the subset above;
# SANITIZE_BUILD=DIR another build dir.
set -euo pipefail
cd "$(dirname "$0")/.."
ci_flag=()
[ "${1:-}" = --ci ] && ci_flag=(--ci)
build=${SANITIZE_BUILD:-build-fuzz}
smoke=${TESSERA_FUZZ_SMOKE:-1} tests=${TESSERA_SANITIZE_CTEST:-1}
[ "$smoke" != 0 ] || [ "$tests" != 0 ] || { echo "sanitize: nothing to do (TESSERA_FUZZ_SMOKE=0, TESSERA_SANITIZE_CTEST=0)"; exit 0; }

subset=0
[ "${SANITIZE_TESTS:-all}" != subset ] || subset=1
targets=()   # none: every target
if [ "$subset" = 1 ] || [ "$tests" = 0 ]; then
  [ "$smoke" = 0 ] || targets+=($(printf 'fuzz_%s ' $(ls tests/fuzz/corpus)))
  [ "$tests" = 0 ] || targets+=(sanitize_tests)
fi
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
  label=(-LE in_process)   # the subset's copies of tests that run in full here (tests/CMakeLists.txt)
  [ "$subset" = 0 ] || label=(-L sanitize)
  bash scripts/ctest_no_skips.sh "$build" "${label[@]}"
  echo "sanitize: ctest ${label[*]} ok in $((SECONDS - start)) s"
fi
if [ "$smoke" != 0 ]; then
  start=$SECONDS
  bash scripts/fuzz.sh "${ci_flag[@]}" --build-dir "$build" --no-build --seconds "${FUZZ_SECONDS:-5}"
  echo "sanitize: fuzz smoke ok in $((SECONDS - start)) s"
fi
