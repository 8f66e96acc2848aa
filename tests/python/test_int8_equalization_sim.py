"""scripts/int8_equalization_sim.py: its two levers on small hand-made convolutions (no model):
error-compensated rounding reproduces W X better than plain rounding on correlated channels,
per-channel activation scales quantize channels of very different ranges better than one
per-tensor step, and the migration laid out on grouped weights leaves the product unchanged."""
import os
import sys

try:
    import torch
    import torch.nn as nn
    import torchvision  # noqa: F401  (the script's model builders import it)
except ImportError:
    print("skipped: needs python3-torch and python3-torchvision")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import bias_correction_sim as sim  # noqa: E402
import int8_equalization_sim as eq  # noqa: E402


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


def rel(a, b):
    return float(torch.linalg.norm(a - b) / torch.linalg.norm(b))


def test_compensated_rounding():
    g = torch.Generator().manual_seed(1)
    conv = nn.Conv2d(32, 16, 1)
    conv.weight.copy_(torch.randn(conv.weight.shape, generator=g))
    # Channels driven by 4 shared factors plus noise: a Hessian far from diagonal.
    x = (torch.randn(4, 32, generator=g).t() @ torch.randn(4, 400, generator=g) +
         0.1 * torch.randn(32, 400, generator=g)).reshape(1, 32, 20, 20)
    want = nn.functional.conv2d(x, conv.weight)
    plain = rel(nn.functional.conv2d(x, sim.quant_weight(conv.weight.detach())), want)
    comp = rel(nn.functional.conv2d(x, eq.gptq(conv.weight.detach(), eq.unfold(conv, x))), want)
    check(comp < 0.5 * plain, f"compensated rounding {comp:.2e} well under plain rounding {plain:.2e}")


def int8_error(conv, x, alpha):
    layer = eq.Lever(conv)
    layer.on = True
    if alpha is None:
        layer.wq, layer.range = sim.quant_weight(conv.weight.detach()), (float(x.min()), float(x.max()))
    else:
        m = eq.channel_absmax(x) ** alpha / eq.weight_colmax(conv) ** (1 - alpha)
        m = m / m.max()
        mw = eq.weight_migration(conv, m)
        layer.m = m
        layer.wq = sim.quant_weight(conv.weight.detach() * mw) / mw
        xs = x / m.view(1, -1, 1, 1)
        layer.range = (float(xs.min()), float(xs.max()))
    return rel(layer(x), conv(x))


def test_per_channel_scales():
    g = torch.Generator().manual_seed(2)
    conv = nn.Conv2d(16, 8, 3, padding=1, bias=False)
    conv.weight.copy_(torch.randn(conv.weight.shape, generator=g))
    # ReLU-like source whose channels span ranges 1 to 1000, each weighted by its inverse so that
    # every channel carries as much of the output (a folded normalization does that).
    spread = torch.logspace(0, 3, 16)
    x = torch.relu(torch.randn(1, 16, 12, 12, generator=g)) * spread.view(1, -1, 1, 1)
    conv.weight /= spread.view(1, -1, 1, 1)
    per_tensor, per_channel = int8_error(conv, x, None), int8_error(conv, x, 1.0)
    check(per_channel < 0.25 * per_tensor,
          f"per-channel scales {per_channel:.2e} well under one per-tensor step {per_tensor:.2e}")


def test_grouped_migration():
    g = torch.Generator().manual_seed(3)
    for groups, cin, cout in ((1, 8, 4), (4, 8, 12), (8, 8, 8)):
        conv = nn.Conv2d(cin, cout, 3, padding=1, groups=groups, bias=False)
        conv.weight.copy_(torch.randn(conv.weight.shape, generator=g))
        x = torch.randn(1, cin, 6, 6, generator=g)
        m = torch.rand(cin, generator=g) + 0.1
        y = nn.functional.conv2d(x / m.view(1, -1, 1, 1), conv.weight * eq.weight_migration(conv, m), padding=1,
                                 groups=groups)
        check(rel(y, conv(x)) < 1e-5, f"groups {groups}: migrated product equals the original")


if __name__ == "__main__":
    torch.set_grad_enabled(False)
    test_compensated_rounding()
    test_per_channel_scales()
    test_grouped_migration()
    print("ok")
