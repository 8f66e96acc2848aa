#!/usr/bin/python3
"""Writes the generated part of the fuzz seed corpora (tests/fuzz/corpus/, docs/fuzzing.md).

Real files are copied (models, specs, profiles); this makes the small ones that have no real
counterpart in the tree: tiny ONNX models (pooling and convolution with symbolic dimensions,
initializers, Constant nodes), .npy files of every accepted dtype and header version, and
cost-database lines with their CRCs, and one message of each kind of a distributed tune. Plans are
written by `tessera partition` (boundaries_verified.json: mock costs with boundaries, plus a
"verified" section by hand).
Run with Debian's /usr/bin/python3 (numpy, onnx): /usr/bin/python3 tests/fuzz/make_corpus.py
"""
import io
import json
import os
import shutil
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")


def out(loader, name, data):
    d = os.path.join(CORPUS, loader)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def copy(loader, *paths):
    for p in paths:
        out(loader, os.path.basename(p), open(os.path.join(ROOT, p), "rb").read())


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m.SerializeToString()


def onnx_seeds():
    f = TensorProto.FLOAT
    x4 = helper.make_tensor_value_info("x", f, ["N", 3, "H", "W"])
    y = helper.make_tensor_value_info("y", f, None)
    out("onnx", "maxpool_symbolic.onnx", model(
        [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])], [x4], [y]))
    out("onnx", "avgpool_symbolic.onnx", model(
        [helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2])], [x4], [y]))
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    b = numpy_helper.from_array(np.zeros((4,), np.float32), "b")
    out("onnx", "conv_relu.onnx", model(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
        [helper.make_tensor_value_info("x", f, [1, 3, 8, 8])], [y], [w, b]))
    shape = numpy_helper.from_array(np.array([1, -1], np.int64), "shape")
    out("onnx", "matmul_reshape.onnx", model(
        [helper.make_node("Constant", [], ["k"], value=numpy_helper.from_array(np.ones((12, 5), np.float32))),
         helper.make_node("Reshape", ["x", "shape"], ["r"]), helper.make_node("MatMul", ["r", "k"], ["m"]),
         helper.make_node("Softmax", ["m"], ["y"], axis=-1)],
        [helper.make_tensor_value_info("x", f, [1, 3, 2, 2])], [y], [shape]))
    out("onnx", "gap_flatten_gemm.onnx", model(
        [helper.make_node("GlobalAveragePool", ["x"], ["p"]), helper.make_node("Flatten", ["p"], ["fl"]),
         helper.make_node("Gemm", ["fl", "gw"], ["y"], transB=1)],
        [x4], [y], [numpy_helper.from_array(np.ones((2, 3), np.float32), "gw")]))


def npy_seeds():
    arrays = {"f4.npy": np.arange(6, dtype="<f4").reshape(2, 3), "f8.npy": np.linspace(0, 1, 4),
              "i8.npy": np.arange(5, dtype="<i8"), "i4.npy": np.array([[1, -2]], "<i4"),
              "u1.npy": np.arange(4, dtype="u1"), "b1.npy": np.array([True, False]),
              "f2.npy": np.array([0.5, -2.0, 65504.0], "<f2"),
              "scalar.npy": np.array(3.5, "<f4"), "empty.npy": np.zeros((0, 3), "<f4")}
    for name, a in arrays.items():
        buf = io.BytesIO()
        np.save(buf, a)
        out("npy", name, buf.getvalue())
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ones((1, 2), "<f4"), version=(2, 0))
    out("npy", "v2.npy", buf.getvalue())


def record(h, b, d, m, c, s, n):
    text = json.dumps({"b": b, "c": c, "d": d, "h": h, "m": m, "n": n, "s": s}, separators=(",", ":"), sort_keys=True)
    return "%s\t%08x\n" % (text, zlib.crc32(text.encode()))


