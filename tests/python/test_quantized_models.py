#!/usr/bin/python3
"""Quantized models as ONNX Runtime's quantization tool writes them, partitioned and run on `ref`.

Small models, built here with onnx.helper (nothing is committed but this script):
- static QDQ ("QDQ" format): QuantizeLinear/DequantizeLinear pairs around a Conv whose int8
  weight is dequantized per output channel, then Relu;
- QOperator: QuantizeLinear -> QLinearConv (per-channel weight scales, int32 bias) -> Reshape ->
  QLinearMatMul -> DequantizeLinear;
- dynamic: DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul by the two scales -> Add bias;
- ONNX Runtime's com.microsoft ops: QLinearSigmoid, QLinearMul, QLinearAdd, QLinearGlobalAveragePool
  after a QLinearConv; DynamicQuantizeMatMul and MatMulIntegerToFloat.

Each is partitioned with `tessera partition --backends ref --cost roofline`, run with `--check`
(every node also run on ref, outputs compared), and its output, for a fixed input, compared with an
independent numpy/torch computation of the same quantized arithmetic: within one quantization
step of the output (the float convolution's summation order may move a value across a rounding
boundary), exactly where the result is an integer sum.

The QDQ and QOperator models are also partitioned over ref + onednn: their quantized groups land
on onednn as int8 primitives (ONEDNN_VERBOSE shows u8 convolutions and matmuls), `tune` measures
them, and the results stay within one quantization step of ref's (`run --check`) and of numpy's.

Run by ctest with Debian's /usr/bin/python3 (python3-onnx, numpy, torch) from the source root;
TESSERA is the CLI.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
    import onnx
    import torch
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # ctest's SKIP_RETURN_CODE
    print(f"skipped: {e}")
    sys.exit(77)

CLI = os.environ.get("TESSERA", "build/tessera")
RNG = np.random.default_rng(7)


def model(nodes, inputs, outputs, inits, opset=13):
    g = helper.make_graph(nodes, "quantized", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    return m


def f32_info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def quantize(x, scale, zp, dtype):
    """ONNX QuantizeLinear: round half to even in float32, saturate."""
    info = np.iinfo(dtype)
    q = np.rint((x.astype(np.float32) / np.float32(scale)).astype(np.float32)) + zp
    return np.clip(q, info.min, info.max).astype(dtype)


def conv(x, w, bias=None):
    """NCHW convolution, stride 1, pad 1, in float64."""
    t = torch.nn.functional.conv2d(torch.from_numpy(x.astype(np.float64)), torch.from_numpy(w.astype(np.float64)),
                                   None if bias is None else torch.from_numpy(bias.astype(np.float64)), padding=1)
    return t.numpy()


# Static QDQ: y = DQ(Q(Relu(Conv(DQ(Q(x)), DQ(w_q, per channel), bias)))).
def qdq_conv():
    x_s, x_zp, y_s, y_zp = np.float32(0.02), np.uint8(128), np.float32(0.015), np.uint8(0)
    w_q = RNG.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8)
    w_s = RNG.uniform(0.002, 0.01, 8).astype(np.float32)
    bias = RNG.uniform(-0.5, 0.5, 8).astype(np.float32)
    inits = {"x_s": x_s, "x_zp": x_zp, "w_q": w_q, "w_s": w_s, "w_zp": np.zeros(8, np.int8), "b": bias,
             "y_s": y_s, "y_zp": y_zp}
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_zp"], ["x_q"], name="x_quant"),
             helper.make_node("DequantizeLinear", ["x_q", "x_s", "x_zp"], ["x_dq"], name="x_dequant"),
             helper.make_node("DequantizeLinear", ["w_q", "w_s", "w_zp"], ["w"], name="w_dequant", axis=0),
             helper.make_node("Conv", ["x_dq", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("QuantizeLinear", ["r", "y_s", "y_zp"], ["y_q"], name="y_quant"),
             helper.make_node("DequantizeLinear", ["y_q", "y_s", "y_zp"], ["y"], name="y_dequant")]
    m = model(nodes, [f32_info("x", [1, 3, 16, 16])], [f32_info("y", [1, 8, 16, 16])], inits)

    def reference(x):
        xd = (quantize(x, x_s, x_zp, np.uint8).astype(np.float32) - np.float32(x_zp)) * x_s
        wd = w_q.astype(np.float32) * w_s.reshape(8, 1, 1, 1)
        r = np.maximum(conv(xd, wd, bias), 0).astype(np.float32)
        return {"y": ((quantize(r, y_s, y_zp, np.uint8).astype(np.float32) - np.float32(y_zp)) * y_s, float(y_s))}

    return m, reference


# QOperator: y = DQ(QLinearMatMul(Reshape(QLinearConv(Q(x), w, per-channel scales, bias)), b)).
def qoperator():
    x_s, x_zp = np.float32(0.02), np.uint8(128)
    w = RNG.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    w_s = RNG.uniform(0.002, 0.01, 4).astype(np.float32)
    bias = RNG.integers(-2000, 2000, 4).astype(np.int32)
    c_s, c_zp = np.float32(0.03), np.uint8(100)
    b = RNG.integers(0, 256, (64, 5)).astype(np.uint8)
    b_s, b_zp = np.float32(0.004), np.uint8(128)
    y_s, y_zp = np.float32(0.05), np.uint8(120)
    inits = {"x_s": x_s, "x_zp": x_zp, "w": w, "w_s": w_s, "w_zp": np.zeros(4, np.int8), "bias": bias,
             "c_s": c_s, "c_zp": c_zp, "shape": np.array([16, 64], np.int64), "b": b, "b_s": b_s, "b_zp": b_zp,
             "y_s": y_s, "y_zp": y_zp}
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_zp"], ["x_q"], name="x_quant"),
             helper.make_node("QLinearConv", ["x_q", "x_s", "x_zp", "w", "w_s", "w_zp", "c_s", "c_zp", "bias"], ["c_q"],
                              name="qconv", pads=[1, 1, 1, 1]),
             helper.make_node("Reshape", ["c_q", "shape"], ["r_q"], name="reshape"),
             helper.make_node("QLinearMatMul", ["r_q", "c_s", "c_zp", "b", "b_s", "b_zp", "y_s", "y_zp"], ["y_q"],
                              name="qmatmul"),
             helper.make_node("DequantizeLinear", ["y_q", "y_s", "y_zp"], ["y"], name="y_dequant")]
    m = model(nodes, [f32_info("x", [1, 3, 16, 16])], [f32_info("y", [16, 5])], inits)

    def reference(x):
        xq = quantize(x, x_s, x_zp, np.uint8).astype(np.int64) - int(x_zp)
        acc = np.rint(conv(xq, w.astype(np.int64), bias)).astype(np.int64)  # exact integers in float64
        mult = (x_s * w_s / c_s).astype(np.float32).astype(np.float64).reshape(1, 4, 1, 1)
        cq = np.clip(np.rint(acc * mult) + int(c_zp), 0, 255).astype(np.int64)
        a = cq.reshape(16, 64) - int(c_zp)
        acc2 = a @ (b.astype(np.int64) - int(b_zp))
        yq = np.clip(np.rint(acc2 * np.float64(np.float32(c_s * b_s / y_s))) + int(y_zp), 0, 255)
        return {"y": (((yq - int(y_zp)) * y_s).astype(np.float32), float(y_s))}

    return m, reference


# Dynamic: y = Cast(ConvInteger(DynamicQuantizeLinear(x), w, zero points)) * (x_scale * w_scale) + bias.
def dynamic_conv():
    w = RNG.integers(0, 256, (6, 3, 3, 3)).astype(np.uint8)
    w_s, w_zp = np.float32(0.004), np.uint8(131)
    bias = RNG.uniform(-0.5, 0.5, (1, 6, 1, 1)).astype(np.float32)
    inits = {"w": w, "w_s": w_s, "w_zp": w_zp, "bias": bias}
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["x_q", "x_s", "x_zp"], name="x_quant"),
             helper.make_node("ConvInteger", ["x_q", "w", "x_zp", "w_zp"], ["acc"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Cast", ["acc"], ["acc_f"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["x_s", "w_s"], ["s"], name="scale"),
             helper.make_node("Mul", ["acc_f", "s"], ["c"], name="rescale"),
             helper.make_node("Add", ["c", "bias"], ["y"], name="bias_add")]
    m = model(nodes, [f32_info("x", [1, 3, 16, 16])], [f32_info("y", [1, 6, 16, 16])], inits)

    def reference(x):
        lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
        x_s = np.float32(np.float32(hi - lo) / np.float32(255))
        x_zp = np.uint8(np.rint(np.clip(np.float32(0) - np.float32(lo) / x_s, 0, 255)))
        xq = quantize(x, x_s, x_zp, np.uint8).astype(np.int64) - int(x_zp)
        acc = np.rint(conv(xq, w.astype(np.int64) - int(w_zp))).astype(np.int32)
        # An exact integer sum times one scale: float32 rounding only.
        return {"y": (acc.astype(np.float32) * np.float32(x_s * w_s) + bias, 0.0)}

    return m, reference


def sigmoid(v):
    return (np.float32(1) / (np.float32(1) + np.exp(-v.astype(np.float32)))).astype(np.float32)


def dequantize(q, scale, zp):
    return (q.astype(np.float32) - np.float32(zp)) * np.float32(scale)


def ms_node(op, inputs, output, name, **attrs):
    return helper.make_node(op, inputs, [output], name=name, domain="com.microsoft", **attrs)


def ms_model(nodes, inputs, outputs, inits):
    """As model(), importing ONNX Runtime's com.microsoft domain too (onnx.checker does not know it)."""
    g = helper.make_graph(nodes, "quantized", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    return m


# ONNX Runtime's QOperator ops: Q -> QLinearConv -> QLinearSigmoid, QLinearMul (x * sigmoid(x)) ->
# QLinearAdd (a broadcast constant) -> QLinearGlobalAveragePool -> DQ; outputs a (the sum) and y.
def ms_qoperator():
    c = {"x_s": np.float32(0.02), "x_zp": np.uint8(128), "w": RNG.integers(-127, 128, (6, 3, 3, 3)).astype(np.int8),
         "w_s": RNG.uniform(0.002, 0.01, 6).astype(np.float32), "w_zp": np.zeros(6, np.int8),
         "c_s": np.float32(0.05), "c_zp": np.uint8(128), "s_s": np.float32(1 / 256), "s_zp": np.uint8(0),
         "m_s": np.float32(0.03), "m_zp": np.uint8(100), "k": RNG.integers(0, 256, (1, 6, 1, 1)).astype(np.uint8),
         "k_s": np.float32(0.01), "k_zp": np.uint8(128), "a_s": np.float32(0.04), "a_zp": np.uint8(90),
         "p_s": np.float32(0.02), "p_zp": np.uint8(100)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_zp"], ["xq"], name="x_quant"),
             helper.make_node("QLinearConv", ["xq", "x_s", "x_zp", "w", "w_s", "w_zp", "c_s", "c_zp"], ["cq"], name="qconv",
                              pads=[1, 1, 1, 1]),
             ms_node("QLinearSigmoid", ["cq", "c_s", "c_zp", "s_s", "s_zp"], "sq", "qsigmoid"),
             ms_node("QLinearMul", ["cq", "c_s", "c_zp", "sq", "s_s", "s_zp", "m_s", "m_zp"], "mq", "qmul"),
             ms_node("QLinearAdd", ["mq", "m_s", "m_zp", "k", "k_s", "k_zp", "a_s", "a_zp"], "aq", "qadd"),
             ms_node("QLinearGlobalAveragePool", ["aq", "a_s", "a_zp", "p_s", "p_zp"], "pq", "qpool"),
             helper.make_node("DequantizeLinear", ["aq", "a_s", "a_zp"], ["a"], name="a_dequant"),
             helper.make_node("DequantizeLinear", ["pq", "p_s", "p_zp"], ["y"], name="y_dequant")]
    m = ms_model(nodes, [f32_info("x", [1, 3, 16, 16])], [f32_info("a", [1, 6, 16, 16]), f32_info("y", [1, 6, 1, 1])], c)

    def reference(x):
        xq = quantize(x, c["x_s"], c["x_zp"], np.uint8).astype(np.int64) - int(c["x_zp"])
        acc = np.rint(conv(xq, c["w"].astype(np.int64))).astype(np.int64)
        mult = (c["x_s"] * c["w_s"] / c["c_s"]).astype(np.float32).astype(np.float64).reshape(1, 6, 1, 1)
        cq = np.clip(np.rint(acc * mult) + int(c["c_zp"]), 0, 255).astype(np.uint8)
        cd = dequantize(cq, c["c_s"], c["c_zp"])
        sq = quantize(sigmoid(cd), c["s_s"], c["s_zp"], np.uint8)
        mq = quantize(cd * dequantize(sq, c["s_s"], c["s_zp"]), c["m_s"], c["m_zp"], np.uint8)
        aq = quantize(dequantize(mq, c["m_s"], c["m_zp"]) + dequantize(c["k"], c["k_s"], c["k_zp"]), c["a_s"], c["a_zp"],
                      np.uint8)
        total = (aq.astype(np.int64) - int(c["a_zp"])).sum(axis=(2, 3), keepdims=True)
        pq = np.clip(np.rint(total * (float(c["a_s"]) / (float(c["p_s"]) * 256))) + int(c["p_zp"]), 0, 255)
        # A step of `a` may move the pool's mean by a step too.
        return {"a": (dequantize(aq, c["a_s"], c["a_zp"]), float(c["a_s"])),
                "y": (dequantize(pq, c["p_s"], c["p_zp"]), float(c["p_s"]))}

    return m, reference


# ONNX Runtime's dynamic MatMuls: DynamicQuantizeMatMul(x, b) + MatMulIntegerToFloat(DynamicQuantizeLinear(x), b2).
def ms_dynamic_matmul():
    c = {"b": RNG.integers(-127, 128, (16, 8)).astype(np.int8), "b_s": RNG.uniform(0.002, 0.01, 8).astype(np.float32),
         "b_zp": np.zeros(8, np.int8), "bias": RNG.uniform(-1, 1, 8).astype(np.float32),
         "b2": RNG.integers(0, 256, (16, 8)).astype(np.uint8), "b2_s": np.float32(0.005), "b2_zp": np.uint8(128)}
    nodes = [ms_node("DynamicQuantizeMatMul", ["x", "b", "b_s", "b_zp", "bias"], "y1", "dq_matmul"),
             helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"], name="x_quant"),
             ms_node("MatMulIntegerToFloat", ["xq", "b2", "xs", "b2_s", "xzp", "b2_zp", "bias"], "y2", "int_matmul"),
             helper.make_node("Add", ["y1", "y2"], ["y"], name="sum")]
    m = ms_model(nodes, [f32_info("x", [4, 16])], [f32_info("y", [4, 8])], c)

    def reference(x):
        lo, hi = min(0.0, float(x.min())), max(0.0, float(x.max()))
        x_s = np.float32(np.float32(hi - lo) / np.float32(255))
        x_zp = np.uint8(np.rint(np.clip(np.float32(0) - np.float32(lo) / x_s, 0, 255)))
        xq = quantize(x, x_s, x_zp, np.uint8).astype(np.int64) - int(x_zp)
        y1 = (xq @ c["b"].astype(np.int64)).astype(np.float32) * (x_s * c["b_s"]) + c["bias"]
        y2 = (xq @ (c["b2"].astype(np.int64) - 128)).astype(np.float32) * (x_s * c["b2_s"]) + c["bias"]
        return {"y": (y1 + y2, 0.0)}

    return m, reference


# Two QDQ groups in a chain with a residual Add in float, as ONNX Runtime's QDQ quantizer writes
# them (one DequantizeLinear per reader, int32 biases): Q(x) -> [DQ, Conv, Relu, Q] ->
# [DQ, Conv 1x1, Q] -> DQ + DQ(first) -> Q -> DQ.
def qdq_chain():
    s = {"x": (np.float32(0.02), np.uint8(128)), "a": (np.float32(0.01), np.uint8(0)),
         "b": (np.float32(0.03), np.uint8(120)), "c": (np.float32(0.04), np.uint8(100))}
    w1 = RNG.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8)
    w1_s = RNG.uniform(0.002, 0.01, 8).astype(np.float32)
    w2 = RNG.integers(-127, 128, (8, 8, 1, 1)).astype(np.int8)
    w2_s = RNG.uniform(0.005, 0.02, 8).astype(np.float32)
    b1 = RNG.integers(-3000, 3000, 8).astype(np.int32)
    inits = {"w1": w1, "w1_s": w1_s, "w1_z": np.zeros(8, np.int8), "w2": w2, "w2_s": w2_s, "w2_z": np.zeros(8, np.int8),
             "b1": b1, "b1_s": (s["x"][0] * w1_s).astype(np.float32), "b1_z": np.zeros(8, np.int32)}
    for k, (sc, zp) in s.items():
        inits[k + "_s"], inits[k + "_z"] = sc, zp
    dq = lambda q, k, out, name: helper.make_node("DequantizeLinear", [q, k + "_s", k + "_z"], [out], name=name)
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"], name="x_quant"),
             dq("xq", "x", "xd", "x_dequant"),
             helper.make_node("DequantizeLinear", ["w1", "w1_s", "w1_z"], ["w1d"], name="w1_dequant", axis=0),
             helper.make_node("DequantizeLinear", ["b1", "b1_s", "b1_z"], ["b1d"], name="b1_dequant", axis=0),
             helper.make_node("Conv", ["xd", "w1d", "b1d"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
             helper.make_node("QuantizeLinear", ["r1", "a_s", "a_z"], ["aq"], name="a_quant"),
             dq("aq", "a", "ad0", "a_dequant0"), dq("aq", "a", "ad1", "a_dequant1"),
             helper.make_node("DequantizeLinear", ["w2", "w2_s", "w2_z"], ["w2d"], name="w2_dequant", axis=0),
             helper.make_node("Conv", ["ad0", "w2d"], ["c2"], name="conv2"),
             helper.make_node("QuantizeLinear", ["c2", "b_s", "b_z"], ["bq"], name="b_quant"),
             dq("bq", "b", "bd", "b_dequant"),
             helper.make_node("Add", ["bd", "ad1"], ["sum"], name="add"),
             helper.make_node("QuantizeLinear", ["sum", "c_s", "c_z"], ["cq"], name="c_quant"),
             dq("cq", "c", "y", "y_dequant")]
    return model(nodes, [f32_info("x", [1, 3, 16, 16])], [f32_info("y", [1, 8, 16, 16])], inits)


class QuantizedOnOnednnTest(unittest.TestCase):
    """The int8 groups of a QDQ model and QLinearConv run on onednn, within one step of ref."""

    def partition(self, m, name, how):
        d = tempfile.mkdtemp(prefix="tessera_quant_onednn_")
        path = os.path.join(d, name + ".onnx")
        onnx.save(m, path)
        plan = os.path.join(d, "plan.json")
        # Roofline over every real backend (the f32 ones could take the float ops around the
        # groups); measured costs over ref + onednn, to keep the tuning short.
        cmd = [CLI, "partition", path, "--backends", "ref,onednn,eigen,blas,xnnpack,halide", "--cost", "roofline", "--plan", plan] \
            if how == "roofline" else [CLI, "tune", path, "--backends", "ref,onednn", "--cache", os.path.join(d, "costs.db"), "--plan", plan]
        r = subprocess.run(cmd, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(plan) as f:
            return path, plan, {n: p["backend"] for p in json.load(f)["partitions"] for n in p["nodes"]}

    def run_checked(self, path, plan):
        env = dict(os.environ, ONEDNN_VERBOSE="1")
        r = subprocess.run([CLI, "run", path, "--plan", plan, "--check", "--json", "--repeat", "1"], capture_output=True, text=True,
                           env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        result = json.loads(r.stdout.strip().splitlines()[-1])
        self.assertTrue(result["ok"], r.stdout[-2000:] + r.stderr[-2000:])
        return result, [line for line in (r.stdout + r.stderr).splitlines() if line.startswith("onednn_verbose,exec")]

    def test_qdq_chain_groups_are_int8_on_onednn(self):
        for how in ("roofline", "measure"):
            path, plan, where = self.partition(qdq_chain(), "qdq_chain", how)
            for n in ("conv1", "w1_dequant", "b1_dequant", "relu1", "a_quant", "conv2", "w2_dequant", "b_quant", "add", "c_quant"):
                self.assertEqual(where[n], "onednn", f"{how}: {n}")
            result, verbose = self.run_checked(path, plan)
            convs = [v for v in verbose if ",convolution," in v]
            self.assertTrue(convs and all("src_u8" in v and "dst_u8" in v for v in convs), "\n".join(convs))
            # The output is a DequantizeLinear of scale 0.04: one step at most.
            self.assertLessEqual(result["max_abs_error"], 0.04 * 1.0001)

    def test_qlinear_conv_on_onednn(self):
        # QLinearConv with s8 weights is one int8 convolution; QLinearMatMul's u8 weights are not
        # oneDNN 2.x's, so that function's candidates are invalid under measured costs and the
        # node runs on ref.
        path, plan, where = self.partition(qoperator()[0], "qoperator", "measure")
        self.assertEqual(where["qconv"], "onednn")
        self.assertEqual(where["qmatmul"], "ref")
        _, verbose = self.run_checked(path, plan)
        self.assertTrue(any(",convolution," in v and "src_u8" in v for v in verbose))

    def test_qlinear_u8_weights_refused_by_the_spec(self):
        # oneDNN 2.x takes s8 filters only: onednn's spec gives QLinearConv and QLinearMatMul's
        # operand 3 its own list ("QLinearConv[3]": ["i8"]), so even a roofline plan, which never
        # compiles a candidate, keeps u8 filters on ref, and `run` compiles every function it places
        # (no "runs on ref kernels" fallback). The qoperator model's QLinearMatMul has u8 weights; a
        # copy with its QLinearConv's filter shifted to u8 (zero point 128) loses that one too.
        m = qoperator()[0]
        u8 = onnx.ModelProto()
        u8.CopyFrom(m)
        for i, init in enumerate(u8.graph.initializer):
            if init.name == "w":
                shifted = (numpy_helper.to_array(init).astype(np.int16) + 128).astype(np.uint8)
                u8.graph.initializer[i].CopyFrom(numpy_helper.from_array(shifted, "w"))
            elif init.name == "w_zp":
                u8.graph.initializer[i].CopyFrom(numpy_helper.from_array(np.full(4, 128, np.uint8), "w_zp"))
        for model_, conv_on in ((m, "onednn"), (u8, "ref")):
            d = tempfile.mkdtemp(prefix="tessera_quant_u8_")
            path, plan = os.path.join(d, "m.onnx"), os.path.join(d, "plan.json")
            onnx.save(model_, path)
            r = subprocess.run([CLI, "partition", path, "--backends", "ref,onednn", "--cost", "roofline", "--plan", plan],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(plan) as f:
                where = {n: p["backend"] for p in json.load(f)["partitions"] for n in p["nodes"]}
            self.assertEqual((where["qconv"], where["qmatmul"]), (conv_on, "ref"))
            r = subprocess.run([CLI, "run", path, "--plan", plan, "--check", "--repeat", "1"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertNotIn("runs on ref kernels", r.stderr)
            r = subprocess.run([CLI, "candidates", path, "--backends", "onednn", "--explain"], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("u8 operand 3 of QLinearMatMul (takes i8)", r.stdout + r.stderr)

    def test_u8_weights_per_channel_on_onednn(self):
        # A QDQ Conv whose weights are u8 quantized per output channel around zero point 128: no
        # int8 group (oneDNN 2.x takes s8 weights), but onednn takes each node, the weight's
        # DequantizeLinear (zero points per axis, which its reorder cannot take) as a host pass
        # with ref's arithmetic: no fallback to ref's kernels, and exact.
        w = RNG.integers(0, 256, (8, 3, 3, 3)).astype(np.uint8)
        inits = {"xs": np.float32(0.02), "xz": np.uint8(128), "w": w, "ws": RNG.uniform(0.002, 0.01, 8).astype(np.float32),
                 "wz": np.full(8, 128, np.uint8), "ys": np.float32(0.05), "yz": np.uint8(100)}
        nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"], name="x_quant"),
                 helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"], name="x_dequant"),
                 helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wd"], name="w_dequant", axis=0),
                 helper.make_node("Conv", ["xd", "wd"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                 helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["yq"], name="y_quant"),
                 helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"], name="y_dequant")]
        m = model(nodes, [f32_info("x", [1, 3, 16, 16])], [f32_info("y", [1, 8, 16, 16])], inits)
        d = tempfile.mkdtemp(prefix="tessera_quant_u8_axis_")
        path, plan = os.path.join(d, "m.onnx"), os.path.join(d, "plan.json")
        onnx.save(m, path)
        r = subprocess.run([CLI, "partition", path, "--backends", "ref,onednn", "--cost", "roofline", "--plan", plan],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(plan) as f:
            self.assertEqual([p["backend"] for p in json.load(f)["partitions"]], ["onednn"])
        r = subprocess.run([CLI, "run", path, "--plan", plan, "--check", "--json", "--repeat", "1"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("runs on ref kernels", r.stderr)
        self.assertEqual(json.loads(r.stdout.strip().splitlines()[-1])["max_abs_error"], 0.0)

    def test_deep_qdq_network_passes_check(self):
        # mobilenet_v2 in static QDQ form (65 quantizers on its longest path), its groups int8 on
        # onednn: every group rounds as ONNX does (round half to even, then the zero point), and
        # --check holds each quantized value to one step per requantization it went through, so
        # the steps a flipped rounding compounds into pass while a wrong result does not. The
        # output sits 2 steps from ref's (3 when the zero point is added before rounding).
        d = tempfile.mkdtemp(prefix="tessera_quant_mobilenet_")
        r = subprocess.run([sys.executable, "scripts/export_models.py", "--only", "mobilenet_v2", "--out", d],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        src, q = os.path.join(d, "mobilenet_v2.onnx"), os.path.join(d, "mobilenet_v2_qdq.onnx")
        r = subprocess.run([sys.executable, "scripts/quantize_qdq.py", src, q, "--tessera", CLI], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        plan = os.path.join(d, "plan.json")
        r = subprocess.run([CLI, "partition", q, "--backends", "ref,onednn", "--cost", "roofline", "--plan", plan],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(plan) as f:
            self.assertEqual([p["backend"] for p in json.load(f)["partitions"]], ["onednn"])
        result, verbose = self.run_checked(q, plan)
        self.assertGreater(sum(",convolution," in v and "src_u8" in v for v in verbose), 50)
        step = next(numpy_helper.to_array(i) for i in onnx.load(q).graph.initializer if i.name == "output_scale")
        self.assertLessEqual(result["max_abs_error"], 2 * float(step) * 1.0001)

    def test_dynamic_conv_on_onednn(self):
        # ONNX Runtime's dynamic quantization (ISNet's 119 units): u8 weights with a zero point,
        # the source's zero point computed at run time. All of it runs on onednn, exactly.
        path, plan, where = self.partition(dynamic_conv()[0], "dynamic_conv", "roofline")
        for n in ("x_quant", "conv", "cast"):
            self.assertEqual(where[n], "onednn", n)
        result, verbose = self.run_checked(path, plan)
        self.assertTrue(any(",convolution," in v and "src_u8" in v and "dst_s32" in v for v in verbose), "\n".join(verbose))
        self.assertEqual(result["max_abs_error"], 0.0)


    def test_quantize_qdq_script(self):
        # scripts/quantize_qdq.py on a small float model (Conv, Relu, residual Add, Gemm): its
        # groups become int8 on onednn, and the quantized model stays close to the float one.
        w1 = RNG.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32)
        w2 = RNG.normal(0, 0.2, (8, 8, 3, 3)).astype(np.float32)
        fc = RNG.normal(0, 0.1, (10, 8 * 8 * 8)).astype(np.float32)
        inits = {"w1": w1, "b1": RNG.normal(0, 0.1, 8).astype(np.float32), "w2": w2, "fc": fc,
                 "fc_b": np.zeros(10, np.float32), "shape": np.array([1, -1], np.int64)}
        nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1], strides=[2, 2]),
                 helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
                 helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
                 helper.make_node("Add", ["c2", "r1"], ["s"], name="add"),
                 helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
                 helper.make_node("Reshape", ["r2", "shape"], ["flat"], name="flatten"),
                 helper.make_node("Gemm", ["flat", "fc", "fc_b"], ["y"], name="fc", transB=1)]
        d = tempfile.mkdtemp(prefix="tessera_quantize_qdq_")
        src, out = os.path.join(d, "float.onnx"), os.path.join(d, "qdq.onnx")
        onnx.save(model(nodes, [f32_info("x", [1, 3, 16, 16])], [f32_info("y", [1, 10])], inits), src)
        r = subprocess.run([sys.executable, "scripts/quantize_qdq.py", src, out, "--tessera", CLI], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        q = onnx.load(out)
        onnx.checker.check_model(q)
        ops = [n.op_type for n in q.graph.node]
        self.assertEqual(ops.count("QuantizeLinear"), 5)   # the inputs and results of the three ops: x, r1, c2, flat, y
        path, plan, where = self.partition(q, "qdq", "measure")
        for n in ("conv1", "conv2", "fc"):
            self.assertEqual(where[n], "onednn", n)
        result, verbose = self.run_checked(path, plan)
        # Both convolutions int8 (distinct problem descriptions, each run several times).
        self.assertEqual(len({v.split(",")[-2] for v in verbose if ",convolution," in v and "src_u8" in v}), 2)
        self.assertTrue(any(",matmul," in v and "src_u8" in v for v in verbose))
        # QOperator format: both convolution units become QLinearConv (conv1's Relu goes: its result's
        # zero point is 0), still int8 on onednn.
        qop = os.path.join(d, "qop.onnx")
        r = subprocess.run([sys.executable, "scripts/quantize_qdq.py", src, qop, "--format", "qoperator", "--tessera", CLI],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        q = onnx.load(qop)
        onnx.checker.check_model(q)
        ops = [n.op_type for n in q.graph.node]
        self.assertEqual((ops.count("QLinearConv"), ops.count("Conv"), ops.count("Relu")), (2, 0, 1))
        path, plan, where = self.partition(q, "qop", "roofline")
        self.assertEqual((where["conv1"], where["conv2"]), ("onednn", "onednn"))
        _, verbose = self.run_checked(path, plan)
        self.assertEqual(len({v.split(",")[-2] for v in verbose if ",convolution," in v and "src_u8" in v}), 2)
        # Bad input: one line, exit 2.
        r = subprocess.run([sys.executable, "scripts/quantize_qdq.py", os.path.join(d, "missing.onnx"), out], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)


class QuantizedModelsTest(unittest.TestCase):
    def run_model(self, name, build, shape=(1, 3, 16, 16)):
        m, reference = build()
        d = tempfile.mkdtemp(prefix="tessera_quant_")
        path = os.path.join(d, name + ".onnx")
        onnx.save(m, path)
        plan = os.path.join(d, "plan.json")
        r = subprocess.run([CLI, "partition", path, "--backends", "ref", "--cost", "roofline", "--plan", plan],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        x = RNG.uniform(-2.5, 2.5, shape).astype(np.float32)
        np.save(os.path.join(d, "x.npy"), x)
        out = os.path.join(d, "out")
        r = subprocess.run([CLI, "run", path, "--plan", plan, "--check", "--json", "--input", "x=" + os.path.join(d, "x.npy"),
                            "--output-dir", out], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(json.loads(r.stdout)["ok"], r.stdout)
        for output, (want, step) in reference(x).items():
            got = np.load(os.path.join(out, output + ".npy"))
            self.assertEqual(got.shape, want.shape)
            err = np.abs(got.astype(np.float64) - want)
            exact = err <= 1e-6 * (1 + np.abs(want))
            self.assertTrue(np.all(exact | (err <= step * 1.0001)), f"{name}: {output}: max error {err.max()} (one step: {step})")
            # Most values agree exactly: a step apart only where float summation order breaks a tie.
            self.assertGreater(np.mean(exact), 0.99, f"{name}: {output}")

    def test_static_qdq_conv(self):
        self.run_model("qdq_conv", qdq_conv)

    def test_qoperator_conv_matmul(self):
        self.run_model("qoperator", qoperator)

    def test_dynamic_conv_integer(self):
        self.run_model("dynamic_conv", dynamic_conv)

    def test_com_microsoft_qoperator(self):
        self.run_model("ms_qoperator", ms_qoperator)

    def test_com_microsoft_dynamic_matmul(self):
        self.run_model("ms_dynamic_matmul", ms_dynamic_matmul, shape=(4, 16))


if __name__ == "__main__":
    unittest.main()
