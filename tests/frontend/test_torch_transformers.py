#!/usr/bin/python3
"""Vision transformers as torch exports them import, partition and run (constant_folding.h).

torch writes a ViT's class-token expand and a Swin's window padding as shape arithmetic inside the
graph (Shape, Gather, Concat, Equal, Where, Mod, Range, ScatterND, ... feeding Expand and Pad);
import folds it with ref's kernels so every shape is static. This test exports small torchvision
models with random weights (ViT; Swin on 40x40 images, whose 10x10 and 5x5 token grids are padded
to its 4x4 windows), then for each: `tessera partition --backends ref,onednn,xnnpack --cost
roofline`, `tessera run --check` (every partition against ref), and the output against PyTorch's:
relative L2 error <= 1e-4.

Run by ctest with Debian's /usr/bin/python3 from the source root; TESSERA is the CLI. Without
torch or torchvision it says so and exits 77, which ctest reports as Skipped.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SKIP = 77
try:
    import numpy as np
    import onnx
    import torch
    import torchvision
except ImportError as e:
    print("skipped: %s" % e)
    sys.exit(SKIP)

CLI = os.environ.get("TESSERA", "build/tessera")
TOLERANCE = 1e-4


def vit():
    m = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
                                             mlp_dim=64, num_classes=10)
    torch.nn.init.normal_(m.heads.head.weight)   # torchvision starts the head at zero: the output would be 0
    return m, (1, 3, 32, 32)


def swin():
    m = torchvision.models.swin_transformer.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2],
                                                            num_heads=[2, 2], window_size=[4, 4], num_classes=10)
    return m, (1, 3, 40, 40)


def export(model, shape, path):
    """Writes the model at opset 17 and returns (input, PyTorch's output)."""
    torch.manual_seed(0)
    model.eval()
    x = torch.randn(*shape)
    with torch.no_grad():
        y = model(x).numpy()
    kwargs = dict(opset_version=17, input_names=["x"], output_names=["y"])
    try:
        torch.onnx.export(model, (x,), path, dynamo=False, **kwargs)
    except TypeError:   # a torch without the dynamo exporter has no such argument
        torch.onnx.export(model, (x,), path, **kwargs)
    return x.numpy(), y


def cli(*args):
    r = subprocess.run([CLI, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError("tessera %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.strip()))
    return r.stdout


class TorchTransformersTest(unittest.TestCase):
    def run_model(self, make, expect_ops):
        torch.manual_seed(0)
        model, shape = make()
        with tempfile.TemporaryDirectory(prefix="tessera_torch_") as d:
            path = os.path.join(d, "model.onnx")
            x, expected = export(model, shape, path)
            exported_ops = {n.op_type for n in onnx.load(path).graph.node}
            self.assertTrue({"Shape", "Gather", "Concat"} <= exported_ops, exported_ops)   # shapes computed in-graph
            info = json.loads(cli("info", path, "--json"))
            for op in expect_ops:
                self.assertIn(op, info["ops"], "import lost %s: %s" % (op, info["ops"]))
            self.assertNotIn("Shape", info["ops"])   # all folded
            np.save(os.path.join(d, "x.npy"), x)
            plan = os.path.join(d, "plan.json")
            cli("partition", path, "--backends", "ref,onednn,xnnpack", "--cost", "roofline", "--plan", plan)
            out = os.path.join(d, "out")
            report = json.loads(cli("run", path, "--plan", plan, "--check", "--input", "x=" + os.path.join(d, "x.npy"),
                                    "--output-dir", out, "--json"))
            self.assertTrue(report["ok"], report)
            got = np.load(os.path.join(out, "y.npy"))
            self.assertEqual(got.shape, expected.shape)
            self.assertGreater(np.linalg.norm(expected), 0.0)
            err = np.linalg.norm(got.astype(np.float64) - expected) / np.linalg.norm(expected)
            print("%s: relative L2 error %.2e against PyTorch" % (make.__name__, err))
            self.assertLessEqual(err, TOLERANCE)

    def test_vit(self):
        self.run_model(vit, ["Conv", "Softmax"])

    def test_swin(self):
        # A Pad left after import pads for real (simplify removes all-zero ones): the windows path.
        self.run_model(swin, ["Pad", "Softmax"])


if __name__ == "__main__":
    unittest.main()