def cost_db_seeds():
    a = record("9f3a5c1d00112233", "onednn@2.6", "host/5c1d", "measure/1", "1.25e-05", 1e-07, 20)
    b = record("0000000000000001", "ref", "host/5c1d", "roofline/1", "invalid(unsupported op)", 0.0, 0)
    c = record("0000000000000002", "eigen", "cpu", "mock/1/ab", "unknown", 0.0, 0)
    out("cost_db", "three.db", a + b + c)
    out("cost_db", "torn_tail.db", a + b[: len(b) // 2])
    out("cost_db", "one.db", c)
    # tune's end-to-end verdicts (verified_choice.h): backend "plan", a latency or why it did not run.
    out("cost_db", "plan_verdicts.db", record("5d1e0c3b9a887766", "plan", "host/5c1d", "measure/1", "0.00042", 0.0, 15)
        + record("5d1e0c3b9a887767", "plan", "host/5c1d", "measure/1", "invalid(no kernel for Conv)", 0.0, 0))


def mpi_message_seeds():
    # One of each message of a distributed tune (src/distributed/tune_protocol.h), as encode() writes them.
    def msg(name, **fields):
        out("mpi_message", name, json.dumps(fields, separators=(",", ":"), sort_keys=True))
    msg("hello.json", t="hello", rank=1, host="node1", machine="AMD EPYC/isa-0011aabb", measure="measure/1/abc",
        threads=1, slots=2, requests=40, digest="d1g3")
    msg("job.json", t="job", id=7, req=12, h="00ff00ff00ff00ff", b="onednn")
    msg("result.json", t="result", id=9, c="1.25e-05", s=3e-07, n=50)
    msg("result_invalid.json", t="result", id=3, c="invalid(crashed: signal 11)", s=0.0, n=0)
    msg("result_unknown.json", t="result", id=4, c="unknown", s=0.0, n=0)
    msg("stop.json", t="stop", why="done")
    msg("failure.json", t="failure", what="rank 2: cannot import model")


def copies():
    copy("onnx", "tests/inputs/good/symbolic.onnx", "data/models/resnet18.onnx", "data/models/bert_encoder.onnx")
    for d, loader in (("data/models", "json_graph"), ("tests/inputs/good", "json_graph"),
                      ("data/backends", "backend_spec"), ("data/devices", "device_profile")):
        copy(loader, *[os.path.join(d, f) for f in sorted(os.listdir(os.path.join(ROOT, d))) if f.endswith(".json")])
    copy("backend_spec", "tests/backends/bad_specs/pattern_syntax.json", "tests/backends/bad_specs/duplicate_pattern.json")
    copy("mock_costs", "tests/search/inputs/tvm_byoc_costs.json")
    out("mock_costs", "full.json", json.dumps({
        "format": "tessera.mock_costs", "version": 1,
        "backends": {"ref": {"per_op": 2.0}, "onednn": {"per_op": 1.0, "decay": 0.8, "overhead": 0.5, "op": {"Conv": 0.4}}},
        "boundaries": {"default": {"latency": 1.0, "per_byte": 0.0}, "pairs": {"onednn->ref": {"latency": 2.5, "per_byte": 0.001}}},
        "transfer": {"latency": 2.0, "per_byte": 0.001}}, indent=1))
    out("mock_costs", "boundaries_pairs.json", json.dumps({
        "format": "tessera.mock_costs", "version": 1,
        "backends": {"ref": {"per_op": 2.0, "op": {"Relu": 0.1}}, "onednn": {"per_op": 1.0, "op": {"Relu": 5.0}}},
        "boundaries": {"default": {"latency": 0.1, "per_byte": 0.00001}}}))
    # Patterns: every pattern text of the built-in specs, one per file.
    k = 0
    for f in sorted(os.listdir(os.path.join(ROOT, "data/backends"))):
        spec = json.load(open(os.path.join(ROOT, "data/backends", f)))
        for p in spec.get("patterns", []):
            out("pattern", "p%02d.txt" % k, p["pattern"])
            k += 1
    out("pattern", "alternatives.txt", "Relu|Sigmoid(Add(Conv|ConvTranspose(*, const), const))")
    out("pattern", "bare.txt", "MatMul")


if __name__ == "__main__":
    for loader in ("onnx", "json_graph", "backend_spec", "pattern", "npy", "cost_db", "mock_costs", "device_profile",
                   "mpi_message"):
        shutil.rmtree(os.path.join(CORPUS, loader), ignore_errors=True)
    onnx_seeds()
    npy_seeds()
    cost_db_seeds()
    mpi_message_seeds()
    copies()
