#!/usr/bin/python3
"""Static int8 quantization of an fp32 ONNX model into QDQ format, as ONNX Runtime's quantizer writes it.

    /usr/bin/python3 scripts/quantize_qdq.py MODEL.onnx OUT.onnx [--calibration N] [--seed S]
                                           [--input NAME=FILE.npy]... [--tessera build/tessera]
                                           [--format qdq|qoperator] [--shared-dq]

What it writes (ONNX Runtime's QDQ format, static, per-channel weights):
- every Conv, Gemm and MatMul with a constant weight is quantized: its weight becomes an int8
  initializer (symmetric, one scale per output channel, zero point 0) read through a
  DequantizeLinear, its bias an int32 initializer in units of input scale * weight scale read
  through a DequantizeLinear, as ONNX Runtime quantizes biases;
- its activation input and its result are quantized to uint8 (asymmetric, min/max calibration):
  QuantizeLinear once per tensor, then one DequantizeLinear per reader (ONNX Runtime's
  EnsureUniqueDQForNodeUnit), so that each reader is a node unit of its own (--shared-dq: one
  DequantizeLinear for all readers, as ONNX Runtime's quantizer writes it by default);
- a Relu or Clip that is the only reader of the op's result stays between the op and the
  QuantizeLinear, which quantizes its output instead (ONNX Runtime's removable activations);
- everything else (Add, pooling, Flatten) computes in float on dequantized values and is
  quantized again where a quantized op reads it;
- --format qoperator: each convolution unit (DQ, DQ, [DQ bias] -> Conv [-> Relu] -> Q) becomes one
  QLinearConv, as ONNX Runtime's QOperator format writes it (a Relu only where the result's zero
  point is 0, which saturation then implements); Gemm, Add and pooling stay in QDQ form.

Calibration: the tensors to quantize are made graph outputs of a copy of the model, which
`tessera run` executes (ref + onednn, roofline plan) on N seeded standard-normal inputs (or the
given .npy files: a file may stack K samples along axis 0, as tessera's --calibration reads it,
one run each); each tensor's range is [min(0, min), max(0, max)] over all runs.

Exit status 2 with one line on stderr for bad input (unreadable model, a model without weight
data, a failing calibration run).
"""
import argparse
import copy
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

QUANTIZED_OPS = ("Conv", "Gemm", "MatMul")


def fail(message):
    print(f"quantize_qdq.py: {message}", file=sys.stderr)
    sys.exit(2)


def weight_axis(node):
    """The axis of a quantized op's weight that holds its output channels."""
    if node.op_type == "Conv":
        return 0
    if node.op_type == "Gemm":
        trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
        return 0 if trans_b else 1
    return 1


def activation_params(lo, hi):
    """uint8 asymmetric scale and zero point for the range [lo, hi] widened to hold 0."""
    lo, hi = min(0.0, float(lo)), max(0.0, float(hi))
    scale = np.float32((hi - lo) / 255.0) if hi > lo else np.float32(1.0)
    zp = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
    return scale, zp


def sole_activation(graph, consumers, tensor):
    """The Relu or Clip that is the only reader of `tensor` (not a graph output), or None."""
    outputs = {o.name for o in graph.output}
    readers = consumers.get(tensor, [])
    if len(readers) == 1 and tensor not in outputs and readers[0].op_type in ("Relu", "Clip"):
        return readers[0]
    return None


def plan_tensors(model):
    """The quantized op nodes and the activation tensors to quantize, in graph order."""
    g = model.graph
    inits = {i.name for i in g.initializer}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    ops, tensors = [], []

    def add(t):
        if t and t not in inits and t not in tensors:
            tensors.append(t)

    for n in g.node:
        if n.op_type not in QUANTIZED_OPS or len(n.input) < 2 or n.input[1] not in inits:
            continue
        if n.op_type == "Gemm" and any(a.name in ("transA",) and a.i for a in n.attribute):
            continue
        ops.append(n)
        add(n.input[0])
        act = sole_activation(g, consumers, n.output[0])
        add(act.output[0] if act is not None else n.output[0])
    return ops, tensors, consumers


