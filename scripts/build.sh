#!/usr/bin/env bash
# Installs what is missing (scripts/setup.sh), configures and builds tessera into build/.
# The compiler's output goes to build/build.log; on a failure its last lines are printed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p build
log=build/build.log
start=$SECONDS
if ! { cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j"${JOBS:-2}"; } >"$log" 2>&1; then
  tail -n 60 "$log" >&2
  echo "build: FAILED (full log: $log)" >&2
  exit 1
fi
echo "build: ok in $((SECONDS - start)) s (log: $log)"
