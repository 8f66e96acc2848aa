#!/usr/bin/python3
"""Exports models with dynamic axes, as people export them, for shape-range plans (docs/deploy.md).

- bert_dynamic.onnx: a BERT-style encoder (the bundled bert_encoder's layers, written with
  x.shape so that torch exports Shape/Gather chains) with input hidden states [batch, seq, hidden]
  and dynamic_axes {0: batch, 1: seq}.
- resnet18_dynamic.onnx: torchvision's ResNet-18 with a dynamic batch axis, its images
  --image-size square (default 224).

Usage: scripts/export_dynamic.py OUT_DIR [--hidden H] [--layers L] [--image-size S] [--only bert|cnn]
Weights are seeded (torch.manual_seed(0)) and stored inside the .onnx file.
"""
import argparse
import io
import os

import onnx
import torch
import torch.nn as nn

OPSET = 13
MAX_IR_VERSION = 8   # Debian's libonnx reads IR <= 8


class EncoderLayer(nn.Module):
    """One post-LayerNorm BERT encoder layer; its reshapes read the input's shape."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.hidden, self.heads, self.head_dim = hidden, heads, hidden // heads
        self.q, self.k, self.v, self.out = (nn.Linear(hidden, hidden) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.ffn_in, self.ffn_out = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
        self.gelu = nn.GELU()
        self.scale = 1.0 / float(self.head_dim) ** 0.5

    def split_heads(self, t):
        b, s = t.shape[0], t.shape[1]
        return t.reshape(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x):
        b, s = x.shape[0], x.shape[1]
        q, k, v = self.split_heads(self.q(x)), self.split_heads(self.k(x)), self.split_heads(self.v(x))
        probs = torch.softmax(torch.matmul(q, k.transpose(2, 3)) * self.scale, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, self.hidden)
        x = self.ln1(x + self.out(ctx))
        return self.ln2(x + self.ffn_out(self.gelu(self.ffn_in(x))))


class BertEncoder(nn.Module):
    def __init__(self, layers, hidden, heads, ffn):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(hidden, heads, ffn) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def export(model, dummy, axes, path):
    model.eval()
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(model, (dummy,), buf, opset_version=OPSET, do_constant_folding=True,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": axes, "output": axes})
    proto = onnx.load_model_from_string(buf.getvalue())
    proto.ir_version = min(proto.ir_version, MAX_IR_VERSION)
    onnx.checker.check_model(proto)
    onnx.save_model(proto, path)
    print("wrote", path)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--image-size", type=int, default=224)
    p.add_argument("--only", choices=["bert", "cnn"])
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.only in (None, "bert"):
        torch.manual_seed(0)
        bert = BertEncoder(a.layers, a.hidden, max(1, a.hidden // 64), 4 * a.hidden)
        export(bert, torch.randn(2, 16, a.hidden), {0: "batch", 1: "seq"}, os.path.join(a.out, "bert_dynamic.onnx"))
    if a.only in (None, "cnn"):
        import torchvision
        torch.manual_seed(0)
        cnn = torchvision.models.resnet18(weights=None)
        export(cnn, torch.randn(2, 3, a.image_size, a.image_size), {0: "batch"}, os.path.join(a.out, "resnet18_dynamic.onnx"))


if __name__ == "__main__":
    main()
