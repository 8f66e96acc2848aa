#!/usr/bin/env python3
"""Where a model's int8 error comes from, and what activation range methods change, simulated in PyTorch.

The model is rebuilt and fake-quantized as scripts/bias_correction_sim.py does (folded batch norms;
every Conv2d and Linear int8 as tessera's onednn_int8 quantizes it: the source u8 per tensor over
its range widened to hold 0, weights s8 per output channel with least-squared-error steps). The
ranges come from one seed-7 standard-normal calibration input, per method:
  minmax            [min, max]
  p99.99, p99.9     the 0.01% / 0.1% quantiles of each tail
  mse               [r min, r max], r in {1, 0.98, ..., 0.30} with the least squared u8 error
  entropy           symmetric threshold on |x| with the least KL divergence between the clipped
                    2048-bin histogram and its 128-level quantization (TensorRT's method)
Printed, on the calibration input and the held-out reference input (relative L2 at the output):
  - the whole model int8 per method; activations only (fp32 weights) and weights only;
  - per layer, it alone int8 (activations only) per method;
  - the whole model with each layer's method chosen by its own end-to-end error, and how many
    layers fit the budget's quadrature proxy within 0.9 E per method.

  /usr/bin/python3 scripts/int8_range_sim.py MODELS_DIR [--model mobilenet_v2] [--budget 0.01]
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bias_correction_sim as sim  # noqa: E402


def quantile_range(x, p):
    f = x.flatten().numpy()
    return float(np.quantile(f, 1 - p)), float(np.quantile(f, p))


def mse_range(x):
    lo, hi = float(x.min()), float(x.max())
    best = None
    for k in range(36):
        r = 1 - 0.02 * k
        e = float(((sim.quant_source(x, r * lo, r * hi) - x) ** 2).sum())
        if best is None or e < best[0]:
            best = (e, r)
    return best[1] * lo, best[1] * hi


def entropy_range(x, bins=2048, levels=128):
    a = x.abs().flatten().numpy()
    amax = float(a.max())
    hist, edges = np.histogram(a, bins=bins, range=(0, amax))
    hist = hist.astype(np.float64)
    best = (np.inf, bins)
    for i in range(levels, bins + 1, 16):
        p, h = hist[:i].copy(), hist[:i]
        p[i - 1] += hist[i:].sum()
        q = np.zeros(i)
        chunk = i / levels
        for j in range(levels):
            s, e = int(j * chunk), int((j + 1) * chunk)
            cnt = (h[s:e] > 0).sum()
            if cnt:
                q[s:e] = np.where(p[s:e] > 0, h[s:e].sum() / cnt, 0)
        q[(q == 0) & (p > 0)] = 1e-4
        ps, qs = p / p.sum(), q / max(q.sum(), 1e-30)
        m = (ps > 0) & (qs > 0)
        kl = float(np.sum(ps[m] * np.log(ps[m] / qs[m])))
        if kl < best[0]:
            best = (kl, i)
    t = float(edges[best[1]])
    return max(float(x.min()), -t), min(float(x.max()), t)


METHODS = {
    "minmax": lambda x: (float(x.min()), float(x.max())),
    "p99.99": lambda x: quantile_range(x, 0.9999),
    "p99.9": lambda x: quantile_range(x, 0.999),
    "mse": mse_range,
    "entropy": entropy_range,
}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("models_dir")
    p.add_argument("--model", default="mobilenet_v2")
    p.add_argument("--budget", type=float, default=0.01)
    a = p.parse_args()
    torch.set_grad_enabled(False)
    model, _ = sim.folded_model(a.model)
    ref_in = torch.from_numpy(np.load(os.path.join(a.models_dir, "reference", a.model + ".input.npy")))
    cal = torch.from_numpy(np.random.default_rng(7).standard_normal(tuple(ref_in.shape)).astype(np.float32))
    layers = []
    sim.wrap(model, layers)
    for l in layers:
        l.record = []
    want_cal, want_ref = model(cal), model(ref_in)
    sources = [l.record[0] for l in layers]
    for l in layers:
        l.record = None
    int8_weights = [l.qweight for l in layers]

    def run():
        for l in layers:
            l.on = True
        r = sim.rel(model(cal), want_cal), sim.rel(model(ref_in), want_ref)
        for l in layers:
            l.on = False
        return r

    def alone(l):
        l.on = True
        e = sim.rel(model(cal), want_cal)
        l.on = False
        return e

    def set_ranges(method):
        for l, x in zip(layers, sources):
            l.range = METHODS[method](x)

    for m in METHODS:
        set_ranges(m)
        print("whole model int8, %-8s calibration %.4f held out %.4f" % ((m,) + run()))
    for l in layers:
        l.qweight = l.layer.weight.detach()
    for m in ("minmax", "mse", "p99.99"):
        set_ranges(m)
        print("activations only, %-8s calibration %.4f held out %.4f" % ((m,) + run()))
    for l, w in zip(layers, int8_weights):
        l.qweight = w
    exact = sim.quant_source
    sim.quant_source = lambda x, lo, hi: x
    print("weights only:              calibration %.4f held out %.4f" % run())
    weight_alone = [alone(l) for l in layers]
    sim.quant_source = exact

    print("per layer alone int8 (end-to-end, calibration): activations only per method; weights only")
    per = {m: [] for m in METHODS}
    for l in layers:
        l.qweight = l.layer.weight.detach()
    for i, (l, x) in enumerate(zip(layers, sources)):
        for m in METHODS:
            l.range = METHODS[m](x)
            per[m].append(alone(l))
        lo, hi = METHODS["minmax"](x)
        print("%2d %-18s groups %-4d range [%7.2f, %6.2f] %s; weights %.4f" % (
            i, tuple(x.shape), getattr(l.layer, "groups", 1), lo, hi,
            " ".join("%s %.4f" % (m, per[m][i]) for m in METHODS), weight_alone[i]))
    for l, w in zip(layers, int8_weights):
        l.qweight = w
    with_weights = {m: [] for m in METHODS}
    for l, x in zip(layers, sources):
        for m in METHODS:
            l.range = METHODS[m](x)
            with_weights[m].append(alone(l))
    chosen = [min(METHODS, key=lambda m, i=i: with_weights[m][i]) for i in range(len(layers))]
    for l, x, m in zip(layers, sources, chosen):
        l.range = METHODS[m](x)
    print("whole model int8, each layer's method chosen by its end-to-end error: calibration %.4f held out %.4f" % run())
    print("methods chosen:", {m: chosen.count(m) for m in METHODS})
    for m in METHODS:
        print("%-8s layers fitting the quadrature proxy within 0.9 x %g: %d of %d" % (
            m, a.budget, sim.fit_count(with_weights[m], a.budget), len(layers)))
    best = [with_weights[m][i] for i, m in enumerate(chosen)]
    print("chosen   layers fitting: %d of %d" % (sim.fit_count(best, a.budget), len(layers)))


if __name__ == "__main__":
    main()
