#!/usr/bin/python3
"""Small models of each kind people ship, with ONNX Runtime's outputs on fixed inputs recorded.

    /usr/bin/python3 scripts/shipped_models.py [--out tests/data/shipped_models] [--tessera build/tessera]
                                             [--ort bench/peer/ort_bench.js]

Writes OUT/<model>.onnx, OUT/<model>.<input>.npy (seeded inputs), OUT/<model>.ort.<output>.npy
(ONNX Runtime's outputs: onnxruntime-node, CPU provider, all graph optimizations, 1 thread; install
it with scripts/fetch_onnxruntime.sh) and OUT/manifest.json, which tests/python/test_shipped_vs_ort.py
reads: per model its kind, its files and, per output, how it is compared with ORT's:
- "rel_l2": relative L2 error at most "max" (fp32 models 1e-4, fp16 models 1e-2);
- "steps": |tessera - ORT| at most "max" quantization steps of size "step" (the output's
  DequantizeLinear scale) per element, for outputs that are dequantized quantized values.

The models (every weight drawn from a fixed seed; the torch ones traced by torch.onnx.export):
- convnet_fp32: Conv/BatchNorm/Relu/residual Add/MaxPool/GlobalAveragePool/Gemm, opset 13;
- convnet_fp16: the same net as exporters write it after half(): f16 weights and tensors between a
  Cast of the f32 input and a Cast of the output;
- convnet_qdq, convnet_qoperator: convnet_fp32 through scripts/quantize_qdq.py (static QDQ with
  per-channel int8 weights; QOperator with QLinearConv), calibrated on seeded inputs;
- dynamic: as ONNX Runtime's dynamic quantization writes Conv and MatMul: DynamicQuantizeLinear,
  ConvInteger with u8 weights and MatMulInteger with s8 weights, Cast, Mul by the two scales, Add;
- contrib_qlinear: QuantizeLinear, QLinearConv, and ONNX Runtime's com.microsoft QLinearSigmoid,
  QLinearMul, QLinearAdd, QLinearGlobalAveragePool, then DynamicQuantizeMatMul;
- vit: a ViT exported with a symbolic batch size (patch Conv, class token expanded to the batch
  size taken from Shape, attention reshapes computed from Shape/Gather/Concat), opset 13;
- swin: Swin-style window attention whose Pad amounts, window reshapes and cyclic shift (Roll as
  Slice/Concat) are computed in-graph from Shape.

The quantized models' calibration runs `tessera run`; the recorded ORT outputs are what the test
compares with, so the models are written once and committed with them (rerunning this script
rewrites all of them consistently).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(message):
    print(f"shipped_models.py: {message}", file=sys.stderr)
    sys.exit(2)


# ---- torch nets -------------------------------------------------------------------------------

class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        nn = torch.nn
        self.c1, self.b1 = nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16)
        self.c2, self.b2 = nn.Conv2d(16, 16, 3, padding=1), nn.BatchNorm2d(16)
        self.c3 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.fc = nn.Linear(32, 10)
        for bn in (self.b1, self.b2):
            bn.running_mean.uniform_(-0.2, 0.2)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.2, 0.2)

    def forward(self, x):
        a = torch.relu(self.b1(self.c1(x)))
        b = torch.relu(self.b2(self.c2(a)) + a)
        c = torch.relu(self.c3(torch.nn.functional.max_pool2d(b, 2)))
        return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(c, 1), 1))


class Attention(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.qkv, self.proj = torch.nn.Linear(dim, 3 * dim), torch.nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape   # traced: Shape/Gather, the reshapes below Concat them
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = ((q @ k.transpose(-2, -1)) * self.scale).softmax(-1)
        return self.proj((a @ v).transpose(1, 2).reshape(B, N, C))


class Mlp(torch.nn.Sequential):
    def __init__(self, dim):
        super().__init__(torch.nn.Linear(dim, 2 * dim), torch.nn.GELU(), torch.nn.Linear(2 * dim, dim))


class ViTBlock(torch.nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.n1, self.attn, self.n2, self.mlp = torch.nn.LayerNorm(dim), Attention(dim, heads), torch.nn.LayerNorm(dim), Mlp(dim)

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        return x + self.mlp(self.n2(x))


class ViT(torch.nn.Module):
    def __init__(self, dim=32, heads=2, depth=2):
        super().__init__()
        self.patch = torch.nn.Conv2d(3, dim, 4, stride=4)
        self.cls = torch.nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = torch.nn.Parameter(torch.randn(1, 65, dim) * 0.02)
        self.blocks = torch.nn.Sequential(*[ViTBlock(dim, heads) for _ in range(depth)])
        self.norm, self.head = torch.nn.LayerNorm(dim), torch.nn.Linear(dim, 10)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.head(self.norm(self.blocks(x))[:, 0])


class SwinBlock(torch.nn.Module):
    def __init__(self, dim, heads, window, shift):
        super().__init__()
        self.window, self.shift = window, shift
        self.n1, self.attn, self.n2, self.mlp = torch.nn.LayerNorm(dim), Attention(dim, heads), torch.nn.LayerNorm(dim), Mlp(dim)

    def forward(self, x):
        B, H, W, C = x.shape
        ws = self.window
        y = self.n1(x)
        pad_b, pad_r = (ws - H % ws) % ws, (ws - W % ws) % ws   # traced: Mod/Sub from Shape, into Pad
        y = torch.nn.functional.pad(y, (0, 0, 0, pad_r, 0, pad_b))
        _, Hp, Wp, _ = y.shape
        if self.shift:
            y = torch.roll(y, shifts=(-self.shift, -self.shift), dims=(1, 2))
        w = y.view(B, Hp // ws, ws, Wp // ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, ws * ws, C)
        w = self.attn(w)
        y = w.view(B, Hp // ws, Wp // ws, ws, ws, C).permute(0, 1, 3, 2, 4, 5).reshape(B, Hp, Wp, C)
        if self.shift:
            y = torch.roll(y, shifts=(self.shift, self.shift), dims=(1, 2))
        x = x + y[:, :H, :W, :]
        return x + self.mlp(self.n2(x))


class Swin(torch.nn.Module):
    def __init__(self, dim=32, heads=2, window=4):
        super().__init__()
        self.patch = torch.nn.Conv2d(3, dim, 4, stride=4)
        self.blocks = torch.nn.Sequential(SwinBlock(dim, heads, window, 0), SwinBlock(dim, heads, window, window // 2))
        self.norm, self.head = torch.nn.LayerNorm(dim), torch.nn.Linear(dim, 10)

    def forward(self, x):
        x = self.blocks(self.patch(x).permute(0, 2, 3, 1))
        return self.head(self.norm(x).mean(dim=(1, 2)))


def export(net, shape, path, seed, dynamic_batch=False):
    """net traced for an input of `shape` (its batch dimension symbolic with dynamic_batch)."""
    torch.manual_seed(seed)
    net = net().eval()
    axes = {"x": {0: "batch"}, "y": {0: "batch"}} if dynamic_batch else None
    with torch.no_grad():
        torch.onnx.export(net, torch.zeros(*shape), path, input_names=["x"], output_names=["y"], opset_version=13,
                          do_constant_folding=True, dynamic_axes=axes)
    return onnx.load(path)


# ---- conversions and hand-built graphs ------------------------------------------------------

def to_float16(model):
    """model with f16 initializers and tensors, a Cast of the f32 input and a Cast of the f32 output."""
    g = model.graph
    for i, init in enumerate(g.initializer):
        if init.data_type == TensorProto.FLOAT:
            g.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16), init.name))
    for n in g.node:
        for k, name in enumerate(n.input):
            if name == "x":
                n.input[k] = "x_f16"
        for k, name in enumerate(n.output):
            if name == "y":
                n.output[k] = "y_f16"
    g.node.insert(0, helper.make_node("Cast", ["x"], ["x_f16"], name="cast_in", to=TensorProto.FLOAT16))
    g.node.append(helper.make_node("Cast", ["y_f16"], ["y"], name="cast_out", to=TensorProto.FLOAT))
    del g.value_info[:]
    onnx.checker.check_model(model, full_check=True)
    return model


def graph_model(nodes, inputs, outputs, inits, contrib=False):
    g = helper.make_graph(nodes, "shipped", inputs, outputs, [numpy_helper.from_array(v, k) for k, v in inits.items()])
    opsets = [helper.make_opsetid("", 13)] + ([helper.make_opsetid("com.microsoft", 1)] if contrib else [])
    m = helper.make_model(g, opset_imports=opsets)
    m.ir_version = 8
    if not contrib:
        onnx.checker.check_model(m, full_check=True)
    return m


def f32(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def dynamic(rng):
    """Conv and MatMul as ONNX Runtime's quantize_dynamic writes them (u8 Conv weights, s8 MatMul weights)."""
    inits = {"w": rng.integers(0, 256, (8, 3, 3, 3)).astype(np.uint8), "w_zp": np.uint8(131),
             "w_s": np.float32(0.004), "bias": rng.uniform(-0.3, 0.3, (1, 8, 1, 1)).astype(np.float32),
             "shape": np.array([1, 8 * 8 * 8], np.int64),
             "b": rng.integers(-127, 128, (512, 10)).astype(np.int8), "b_zp": np.int8(0), "b_s": np.float32(0.003),
             "fc_bias": rng.uniform(-0.3, 0.3, 10).astype(np.float32)}
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xzp"], name="x_quant"),
             helper.make_node("ConvInteger", ["xq", "w", "xzp", "w_zp"], ["acc"], name="conv", pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Cast", ["acc"], ["acc_f"], name="cast", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["xs", "w_s"], ["cs"], name="conv_scale"),
             helper.make_node("Mul", ["acc_f", "cs"], ["c"], name="conv_rescale"),
             helper.make_node("Add", ["c", "bias"], ["cb"], name="conv_bias"),
             helper.make_node("Relu", ["cb"], ["r"], name="relu"),
             helper.make_node("Reshape", ["r", "shape"], ["f"], name="flatten"),
             helper.make_node("DynamicQuantizeLinear", ["f"], ["fq", "fs", "fzp"], name="f_quant"),
             helper.make_node("MatMulInteger", ["fq", "b", "fzp", "b_zp"], ["macc"], name="matmul"),
             helper.make_node("Cast", ["macc"], ["macc_f"], name="mcast", to=TensorProto.FLOAT),
             helper.make_node("Mul", ["fs", "b_s"], ["ms"], name="matmul_scale"),
             helper.make_node("Mul", ["macc_f", "ms"], ["m"], name="matmul_rescale"),
             helper.make_node("Add", ["m", "fc_bias"], ["y"], name="fc_bias_add")]
    return graph_model(nodes, [f32("x", [1, 3, 16, 16])], [f32("y", [1, 10])], inits), {"y": None}


