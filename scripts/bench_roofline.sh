#!/usr/bin/env bash
# Roofline predictions against measured runs on the bundled models (docs/benchmarks.md, "Roofline
# that fits the machine"): plain `--cost roofline` (this machine's profile, calibrated on first use
# into $CACHE/tessera/devices), then `run --profile`, whose last line compares the plan's predicted
# sum of calls with the measured one.
#   scripts/bench_roofline.sh [CACHE_DIR] [REPEAT]     (default: a fresh temporary folder, 20 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
tessera=build/tessera
cache=${1:-$(mktemp -d)}
repeat=${2:-20}
backends=ref,onednn,eigen,blas
plans=$(mktemp -d)
trap 'rm -rf "$plans"' EXIT
for m in resnet18 mobilenet_v2 bert_encoder; do
  env -u TESSERA_ROOFLINE_PROFILE XDG_CACHE_HOME="$cache" \
    "$tessera" partition "data/models/$m.onnx" --backends "$backends" --cost roofline --plan "$plans/$m.json" \
    2> >(grep -v '^warning: .* weights of' >&2)
  line=$("$tessera" run "data/models/$m.onnx" --plan "$plans/$m.json" --profile --repeat "$repeat" 2>/dev/null |
         grep '^sum of calls')
  echo "$m: $line"
done
