"""scripts/profile_vs_ort.py on a hand-written model and verbose log (no ORT, no tessera): a 1x1 conv
that the onednn backend runs as a matmul of pixel rows counts as a 1x1 conv, not a MatMul; what a
oneDNN call spends outside its primitives (host steps) is a family of its own, not spread over the
others by the scaling to CPU time; oneDNN's sum primitive is elementwise, as ORT's Sum; the nodes
of an If's branches have their families (tessera inlines the If), and ORT's If row counts its own
time only, not its branch nodes' rows again."""
import os
import sys
import tempfile

import onnx
from onnx import TensorProto, helper, numpy_helper
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import profile_vs_ort as pv  # noqa: E402

MM = "onednn_verbose,exec,cpu,matmul,brg:avx512_core,undef,src_f32::blocked:ab:f0,attr-post-ops:eltwise_relu ,,%s,%s"
CONV = ("onednn_verbose,exec,cpu,convolution,jit_1x1:avx512_core,forward_inference,src_f32::blocked:aBcd16b:f0,,"
        "alg:convolution_direct,mb1_ic64oc128_ih14oh14kh1sh1dh0ph0_iw14ow14kw1sw1dw0pw0,%s")


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


def model(path):
    """x -> Conv 1x1 (64 -> 128) -> Conv 1x1 (128 -> 256) -> GlobalAveragePool -> Flatten -> Gemm
    (256 -> 10) and a Gemm whose weight shares a 1x1 conv's [C, O] (128 x 256: not a 1x1 conv)."""
    w = lambda name, *shape: numpy_helper.from_array(np.zeros(shape, np.float32), name)  # noqa: E731
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], name="c1"),
             helper.make_node("Conv", ["a", "w2"], ["b"], name="c2"),
             helper.make_node("GlobalAveragePool", ["b"], ["p"], name="gap"),
             helper.make_node("Flatten", ["p"], ["f"], name="flat"),
             helper.make_node("Gemm", ["f", "wf"], ["y"], name="fc", transB=1),
             helper.make_node("Gemm", ["f", "wg"], ["z"], name="fc2")]
    g = helper.make_graph(nodes, "m", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 7, 7])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10]),
                           helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 128])],
                          [w("w1", 128, 64, 1, 1), w("w2", 256, 128, 1, 1), w("wf", 10, 256), w("wg", 256, 128)])
    onnx.save(helper.make_model(g), path)


def test_families():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        model(path)
        info = pv.ModelInfo(path)
    check(info.pointwise == frozenset({(64, 128)}), "1x1 convs' [C, O], less a Gemm's: %r" % (info.pointwise,))
    check(pv.onednn_family("matmul", "src_f32::blocked:ab:f0,,49x64:64x128:49x128", info.pointwise) == "1x1 conv",
          "a matmul over a 1x1 conv's [C, O] is a 1x1 conv")
    check(pv.onednn_family("matmul", "src_f32::blocked:ab:f0,,1x256:256x10:1x10", info.pointwise) == "MatMul/Gemm",
          "the classifier's Gemm stays a MatMul")
    check(pv.onednn_family("matmul", "src_f32::blocked:ab:f0,,1x128:128x256:1x256", info.pointwise) == "MatMul/Gemm",
          "a [C, O] that a Gemm shares stays a MatMul")
    check(pv.onednn_family("matmul", "49x64:64x128:49x128") == "MatMul/Gemm", "without the model's 1x1 convs, a MatMul")
    # The verbose log's periodic tail: 2 * repeat + 1 runs of [matmul, conv], repeat 2.
    lines = ["onednn_verbose,info,prim_template"]
    for t in (0.3, 0.2, 0.1, 0.11, 0.12):
        lines += [MM % ("49x64:64x128:49x128", t), CONV % "0.05"]
    runs = pv.onednn_runs(lines, 2, info.pointwise)
    check(len(runs) == 2 and all([f for f, _ in r] == ["1x1 conv", "1x1 conv"] for r in runs),
          "both primitives of each run are 1x1 convs: %r" % (runs,))