def calibrate(model_path, model, tensors, args, workdir):
    """min/max per tensor over the calibration runs, through `tessera run`."""
    calib = onnx.load(model_path)
    present = {o.name for o in calib.graph.output}
    input_names = {i.name for i in calib.graph.input}
    for t in tensors:
        if t not in present and t not in input_names:
            calib.graph.output.append(helper.make_tensor_value_info(t, TensorProto.FLOAT, None))
    path = os.path.join(workdir, "calibration.onnx")
    onnx.save(calib, path)
    plan = os.path.join(workdir, "plan.json")
    r = subprocess.run([args.tessera, "partition", path, "--backends", "ref,onednn", "--cost", "roofline", "--plan", plan],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{model_path}: calibration partition failed: {r.stderr.strip()}")
    inits = {i.name for i in model.graph.initializer}
    graph_inputs = [i for i in model.graph.input if i.name not in inits]
    given = dict(kv.split("=", 1) for kv in args.input)
    # A given file may stack K samples along axis 0 (as tessera's --calibration reads it): one run each.
    samples = {}
    for i in graph_inputs:
        if i.name in given:
            shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
            data = np.load(given[i.name])
            k = data.shape[0] // shape[0] if shape and shape[0] > 0 and data.ndim == len(shape) and \
                data.shape[0] % shape[0] == 0 and list(data.shape[1:]) == shape[1:] else 1
            samples[i.name] = [data] if k == 1 else np.split(data, k)
    counts = {len(v) for v in samples.values()} - {1}
    if len(counts) > 1:
        fail(f"{model_path}: the --input files hold different numbers of samples: {sorted(counts)}")
    rng = np.random.default_rng(args.seed)
    ranges = {}
    for run in range(counts.pop() if counts else args.calibration):
        cmd = [args.tessera, "run", path, "--plan", plan, "--repeat", "1", "--output-dir", os.path.join(workdir, f"out{run}")]
        values = {}   # graph inputs' data: their ranges are read here
        for i in graph_inputs:
            if i.name in given:
                data = samples[i.name][run % len(samples[i.name])]
                f = os.path.join(workdir, f"given{len(values)}_{run}.npy")
                np.save(f, data)
                cmd += ["--input", f"{i.name}={f}"]
                values[i.name] = data
                continue
            shape = [d.dim_value for d in i.type.tensor_type.shape.dim]
            f = os.path.join(workdir, f"input{len(values)}_{run}.npy")
            values[i.name] = rng.standard_normal(shape).astype(np.float32)
            np.save(f, values[i.name])
            cmd += ["--input", f"{i.name}={f}"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"{model_path}: calibration run failed: {r.stderr.strip()}")
        for t in tensors:
            name = "".join(c if c.isalnum() or c in "._-" else "_" for c in t)
            v = values[t] if t in values else np.load(os.path.join(workdir, f"out{run}", name + ".npy"))
            lo, hi = ranges.get(t, (np.inf, -np.inf))
            ranges[t] = (min(lo, float(v.min())), max(hi, float(v.max())))
    return ranges


def quantize(model, ops, tensors, ranges, shared_dq=False):
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    outputs = {o.name for o in g.output}
    new_inits, quant_nodes = [], {}   # quant_nodes: node name -> nodes to put before it

    def init(name, array):
        new_inits.append(numpy_helper.from_array(array, name))
        return name

    # Activations: Q once, one DQ per reader. A graph output keeps its name on a DQ of its own.
    params = {t: activation_params(*ranges[t]) for t in tensors}
    readers = {}
    for n in g.node:
        for k, i in enumerate(n.input):
            if i in params:
                readers.setdefault(i, []).append((n, k))
    extra_after = {}   # tensor -> nodes that follow its producer
    dequantized_from = {}   # a reader's DQ output -> the tensor it dequantizes
    renamed = {}
    for t in tensors:
        s, z = params[t]
        base = t.replace("/", "_").strip("_") or "t"
        sn, zn = init(f"{base}_scale", np.array(s, np.float32)), init(f"{base}_zero_point", np.array(z, np.uint8))
        source = t
        if t in outputs:
            source = f"{base}_float"
            renamed[t] = source
        nodes = [helper.make_node("QuantizeLinear", [source, sn, zn], [f"{base}_quantized"], name=f"{base}_QuantizeLinear")]
        for j, (reader, k) in enumerate(readers.get(t, [])):
            dq = f"{base}_dequantized_{0 if shared_dq else j}"
            if j == 0 or not shared_dq:
                nodes.append(helper.make_node("DequantizeLinear", [f"{base}_quantized", sn, zn], [dq], name=f"{base}_DequantizeLinear_{j}"))
            reader.input[k] = dq
            dequantized_from[dq] = t
        if t in outputs:
            nodes.append(helper.make_node("DequantizeLinear", [f"{base}_quantized", sn, zn], [t], name=f"{base}_DequantizeLinear_out"))
        extra_after[t] = nodes

    # Weights and biases.
    for n in ops:
        w_name = n.input[1]
        w = numpy_helper.to_array(inits[w_name]).astype(np.float32)
        axis = weight_axis(n)
        moved = np.moveaxis(w, axis, 0).reshape(w.shape[axis], -1)
        w_scale = (np.abs(moved).max(axis=1) / 127.0).astype(np.float32)
        w_scale[w_scale == 0] = 1.0
        shape = [1] * w.ndim
        shape[axis] = -1
        w_q = np.clip(np.rint(w / w_scale.reshape(shape)), -127, 127).astype(np.int8)
        base = n.name or w_name
        wq = init(f"{base}_weight_quantized", w_q)
        ws = init(f"{base}_weight_scale", w_scale)
        wz = init(f"{base}_weight_zero_point", np.zeros(w_scale.shape, np.int8))
        before = [helper.make_node("DequantizeLinear", [wq, ws, wz], [f"{base}_weight_dequantized"], name=f"{base}_weight_DequantizeLinear",
                                   axis=axis)]
        n.input[1] = f"{base}_weight_dequantized"
        if len(n.input) > 2 and n.input[2] in inits:
            bias = numpy_helper.to_array(inits[n.input[2]]).astype(np.float32).reshape(-1)
            source = dequantized_from.get(n.input[0])
            if source is not None and bias.size == w_scale.size:
                b_scale = (params[source][0] * w_scale).astype(np.float32)
                b_q = np.rint(bias / b_scale).astype(np.int32)
                bq = init(f"{base}_bias_quantized", b_q)
                bs = init(f"{base}_bias_scale", b_scale)
                bz = init(f"{base}_bias_zero_point", np.zeros(b_scale.shape, np.int32))
                before.append(helper.make_node("DequantizeLinear", [bq, bs, bz], [f"{base}_bias_dequantized"],
                                               name=f"{base}_bias_DequantizeLinear", axis=0))
                n.input[2] = f"{base}_bias_dequantized"
        quant_nodes[n.name] = before

    # Rebuild the node list: weight DQs before their op, activation Q/DQs after the producer
    # (graph inputs: first).
    producers = {o: n for n in g.node for o in n.output}
    nodes = []
    for t in tensors:
        if t not in producers:
            nodes.extend(extra_after[t])
    for n in list(g.node):
        nodes.extend(quant_nodes.get(n.name, []))
        originals = list(n.output)
        for k, o in enumerate(n.output):
            if o in renamed:
                n.output[k] = renamed[o]
        nodes.append(n)
        for o in originals:
            if o in extra_after:
                nodes.extend(extra_after[o])
    nodes = [copy.deepcopy(n) for n in nodes]
    used = {i for n in nodes for i in n.input}
    keep = [i for i in g.initializer if i.name in used]
    del g.node[:]
    g.node.extend(nodes)
    del g.initializer[:]
    g.initializer.extend(keep + new_inits)
    # Value infos of the float tensors no longer describe these names; ONNX infers them again.
    del g.value_info[:]
    return model


def to_qoperator(model):
    """Each QDQ convolution unit as one QLinearConv (ONNX Runtime's QOperator format):
    DQ(x), DQ(w), [DQ(b int32)] -> Conv [-> Relu] -> Q becomes QLinearConv(x_q, ..., b_q). A Relu
    goes only where the result is uint8 with zero point 0 (saturation at 0 is then the Relu).
    Everything else (Gemm, Add, pooling) stays in QDQ form."""
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    producers = {o: n.name for n in g.node for o in n.output}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n.name)
    nodes = {n.name: n for n in g.node}
    graph_outputs = {o.name for o in g.output}

    def only_reader(tensor):
        readers = consumers.get(tensor, [])
        return nodes[readers[0]] if len(readers) == 1 and tensor not in graph_outputs else None

    def produced_by(tensor, op):
        n = nodes.get(producers.get(tensor, ""))
        return n if n is not None and n.op_type == op else None

    drop, replace = set(), {}
    for n in g.node:
        if n.op_type != "Conv":
            continue
        dx, dw = produced_by(n.input[0], "DequantizeLinear"), produced_by(n.input[1], "DequantizeLinear")
        has_bias = len(n.input) > 2 and n.input[2]
        db = produced_by(n.input[2], "DequantizeLinear") if has_bias else None
        if dx is None or dw is None or (has_bias and db is None) or only_reader(n.input[0]) is None:
            continue
        q, relu = only_reader(n.output[0]), None
        if q is not None and q.op_type == "Relu":
            relu, q = q, only_reader(q.output[0])
        if q is None or q.op_type != "QuantizeLinear" or len(q.input) < 3:
            continue
        if relu is not None:
            zp = numpy_helper.to_array(inits[q.input[2]])
            if zp.dtype != np.uint8 or zp.any():
                continue
        inputs = [dx.input[0], dx.input[1], dx.input[2], dw.input[0], dw.input[1], dw.input[2], q.input[1], q.input[2]]
        new = helper.make_node("QLinearConv", inputs + ([db.input[0]] if db is not None else []), [q.output[0]], name=n.name)
        new.attribute.extend(n.attribute)
        replace[n.name] = new
        drop.update(x.name for x in (dx, dw, db, relu, q) if x is not None)
    kept = [replace.get(n.name, n) for n in g.node if n.name not in drop]
    kept = [copy.deepcopy(n) for n in kept]
    del g.node[:]
    g.node.extend(kept)
    used = {i for n in g.node for i in n.input}
    keep = [copy.deepcopy(i) for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    return model, len(replace)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--calibration", type=int, default=4, help="calibration runs on seeded random inputs (default 4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--input", action="append", default=[], help="NAME=FILE.npy: a calibration input instead of random data")
    ap.add_argument("--tessera", default=os.environ.get("TESSERA", "build/tessera"))
    ap.add_argument("--format", choices=("qdq", "qoperator"), default="qdq",
                    help="qoperator: each convolution unit as one QLinearConv, the rest in QDQ form")
    ap.add_argument("--shared-dq", action="store_true",
                    help="one DequantizeLinear per tensor for all its readers (ONNX Runtime's quantizer without DedicatedQDQPair)")
    args = ap.parse_args()
    try:
        model = onnx.load(args.model)
    except Exception as e:  # noqa: BLE001 - any load failure is bad input
        fail(f"{args.model}: cannot read the model: {e}")
    if any(i.data_location == TensorProto.EXTERNAL or (not i.raw_data and not i.float_data and i.dims)
           for i in model.graph.initializer if i.data_type == TensorProto.FLOAT):
        fail(f"{args.model}: weights without data (a shape-only model); export one with scripts/export_models.py --out DIR")
    if model.opset_import[0].version < 13:
        fail(f"{args.model}: opset {model.opset_import[0].version}; per-channel DequantizeLinear needs opset 13")
    for k, n in enumerate(model.graph.node):   # names key the rewrite
        n.name = n.name or f"{n.op_type}_{k}"
    ops, tensors, _ = plan_tensors(model)
    if not ops:
        fail(f"{args.model}: no Conv, Gemm or MatMul with a constant weight to quantize")
    with tempfile.TemporaryDirectory(prefix="quantize_qdq_") as d:
        ranges = calibrate(args.model, model, tensors, args, d)
    if args.format == "qoperator" and args.shared_dq:
        fail("--format qoperator takes one DequantizeLinear per reader (no --shared-dq)")
    q = quantize(model, ops, tensors, ranges, args.shared_dq)
    converted = 0
    if args.format == "qoperator":
        q, converted = to_qoperator(q)
    onnx.checker.check_model(q)
    onnx.save(q, args.out)
    print(f"wrote {args.out}: {len(ops)} quantized ops ({converted} as QLinearConv), {len(tensors)} quantized activations")


if __name__ == "__main__":
    main()
