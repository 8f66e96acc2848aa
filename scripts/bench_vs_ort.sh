#!/usr/bin/env bash
# tessera vs ONNX Runtime (CPU provider, onnxruntime-node), same machine, same run, 1 thread by default.
#
#   scripts/bench_vs_ort.sh [--build DIR] [--models "resnet18 ..."] [--backends L] [--rounds R]
#                           [--repeat N] [--min-round-ms MS] [--threads T] [--out DIR] [--no-combos]
#                           [--no-coalesce]
#
# Models: a bundled one (data/models/NAME.onnx); paddle_det, paddle_rec, paddle_cls (PaddleOCR,
# scripts/fetch_models.sh, at the shapes PaddleOCR feeds them: 1x3x320x320, 1x3x48x320,
# 1x3x48x192); or one of scripts/export_models.py's benchmark zoo (transformer_encoder,
# efficientnet_b0, shufflenet_v2_x1_0, regnet_y_400mf, resnet34), exported into DIR/zoo on first use;
# NAME_qdq / NAME_qop: that model statically quantized to int8 (scripts/quantize_qdq.py), QDQ or
# QOperator format, e.g. resnet18_qdq.
# Backends: all six by default (ref,onednn,eigen,blas,xnnpack,halide).
#
# --threads T (default 1): compute threads of tune's measurements, of every run and bench, and
# ORT's intra-op threads.
#
# Per model: `tessera tune` on the backends (cost database DIR/costs.db, kept between invocations
# so a rerun measures nothing twice) writes the tuned plan. Then R rounds, each running `tessera
# run --json --repeat N` and ORT's ort_bench.js --runs N *alternately* (A B, B A, ...), so both see
# the same machine load; each side's latency is the median of its R round medians. A round runs at
# least N times and at least MS milliseconds by the plan's predicted latency (default 400: 20 runs
# of a 0.5 ms model last 10 ms, and one burst of another tenant's work then moves the whole round).
# Then `tessera bench --cost measure` over the single-backend combinations (each with ref as the
# fallback for ops the backend lacks) and the full mix (the plan tune returned: bench looks up
# tune's end-to-end verdicts, so a mix that lost to one backend shows as that backend, marked in
# the table).
#
# Prints markdown tables (docs/benchmarks.md keeps them): latency ratio tessera/ORT per model and
# its geometric mean; best single backend vs best mix; plan fidelity (predicted total / measured
# end to end, against the median round, the statistic tune's prediction itself takes
# (in_plan_prices.h), and against the quietest round); and the tuned plan against the best single
# backend's plan (`partition --backends ref,X --cost measure` on the same database, which decides
# from the verdicts tune left for the plans over ref and X), run alternately for R rounds, the
# comparison that holds on a shared machine (1.00x, untimed, when tune returned that very plan).
#
# --no-coalesce tunes plans whose functions are exactly the measured candidates (tune
# --no-coalesce). A tessera run that fails (a backend crash) is reported as failed and the script
# goes on. Needs scripts/fetch_onnxruntime.sh.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
build=build
models="resnet18 mobilenet_v2 squeezenet1_1 bert_encoder transformer_encoder paddle_det paddle_rec paddle_cls"
backends="ref,onednn,eigen,blas,xnnpack,halide"
rounds=5
repeat=20
min_round_ms=400
threads=1
out="${TMPDIR:-/tmp}/tessera_bench_vs_ort"
combos=1
tune_flags=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --backends) backends="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --min-round-ms) min_round_ms="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --no-combos) combos=0; shift ;;
    --no-coalesce) tune_flags="--no-coalesce"; shift ;;
    *) echo "bench_vs_ort: unknown argument $1" >&2; exit 2 ;;
  esac
done
tessera="$build/tessera"
[ -x "$tessera" ] || { echo "bench_vs_ort: $tessera not built" >&2; exit 2; }
scripts/fetch_onnxruntime.sh
mkdir -p "$out"
json_field() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.stdin.read())['$1'])"; }
# alternately A B: R rounds of A then B, B then A, ... (whichever side a drift in the machine's
# load favours, it favours both alike).
alternately() { for r in $(seq "$rounds"); do if [ $((r % 2)) = 1 ]; then "$1"; "$2"; else "$2"; "$1"; fi; done; }

