"""Regenerates the ONNX models with control flow in this folder (run with /usr/bin/python3), and
holds the numpy reference of each Loop model (onnx 1.12 has no onnx.reference), which
tests/python/test_loop.py checks tessera against. Each model has ordinary nodes before and after
its Loop or If, so that the rest of the graph partitions around it.

- loop_scan.onnx: a counted loop (M = 4, no condition) with one loop-carried value and one scan
  output; the body reads an initializer and an intermediate of the enclosing graph.
- loop_while.onnx: a while loop (no M) that doubles a vector until its sum passes a limit, a graph
  input the body reads from the enclosing graph.
- loop_if_body.onnx: M = 5 and a condition; the body holds an If on the iteration number's parity
  and stops after the third iteration (cond_out = i < 2); only a loop-carried output.
- loop_stops_early.onnx: as loop_scan but with cond_out = i < 1 and a scan output: tessera types
  the scan output for M = 4 iterations, so running it is a usage error naming the node.
- scan.onnx: a Scan (opset 11) with one state and two scan inputs, one along axis 1 read
  backwards, two scan outputs (one stacked along axis 1, one written backwards); the body reads
  an intermediate of the enclosing graph.
- if_left_out.onnx: y = Sigmoid(If(c) {then: MatMul(Relu(x), w8); else: MatMul(Relu(x), w4)}) with
  x: 1x8, so the else branch does not type (it wants 1x4) and import leaves it out, as silero
  VAD's 8 kHz branch; its emitted module.onnx must still pass onnx.checker (test_emit_onnx.py).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
W = np.array([0.5, -1.0, 2.0], np.float32)
W2 = np.arange(12, dtype=np.float32).reshape(3, 4) / 10.0


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def save(model, name):
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, os.path.join(here, name))


def scan_model(stop_after=None):
    """y, scans = f(x): a = Relu(x); b = Sigmoid(x); s_{k+1} = 0.5 s_k + i w; scan_k = s_{k+1} + b."""
    body_nodes = [
        helper.make_node("Mul", ["s", "half"], ["s_half"]),
        helper.make_node("Cast", ["i"], ["i_f"], to=F),
        helper.make_node("Mul", ["i_f", "w"], ["iw"]),
        helper.make_node("Add", ["s_half", "iw"], ["s_next"]),
        helper.make_node("Add", ["s_next", "b"], ["scan"]),
    ]
    if stop_after is None:
        body_nodes.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
    else:
        body_nodes.append(helper.make_node("Less", ["i", "stop"], ["cond_out"]))
    body = helper.make_graph(body_nodes, "scan_body",
                             [vi("i", I64, []), vi("cond_in", B, []), vi("s", F, [2, 3])],
                             [vi("cond_out", B, []), vi("s_next", F, [2, 3]), vi("scan", F, [2, 3])],
                             [const("half", np.float32(0.5))] +
                             ([const("stop", np.int64(stop_after))] if stop_after is not None else []))
    cond = ["cond0"] if stop_after is not None else [""]
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("Sigmoid", ["x"], ["b"], name="sigmoid"),
        helper.make_node("Loop", ["trips"] + cond + ["a"], ["s_final", "scans"], name="loop", body=body),
        helper.make_node("MatMul", ["s_final", "w2"], ["y"], name="matmul"),
    ]
    inits = [const("trips", np.int64(4)), const("w", W), const("w2", W2)]
    if stop_after is not None:
        inits.append(const("cond0", np.bool_(True)))
    g = helper.make_graph(nodes, "loop_scan", [vi("x", F, [2, 3])], [vi("y", F, [2, 4]), vi("scans", F, [4, 2, 3])], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def scan_reference(x):
    a, b = np.maximum(x, 0), 1 / (1 + np.exp(-x))
    s, scans = a, []
    for i in range(4):
        s = (s * np.float32(0.5) + np.float32(i) * W).astype(np.float32)
        scans.append(s + b)
    return {"y": s @ W2, "scans": np.stack(scans)}


def while_model():
    """v = Abs(x) + 1; while sum(v) <= limit: v = 2 v; y = Neg(v)."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["v", "two"], ["v2"]),
         helper.make_node("ReduceSum", ["v2"], ["total"], keepdims=0),
         helper.make_node("LessOrEqual", ["total", "limit"], ["cond_out"])],
        "while_body", [vi("i", I64, []), vi("cond_in", B, []), vi("v", F, [4])],
        [vi("cond_out", B, []), vi("v2", F, [4])], [const("two", np.float32(2))])
    nodes = [
        helper.make_node("Abs", ["x"], ["ax"], name="abs"),
        helper.make_node("Add", ["ax", "one"], ["v0"], name="plus_one"),
        helper.make_node("Loop", ["", "go", "v0"], ["v_final"], name="while", body=body),
        helper.make_node("Neg", ["v_final"], ["y"], name="neg"),
    ]
    g = helper.make_graph(nodes, "loop_while", [vi("x", F, [4]), vi("limit", F, [])], [vi("y", F, [4])],
                          [const("one", np.float32(1)), const("go", np.bool_(True))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def while_reference(x, limit):
    v = np.abs(x) + np.float32(1)
    while True:
        v = (v * np.float32(2)).astype(np.float32)
        if not v.sum(dtype=np.float32) <= limit:
            break
    return {"y": -v}


def if_body_model():
    """v0 = Tanh(x); for i in 0..4 while i < 2: v = i even ? v + x : v * x; y = Exp(v)."""
    even = helper.make_graph([helper.make_node("Add", ["v", "x"], ["t"])], "even", [], [vi("t", F, [3])])
    odd = helper.make_graph([helper.make_node("Mul", ["v", "x"], ["e"])], "odd", [], [vi("e", F, [3])])
    body = helper.make_graph(
        [helper.make_node("Mod", ["i", "two"], ["parity"]),
         helper.make_node("Equal", ["parity", "zero"], ["is_even"]),
         helper.make_node("If", ["is_even"], ["v_next"], name="parity_if", then_branch=even, else_branch=odd),
         helper.make_node("Less", ["i", "two"], ["cond_out"])],
        "if_body", [vi("i", I64, []), vi("cond_in", B, []), vi("v", F, [3])],
        [vi("cond_out", B, []), vi("v_next", F, [3])], [const("two", np.int64(2)), const("zero", np.int64(0))])
    nodes = [
        helper.make_node("Tanh", ["x"], ["v0"], name="tanh"),
        helper.make_node("Loop", ["trips", "go", "v0"], ["v_final"], name="loop", body=body),
        helper.make_node("Exp", ["v_final"], ["y"], name="exp"),
    ]
    g = helper.make_graph(nodes, "loop_if_body", [vi("x", F, [3])], [vi("y", F, [3])],
                          [const("trips", np.int64(5)), const("go", np.bool_(True))])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def if_body_reference(x):
    v = np.tanh(x)
    for i in range(5):
        v = v + x if i % 2 == 0 else v * x
        if not i < 2:
            break
    return {"y": np.exp(v)}


def scan_op_model():
    """s_final, ys, zs = Scan(s0 = Relu(x0), a, b) over k = 0..2 with a[k] (axis 0) and b[:, 2 - k]
    (axis 1, reversed): s = s * 0.5 + a[k] * b[:, 2-k] + c (c = Sigmoid(x0), from outside);
    ys[:, k] = s (output axis 1); zs[2 - k] = a[k] - s (reversed)."""
    body = helper.make_graph(
        [helper.make_node("Mul", ["s", "half"], ["s_half"]),
         helper.make_node("Mul", ["ak", "bk"], ["ab"]),
         helper.make_node("Add", ["s_half", "ab"], ["s1"]),
         helper.make_node("Add", ["s1", "c"], ["s_next"]),
         helper.make_node("Identity", ["s_next"], ["y"]),
         helper.make_node("Sub", ["ak", "s_next"], ["z"])],
        "scan_body", [vi("s", F, [4]), vi("ak", F, [4]), vi("bk", F, [4])],
        [vi("s_next", F, [4]), vi("y", F, [4]), vi("z", F, [4])], [const("half", np.float32(0.5))])
    nodes = [
        helper.make_node("Relu", ["x0"], ["s0"], name="relu"),
        helper.make_node("Sigmoid", ["x0"], ["c"], name="sigmoid"),
        helper.make_node("Scan", ["s0", "a", "b"], ["s_final", "ys", "zs"], name="scan", body=body, num_scan_inputs=2,
                         scan_input_axes=[0, 1], scan_input_directions=[0, 1], scan_output_axes=[1, 0],
                         scan_output_directions=[0, 1]),
        helper.make_node("Tanh", ["s_final"], ["t"], name="tanh"),
    ]
    g = helper.make_graph(nodes, "scan", [vi("x0", F, [4]), vi("a", F, [3, 4]), vi("b", F, [4, 3])],
                          [vi("t", F, [4]), vi("ys", F, [4, 3]), vi("zs", F, [3, 4])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 11)])


def scan_op_reference(x0, a, b):
    s, c = np.maximum(x0, 0), 1 / (1 + np.exp(-x0))
    ys, zs = np.zeros((4, 3), np.float32), np.zeros((3, 4), np.float32)
    for k in range(3):
        s = s * np.float32(0.5) + a[k] * b[:, 2 - k] + c
        ys[:, k] = s
        zs[2 - k] = a[k] - s
    return {"t": np.tanh(s), "ys": ys, "zs": zs}


def if_left_out_model():
    then = helper.make_graph([helper.make_node("MatMul", ["r", "w8"], ["t"])], "then", [], [vi("t", F, [1, 2])])
    other = helper.make_graph([helper.make_node("MatMul", ["r", "w4"], ["e"])], "else", [], [vi("e", F, [1, 2])])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("If", ["c"], ["m"], name="the_if", then_branch=then, else_branch=other),
        helper.make_node("Sigmoid", ["m"], ["y"], name="sigmoid"),
    ]
    g = helper.make_graph(nodes, "if_left_out", [vi("x", F, [1, 8]), vi("c", B, [])], [vi("y", F, [1, 2])],
                          [const("w8", np.ones((8, 2), np.float32) / 8), const("w4", np.ones((4, 2), np.float32) / 4)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)   # not full_check: the else branch does not type at 1x8, on purpose
    onnx.save(m, os.path.join(here, "if_left_out.onnx"))


if __name__ == "__main__":
    save(scan_model(), "loop_scan.onnx")
    save(while_model(), "loop_while.onnx")
    save(if_body_model(), "loop_if_body.onnx")
    save(scan_model(stop_after=1), "loop_stops_early.onnx")
    save(scan_op_model(), "scan.onnx")
    if_left_out_model()