def contrib_qlinear(rng):
    """QLinearConv then ONNX Runtime's com.microsoft quantized element-wise ops, pooling and DynamicQuantizeMatMul."""
    ms = lambda op, ins, out, name, **a: helper.make_node(op, ins, [out], name=name, domain="com.microsoft", **a)
    inits = {"x_s": np.float32(0.03), "x_z": np.uint8(128),
             "w": rng.integers(-127, 128, (8, 3, 3, 3)).astype(np.int8), "w_s": rng.uniform(0.002, 0.006, 8).astype(np.float32),
             "w_z": np.zeros(8, np.int8), "bias": rng.integers(-3000, 3000, 8).astype(np.int32),
             "c_s": np.float32(0.05), "c_z": np.uint8(110), "g_s": np.float32(1.0 / 256), "g_z": np.uint8(0),
             "m_s": np.float32(0.02), "m_z": np.uint8(90), "a_s": np.float32(0.06), "a_z": np.uint8(100),
             "p_s": np.float32(0.04), "p_z": np.uint8(100), "shape": np.array([1, 8], np.int64),
             "b": rng.integers(-127, 128, (8, 6)).astype(np.int8), "b_s": np.float32(0.01), "b_z": np.int8(0),
             "fc_bias": rng.uniform(-0.2, 0.2, 6).astype(np.float32)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_s", "x_z"], ["xq"], name="x_quant"),
             helper.make_node("QLinearConv", ["xq", "x_s", "x_z", "w", "w_s", "w_z", "c_s", "c_z", "bias"], ["cq"],
                              name="qconv", pads=[1, 1, 1, 1]),
             ms("QLinearSigmoid", ["cq", "c_s", "c_z", "g_s", "g_z"], "gq", "qsigmoid"),
             ms("QLinearMul", ["cq", "c_s", "c_z", "gq", "g_s", "g_z", "m_s", "m_z"], "mq", "qmul"),
             ms("QLinearAdd", ["mq", "m_s", "m_z", "cq", "c_s", "c_z", "a_s", "a_z"], "aq", "qadd"),
             ms("QLinearGlobalAveragePool", ["aq", "a_s", "a_z", "p_s", "p_z"], "pq", "qgap", channels_last=0),
             helper.make_node("DequantizeLinear", ["pq", "p_s", "p_z"], ["pool"], name="pool_dequant"),
             helper.make_node("Reshape", ["pool", "shape"], ["flat"], name="flatten"),
             ms("DynamicQuantizeMatMul", ["flat", "b", "b_s", "b_z", "fc_bias"], "y", "dqmatmul")]
    m = graph_model(nodes, [f32("x", [1, 3, 12, 12])], [f32("pool", [1, 8, 1, 1]), f32("y", [1, 6])], inits, contrib=True)
    return m, {"pool": float(inits["p_s"]), "y": None}