# model_of NAME: sets $model (the file) and $shape ("" or name=AxBxC).
model_of() {
  shape=""
  case "$1" in
    paddle_det) model=data/models/paddleocr/ch_PP-OCRv4_det_infer.onnx; shape="x=1x3x320x320" ;;
    paddle_rec) model=data/models/paddleocr/ch_PP-OCRv4_rec_infer.onnx; shape="x=1x3x48x320" ;;
    paddle_cls) model=data/models/paddleocr/ch_ppocr_mobile_v2.0_cls_infer.onnx; shape="x=1x3x48x192" ;;
    *_qdq|*_qop)   # a zoo model statically quantized (scripts/quantize_qdq.py), QDQ or QOperator format
       model="$out/zoo/$1.onnx"
       base="${1%_q*}"
       format=qdq; case "$1" in *_qop) format=qoperator ;; esac
       if [ ! -f "$model" ]; then
         [ -f "$out/zoo/$base.onnx" ] || /usr/bin/python3 scripts/export_models.py --only "$base" --out "$out/zoo" >/dev/null
         /usr/bin/python3 scripts/quantize_qdq.py "$out/zoo/$base.onnx" "$model" --format "$format" --tessera "$tessera" >/dev/null
       fi ;;
    *) model="data/models/$1.onnx"
       if [ ! -f "$model" ]; then
         model="$out/zoo/$1.onnx"
         [ -f "$model" ] || /usr/bin/python3 scripts/export_models.py --only "$1" --out "$out/zoo" >/dev/null
       fi ;;
  esac
  case "$1" in paddle_*) [ -f "$model" ] || scripts/fetch_models.sh >/dev/null ;; esac
}
# The combinations bench compares: ref alone, ref + each backend, all of them.
combo_list="ref"
for b in ${backends//,/ }; do [ "$b" = ref ] || combo_list="$combo_list ref,$b"; done
combo_list="$combo_list $backends"

echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# backends $backends, $threads thread(s)"
results="$out/results.tsv"
: > "$results"
: > "$out/vs_single.tsv"
for m in $models; do
  model_of "$m"
  shape_flags=() ort_flags=()
  if [ -n "$shape" ]; then shape_flags=(--input-shape "$shape"); ort_flags=(--input-shape "$shape"); fi
  plan="$out/$m.plan.json"
  start=$SECONDS
  "$tessera" tune "$model" "${shape_flags[@]}" --backends "$backends" --cache "$out/costs.db" --plan "$plan" -j 1 --threads "$threads" $tune_flags >"$out/$m.tune.log" 2>&1
  tune_s=$((SECONDS - start))
  predicted=$(/usr/bin/python3 -c "import json; print(json.load(open('$plan'))['total_cost'] * 1e3)")
  runs=$(/usr/bin/python3 -c "import math; print(max($repeat, math.ceil($min_round_ms / max($predicted, 1e-3))))")
  # What the search saw (the isolated prices) when tune priced the plan in place (in_plan_prices.h).
  isolated=$(/usr/bin/python3 -c "import json; p = json.load(open('$plan')); print(p.get('isolated_total_cost', p['total_cost']) * 1e3)")
  partitions=$(/usr/bin/python3 -c "
import json, collections; p = json.load(open('$plan'))['partitions']
c = collections.Counter(x['backend'] for x in p); print(len(p), ' '.join(f'{k}={v}' for k, v in sorted(c.items())))")
  "$tessera" run "$model" "${shape_flags[@]}" --plan "$plan" --check --repeat 1 --threads "$threads" --json > "$out/$m.check.json" 2>"$out/$m.check.log" ||
    echo '{"latency_ms": null, "max_abs_error": null, "ok": false, "failed": true}' > "$out/$m.check.json"
  t_all=() o_all=()
  time_tessera() { t_all+=("$( ("$tessera" run "$model" "${shape_flags[@]}" --plan "$plan" --repeat "$runs" --threads "$threads" --json 2>/dev/null || echo '{"latency_ms": "nan"}') | json_field latency_ms)"); }
  time_ort() { o_all+=("$(node bench/peer/ort_bench.js "$model" "$threads" --runs "$runs" --warmup 3 "${ort_flags[@]}" | json_field median_ms)"); }
  alternately time_tessera time_ort
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$m" "$predicted" "${t_all[*]}" "${o_all[*]}" "$(cat "$out/$m.check.json")" "$tune_s" "$partitions" "$isolated" >> "$results"
  if [ "$combos" = 1 ]; then
    # shellcheck disable=SC2086
    "$tessera" bench "$model" "${shape_flags[@]}" --combos $combo_list --cost measure \
      --cache "$out/costs.db" --repeat "$repeat" --threads "$threads" $tune_flags --json --svg "$out/$m.bench.svg" > "$out/$m.bench.json" 2>"$out/$m.bench.log" || true
    # The tuned plan against the best single backend's plan, run alternately R rounds (one bench
    # row each, minutes apart, differ by more than the plans do on a shared machine).
    best=$(/usr/bin/python3 -c "
import json; rows = [r for r in json.load(open('$out/$m.bench.json')) if len(r['backends']) == 2 and r.get('measured_ms')]
print(','.join(min(rows, key=lambda r: r['measured_ms'])['backends']) if rows else '')" 2>/dev/null || true)
    if [ -n "$best" ] && "$tessera" partition "$model" "${shape_flags[@]}" --backends "$best" --cost measure --cache "$out/costs.db" \
         $tune_flags --plan "$out/$m.single.plan.json" >/dev/null 2>&1; then
      # Tune may have returned that very plan (a mix that lost to one backend): the same
      # partitions, the same functions. Timing a plan against itself measures only the machine.
      if /usr/bin/python3 -c "
import json, sys
cut = lambda f: [(p['backend'], p['nodes']) for p in json.load(open(f))['partitions']]
sys.exit(0 if cut('$plan') == cut('$out/$m.single.plan.json') else 1)"; then
        printf '%s\t%s\tsame\tsame\n' "$m" "$best" >> "$out/vs_single.tsv"
        continue
      fi
      a_all=() s_all=()
      time_tuned() { a_all+=("$("$tessera" run "$model" "${shape_flags[@]}" --plan "$plan" --repeat "$runs" --threads "$threads" --json | json_field latency_ms)"); }
      time_single() { s_all+=("$("$tessera" run "$model" "${shape_flags[@]}" --plan "$out/$m.single.plan.json" --repeat "$runs" --threads "$threads" --json | json_field latency_ms)"); }
      alternately time_tuned time_single
      printf '%s\t%s\t%s\t%s\n' "$m" "$best" "${a_all[*]}" "${s_all[*]}" >> "$out/vs_single.tsv"
    fi
  fi
done

/usr/bin/python3 - "$results" "$out" "$combos" "$combo_list" <<'PY'
import json, math, statistics, sys
results, out, combos, combo_list = sys.argv[1], sys.argv[2], sys.argv[3] == "1", sys.argv[4].split()
rows = [line.rstrip("\n").split("\t") for line in open(results) if line.strip()]
print("\n| model | tessera ms (rounds) | ORT 1.30 ms (rounds) | tessera / ORT | predicted ms | predicted / measured | predicted / quietest round | isolated / measured | --check | tune s | partitions |")
print("|---|---|---|---:|---:|---:|---:|---:|---|---:|---|")
ratios = []
for m, pred, t, o, check, tune_s, parts, iso in rows:
    t = [float(x) for x in t.split()]; o = [float(x) for x in o.split()]
    tm, om = statistics.median(t), statistics.median(o)
    if not math.isnan(tm): ratios.append(tm / om)
    c = json.loads(check)
    print(f"| {m} | {tm:.2f} ({', '.join(f'{x:.1f}' for x in t)}) | {om:.2f} ({', '.join(f'{x:.1f}' for x in o)}) | "
          f"{tm/om:.2f} | {float(pred):.2f} | {float(pred)/tm:.2f} | {float(pred)/min(t):.2f} | {float(iso)/tm:.2f} | "
          + ("run failed (see .check.log)" if c.get("failed") else f"ok={c['ok']} err={c['max_abs_error']:.2g}") + f" | {tune_s} | {parts} |")
if ratios:
    print(f"\ngeometric mean tessera / ORT over {len(ratios)} models that ran: {math.exp(sum(map(math.log, ratios)) / len(ratios)):.2f}")
if combos:
    print("\n| model | " + " | ".join(combo_list[:-1] + ["all"]) + " | best single | all | best single / all |")
    print("|---|" + "---:|" * (len(combo_list) + 3))
    gains = []
    for m, *_ in rows:
        try:
            bench = json.load(open(f"{out}/{m}.bench.json"))
        except Exception as e:
            print(f"| {m} | bench failed: {e} |"); continue
        cells, single, mix = [], None, None
        for r in bench:
            meas, pred = r.get("measured_ms"), r.get("predicted_ms")
            chosen = f", {r['chosen']}" if r.get("chosen") and r["chosen"] != "collage" else ""
            cells.append("-" if meas is None else f"{meas:.2f} (pred {pred:.2f}{chosen})")
            if meas is None: continue
            if len(r["backends"]) <= 2: single = meas if single is None else min(single, meas)
            else: mix = meas
        ratio = f"{single / mix:.2f}x" if single and mix else "-"
        if single and mix: gains.append(single / mix)
        print(f"| {m} | " + " | ".join(cells) + f" | {single or float('nan'):.2f} | {mix or float('nan'):.2f} | {ratio} |")
    if gains:
        print(f"\ngeometric mean speed-up of the mix over the best single backend, {len(gains)} models: "
              f"{math.exp(sum(map(math.log, gains)) / len(gains)):.2f}x (min {min(gains):.2f}x)")
    print("\n| model | best single | tuned plan ms (rounds) | best single ms (rounds) | best single / tuned |")
    print("|---|---|---|---|---:|")
    gains = []
    for line in open(f"{out}/vs_single.tsv"):
        m, best, a, b = line.rstrip("\n").split("\t")
        if a == "same":
            gains.append(1.0)
            print(f"| {m} | {best} | the same plan | the same plan | 1.00x |")
            continue
        a = [float(x) for x in a.split()]; b = [float(x) for x in b.split()]
        am, bm = statistics.median(a), statistics.median(b)
        gains.append(bm / am)
        print(f"| {m} | {best} | {am:.2f} ({', '.join(f'{x:.2f}' for x in a)}) | {bm:.2f} ({', '.join(f'{x:.2f}' for x in b)}) | {bm / am:.2f}x |")
    if gains:
        print(f"\ninterleaved, {len(gains)} models: geometric mean {math.exp(sum(map(math.log, gains)) / len(gains)):.2f}x "
              f"(min {min(gains):.2f}x)")
PY
