#!/usr/bin/python3
"""Exports tessera's bundled ONNX models into data/models/.

Run with Debian's python (python3-onnx, python3-torch, python3-torchvision):

    /usr/bin/python3 scripts/export_models.py [--only NAME ...] [--out DIR]

Each model is written as a graph file `<name>.onnx` (tracked, small) plus one external-data file
`<name>.weights` (git-ignored) holding every initializer of 1 KiB or more. A clean clone has the
graphs without the weights: tessera then treats those initializers as shape-only constants. Running
this script regenerates the weights (and byte-identical graphs).

Beside each model it writes PyTorch's reference for numerics tests (git-ignored, like the weights
they belong to): `reference/<name>.input.npy` (the export's random input), `reference/<name>.output.npy`
(the PyTorch model's output on it, in eval mode) and `reference/<name>.json` (the SHA-256 of the
weights file they were computed with, so a test can tell references from other weights apart).

All models: opset 13, batch 1, static shapes, constant folding, IR version <= 8 (what libonnx 1.12
reads), random weights from torch.manual_seed(0) (there is no network for pretrained weights).
"""

import argparse
import collections
import hashlib
import io
import json
import os
import sys

import numpy as np
import onnx
import onnx.checker
import onnx.shape_inference
import torch
import torch.nn as nn
import torchvision

OPSET = 13
MAX_IR_VERSION = 8  # libonnx 1.12 reads IR <= 8
EXTERNAL_THRESHOLD = 1024  # bytes; smaller tensors stay inline in the .onnx file

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO, "data", "models")


class EncoderLayer(nn.Module):
    """One post-LayerNorm BERT encoder layer, written out op by op so the export is plain ONNX.

    Shapes are Python ints (not x.shape) so the exported graph has constant Reshape targets and no
    Shape/Gather chains.
    """

    def __init__(self, seq, hidden, heads, ffn):
        super().__init__()
        self.seq, self.hidden, self.heads, self.head_dim = seq, hidden, heads, hidden // heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden)
        self.ffn_in = nn.Linear(hidden, ffn)
        self.gelu = nn.GELU()  # erf form: exports Div, Erf, Add, Mul, Mul
        self.ffn_out = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.scale = 1.0 / float(self.head_dim) ** 0.5

    def split_heads(self, t):
        # [1, seq, hidden] -> [1, heads, seq, head_dim]
        return t.reshape(1, self.seq, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        q = self.split_heads(self.q(x))
        k = self.split_heads(self.k(x))
        v = self.split_heads(self.v(x))
        scores = torch.matmul(q, k.transpose(2, 3)) * self.scale
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(1, self.seq, self.hidden)
        x = self.ln1(x + self.out(ctx))
        h = self.ffn_out(self.gelu(self.ffn_in(x)))
        return self.ln2(x + h)


class BertEncoder(nn.Module):
    """A BERT-style encoder without embeddings: input hidden states [1, seq, hidden]."""

    def __init__(self, layers, seq=128, hidden=256, heads=4, ffn=1024):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(seq, hidden, heads, ffn) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def torchvision_model(name, size=224):
    def build():
        model = getattr(torchvision.models, name)(weights=None)
        # torchvision initializes convolutions with kaiming fan_out, and PyTorch counts a depthwise
        # conv's fan_out as out_channels * k * k, ignoring groups: its weights come out ~sqrt(C)
        # too small and mobilenet_v2's activations shrink to ~1e-9 by the output, which makes
        # numerical checks meaningless. Re-initialize grouped convs by their true fan-in.
        for m in model.modules():
            if isinstance(m, nn.Conv2d) and m.groups > 1:
                nn.init.kaiming_normal_(m.weight, mode="fan_in", nonlinearity="relu")
        return model, (1, 3, size, size)
    return build


class SegmentationOut(nn.Module):
    """torchvision's segmentation models return a dict; the export wants the one tensor.

    Their heads upsample to `x.shape[-2:]`, which the tracer records as Shape/Slice/Concat chains
    feeding Resize. With a static input those sizes are constants: an eager run records them, and
    the traced run's interpolate calls take them as plain ints, in the same order.
    """

    def __init__(self, model, input_shape):
        super().__init__()
        self.model = model
        self.sizes = []
        with torch.no_grad():
            self._run(torch.zeros(*input_shape), record=True)

    def _run(self, x, record):
        interpolate = nn.functional.interpolate
        calls = iter(self.sizes)

        def static_interpolate(t, size=None, **kwargs):
            if size is not None:
                if record:
                    self.sizes.append([int(s) for s in size])
                size = self.sizes[-1] if record else next(calls)
            return interpolate(t, size=size, **kwargs)

        nn.functional.interpolate = static_interpolate
        try:
            return self.model(x)["out"]
        finally:
            nn.functional.interpolate = interpolate

    def forward(self, x):
        return self._run(x, record=False)


def lraspp_mobilenet_v3_large(size=224):
    def build():
        model = torchvision.models.segmentation.lraspp_mobilenet_v3_large(weights=None, weights_backbone=None)
        model.eval()
        return SegmentationOut(model, (1, 3, size, size)), (1, 3, size, size)
    return build


MODELS = collections.OrderedDict([
    ("resnet18", torchvision_model("resnet18")),
    ("mobilenet_v2", torchvision_model("mobilenet_v2")),
    ("squeezenet1_1", torchvision_model("squeezenet1_1")),
    ("bert_encoder", lambda: (BertEncoder(layers=2), (1, 128, 256))),
    ("bert_encoder_24", lambda: (BertEncoder(layers=24), (1, 128, 256))),
])

# Models for benchmarks beyond the bundled ones (scripts/bench_vs_ort.sh), exported only when
# named with --only: torch's own TransformerEncoder and TransformerDecoder (what users export, unlike the
# op-by-op BERT above) and torchvision architectures outside the zoo, to check that speed-ups are general.
def transformer_encoder():
    # A ReLU torch does not recognise keeps eval mode off the fused fast path, which has no ONNX export.
    layer = nn.TransformerEncoderLayer(d_model=256, nhead=4, dim_feedforward=1024, batch_first=True,
                                       activation=lambda t: torch.relu(t))
    return nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False), (1, 128, 256)