def test_host_steps():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.onnx")
        model(path)
        info = pv.ModelInfo(path)
    lines = ["onednn_verbose,info,prim_template"]
    for t in (0.3, 0.2, 0.1, 0.11, 0.12):
        lines += [MM % ("49x64:64x128:49x128", t), CONV % "0.05"]
    prims = pv.onednn_primitives(lines, 2, info.pointwise)
    check([f for f, _, _ in prims] == ["1x1 conv", "1x1 conv"], "the run's two primitives: %r" % (prims,))
    check(abs(prims[0][2] - 0.115) < 1e-9 and abs(prims[1][2] - 0.05) < 1e-9, "per-primitive medians: %r" % (prims,))
    check(prims[0][1].startswith("matmul brg:avx512_core") and prims[0][1].endswith("49x64:64x128:49x128"),
          "a primitive's label: %r" % (prims[0][1],))
    # The oneDNN call runs 0.5 ms without the log: 0.335 ms outside its two primitives (0.165 ms).
    calls = [{"backend": "onednn", "kernel": "@f0", "measured_ms": 0.9, "nodes": ["c1", "c2"]},
             {"backend": "ref", "kernel": "@f1", "measured_ms": 0.02, "nodes": ["gap", "flat", "fc", "fc2"]}]
    quiet = [dict(calls[0], measured_ms=0.5), calls[1]]
    ms, count, top = pv.family_split(calls, info, prims, quiet)
    check(abs(ms[pv.HOST] - 0.335) < 1e-9 and count[pv.HOST] == 1, "host steps: %r" % (dict(ms),))
    check(abs(ms["1x1 conv"] - 0.165) < 1e-9, "the 1x1 convs are the primitives alone: %r" % (dict(ms),))
    check(abs(sum(ms.values()) - 0.52) < 1e-9, "the families add up to the quiet run's calls: %r" % (dict(ms),))
    check(abs(top["1x1 conv"][0][1] - 0.115) < 1e-9, "the costliest 1x1 conv first: %r" % (top,))
    check(pv.onednn_family("sum", "src_f32::blocked:abcd:f0,,1x64x7x7") == "activation/elementwise",
          "oneDNN's sum adds tensors elementwise")



def test_control_flow():
    """x -> If(c) [then: Relu -> Sigmoid; else: Identity] -> y, the condition an input."""
    then = helper.make_graph([helper.make_node("Relu", ["x"], ["r"], name="t_relu"),
                              helper.make_node("Sigmoid", ["r"], ["s"], name="t_sig")], "then", [],
                             [helper.make_tensor_value_info("s", TensorProto.FLOAT, [1, 4])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"], name="e_id")], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1, 4])])
    g = helper.make_graph([helper.make_node("If", ["c"], ["y"], name="if0", then_branch=then, else_branch=other)], "m",
                          [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                           helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "if.onnx")
        onnx.save(helper.make_model(g), path)
        info = pv.ModelInfo(path)
    check(info.family.get("t_sig") == "activation/elementwise" and info.family.get("e_id") == "data movement",
          "branch nodes' families: %r" % (info.family,))
    check(info.branch.get("if0") == {"t_relu", "t_sig", "e_id"}, "the If's branch nodes: %r" % (info.branch,))
    rows = [{"name": "if0", "op": "If", "median_ms": 0.05}, {"name": "t_relu", "op": "Relu", "median_ms": 0.01},
            {"name": "t_sig", "op": "Sigmoid", "median_ms": 0.015}]
    ms, count, _ = pv.ort_split(rows, info)
    check(abs(ms["control flow (If, Loop, Scan)"] - 0.025) < 1e-9, "the If's own time: %r" % (dict(ms),))
    check(abs(sum(ms.values()) - 0.05) < 1e-9, "the rows add up to the If's span: %r" % (dict(ms),))
    check(pv.op_family("LSTM") == "recurrent (LSTM, GRU, RNN)", "LSTM is a recurrent cell")


if __name__ == "__main__":
    test_families()
    test_host_steps()
    test_control_flow()
    print("ok")
