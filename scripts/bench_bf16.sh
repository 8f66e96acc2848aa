#!/usr/bin/env bash
# bf16 under an accuracy budget vs the fp32 tuned plan vs ONNX Runtime fp32, one thread, same run
# (docs/benchmarks.md, "Reduced precision"). Needs a CPU with native bf16, a build, the models with
# PyTorch's weights and reference inputs (scripts/export_models.py --out DIR; ctest's
# python_pytorch_export fixture writes them to build/pytorch_models) and, for the peer column,
# scripts/fetch_onnxruntime.sh.
#   scripts/bench_bf16.sh [ROUNDS] [E] [MODELS_DIR]     default 5 rounds, E = 0.01, build/pytorch_models
# Per model: `tune` of ref,onednn (fp32) and of ref,onednn,onednn_bf16 under --max-rel-error E
# (one fresh cost database), then ROUNDS rounds of ONNX Runtime, the fp32 plan and the bf16 plan
# back to back (`tessera run --repeat 50 --threads 1`, medians), then `run --check` of the bf16
# plan on PyTorch's reference input (held out: the budget was verified on seeded inputs) and its
# error against PyTorch's own output. The machine may be shared: compare ratios within a round.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
rounds="${1:-5}"
E="${2:-0.01}"
models="${3:-build/pytorch_models}"
out="${TMPDIR:-/tmp}/tessera_bench_bf16"
rm -rf "$out" && mkdir -p "$out"
db="$out/costs.db"
median() { /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])[sys.argv[1]])' "$1"; }
for m in resnet18 bert_encoder; do
  M="$models/$m.onnx"
  build/tessera tune "$M" --backends ref,onednn --cache "$db" --threads 1 --plan "$out/$m.fp32.json" >/dev/null
  build/tessera tune "$M" --backends ref,onednn,onednn_bf16 --cache "$db" --threads 1 --max-rel-error "$E" \
    --plan "$out/$m.bf16.json" | grep -E 'partitions|accuracy'
  for r in $(seq "$rounds"); do
    ort=$(node bench/peer/ort_bench.js "$M" 1 --runs 50 2>/dev/null | median median_ms || echo nan)
    fp32=$(build/tessera run "$M" --plan "$out/$m.fp32.json" --repeat 50 --threads 1 --json | median latency_ms)
    bf16=$(build/tessera run "$M" --plan "$out/$m.bf16.json" --repeat 50 --threads 1 --json | median latency_ms)
    /usr/bin/python3 -c "import sys; o, a, b = map(float, sys.argv[1:4]); print(f'$m round $r: ORT {o:.3f} ms, fp32 {a:.3f} ms, bf16 {b:.3f} ms, bf16/fp32 {b / a:.3f}, bf16/ORT {b / o:.3f}')" "$ort" "$fp32" "$bf16"
  done
  ref="$models/reference/$m"
  if [ -f "$ref.input.npy" ]; then
    build/tessera run "$M" --plan "$out/$m.bf16.json" --check --input "input=$ref.input.npy" --repeat 1 --threads 1 \
      --output-dir "$out/$m.out" | grep 'end-to-end'
    /usr/bin/python3 -c "import numpy as np, glob, sys; y = np.load(glob.glob(sys.argv[1] + '/*.npy')[0]); t = np.load(sys.argv[2]); print(f'$m held out: relative error vs PyTorch fp32 {np.linalg.norm(y - t) / np.linalg.norm(t):.3g}')" "$out/$m.out" "$ref.output.npy"
  fi
done
