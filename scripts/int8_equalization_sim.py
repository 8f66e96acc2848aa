#!/usr/bin/env python3
"""Two levers for int8 error, simulated in PyTorch: per-channel activation scales folded into the
weights, and weight rounding with error compensation.

The model is rebuilt and fake-quantized as scripts/bias_correction_sim.py does (folded batch norms;
every Conv2d and Linear int8 as onednn_int8 quantizes it: the source u8 over its calibrated
min/max widened to hold 0, weights s8 per output channel with the least-squared-error step).
Calibration is one seed-7 standard-normal input (--cal-samples K: K of them); held out is the
exported reference input (MODELS_DIR/reference/MODEL.input.npy), or a seed-100 standard-normal
input for a model without one.

Lever 1, per-channel activation scales (equalization). A convolution's source channel c is divided
by m_c before its u8 quantization and the weights W[o, c] are multiplied by m_c before their
per-output-channel s8 quantization; the product is unchanged in exact arithmetic. With
m_c = max|x_c|^alpha / max|W[:, c]|^(1 - alpha) (SmoothQuant's migration strength alpha; for a
depthwise convolution W[:, c] is channel c's own kernel), alpha = 1 gives each channel its own
u8 step (one zero point shared by the tensor) and alpha = 0.5 splits the range between the two.
MARGIN widens every channel's range but the largest one's (m_c = min(MARGIN max|x_c|, max|x|) at
alpha = 1) and FLOOR bounds m_c / max m below, for inputs beyond the calibrated ranges.
At run time it is a per-channel scale in the quantizing reorder (oneDNN's scale mask on the
channel axis) and, in a u8 chain, per-channel scales of the producer's output.

Lever 2, error-compensated weight rounding (GPTQ / OBQ). Per convolution and group, with
H = X X^T + damping (X the calibration source unfolded to [C_g k k, positions]), the weight
columns are rounded one at a time and each column's rounding error is spread over the columns not
yet rounded through the inverse Hessian (its upper Cholesky factor), so that W_q X stays close to
W X on the calibration data. Steps per output channel stay the least-squared-error ones.

With --bias-correction every configuration gets tessera's bias shifts (int8_bias_correction.h),
as the search's int8 candidates do; the shifts are fit to the layer fully int8, so the "weights
only" and "acts only" rows then carry a shift for the other side's error too.

Printed (relative L2 at the output, calibration / held out): the whole model in int8, its
weights alone and its activations alone, for each lever and their combination, and how many
layers fit the budget's quadrature proxy within 0.9 E (each layer alone int8, end to end on the
calibration input). --detail instead prints each layer's error alone (calibration and held out)
with today's and with compensated rounding, per-tensor activations, and the layers that fit the
proxy together: their share of the multiply-adds and the whole set int8 at once.

  /usr/bin/python3 scripts/int8_equalization_sim.py MODELS_DIR [--model mobilenet_v2] [--budget 0.01]
      [--alphas ALPHA[:MARGIN[:FLOOR]],...] [--bias-correction] [--cal-samples K] [--no-per-layer | --detail]
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bias_correction_sim as sim  # noqa: E402


def unfold(layer, x):
    """The source as [groups, C_g k k, positions] (a Linear's as one group of [C, rows])."""
    if isinstance(layer, nn.Linear):
        return x.reshape(-1, x.shape[-1]).t().unsqueeze(0)
    cols = nn.functional.unfold(x, layer.kernel_size, layer.dilation, layer.padding, layer.stride)
    g = layer.groups
    k = cols.shape[1] // g
    return cols.permute(1, 0, 2).reshape(g, k, -1)


def weight_steps(w):
    """Each output channel's least-squared-error s8 step (onednn_weight_quant.h)."""
    flat = w.reshape(w.shape[0], -1)
    m = flat.abs().amax(dim=1).clamp_min(1e-30)
    best_s, best_e = None, None
    for k in range(21):
        s = (1.0 - 0.02 * k) * m / 127.0
        e = ((torch.clamp(torch.round(flat / s[:, None]), -127, 127) * s[:, None] - flat) ** 2).sum(dim=1)
        if best_s is None:
            best_s, best_e = s, e
        else:
            better = e < best_e
            best_s, best_e = torch.where(better, s, best_s), torch.where(better, e, best_e)
    return best_s


def gptq(w, cols, damp=0.01):
    """w [O, C_g, k, k] (or [O, C]); cols [groups, C_g k k, N]: error-compensated s8 rounding."""
    o = w.shape[0]
    g = cols.shape[0]
    flat = w.reshape(o, -1).double()
    steps = weight_steps(w).double()
    out = torch.empty_like(flat)
    per = o // g
    for gi in range(g):
        x = cols[gi].double()
        h = x @ x.t()
        h += damp * torch.diag(h).mean().clamp_min(1e-12) * torch.eye(h.shape[0], dtype=h.dtype)
        hinv = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)), upper=True)
        wg = flat[gi * per:(gi + 1) * per].clone()
        s = steps[gi * per:(gi + 1) * per]
        for j in range(wg.shape[1]):
            q = torch.clamp(torch.round(wg[:, j] / s), -127, 127) * s
            err = (wg[:, j] - q) / hinv[j, j]
            wg[:, j] = q
            wg[:, j + 1:] -= err[:, None] * hinv[j, j + 1:][None, :]
        out[gi * per:(gi + 1) * per] = wg
    return out.reshape(w.shape).float()


