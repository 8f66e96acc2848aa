#!/usr/bin/env bash
# README command 1: set up, build, and run tessera's main job on the bundled resnet18, then on a
# TransformerEncoder whose plan mixes backends.
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
# A model where backends of different kinds mix: torch's own nn.TransformerEncoder (2 layers,
# exported here), tuned over all six real backends. Its plan puts the GEMMs on oneDNN/XNNPACK and
# fuses the attention and LayerNorm tails with Halide (docs/benchmarks.md, "End to end").
encoder="$out/zoo/transformer_encoder.onnx"
[ -f "$encoder" ] || /usr/bin/python3 scripts/export_models.py --only transformer_encoder --out "$out/zoo" >/dev/null
echo "== tessera tune $encoder --backends ref,onednn,eigen,blas,xnnpack,halide"
./build/tessera tune "$encoder" --backends ref,onednn,eigen,blas,xnnpack,halide --cache "$out/costs.db" \
  --plan "$out/encoder.plan.json" -j 1
echo "== tessera run $encoder --plan $out/encoder.plan.json --check"
./build/tessera run "$encoder" --plan "$out/encoder.plan.json" --check --repeat 10
