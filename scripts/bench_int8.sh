#!/usr/bin/env bash
# int8 chosen by the search under an accuracy budget, against the fp32 tuned plan, ONNX Runtime
# fp32 and ONNX Runtime on the whole model statically quantized (QDQ, the same calibration data),
# one thread, same run (docs/benchmarks.md, "int8 by accuracy budget"). Needs a build, the models
# with PyTorch's weights and reference inputs (scripts/export_models.py --out DIR) and, for the
# peer columns, scripts/fetch_onnxruntime.sh.
#   scripts/bench_int8.sh [ROUNDS] [E] [MODELS_DIR] [MODELS]
#     default 5 rounds, E = 0.01, build/pytorch_models, "resnet18 mobilenet_v2 bert_encoder";
#     TESSERA=path runs that binary instead of build/tessera, OUT=dir writes there
# Per model, one fresh cost database:
#   calibration input: one standard-normal tensor (seed 7), given to both tessera and the quantizer;
#   tune ref,onednn (fp32); tune ref,onednn,onednn_int8 under --max-rel-error E --calibration;
#   scripts/quantize_qdq.py on the same calibration input (ORT's static QDQ, whole model);
#   the budgeted search's own plan (partition --no-verify on the same database: before tune's race);
#   ROUNDS rounds of: ORT fp32, ORT QDQ, the fp32 plan, the int8 plan, the search's plan (medians
#   of 50 runs);
#   held out: PyTorch's reference input (not the calibration data): `run --check` of the int8 plan
#   (vs fp32 ref) and the errors of both int8 models against PyTorch's own output (the QDQ model
#   run by tessera's ref, which computes what ONNX's QDQ semantics say).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
rounds="${1:-5}"
E="${2:-0.01}"
models="${3:-build/pytorch_models}"
names="${4:-resnet18 mobilenet_v2 bert_encoder}"
out="${OUT:-${TMPDIR:-/tmp}/tessera_bench_int8}"
T="${TESSERA:-build/tessera}"
rm -rf "$out" && mkdir -p "$out"
median() { /usr/bin/python3 -c 'import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])[sys.argv[1]])' "$1"; }
relerr() { /usr/bin/python3 -c "import numpy as np, glob, sys; y = np.load(sorted(glob.glob(sys.argv[1] + '/*.npy'))[0]); t = np.load(sys.argv[2]); print(f'{np.linalg.norm(y - t) / np.linalg.norm(t):.3g}')" "$1" "$2"; }
for m in $names; do
  M="$models/$m.onnx"
  db="$out/$m.db"
  ref="$models/reference/$m"
  /usr/bin/python3 -c "import numpy as np, sys; x = np.load(sys.argv[1]); np.save(sys.argv[2], np.random.default_rng(7).standard_normal(x.shape).astype(np.float32))" \
    "$ref.input.npy" "$out/$m.cal.npy"
  "$T" tune "$M" --backends ref,onednn --cache "$db" --threads 1 --plan "$out/$m.fp32.json" >/dev/null
  "$T" tune "$M" --backends ref,onednn,onednn_int8 --cache "$db" --threads 1 --max-rel-error "$E" \
    --calibration "input=$out/$m.cal.npy" --plan "$out/$m.int8.json" | grep -E 'partitions|accuracy' || true
  # The budgeted search's own plan, before tune's end-to-end race (which may keep an fp32 plan:
  # it compares latencies measured minutes apart): partition on the same database, no race.
  "$T" partition "$M" --backends ref,onednn,onednn_int8 --cache "$db" --threads 1 --no-verify --max-rel-error "$E" \
    --calibration "input=$out/$m.cal.npy" --plan "$out/$m.search.json" 2>&1 | grep -E 'accuracy' || true
  for p in int8 search; do
    /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); from collections import Counter; print('$m $p plan:', dict(Counter(p['backend'] for p in j['partitions'])), 'stayed fp32:', len(j.get('accuracy', {}).get('stayed_fp32', [])))" "$out/$m.$p.json"
  done
  /usr/bin/python3 scripts/quantize_qdq.py "$M" "$out/${m}_qdq.onnx" --input "input=$out/$m.cal.npy" >/dev/null
  for r in $(seq "$rounds"); do
    ort=$(node bench/peer/ort_bench.js "$M" 1 --runs 50 2>/dev/null | median median_ms || echo nan)
    qdq=$(node bench/peer/ort_bench.js "$out/${m}_qdq.onnx" 1 --runs 50 2>/dev/null | median median_ms || echo nan)
    fp32=$("$T" run "$M" --plan "$out/$m.fp32.json" --repeat 50 --threads 1 --json | median latency_ms)
    int8=$("$T" run "$M" --plan "$out/$m.int8.json" --repeat 50 --threads 1 --json | median latency_ms)
    srch=$("$T" run "$M" --plan "$out/$m.search.json" --repeat 50 --threads 1 --json | median latency_ms)
    /usr/bin/python3 -c "import sys; o, q, a, b, s = map(float, sys.argv[1:6]); print(f'$m round $r: ORT fp32 {o:.3f} ms, ORT QDQ {q:.3f} ms, fp32 plan {a:.3f} ms, int8 plan {b:.3f} ms, search plan {s:.3f} ms, int8/fp32 {b / a:.3f}, int8/ORT fp32 {b / o:.3f}, int8/ORT QDQ {b / q:.3f}, search/fp32 {s / a:.3f}, search/ORT fp32 {s / o:.3f}')" "$ort" "$qdq" "$fp32" "$int8" "$srch"
  done
  for p in int8 search; do
    "$T" run "$M" --plan "$out/$m.$p.json" --check --input "input=$ref.input.npy" --repeat 1 --threads 1 \
      --output-dir "$out/$m.$p.out" | grep 'end-to-end' || true
  done
  "$T" partition "$out/${m}_qdq.onnx" --backends ref --cost roofline --plan "$out/$m.qdq.ref.json" >/dev/null
  "$T" run "$out/${m}_qdq.onnx" --plan "$out/$m.qdq.ref.json" --input "input=$ref.input.npy" --repeat 1 --threads 1 --output-dir "$out/$m.qdq.out" >/dev/null
  echo "$m held out vs PyTorch fp32: int8 plan $(relerr "$out/$m.int8.out" "$ref.output.npy"), search plan $(relerr "$out/$m.search.out" "$ref.output.npy"), whole-model QDQ $(relerr "$out/$m.qdq.out" "$ref.output.npy")"
done
