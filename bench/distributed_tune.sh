#!/bin/sh
# Distributed tuning by simulation: `tessera tune --mpi` on localhost with K = 1, 2, 4 ranks, every
# measurement made slow by the test-only test_sleep backend (TESSERA_TEST_SLEEP_MS, default 500),
# a fresh cost database per K. Prints each run's measuring time and its speedup over K = 1.
# Figures in docs/benchmarks.md ("Distributed tuning").
#
#   bench/distributed_tune.sh [MODEL] [K...]        default: data/models/squeezenet1_1.onnx 1 2 4
set -eu
cd "$(dirname "$0")/.."
model=${1:-data/models/squeezenet1_1.onnx}
[ $# -gt 0 ] && shift
ranks=${*:-1 2 4}
export TESSERA_TEST_SLEEP_MS=${TESSERA_TEST_SLEEP_MS:-500}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
base=""
echo "model $model, each measurement sleeps ${TESSERA_TEST_SLEEP_MS} ms, load average $(cut -d' ' -f1 /proc/loadavg)"
printf '%-3s %-10s %-9s %-8s %s\n' K measure_s wall_s speedup measured_per_rank
for k in $ranks; do
  mpirun --allow-run-as-root --oversubscribe -n "$k" build/tessera tune "$model" \
    --backend-spec tests/inputs/distributed/test_sleep.json --backends test_sleep \
    --cache "$tmp/k$k.db" --report "$tmp/k$k.json" --mpi > /dev/null 2> "$tmp/k$k.err"
  /usr/bin/python3 - "$tmp/k$k.json" "$k" "$base" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
base = float(sys.argv[3]) if sys.argv[3] else r["measure_s"]
print(f'{sys.argv[2]:<3} {r["measure_s"]:<10.2f} {r["wall_s"]:<9.2f} {base / r["measure_s"]:<8.2f} {r["measured_per_rank"]}')
PY
  [ -z "$base" ] && base=$(/usr/bin/python3 -c "import json; print(json.load(open('$tmp/k$k.json'))['measure_s'])")
done
