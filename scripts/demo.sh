#!/usr/bin/env bash
# README command 1: set up, build, and run tessera's main job on the bundled resnet18.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
# Real (seeded random) weights for the bundled models; a clean clone has shape-only ones.
[ -f data/models/resnet18.weights ] || /usr/bin/python3 scripts/export_models.py >/dev/null
model=data/models/resnet18.onnx
echo "== tessera info $model"
./build/tessera info "$model"
# Tune on the real backends (measured costs in a persistent database: a rerun measures nothing
# twice), emit the partitioned module, then run the plan end to end and check it against ref.
out=.cache/demo
mkdir -p "$out"
echo "== tessera tune $model (measured costs in $out/costs.db)"
./build/tessera tune "$model" --backends ref,onednn,eigen,blas --cache "$out/costs.db" --plan "$out/plan.json" -j 1
echo "== tessera partition $model --cost measure --emit $out/emit (same database: nothing measured again)"
./build/tessera partition "$model" --backends ref,onednn,eigen,blas --cost measure --cache "$out/costs.db" --emit "$out/emit"
echo "== tessera run $model --plan $out/emit/plan.json --check"
./build/tessera run "$model" --plan "$out/emit/plan.json" --check --repeat 10
