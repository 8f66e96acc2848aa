#!/usr/bin/env bash
# The outside set: fourteen models no issue tunes tessera on, fetched or exported, tuned, checked,
# raced against ONNX Runtime and benched over backend combinations (docs/benchmarks.md, "The
# outside set: fourteen models, fidelity and best single").
#
#   scripts/outside_set.sh [--build DIR] [--out DIR] [--models "NAME ..."] [--rounds R] [--runs N]
#                          [--no-bench]
#
# Models: ten torchvision CNNs (scripts/export_models.py's benchmark zoo), two transformers
# exported there (vit_tiny: torchvision's VisionTransformer, an encoder; gpt_decoder: a causal
# decoder-only stack), and two models as npm packages ship them (scripts/fetch_isnet.sh's
# isnet_fp16_320, the f16 ISNet at 320x320; scripts/fetch_silero.sh's silero VAD, opset 15, one
# 512-sample frame).
#
# Per model, into DIR (default $TMPDIR/tessera_outside_set; the cost database DIR/costs.db is kept,
# so a rerun measures nothing twice):
#   1. tessera tune over all six backends, 1 thread -> DIR/plans/NAME.json
#   2. tessera run --check against ref -> DIR/NAME.check.log
#   3. scripts/cpu_pair.py R N: CPU time per run, the tuned plan and ONNX Runtime (onnxruntime-node,
#      1 intra-op thread) in alternating rounds -> DIR/NAME.ort.txt
#   4. tessera bench over ref,onednn / ref,xnnpack / all six (--cost measure, the same database,
#      1 thread) -> DIR/NAME.bench.json
# Then prints the table: tessera / ORT, best single / all-backend row, predicted / measured.
# Step 4 alone, for some models, on an existing DIR (another binary's figures against the same
# database): scripts/outside_bench.sh --build B --db DIR/costs.db --zoo DIR/zoo --out DIR2 --models "..."
# Needs scripts/fetch_onnxruntime.sh, npm (for the two npm models) and Debian's python3 with torch.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
build=build
out="${TMPDIR:-/tmp}/tessera_outside_set"
cnns="efficientnet_b0 shufflenet_v2_x1_0 mnasnet1_0 mobilenet_v3_large regnet_y_400mf googlenet
      lraspp_mobilenet_v3_large densenet121 resnext50_32x4d convnext_tiny"
models="$cnns vit_tiny gpt_decoder isnet_fp16_320 silero_vad"
rounds=3
runs=30
bench=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --no-bench) bench=0; shift ;;
    *) echo "outside_set: unknown argument $1" >&2; exit 2 ;;
  esac
done
tessera="$build/tessera"
[ -x "$tessera" ] || { echo "outside_set: $tessera not built" >&2; exit 2; }
scripts/fetch_onnxruntime.sh
mkdir -p "$out/zoo" "$out/plans"
all="ref,onednn,eigen,blas,xnnpack,halide"

# model_of NAME: sets $model and $shapes (an array of --input-shape flags, tessera's and ORT's).
model_of() {
  shapes=()
  case "$1" in
    isnet_fp16_320) model="$(scripts/fetch_isnet.sh | grep '_320.onnx$')" ;;
    silero_vad) model="$(scripts/fetch_silero.sh | grep '16k_op15.onnx$')"
                shapes=(--input-shape input=1x512 --input-shape state=2x1x128) ;;
    *) model="$out/zoo/$1.onnx"
       [ -f "$model" ] || /usr/bin/python3 scripts/export_models.py --only "$1" --out "$out/zoo" >/dev/null ;;
  esac
}

for m in $models; do
  model_of "$m"
  plan="$out/plans/$m.json"
  echo "outside_set: $m" >&2
  [ -f "$plan" ] || "$tessera" tune "$model" "${shapes[@]}" --backends "$all" --cache "$out/costs.db" --plan "$plan" \
    -j 1 --threads 1 > "$out/$m.tune.log" 2>&1
  "$tessera" run "$model" "${shapes[@]}" --plan "$plan" --check --repeat 1 --threads 1 > "$out/$m.check.log" 2>&1 ||
    echo "outside_set: $m: --check failed ($out/$m.check.log)" >&2
  n="$runs"   # a sub-millisecond model runs 100x as often, so that its runs outweigh the start-up
  [ "$m" = silero_vad ] && n=$((runs * 100))
  /usr/bin/python3 scripts/cpu_pair.py "$rounds" "$n" \
    -- tessera "$tessera" run "$model" "${shapes[@]}" --plan "$plan" --repeat '{N}' --threads 1 \
    -- ort node bench/peer/ort_bench.js "$model" 1 "${shapes[@]}" --runs '{N}' --warmup 1 > "$out/$m.ort.txt"
  if [ "$bench" = 1 ]; then
    "$tessera" bench "$model" "${shapes[@]}" --combos ref,onednn ref,xnnpack "$all" --cost measure \
      --cache "$out/costs.db" --threads 1 --json > "$out/$m.bench.json" 2> "$out/$m.bench.log" || true
  fi
done

/usr/bin/python3 - "$out" $models <<'PY'
import json, math, os, re, sys
out, models = sys.argv[1], sys.argv[2:]
print("| model | tessera / ORT (CPU ms per run) | best single / all (best single row) | predicted / measured: ref,onednn, ref,xnnpack, all |")
print("|---|---:|---:|---|")
ratios = []
for m in models:
    ort = open(os.path.join(out, m + ".ort.txt")).read()
    ms = dict(re.findall(r"^(\w+)\s+CPU ms/run\s+([\d.]+)", ort, re.M))
    ratio = float(re.search(r"^ort .*/ tessera: ([\d.]+)", ort, re.M).group(1))
    ratios.append(1 / ratio)
    cell = f"{1 / ratio:.2f} ({float(ms['tessera']):.2f} / {float(ms['ort']):.2f})"
    single_cell = fid = "-"
    path = os.path.join(out, m + ".bench.json")
    if os.path.exists(path) and os.path.getsize(path):
        rows = json.load(open(path))
        singles = [r for r in rows if len(r["backends"]) == 2 and r.get("measured_ms")]
        full = [r for r in rows if len(r["backends"]) > 2 and r.get("measured_ms")]
        if singles and full:
            best = min(singles, key=lambda r: r["measured_ms"])
            single_cell = f"{best['measured_ms'] / full[0]['measured_ms']:.3f} ({','.join(best['backends'])})"
        fid = ", ".join(f"{r['predicted_ms'] / r['measured_ms']:.3f}" if r.get("measured_ms") and r.get("predicted_ms")
                        else "-" for r in rows)
    print(f"| {m} | {cell} | {single_cell} | {fid} |")
print(f"\ngeometric mean tessera / ORT over {len(ratios)} models: "
      f"{math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f} (max {max(ratios):.2f})")
PY
