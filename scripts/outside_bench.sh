#!/usr/bin/env bash
# The outside set's bench step alone (scripts/outside_set.sh's step 4 and its fidelity columns), on
# an existing cost database, for a list of models: to re-check the plans' predictions and the
# all-backend plan against the best single backend on another binary, quickly (docs/benchmarks.md,
# "Prices that track what runs").
#
#   scripts/outside_bench.sh --db DB [--build DIR] [--out DIR] [--models "NAME ..."] [--zoo DIR]
#   scripts/outside_bench.sh --table-only [--out DIR] [--models "NAME ..."]   # the table of OUT/*.bench.json
#
# Per model: tessera bench M --combos ref,onednn ref,xnnpack ref,onednn,eigen,blas,xnnpack,halide
# --cost measure --cache DB --threads 1 --json -> OUT/M.bench.json (what the database lacks is
# measured into it; a database from outside_set.sh has the candidates, so only plans' in-plan
# prices and the race run), each combination's plan -> OUT/plans/M/<a+b+c>.json. Then one row per
# model: predicted / measured of each combination's plan (marked * outside [0.90, 1.10]), the best
# single-backend row's measured time over the all-backend row's (marked * below 0.97), and the
# search's own price of each plan (isolated_total_cost: its candidates' isolated prices, before
# in-plan pricing) over measured; and a count of the first two.
#
# Models: the zoo's ONNX exports in --zoo (default OUT/zoo, as outside_set.sh leaves them),
# isnet_fp16_320 and silero_vad (opset 15, one 512-sample frame) from data/models/.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
build=build
out="${TMPDIR:-/tmp}/tessera_outside_bench"
db=""
zoo=""
table_only=0
models="efficientnet_b0 shufflenet_v2_x1_0 mnasnet1_0 mobilenet_v3_large regnet_y_400mf googlenet
        lraspp_mobilenet_v3_large densenet121 resnext50_32x4d convnext_tiny vit_tiny gpt_decoder
        transformer_decoder silero_vad isnet_fp16_320"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --db) db="$2"; shift 2 ;;
    --zoo) zoo="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --table-only) table_only=1; shift ;;
    *) echo "outside_bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
tessera="$build/tessera"
all="ref,onednn,eigen,blas,xnnpack,halide"
if [ "$table_only" = 0 ]; then
  [ -x "$tessera" ] || { echo "outside_bench: $tessera not built" >&2; exit 2; }
  [ -n "$db" ] || { echo "outside_bench: --db DB is required" >&2; exit 2; }
  [ -n "$zoo" ] || zoo="$out/zoo"
  mkdir -p "$out"
fi

[ "$table_only" = 1 ] || for m in $models; do
  shapes=()
  case "$m" in
    isnet_fp16_320) model=data/models/isnet/isnet_fp16_320.onnx ;;
    silero_vad) model=data/models/silero/silero_vad_16k_op15.onnx
                shapes=(--input-shape input=1x512 --input-shape state=2x1x128) ;;
    *) model="$zoo/$m.onnx" ;;
  esac
  [ -f "$model" ] || { echo "outside_bench: $model missing" >&2; exit 2; }
  echo "outside_bench: $m ($(date -u +%H:%M:%S))" >&2
  "$tessera" bench "$model" "${shapes[@]}" --combos ref,onednn ref,xnnpack "$all" --cost measure \
    --cache "$db" --threads 1 --json --plan-dir "$out/plans/$m" > "$out/$m.bench.json" 2> "$out/$m.bench.log" ||
    echo "outside_bench: $m: bench failed ($out/$m.bench.log)" >&2
done

/usr/bin/python3 - "$out" $models <<'PY'
import json, os, sys
out, models = sys.argv[1], sys.argv[2:]
print("| model | best single / all (best single row) | predicted / measured: ref,onednn, ref,xnnpack, all "
      "| search's price / measured |")
print("|---|---:|---|---|")
inside = total = plans_ok = plans = 0
for m in models:
    path = os.path.join(out, m + ".bench.json")
    if not (os.path.exists(path) and os.path.getsize(path)):
        print(f"| {m} | - | - | - |")
        continue
    rows = json.load(open(path))
    singles = [r for r in rows if len(r["backends"]) == 2 and r.get("measured_ms")]
    full = [r for r in rows if len(r["backends"]) > 2 and r.get("measured_ms")]
    single_cell = "-"
    if singles and full:
        best = min(singles, key=lambda r: r["measured_ms"])
        ratio = best["measured_ms"] / full[0]["measured_ms"]
        plans += 1
        plans_ok += ratio >= 0.97
        single_cell = f"{ratio:.3f}{'' if ratio >= 0.97 else '*'} ({','.join(best['backends'])})"
    cells, search = [], []
    for r in rows:
        plan = os.path.join(out, "plans", m, "+".join(r["backends"]) + ".json")
        iso = json.load(open(plan)).get("isolated_total_cost") if os.path.exists(plan) else None
        search.append(f"{iso * 1e3 / r['measured_ms']:.2f}" if isinstance(iso, (int, float)) and r.get("measured_ms")
                      else "-")
        if r.get("measured_ms") and r.get("predicted_ms"):
            f = r["predicted_ms"] / r["measured_ms"]
            total += 1
            inside += 0.90 <= f <= 1.10
            cells.append(f"{f:.3f}{'' if 0.90 <= f <= 1.10 else '*'}")
        else:
            cells.append("-")
    print(f"| {m} | {single_cell} | {', '.join(cells)} | {', '.join(search)} |")
print(f"\n{inside} of {total} predicted / measured inside [0.90, 1.10]; "
      f"{plans_ok} of {plans} all-backend plans >= 0.97x their best single backend")
PY
