#!/usr/bin/python3
"""An f16 model as exporters write it after `model.half()`: partitioned over ref and the f32
backends, run end to end with --check, and compared with the same network computed in f32.

The network is a small conv net with the ops of a real f16 segmentation model (Conv, Relu,
MaxPool, Resize, Concat, Add, Sigmoid), its weights stored as f16 and its graph computing in f16
between a Cast of the f32 input and a Cast of the output back to f32. PyTorch's CPU build cannot
trace an f16 convolution, so the net is exported in f32 and then converted as `half()` plus
onnxconverter-common's convert_float_to_float16(keep_io_types=True) would write it (to_float16
below): f16 initializers and tensors, f32 only where ONNX requires it (Resize's scales). Checks:
- the plan that `tessera partition --cost measure` makes over ref,onednn,xnnpack,eigen puts the
  convolutions on an f32 backend (compiled as f32 with conversions at the function's boundary)
  and `tessera run --check` accepts it;
- ref alone (every node in f16, computed in f32 and rounded) and the mixed plan both match the
  f32 network's output within 1e-2 relative L2 error.

Needs torch (Debian's /usr/bin/python3 has it); without it the test exits 77, which ctest reports
as Skipped. TESSERA is the CLI.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

SKIP = 77
CLI = os.environ.get("TESSERA", "build/tessera")
TOLERANCE = 1e-2


def tessera(*args):
    r = subprocess.run([CLI, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError("tessera %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr))
    return r.stdout


def rel_l2(a, ref):
    a, ref = a.astype(np.float64), ref.astype(np.float64)
    return float(np.linalg.norm(a - ref) / np.linalg.norm(ref))


def to_float16(model):
    """The f32 ONNX model with every float tensor in f16 and f32 graph inputs and outputs."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    g = model.graph
    keep = {name for n in g.node if n.op_type == "Resize" for name in n.input[1:3]}   # roi, scales: f32
    for i, init in enumerate(g.initializer):
        if init.data_type == TensorProto.FLOAT and init.name not in keep:
            g.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(init).astype(np.float16), init.name))
    for n in g.node:
        for a in n.attribute:
            if n.op_type == "Constant" and a.name == "value" and a.t.data_type == TensorProto.FLOAT and n.output[0] not in keep:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    casts_in, casts_out = [], []
    for x in g.input:
        for n in g.node:
            n.input[:] = [x.name + "_f16" if i == x.name else i for i in n.input]
        casts_in.append(helper.make_node("Cast", [x.name], [x.name + "_f16"], name="graph_input_cast_" + x.name,
                                         to=TensorProto.FLOAT16))
    for y in g.output:
        for n in g.node:
            n.output[:] = [y.name + "_f16" if o == y.name else o for o in n.output]
        casts_out.append(helper.make_node("Cast", [y.name + "_f16"], [y.name], name="graph_output_cast_" + y.name,
                                          to=TensorProto.FLOAT))
    nodes = casts_in + list(g.node) + casts_out
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]
    onnx.checker.check_model(model)
    return model


def main():
    try:
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
    except ImportError as e:
        print("SKIPPED: torch is not importable (%s)" % e, file=sys.stderr)
        return SKIP

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 16, 3, padding=1)
            self.c2 = nn.Conv2d(16, 16, 3, padding=1)
            self.c3 = nn.Conv2d(32, 16, 3, padding=1)
            self.out = nn.Conv2d(16, 1, 1)

        def forward(self, x):
            a = F.relu(self.c1(x))
            b = F.relu(self.c2(F.max_pool2d(a, 2, ceil_mode=True)))
            up = F.interpolate(b, scale_factor=2.0, mode="bilinear", align_corners=False)
            c = F.relu(self.c3(torch.cat([up, a], 1))) + a
            return torch.sigmoid(self.out(c))

    torch.manual_seed(0)
    net = Net().eval()
    x = np.random.default_rng(0).uniform(-1, 1, (1, 3, 64, 64)).astype(np.float32)
    with torch.no_grad():
        want = net(torch.from_numpy(x)).numpy()          # the f32 network
    import onnx

    with tempfile.TemporaryDirectory() as d:
        model = os.path.join(d, "fp16_net.onnx")
        torch.onnx.export(net, torch.from_numpy(x), model, input_names=["x"], output_names=["y"], opset_version=15)
        onnx.save(to_float16(onnx.load(model)), model)
        np.save(os.path.join(d, "x.npy"), x)

        mixed = os.path.join(d, "mixed.json")
        tessera("partition", model, "--backends", "ref,onednn,xnnpack,eigen", "--cost", "measure",
                "--cache", os.path.join(d, "costs.db"), "--plan", mixed)
        with open(mixed) as f:
            plan = json.load(f)
        on = {p["backend"] for p in plan["partitions"]}
        print("mixed plan: %d partitions on %s" % (len(plan["partitions"]), ",".join(sorted(on))))
        assert on - {"ref"}, "no partition on an f32 backend: %s" % on

        only_ref = os.path.join(d, "ref.json")
        tessera("partition", model, "--backends", "ref", "--search", "single:ref", "--cost", "roofline", "--plan", only_ref)

        failed = []
        for name, p in [("ref", only_ref), ("mixed", mixed)]:
            check = json.loads(tessera("run", model, "--plan", p, "--check", "--json"))
            out_dir = os.path.join(d, "out_" + name)
            tessera("run", model, "--plan", p, "--input", "x=" + os.path.join(d, "x.npy"), "--output-dir", out_dir)
            got = np.load(os.path.join(out_dir, "y.npy"))
            err = rel_l2(got, want)
            ok = check["ok"] and got.shape == want.shape and err <= TOLERANCE
            print("%-6s --check ok=%s, relative L2 vs f32 %.2e  %s" % (name, check["ok"], err, "ok" if ok else "FAILED"))
            if not ok:
                failed.append(name)
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