# ---- recording ------------------------------------------------------------------------------

def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    return r.stdout


def quantized_steps(model):
    """Per graph output written by a per-tensor DequantizeLinear with a constant scale: that scale."""
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    steps = {}
    for n in model.graph.node:
        if n.op_type == "DequantizeLinear" and n.input[1] in inits and inits[n.input[1]].size == 1:
            steps[n.output[0]] = float(inits[n.input[1]])
    return {o.name: steps.get(o.name) for o in model.graph.output}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "shipped_models"))
    ap.add_argument("--tessera", default=os.environ.get("TESSERA", os.path.join(ROOT, "build", "tessera")))
    ap.add_argument("--ort", default=os.path.join(ROOT, "bench", "peer", "ort_bench.js"))
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rng = np.random.default_rng(36)
    out = lambda f: os.path.join(args.out, f)
    models = {}   # name -> (kind, outputs: name -> comparison)

    def rel(limit):
        return lambda m: {o.name: {"metric": "rel_l2", "max": limit} for o in m.graph.output}

    def quantized(m, steps=None):
        steps = steps if steps is not None else quantized_steps(m)
        return {o: ({"metric": "steps", "step": s, "max": 1} if s else {"metric": "rel_l2", "max": 1e-4})
                for o, s in steps.items()}

    fp32 = export(ConvNet, (1, 3, 32, 32), out("convnet_fp32.onnx"), 1)
    models["convnet_fp32"] = ("fp32", rel(1e-4)(fp32))
    onnx.save(to_float16(onnx.load(out("convnet_fp32.onnx"))), out("convnet_fp16.onnx"))
    models["convnet_fp16"] = ("fp16", rel(1e-2)(fp32))
    for fmt in ("qdq", "qoperator"):
        run([sys.executable, os.path.join(ROOT, "scripts", "quantize_qdq.py"), out("convnet_fp32.onnx"),
             out(f"convnet_{fmt}.onnx"), "--format", fmt, "--tessera", args.tessera, "--calibration", "4"])
        models[f"convnet_{fmt}"] = (f"static {fmt}", quantized(onnx.load(out(f"convnet_{fmt}.onnx"))))
    m, steps = dynamic(rng)
    onnx.save(m, out("dynamic.onnx"))
    models["dynamic"] = ("dynamic", quantized(m, steps))
    m, steps = contrib_qlinear(rng)
    onnx.save(m, out("contrib_qlinear.onnx"))
    models["contrib_qlinear"] = ("com.microsoft qlinear", quantized(m, steps))
    models["vit"] = ("fp32 in-graph shapes", rel(1e-4)(export(ViT, (1, 3, 32, 32), out("vit.onnx"), 2, True)))
    models["swin"] = ("fp32 in-graph shapes", rel(1e-4)(export(Swin, (1, 3, 28, 28), out("swin.onnx"), 3)))

    manifest = {"format": "tessera.shipped_models", "version": 1,
                "peer": "onnxruntime-node (CPU provider, graph optimizations all, 1 thread)", "models": []}
    for name, (kind, outputs) in models.items():
        m = onnx.load(out(f"{name}.onnx"))
        inputs = {}
        for i in m.graph.input:
            shape = [d.dim_value or 1 for d in i.type.tensor_type.shape.dim]   # a symbolic batch: 1
            inputs[i.name] = f"{name}.{i.name}.npy"
            np.save(out(inputs[i.name]), rng.standard_normal(shape).astype(np.float32))
        with tempfile.TemporaryDirectory(prefix="shipped_ort_") as d:
            cmd = ["node", args.ort, out(f"{name}.onnx"), "--runs", "1", "--warmup", "0", "--output-dir", d]
            for k, f in inputs.items():
                cmd += ["--input", f"{k}={out(f)}"]
            ort = json.loads(run(cmd))
            for o in outputs:
                os.replace(os.path.join(d, f"{o}.npy"), out(f"{name}.ort.{o}.npy"))
                outputs[o]["file"] = f"{name}.ort.{o}.npy"
        shape_ops = sum(n.op_type == "Shape" for n in m.graph.node)
        manifest["models"].append({"name": name, "kind": kind, "model": f"{name}.onnx", "inputs": inputs,
                                   "outputs": outputs, "shape_ops": shape_ops, "ort_version": ort["ort_version"]})
        print(f"{name}: {kind}, {len(m.graph.node)} nodes ({shape_ops} Shape), outputs {sorted(outputs)}")
    with open(out("manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
