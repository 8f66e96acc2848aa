#!/usr/bin/env bash
# bf16 under an accuracy budget vs the fp32 tuned plan vs ONNX Runtime fp32, one thread, same run
# (docs/benchmarks.md, section "bf16"). Needs the real weights (scripts/export_models.py), a CPU
# with native bf16 and, for the peer column, scripts/fetch_onnxruntime.sh.
#   scripts/bench_bf16.sh [ROUNDS] [E]      default 3 rounds, E = 0.01
# Per round and model: `tessera bench` of ref,onednn (fp32) and ref,onednn,onednn_bf16 under
# --max-rel-error E (costs from one cost database, tuned first), then ONNX Runtime; prints one
# line per round and the median ratio over rounds. The machine may be shared: compare ratios.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
rounds="${1:-3}"
E="${2:-0.01}"
db="${TMPDIR:-/tmp}/tessera_bench_bf16.db"
for m in resnet18 bert_encoder; do
  build/tessera tune "data/models/$m.onnx" --backends ref,onednn,onednn_bf16 --cache "$db" --max-rel-error "$E" >/dev/null
  build/tessera tune "data/models/$m.onnx" --backends ref,onednn --cache "$db" >/dev/null
  for r in $(seq "$rounds"); do
    t=$(build/tessera bench "data/models/$m.onnx" --combos ref,onednn ref,onednn,onednn_bf16 --cost measure \
          --cache "$db" --max-rel-error "$E" --threads 1 --repeat 50 --json)
    ort=$(node bench/peer/ort_bench.js "data/models/$m.onnx" 1 --runs 50 2>/dev/null || echo '{"median_ms": null}')
    /usr/bin/python3 - "$m" "$r" "$t" "$ort" <<'PY'
import json, sys
m, r, t, ort = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
fp32, bf16 = t[0]["measured_ms"], t[1]["measured_ms"]
o = ort.get("median_ms")
print(f"{m} round {r}: fp32 {fp32:.2f} ms, bf16 {bf16:.2f} ms (verified error {t[1].get('rel_error', 0):.3g}), "
      f"bf16/fp32 {bf16 / fp32:.3f}" + (f", ORT {o:.2f} ms, bf16/ORT {bf16 / o:.3f}" if o else ""))
PY
  done
done