class TransformerDecoder(nn.Module):
    """torch's nn.TransformerDecoder as a GPT-style decoder exports it: pre-LayerNorm layers, causal
    self-attention over the 64-token target, cross-attention over a 128-token memory (the second
    input, "memory"), erf-GELU feed-forward, a final LayerNorm. The causal mask is a buffer, so the
    export has it as a constant."""

    def __init__(self, layers=2, tgt=64, src=128, hidden=256, heads=4, ffn=1024):
        super().__init__()
        layer = nn.TransformerDecoderLayer(d_model=hidden, nhead=heads, dim_feedforward=ffn, batch_first=True,
                                           activation="gelu", norm_first=True, dropout=0.0)
        self.decoder = nn.TransformerDecoder(layer, num_layers=layers, norm=nn.LayerNorm(hidden))
        # nn.TransformerDecoder deep-copies one layer: without this every layer would hold the same
        # random weights, and a runtime's common-subexpression elimination would compute the
        # layers' identical cross-attention projections of the memory once, unlike a trained model.
        for m in self.decoder.layers.modules():
            reset = getattr(m, "_reset_parameters", None) or getattr(m, "reset_parameters", None)
            if reset is not None and m is not self.decoder.layers:
                reset()
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(tgt))
        self.memory_shape = (1, src, hidden)

    def forward(self, x, memory):
        return self.decoder(x, memory, tgt_mask=self.mask)


def transformer_decoder():
    model = TransformerDecoder()
    return model, {"input": (1, 64, 256), "memory": model.memory_shape}


