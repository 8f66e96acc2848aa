#!/usr/bin/env bash
# Robustness sweep of the real backends: every bundled model (and the PaddleOCR models when they
# are present) x backend sets {onednn,ref} {eigen,ref} {blas,ref} {ref,onednn,eigen,blas} x searches
# (collage with --cost roofline, and single:<backend> for each real backend of the set, which
# pushes the most ops onto it). Each plan runs once with `tessera run --check --repeat 1`.
#
#   scripts/sweep_backends.sh [--build DIR] [--models "PATTERN ..."] [--out DIR] [--timeout S] [--tune]
#
# --tune adds one line per model: `tessera tune` on all four backends (fresh cost database in
# --out, 1 ms budget), which compiles and runs *every* candidate in a forked child, so a backend
# crash on a candidate no roofline plan picks shows up as `fail tune: N invalid` (the bert
# Div+Mul+Add double free was found this way).
#
# Prints one line per (model, backends, search): `ok`, or `fail` with the step (partition/run/
# check) and the last line the tool printed. A crash (signal) shows as `fail run: signal N`. A
# function its backend refuses at compile time (KernelUnsupported: roofline costs cannot know) is
# run by the executor on ref kernels with a warning; the sweep counts it `ok (N functions refused
# ...)` so such plans stay visible (measured costs would have avoided the candidate).
# Exit status 1 when any line failed. Plans and logs stay in --out (default $TMPDIR/tessera_sweep).
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
build=build
out="${TMPDIR:-/tmp}/tessera_sweep"
filter=""
limit=300
tune=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --models) filter="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --timeout) limit="$2"; shift 2 ;;
    --tune) tune=1; shift ;;
    *) echo "usage: $0 [--build DIR] [--models \"PATTERN ...\"] [--out DIR] [--timeout S] [--tune]" >&2; exit 2 ;;
  esac
done
tessera="$build/tessera"
[ -x "$tessera" ] || { echo "$tessera not built" >&2; exit 2; }
mkdir -p "$out"

# model path and its --input-shape flags (PaddleOCR inputs are symbolic; det at 320x320 for speed)
models=()
for m in data/models/*.onnx data/models/*.json; do models+=("$m|"); done
p=data/models/paddleocr
[ -f $p/ch_PP-OCRv4_det_infer.onnx ] && models+=("$p/ch_PP-OCRv4_det_infer.onnx|x=1x3x320x320")
[ -f $p/ch_PP-OCRv4_rec_infer.onnx ] && models+=("$p/ch_PP-OCRv4_rec_infer.onnx|x=1x3x48x320")
[ -f $p/ch_ppocr_mobile_v2.0_cls_infer.onnx ] && models+=("$p/ch_ppocr_mobile_v2.0_cls_infer.onnx|x=1x3x48x192")

sets="onednn,ref eigen,ref blas,ref ref,onednn,eigen,blas"
fails=0
total=0
for entry in "${models[@]}"; do
  model="${entry%%|*}"
  shape="${entry#*|}"
  name="$(basename "$model")"
  if [ -n "$filter" ]; then
    keep=0
    for f in $filter; do case "$name" in *$f*) keep=1 ;; esac; done
    [ $keep = 1 ] || continue
  fi
  shape_flags=()
  [ -n "$shape" ] && shape_flags=(--input-shape "$shape")
  if [ $tune = 1 ]; then
    total=$((total + 1))
    log="$out/${name%.*}.tune.log"
    rm -f "$out/${name%.*}.costs.db"
    if timeout "$limit" "$tessera" tune "$model" "${shape_flags[@]}" --backends ref,onednn,eigen,blas \
         --cache "$out/${name%.*}.costs.db" --budget-ms 1 --repeat 2 -j 1 >"$log" 2>&1; then
      invalid=$(grep -c '^tessera: invalid:' "$log")
      status=ok
      [ "$invalid" = 0 ] || status="fail tune: $invalid invalid, first: $(grep -m1 '^tessera: invalid:' "$log")"
    else
      status="fail tune: $(grep -m1 '^tessera: invalid:' "$log" || tail -n 1 "$log")"
    fi
    case "$status" in ok*) ;; *) fails=$((fails + 1)) ;; esac
    printf '%-34s %-22s %-14s %s\n' "$name" "ref,onednn,eigen,blas" "tune" "$status"
  fi
  for set in $sets; do
    searches="collage"
    for b in ${set//,/ }; do [ "$b" = ref ] || searches="$searches single:$b"; done
    for search in $searches; do
      total=$((total + 1))
      tag="${name%.*}.${set//,/-}.${search/:/-}"
      plan="$out/$tag.plan.json"
      log="$out/$tag.log"
      status=ok
      if ! timeout "$limit" "$tessera" partition "$model" "${shape_flags[@]}" --backends "$set" --cost roofline \
           --search "$search" --plan "$plan" >"$log" 2>&1; then
        status="fail partition: $(tail -n 1 "$log")"
      else
        timeout "$limit" "$tessera" run "$model" "${shape_flags[@]}" --plan "$plan" --check --repeat 1 >>"$log" 2>&1
        rc=$?
        if [ $rc -ge 124 ]; then
          status="fail run: $([ $rc = 124 ] && echo "timeout ${limit}s" || echo "signal $((rc - 128))") $(tail -n 1 "$log")"
        elif [ $rc -ne 0 ]; then
          status="fail run: $(tail -n 1 "$log")"
        elif ! grep -q "partition outputs compared, 0 out of tolerance; ok" "$log"; then
          status="fail check: $(grep '^check:' "$log" | grep -v ' ok$' | head -n 1)"
        elif n=$(grep -c "not compiled, runs on ref kernels" "$log"); [ "$n" -gt 0 ]; then
          status="ok ($n functions refused by their backend ran on ref: see $log)"
        fi
      fi
      case "$status" in ok*) ;; *) fails=$((fails + 1)) ;; esac
      printf '%-34s %-22s %-14s %s\n' "$name" "$set" "$search" "$status"
    done
  done
done
echo "sweep: $((total - fails))/$total ok"
[ $fails = 0 ]