def channel_absmax(x):
    dims = [d for d in range(x.dim()) if d != (1 if x.dim() == 4 else x.dim() - 1)]
    return x.abs().amax(dim=dims)


def weight_colmax(layer):
    w = layer.weight.detach()
    if isinstance(layer, nn.Linear):
        return w.abs().amax(dim=0)
    if layer.groups == w.shape[0] and w.shape[1] == 1:   # depthwise: channel c's own kernel
        return w.abs().reshape(w.shape[0], -1).amax(dim=1)
    g = layer.groups
    per = w.shape[0] // g
    cm = w.abs().amax(dim=(2, 3))   # [O, C_g]
    return torch.cat([cm[i * per:(i + 1) * per].amax(dim=0) for i in range(g)])


def weight_migration(layer, m):
    """m per source channel, laid out on the weights: W[o, c'] of group o // (O / groups) reads
    source channel (o // (O / groups)) C_g + c'."""
    w = layer.weight
    if isinstance(layer, nn.Linear):
        return m.view(1, -1)
    per = w.shape[0] // layer.groups
    idx = (torch.arange(w.shape[0]) // per)[:, None] * w.shape[1] + torch.arange(w.shape[1])[None, :]
    return m[idx].view(w.shape[0], w.shape[1], 1, 1)


class Lever(nn.Module):
    """A Conv2d/Linear fake-quantized with optional per-channel migration m and given weights."""

    def __init__(self, layer):
        super().__init__()
        self.layer, self.on, self.record = layer, False, None
        self.qact, self.qwt = True, True
        self.m = None
        self.wq = None
        self.shift = None

    def forward(self, x):
        if self.record is not None:
            self.record.append(x.detach())
        if not self.on:
            return self.layer(x)
        shape = (1, -1, 1, 1) if x.dim() == 4 else (1, -1)
        m = None if self.m is None else self.m.view(shape)
        xs = x if m is None else x / m
        if self.qact:
            xs = sim.quant_source(xs, *self.range)
        xq = xs if m is None else xs * m
        w = self.wq if self.qwt else self.layer.weight.detach()
        if isinstance(self.layer, nn.Conv2d):
            l = self.layer
            y = nn.functional.conv2d(xq, w, l.bias, l.stride, l.padding, l.dilation, l.groups)
        else:
            y = nn.functional.linear(xq, w, self.layer.bias)
        return y if self.shift is None else y - self.shift.view((1, -1, 1, 1) if y.dim() == 4 else (1, -1))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models_dir")
    p.add_argument("--model", default="mobilenet_v2")
    p.add_argument("--budget", type=float, default=0.01)
    p.add_argument("--alphas", default="1,1:2:0.25,0.5",
                   help="per-channel configurations ALPHA[:MARGIN[:FLOOR]] (FLOOR: the least m_c / max m), comma separated")
    p.add_argument("--bias-correction", action="store_true", help="tessera's per-channel bias shifts on every config")
    p.add_argument("--detail", action="store_true",
                   help="per layer today and with compensated rounding, held out too; the fitting set together")
    p.add_argument("--no-per-layer", action="store_true", help="skip the per-layer fit counts")
    p.add_argument("--cal-samples", type=int, default=1,
                   help="standard-normal calibration samples (seed 7), ranges and Hessians over all")
    a = p.parse_args()
    torch.set_grad_enabled(False)
    model, shape_in = sim.folded_model(a.model)
    ref_path = os.path.join(a.models_dir, "reference", a.model + ".input.npy")
    if os.path.exists(ref_path):
        ref_in = torch.from_numpy(np.load(ref_path))
    else:   # a model without an exported reference: held out on a seed-100 standard-normal input
        ref_in = torch.from_numpy(np.random.default_rng(100).standard_normal(shape_in).astype(np.float32))
    shape = (a.cal_samples,) + tuple(ref_in.shape[1:])
    cal = torch.from_numpy(np.random.default_rng(7).standard_normal(shape).astype(np.float32))
    layers = []
    sim.wrap(model, layers, Lever)
    for l in layers:
        l.record = []
    want_cal, want_ref = model(cal), model(ref_in)
    sources = [l.record[0] for l in layers]
    assert sources[0].shape[0] == a.cal_samples
    for l in layers:
        l.record = None
    plain = [sim.quant_weight(l.layer.weight.detach()) for l in layers]
    compensated = [gptq(l.layer.weight.detach(), unfold(l.layer, x)) for l, x in zip(layers, sources)]

    def configure(alpha, comp, margin=1.0, floor=0.0):
        for l, x, pw, cw in zip(layers, sources, plain, compensated):
            if alpha is None:
                l.m = None
                l.wq = cw if comp else pw
                l.range = (float(x.min()), float(x.max()))
                continue
            xm = channel_absmax(x).clamp_min(1e-8)
            wm = weight_colmax(l.layer).clamp_min(1e-8)
            m = (margin * xm) ** alpha / wm ** (1 - alpha)
            m = torch.minimum(m, (xm.max() ** alpha / wm ** (1 - alpha)))
            m = m / m.max()
            m = m.clamp_min(floor)
            l.m = m
            mw = weight_migration(l.layer, m)
            ws = l.layer.weight.detach() * mw
            if comp:
                xs = x / m.view((1, -1, 1, 1) if x.dim() == 4 else (1, -1))
                wq = gptq(ws, unfold(l.layer, xs))
            else:
                wq = sim.quant_weight(ws)
            l.wq = wq / mw
            xs = x / m.view((1, -1, 1, 1) if x.dim() == 4 else (1, -1))
            l.range = (float(xs.min()), float(xs.max()))

    def correct_biases():
        """tessera's bias correction (int8_bias_correction.h): each layer alone int8 on its
        calibration source, the mean error per output channel subtracted, where the output has at
        least 16 positions per channel."""
        for l, x in zip(layers, sources):
            l.shift = None
            if not a.bias_correction:
                continue
            l.on, l.qact, l.qwt = True, True, True
            d = l(x) - l.layer(x)
            l.on = False
            if d.numel() // d.shape[1] >= 16:
                l.shift = d.mean(dim=(0, 2, 3) if d.dim() == 4 else (0,))

    def run(qact=True, qwt=True):
        for l in layers:
            l.on, l.qact, l.qwt = True, qact, qwt
        r = sim.rel(model(cal), want_cal), sim.rel(model(ref_in), want_ref)
        for l in layers:
            l.on = False
        return r

    def per_layer(held=False):
        out = []
        for l in layers:
            l.on, l.qact, l.qwt = True, True, True
            out.append(sim.rel(model(ref_in), want_ref) if held else sim.rel(model(cal), want_cal))
            l.on = False
        return out

    def kind(l):
        if isinstance(l.layer, nn.Linear):
            return "linear"
        k = "x".join(map(str, l.layer.kernel_size))
        return k + (" dw" if l.layer.groups > 1 else "")

    def macs(l, x):
        w = l.layer.weight
        if isinstance(l.layer, nn.Linear):
            return w.numel() * (x.numel() // x.shape[-1])
        out = l.layer(x)
        return w.numel() * out.shape[2] * out.shape[3] * x.shape[0]

    if a.detail:
        mac = [macs(l, x) for l, x in zip(layers, sources)]
        rows = {}
        for name, comp in (("today", False), ("compensated", True)):
            configure(None, comp)
            correct_biases()
            rows[name] = (per_layer(), per_layer(True))
        print("per layer alone int8 (end to end), calibration / held out: today; compensated rounding")
        for i, (l, x) in enumerate(zip(layers, sources)):
            print("%2d %-7s %-18s %.4f / %.4f; %.4f / %.4f" % (
                i, kind(l), tuple(x.shape[1:]), rows["today"][0][i], rows["today"][1][i],
                rows["compensated"][0][i], rows["compensated"][1][i]))
        for name in rows:
            cal_e, held_e = rows[name]
            order = sorted(range(len(layers)), key=lambda i: cal_e[i])
            n = sim.fit_count(cal_e, a.budget)
            fit = order[:n]
            print("%-12s fit by calibration: %d (%s; %.0f%% of the multiply-adds); their held-out quadrature sum %.4f;"
                  " fit by held out: %d" % (
                      name, n, ", ".join("%s %d" % (k, sum(kind(layers[i]) == k for i in fit))
                                         for k in sorted({kind(layers[i]) for i in fit})),
                      100.0 * sum(mac[i] for i in fit) / sum(mac), float(np.sqrt(sum(held_e[i] ** 2 for i in fit))),
                      sim.fit_count(held_e, a.budget)))
        for name, comp in (("today", False), ("compensated", True)):
            configure(None, comp)
            correct_biases()
            cal_e = rows[name][0]
            fit = sorted(range(len(layers)), key=lambda i: cal_e[i])[:sim.fit_count(cal_e, a.budget)]
            for i, l in enumerate(layers):
                l.on, l.qact, l.qwt = i in fit, True, True
            r = sim.rel(model(cal), want_cal), sim.rel(model(ref_in), want_ref)
            for l in layers:
                l.on = False
            print("%-12s the fitting layers int8 together: calibration %.4f held out %.4f" % ((name,) + r))
        return

    configs = [("per tensor (today)", None, False, 1.0, 0.0),
               ("per tensor + compensated rounding", None, True, 1.0, 0.0)]
    for spec in filter(None, a.alphas.split(",")):
        parts = [float(v) for v in spec.split(":")]
        al, mg, fl = (parts + [1.0, 0.0][len(parts) - 1:])[:3]
        configs.append(("per channel a%g margin %g floor %g" % (al, mg, fl), al, False, mg, fl))
        configs.append(("per channel a%g margin %g floor %g + comp" % (al, mg, fl), al, True, mg, fl))
    print("%-40s %17s %17s %17s %s" % ("config", "all int8 cal/held", "weights only", "acts only",
                                       "layers fit (of %d)" % len(layers)))
    for name, al, comp, mg, fl in configs:
        configure(al, comp, mg, fl)
        correct_biases()
        whole, w_only, a_only = run(), run(qact=False), run(qwt=False)
        fit = "" if a.no_per_layer else "%d" % sim.fit_count(per_layer(), a.budget)
        print("%-40s %.4f / %.4f   %.4f / %.4f   %.4f / %.4f   %s" % (
            name, whole[0], whole[1], w_only[0], w_only[1], a_only[0], a_only[1], fit), flush=True)


if __name__ == "__main__":
    main()