class CausalDecoderLayer(nn.Module):
    """One pre-LayerNorm GPT-style decoder layer: causal self-attention (an additive upper-triangular
    mask of -1e4, a constant), tanh-GELU feed-forward. No cross-attention: a decoder-only stack."""

    def __init__(self, seq, hidden, heads, ffn):
        super().__init__()
        self.seq, self.hidden, self.heads, self.head_dim = seq, hidden, heads, hidden // heads
        self.ln1 = nn.LayerNorm(hidden)
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.out = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.ffn_in = nn.Linear(hidden, ffn)
        self.ffn_out = nn.Linear(ffn, hidden)
        self.register_buffer("mask", torch.triu(torch.full((seq, seq), -1e4), diagonal=1))
        self.scale = 1.0 / float(self.head_dim) ** 0.5

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).split(self.hidden, dim=-1)
        heads = lambda t: t.reshape(1, self.seq, self.heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(heads(q), heads(k).transpose(2, 3)) * self.scale + self.mask
        ctx = torch.matmul(torch.softmax(scores, dim=-1), heads(v))
        x = x + self.out(ctx.transpose(1, 2).reshape(1, self.seq, self.hidden))
        return x + self.ffn_out(nn.functional.gelu(self.ffn_in(self.ln2(x)), approximate="tanh"))


class CausalDecoder(nn.Module):
    """A GPT-style decoder stack on hidden states [1, seq, hidden], final LayerNorm, no embeddings."""

    def __init__(self, layers, seq, hidden, heads, ffn):
        super().__init__()
        self.layers = nn.ModuleList(CausalDecoderLayer(seq, hidden, heads, ffn) for _ in range(layers))
        self.ln = nn.LayerNorm(hidden)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.ln(x)


def vit_tiny():
    # torchvision's VisionTransformer at DeiT-tiny width (192 wide, 3 heads) with 6 of its 12
    # layers: torch's nn.MultiheadAttention as users export it. The fused eval fast path has no
    # ONNX export, so it is turned off for the export.
    model = torchvision.models.VisionTransformer(image_size=224, patch_size=16, num_layers=6, num_heads=3,
                                                 hidden_dim=192, mlp_dim=768)
    return model, (1, 3, 224, 224)


ZOO = collections.OrderedDict([
    ("transformer_encoder", transformer_encoder),
    ("transformer_decoder", transformer_decoder),
    ("efficientnet_b0", torchvision_model("efficientnet_b0")),
    ("shufflenet_v2_x1_0", torchvision_model("shufflenet_v2_x1_0")),
    ("regnet_y_400mf", torchvision_model("regnet_y_400mf")),
    ("resnet34", torchvision_model("resnet34")),
    ("googlenet", torchvision_model("googlenet")),
    ("densenet121", torchvision_model("densenet121")),
    ("mobilenet_v3_small", torchvision_model("mobilenet_v3_small")),
    ("efficientnet_b1", torchvision_model("efficientnet_b1")),
    ("efficientnet_v2_s", torchvision_model("efficientnet_v2_s")),
    # Architectures for scripts/profile_vs_ort.py's per-family profile: grouped 3x3 convs
    # (ResNeXt, 32 groups), 7x7 depthwise + LayerNorm (ConvNeXt), NAS blocks with 5x5 depthwise
    # (MNASNet), SE + HardSwish (MobileNetV3), a segmentation head with Resize (LRASPP). Input
    # sizes below 224 where the model is large, so that tuning over six backends stays short.
    ("resnext50_32x4d", torchvision_model("resnext50_32x4d", 128)),
    ("convnext_tiny", torchvision_model("convnext_tiny", 128)),
    ("mnasnet1_0", torchvision_model("mnasnet1_0")),
    ("mobilenet_v3_large", torchvision_model("mobilenet_v3_large")),
    ("lraspp_mobilenet_v3_large", lraspp_mobilenet_v3_large()),
    # Transformers outside the zoo: an image encoder (torchvision's ViT, MultiheadAttention) and a
    # decoder-only causal stack of other sizes than the zoo's encoders.
    ("vit_tiny", vit_tiny),
    ("gpt_decoder", lambda: (CausalDecoder(layers=4, seq=64, hidden=384, heads=6, ffn=1536), (1, 64, 384))),
])


def fold_trivial_nodes(graph):
    """Turns torch's leftovers into plain initializers, so every node is a real computation.

    - `Constant` nodes (Reshape targets, scalar operands, Clip bounds) become initializers.
    - `Identity(initializer)` nodes, which torch emits when it deduplicates equal initializers
      (random init makes many biases and LayerNorm scales equal), are bypassed: consumers read the
      initializer directly.
    """
    inits = {t.name for t in graph.initializer}
    outputs = {o.name for o in graph.output}
    rename = {}
    kept = []
    for node in graph.node:
        if node.op_type == "Constant" and len(node.attribute) == 1 and node.attribute[0].name == "value":
            tensor = onnx.TensorProto()
            tensor.CopyFrom(node.attribute[0].t)
            tensor.name = node.output[0]
            graph.initializer.append(tensor)
            inits.add(tensor.name)
        elif node.op_type == "Identity" and node.input[0] in inits and node.output[0] not in outputs:
            rename[node.output[0]] = node.input[0]
        else:
            kept.append(node)
    for node in kept:
        for i, name in enumerate(node.input):
            if name in rename:
                node.input[i] = rename[name]
    del graph.node[:]
    graph.node.extend(kept)
    # value_info for bypassed names would dangle; shape inference recomputes the rest.
    live = [vi for vi in graph.value_info if vi.name not in rename]
    del graph.value_info[:]
    graph.value_info.extend(live)


def fold_static_shapes(model):
    """Folds Shape -> Slice/Gather -> Concat chains on static shapes into initializers.

    torch exports `interpolate(x, size=...)` as a Resize whose sizes input concatenates the input's
    batch and channel dimensions, read at run time by Shape, with the spatial size. With static
    shapes that input is a constant, and only a constant one lets shape inference give the Resize's
    output a static shape.
    """
    from onnx import numpy_helper
    graph = model.graph
    while True:
        inferred = onnx.shape_inference.infer_shapes(model).graph
        shapes = {}
        for vi in list(inferred.value_info) + list(inferred.input) + list(inferred.output):
            dims = vi.type.tensor_type.shape.dim
            if all(d.HasField("dim_value") for d in dims):
                shapes[vi.name] = [d.dim_value for d in dims]
        consts = {t.name: numpy_helper.to_array(t) for t in graph.initializer}

        def value(node):
            ins = [consts.get(i) for i in node.input]
            if node.op_type == "Shape" and node.input[0] in shapes:
                return np.array(shapes[node.input[0]], dtype=np.int64)
            if any(x is None for x in ins):
                return None
            if node.op_type == "Slice" and ins[0].ndim == 1:
                steps = ins[4][0] if len(ins) > 4 else 1
                return ins[0][int(ins[1][0]):int(ins[2][0]):int(steps)]
            if node.op_type == "Concat":
                return np.concatenate(ins)
            if node.op_type == "Gather" and ins[0].ndim == 1:
                return np.take(ins[0], ins[1])
            # torch's expand(batch, -1, -1) (ViT's class token) records its target shape as
            # ConstantOfShape/Mul/Equal/Where over constants.
            if node.op_type == "ConstantOfShape":
                attr = [a for a in node.attribute if a.name == "value"]
                fill = numpy_helper.to_array(attr[0].t) if attr else np.zeros(1, np.float32)
                return np.full(tuple(ins[0]), fill.reshape(-1)[0], dtype=fill.dtype)
            if node.op_type in ("Mul", "Equal", "Where"):
                op = {"Mul": np.multiply, "Equal": np.equal, "Where": np.where}[node.op_type]
                return np.asarray(op(*ins))
            return None

        folded = False
        for node in list(graph.node):
            v = value(node)
            if v is not None:
                graph.initializer.append(numpy_helper.from_array(v, node.output[0]))
                graph.node.remove(node)
                folded = True
        if not folded:
            return


def export(name, out_dir):
    torch.manual_seed(0)  # per model, so each model's weights do not depend on which others ran
    model, input_shape = {**MODELS, **ZOO}[name]()
    model.eval()
    # One input "input", or several named ones ({name: shape}, the first "input").
    shapes = input_shape if isinstance(input_shape, dict) else {"input": input_shape}
    dummy = tuple(torch.randn(*shape) for shape in shapes.values())
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, dummy, buf, opset_version=OPSET, do_constant_folding=True,
                          input_names=list(shapes), output_names=["output"])
    proto = onnx.load_model_from_string(buf.getvalue())
    if proto.ir_version > MAX_IR_VERSION:
        proto.ir_version = MAX_IR_VERSION
    proto.graph.name = name
    fold_trivial_nodes(proto.graph)
    fold_static_shapes(proto)

    onnx_path = os.path.join(out_dir, name + ".onnx")
    weights_name = name + ".weights"
    weights_path = os.path.join(out_dir, weights_name)
    # onnx appends to an existing external-data file: start from nothing so reruns are identical.
    for path in (onnx_path, weights_path):
        if os.path.exists(path):
            os.remove(path)
    onnx.save_model(proto, onnx_path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location=weights_name, size_threshold=EXTERNAL_THRESHOLD)
    write_reference(name, model, dict(zip(shapes, dummy)), weights_path, out_dir)
    return onnx_path, weights_path


