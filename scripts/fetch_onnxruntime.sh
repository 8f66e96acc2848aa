#!/usr/bin/env bash
# Installs the peer baseline, ONNX Runtime's Node binding (onnxruntime-node, CPU provider), into
# bench/peer/node_modules/ (git-ignored) for bench/peer/ort_bench.js. --ignore-scripts: the package
# ships its CPU binaries; its install script only fetches GPU providers, which we do not need.
# Idempotent: quiet when the pinned version is already installed. Override with ORT_VERSION.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
peer="$repo/bench/peer"
version="${ORT_VERSION:-1.30.0}"

installed() {
  (cd "$peer" && node -e "process.exit(require('onnxruntime-node/package.json').version === '$version' ? 0 : 1)") 2>/dev/null
}

installed && exit 0
command -v npm >/dev/null || { echo "fetch_onnxruntime: npm not found (apt-get install npm)" >&2; exit 1; }
echo "fetch_onnxruntime: installing onnxruntime-node@$version into bench/peer/node_modules" >&2
# No package.json or lock file is written: nothing under bench/peer but the script is tracked.
npm install --prefix "$peer" --no-save --no-package-lock --ignore-scripts --no-audit --no-fund \
  --loglevel=error "onnxruntime-node@$version" >/dev/null
installed || { echo "fetch_onnxruntime: onnxruntime-node@$version did not load after install" >&2; exit 1; }
