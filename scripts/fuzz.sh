#!/usr/bin/env bash
# Runs the libFuzzer targets (fuzz/, docs/fuzzing.md) from their seed corpora.
#
#   scripts/fuzz.sh                      smoke: 5 s per target
#   scripts/fuzz.sh --ci                 the same, as CI runs it (scripts/sanitize.sh --ci)
#   scripts/fuzz.sh --seconds 600        a campaign: 10 minutes per target
#   scripts/fuzz.sh --seconds 60 onnx plan    only these targets
#   options: --build-dir DIR (default build-fuzz; configured and built with clang if needed),
#            --no-build (use DIR as it is), --jobs N (targets run N at a time, default 1),
#            --ci (what scripts/test.sh runs: seed 1 and a fresh working corpus, so a run does
#            not depend on what earlier campaigns left in DIR/fuzz-corpus)
#
# Each target fuzzes a working corpus DIR/fuzz-corpus/<loader> (seeded from
# tests/fuzz/corpus/<loader>/, kept between runs, so campaigns accumulate); crashes, leaks and
# timeouts land in DIR/fuzz-artifacts/<loader>/ and the run fails. One summary line per target:
# executions, executions per second, coverage (edges), corpus size. Inputs over 1 MB, runs over
# 10 s per input and 2 GB of memory count as findings.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=5 build=build-fuzz do_build=1 jobs=1 ci=0 targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --build-dir) build="$2"; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    --ci) ci=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    -*) echo "fuzz: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=($(ls tests/fuzz/corpus))

if [ "$do_build" = 1 ]; then
  mkdir -p "$build"
  log="$build/fuzz-build.log" start=$SECONDS
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTESSERA_FUZZ=ON >"$log" 2>&1 ||
      { tail -n 40 "$log" >&2; echo "fuzz: configure FAILED" >&2; exit 1; }
  fi
  # Only the targets: the rest of the tree (CLI, every backend, Python) is not needed to fuzz.
  cmake --build "$build" -j"${JOBS:-2}" --target $(printf 'fuzz_%s ' "${targets[@]}") >>"$log" 2>&1 ||
    { tail -n 40 "$log" >&2; echo "fuzz: build FAILED (log: $log)" >&2; exit 1; }
  echo "fuzz: targets built in $((SECONDS - start)) s (log: $log)"
fi

# Leaks in uninstrumented third-party libraries would fail every run: suppressed by name in
# fuzz/lsan.supp (documented there). UBSan stops at the first report.
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="suppressions=$PWD/fuzz/ubsan.supp:halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export TMPDIR="${TMPDIR:-/tmp}"

run_one() {
  local loader=$1 work="$build/fuzz-corpus/$1" art="$build/fuzz-artifacts/$1/" log="$build/fuzz-logs/$1.log"
  local extra=()
  if [ "$ci" = 1 ]; then
    work="$build/fuzz-corpus-ci/$1" extra=(-seed=1)
    rm -rf "$work"
  fi
  mkdir -p "$work" "$art" "$(dirname "$log")"
  local status=0
  "$build/fuzz/fuzz_$loader" "${extra[@]}" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -max_len=1048576 -artifact_prefix="$art" "$work" "tests/fuzz/corpus/$loader" >"$log" 2>&1 || status=$?
  local execs eps cov corp
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  corp=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -1 | cut -d' ' -f2)
  if [ "$status" = 0 ]; then
    printf 'fuzz_%-15s ok     %6s s  %9s execs  %6s exec/s  cov %5s  corpus %s\n' "$loader" "$seconds" "${execs:-?}" "${eps:-?}" "${cov:-?}" "${corp:-?}"
  else
    printf 'fuzz_%-15s FAILED (exit %s): %s\n' "$loader" "$status" "$(grep -m1 -E 'ERROR|fuzz finding|runtime error|deadly|Timeout' "$log" || echo see log)"
    echo "  log: $log; artifacts: $(ls "$art" | tr '\n' ' ')" >&2
    return 1
  fi
}

failed=0
pids=()
for loader in "${targets[@]}"; do
  [ -d "tests/fuzz/corpus/$loader" ] || { echo "fuzz: no target $loader (tests/fuzz/corpus/$loader missing)" >&2; exit 2; }
  if [ "$jobs" -le 1 ]; then
    run_one "$loader" || failed=1
  else
    run_one "$loader" &
    pids+=($!)
    if [ ${#pids[@]} -ge "$jobs" ]; then wait "${pids[0]}" || failed=1; pids=("${pids[@]:1}"); fi
  fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done
exit $failed
