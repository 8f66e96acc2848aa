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