def write_reference(name, model, inputs, weights_path, out_dir):
    """PyTorch's output on the export's input, for tests/python/test_pytorch_numerics.py (a second
    input, as the decoder's memory, goes to `<name>.<input name>.npy`)."""
    ref_dir = os.path.join(out_dir, "reference")
    os.makedirs(ref_dir, exist_ok=True)
    with torch.no_grad():
        output = model(*inputs.values())
    for input_name, tensor in inputs.items():
        np.save(os.path.join(ref_dir, name + "." + input_name + ".npy"), tensor.numpy().astype(np.float32))
    np.save(os.path.join(ref_dir, name + ".output.npy"), output.numpy().astype(np.float32))
    with open(weights_path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(ref_dir, name + ".json"), "w") as f:
        json.dump({"model": name + ".onnx", "input": "input", "output": "output",
                   "weights_sha256": digest, "torch": torch.__version__}, f, indent=1)
        f.write("\n")


def verify(onnx_path, weights_path):
    onnx.checker.check_model(onnx_path)  # path form: follows the external data
    graph_only = onnx.load_model(onnx_path, load_external_data=False)
    inferred = onnx.shape_inference.infer_shapes(graph_only, check_type=True, strict_mode=True)
    g = inferred.graph
    known = {vi.name: vi for vi in list(g.value_info) + list(g.input) + list(g.output)}
    known.update({t.name: None for t in g.initializer})
    for node in g.node:
        for out in node.output:
            vi = known.get(out)
            if vi is None:
                raise RuntimeError("%s: no inferred type for %s (node %s)" % (onnx_path, out, node.name))
            dims = vi.type.tensor_type.shape.dim
            if any(not d.HasField("dim_value") for d in dims):
                raise RuntimeError("%s: %s has a non-static shape" % (onnx_path, out))

    def shape(vi):
        return "x".join(str(d.dim_value) for d in vi.type.tensor_type.shape.dim)

    params = 0
    for t in g.initializer:
        n = 1
        for d in t.dims:
            n *= d
        params += n
    hist = collections.Counter(n.op_type for n in g.node)
    opset = max(o.version for o in graph_only.opset_import if o.domain in ("", "ai.onnx"))
    print("%s: ir %d, opset %d, %d nodes, %d initializers, %d params, .onnx %d B, .weights %d B" % (
        os.path.relpath(onnx_path, REPO), graph_only.ir_version, opset, len(g.node),
        len(g.initializer), params, os.path.getsize(onnx_path),
        os.path.getsize(weights_path) if os.path.exists(weights_path) else 0))
    print("  inputs: %s" % ", ".join("%s %s" % (i.name, shape(i)) for i in g.input))
    print("  outputs: %s" % ", ".join("%s %s" % (o.name, shape(o)) for o in g.output))
    print("  ops: %s" % ", ".join("%s %d" % kv for kv in sorted(hist.items())))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=list(MODELS) + list(ZOO),
                        help="export only these models (the benchmark zoo's only when named)")
    parser.add_argument("--out", default=DEFAULT_OUT, help="output folder (default data/models)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    for name in args.only or list(MODELS):
        verify(*export(name, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
