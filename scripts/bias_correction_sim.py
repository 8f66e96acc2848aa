#!/usr/bin/env python3
"""What bias correction would buy int8 convolutions under an accuracy budget, simulated in PyTorch.

The model is rebuilt exactly as scripts/export_models.py exports it (torchvision, seed 0, batch
norms folded into the convolutions, as the ONNX export's constant folding does) and checked against
the exported reference output. Every Conv2d and Linear is then fake-quantized as tessera's
onednn_int8 quantizes it (docs/accuracy.md, "int8"): the source u8 per tensor over its calibrated
min/max widened to hold 0, the weights s8 per output channel with the least-squared-error clipping
ratio in {1, 0.98, ..., 0.60}, round half to even.

Bias correction: for each quantized layer alone (fp32 inputs, as tessera measures an anchor's
error), the mean over the calibration data of (int8 output - fp32 output) per output channel is
subtracted from the layer's bias, where the output has at least --min-positions positions per
channel (a classifier's one row would fit the calibration sample's own error, not a bias). Reported, before and after, on the calibration input (seed-7
standard normal) and the held-out reference input:
  - each layer's end-to-end error (it alone int8, the rest fp32; relative L2 at the output);
  - the whole model in int8;
  - how many layers fit the budget's proxy (errors added in quadrature, smallest first, within
    0.9 E: the verification target when int8 is offered).

  /usr/bin/python3 scripts/bias_correction_sim.py MODELS_DIR [--model resnet18] [--budget 0.01]
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.fusion import fuse_conv_bn_eval

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models  # noqa: E402


def fold_batch_norms(module):
    names = list(module._modules)
    for i, name in enumerate(names):
        child = module._modules[name]
        if isinstance(child, nn.Conv2d) and i + 1 < len(names) and isinstance(module._modules[names[i + 1]], nn.BatchNorm2d):
            module._modules[name] = fuse_conv_bn_eval(child, module._modules[names[i + 1]])
            module._modules[names[i + 1]] = nn.Identity()
        else:
            fold_batch_norms(child)
    # torchvision's BasicBlock names them conv1/bn1, conv2/bn2 and downsample as a Sequential.
    for c, b in (("conv1", "bn1"), ("conv2", "bn2"), ("conv3", "bn3")):
        if isinstance(getattr(module, c, None), nn.Conv2d) and isinstance(getattr(module, b, None), nn.BatchNorm2d):
            setattr(module, c, fuse_conv_bn_eval(getattr(module, c), getattr(module, b)))
            setattr(module, b, nn.Identity())


def folded_model(name):
    """(model, input shape) of export_models' `name` as the export builds it (torch.manual_seed(0)),
    in eval mode, its BatchNorms folded into the convolutions before them."""
    torch.manual_seed(0)
    model, shape = {**export_models.MODELS, **export_models.ZOO}[name]()
    model.eval()
    fold_batch_norms(model)
    return model, shape


def quant_weight(w):
    """s8 per output channel, the least-squared-error ratio (onednn_weight_quant.h)."""
    flat = w.reshape(w.shape[0], -1)
    m = flat.abs().amax(dim=1, keepdim=True).clamp_min(1e-30)
    best, best_err = None, None
    for k in range(21):
        s = (1.0 - 0.02 * k) * m / 127.0
        q = torch.clamp(torch.round(flat / s), -127, 127) * s
        err = ((q - flat) ** 2).sum(dim=1, keepdim=True)
        if best is None:
            best, best_err = q, err
        else:
            better = err < best_err
            best = torch.where(better, q, best)
            best_err = torch.where(better, err, best_err)
    return best.reshape(w.shape)


def quant_source(x, lo, hi):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    s = (hi - lo) / 255.0
    zp = float(np.clip(np.round(-lo / s), 0, 255))
    return (torch.clamp(torch.round(x / s) + zp, 0, 255) - zp) * s


class Int8(nn.Module):
    """A Conv2d/Linear whose forward is int8 when `on`, with an optional per-channel bias shift."""

    def __init__(self, layer):
        super().__init__()
        self.layer, self.on, self.range, self.shift = layer, False, None, None
        self.qweight = quant_weight(layer.weight.detach())
        self.record = None

    def fp32(self, x):
        return self.layer(x)

    def int8(self, x):
        xq = quant_source(x, *self.range)
        if isinstance(self.layer, nn.Conv2d):
            y = nn.functional.conv2d(xq, self.qweight, self.layer.bias, self.layer.stride, self.layer.padding,
                                     self.layer.dilation, self.layer.groups)
            shift = None if self.shift is None else self.shift.view(1, -1, 1, 1)
        else:
            y = nn.functional.linear(xq, self.qweight, self.layer.bias)
            shift = None if self.shift is None else self.shift.view(1, -1)
        return y if shift is None else y - shift

    def forward(self, x):
        if self.record is not None:
            self.record.append(x.detach())
        return self.int8(x) if self.on else self.fp32(x)


def wrap(module, out, wrapper=None):
    """Replaces every Conv2d and Linear under module by wrapper(layer) (Int8 by default), in place;
    appends the wrappers to out in module order."""
    wrapper = wrapper or Int8
    for name, child in module.named_children():
        if isinstance(child, (nn.Conv2d, nn.Linear)):
            w = wrapper(child)
            setattr(module, name, w)
            out.append(w)
        else:
            wrap(child, out, wrapper)


def rel(a, b):
    return float(torch.linalg.norm(a - b) / torch.linalg.norm(b))


def fit_count(errors, budget):
    total, n = 0.0, 0
    for e in sorted(errors):
        if np.sqrt(total + e * e) > 0.9 * budget:
            break
        total += e * e
        n += 1
    return n


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models_dir")
    p.add_argument("--model", default="resnet18")
    p.add_argument("--budget", type=float, default=0.01)
    p.add_argument("--shrink", action="store_true", help="shrink each shift by its noise (tessera's rule)")
    p.add_argument("--min-positions", type=int, default=16,
                   help="correct only layers whose output has at least this many positions per channel (tessera's rule)")
    a = p.parse_args()
    model, shape = folded_model(a.model)
    ref_in = torch.from_numpy(np.load(os.path.join(a.models_dir, "reference", a.model + ".input.npy")))
    ref_out = torch.from_numpy(np.load(os.path.join(a.models_dir, "reference", a.model + ".output.npy")))
    cal = torch.from_numpy(np.random.default_rng(7).standard_normal(tuple(ref_in.shape)).astype(np.float32))
    torch.set_grad_enabled(False)
    print(f"{a.model}: folded model vs exported reference {rel(model(ref_in), ref_out):.2e}")
    layers = []
    wrap(model, layers)
    for l in layers:
        l.record = []
    want_cal = model(cal)
    want_ref = model(ref_in)
    for l in layers:
        x = l.record[0]
        l.range, l.source, l.record = (float(x.min()), float(x.max())), x, None

    def whole():
        for l in layers:
            l.on = True
        r = rel(model(cal), want_cal), rel(model(ref_in), want_ref)
        for l in layers:
            l.on = False
        return r

    def each():
        out = []
        for l in layers:
            l.on = True
            out.append(rel(model(cal), want_cal))
            l.on = False
        return out

    before_whole, before_each = whole(), each()
    for l in layers:
        diff = l.int8(l.source) - l.fp32(l.source)
        if diff.numel() // diff.shape[1] < a.min_positions:
            continue
        dims = (0, 2, 3) if diff.dim() == 4 else (0,)
        mean, var = diff.mean(dim=dims), diff.var(dim=dims)
        n = diff.numel() // diff.shape[1]
        # Shrunk toward 0 by how much of it the noise of the mean could explain (int8_bias_correction.h).
        l.shift = mean * torch.clamp(1 - var / (n * mean * mean).clamp_min(1e-30), min=0) if a.shrink else mean
    after_whole, after_each = whole(), each()
    print(f"whole model int8, calibration / held out: before {before_whole[0]:.4f} / {before_whole[1]:.4f}, "
          f"bias-corrected {after_whole[0]:.4f} / {after_whole[1]:.4f}")
    print(f"per-layer end-to-end errors: before {min(before_each):.4f}-{max(before_each):.4f}, "
          f"bias-corrected {min(after_each):.4f}-{max(after_each):.4f}")
    print(f"sqrt(sum e^2): before {np.sqrt(np.sum(np.square(before_each))):.4f}, "
          f"bias-corrected {np.sqrt(np.sum(np.square(after_each))):.4f}")
    print(f"layers fitting the quadrature proxy within 0.9 x {a.budget}: before {fit_count(before_each, a.budget)}, "
          f"bias-corrected {fit_count(after_each, a.budget)} of {len(layers)}")


if __name__ == "__main__":
    main()
