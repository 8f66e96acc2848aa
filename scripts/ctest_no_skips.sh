#!/usr/bin/env bash
# ctest in build dir DIR with the given arguments, failing when a test fails and when a test
# reports Skipped: a test that cannot run here (missing models, data or Python packages) says so
# through ctest's skip, and CI, which installs everything (scripts/setup.sh, scripts/fetch_models.sh),
# must run them all. TESSERA_ALLOW_SKIPS=1 accepts skips, for a machine without network access; CI
# never sets it. Used by scripts/test.sh (build/) and scripts/sanitize.sh (build-fuzz/).
# Usage: ctest_no_skips.sh DIR [ctest arguments...]
set -euo pipefail
dir="$1"
shift
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
(cd "$dir" && ctest --output-on-failure -j"${JOBS:-2}" "$@") 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
[ "$status" -eq 0 ] || exit "$status"
# ctest lists them under "The following tests did not run:" as "NN - name (Skipped)".
skipped="$(grep -E '^[[:space:]]*[0-9]+ - .* \(Skipped\)$' "$log" || true)"
if [ -n "$skipped" ]; then
  echo "test: $(echo "$skipped" | wc -l) test(s) skipped in $dir; CI accepts none:" >&2
  echo "$skipped" >&2
  [ "${TESSERA_ALLOW_SKIPS:-0}" = "1" ] || exit 1
fi
