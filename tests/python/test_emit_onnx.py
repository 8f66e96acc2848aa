#!/usr/bin/python3
"""`tessera partition --emit DIR` writes module.onnx that passes onnx.checker (docs/emit.md), for
models with control flow: an If whose branch import left out (it does not type at the bound
shapes; tests/inputs/good/make_control_flow_onnx.py), Loops with captures and an If in the body, a Scan,
and silero VAD when scripts/fetch_silero.sh has fetched it (its opset-16 model has such an If).

Run by ctest with Debian's /usr/bin/python3 (python3-onnx) from the source root; TESSERA is the CLI.
"""
import os
import subprocess
import tempfile
import unittest

import onnx

CLI = os.environ.get("TESSERA", "build/tessera")
GOOD = "tests/inputs/good"
SILERO = "data/models/silero"


def emit(model, *args):
    d = tempfile.mkdtemp(prefix="tessera_emit_")
    r = subprocess.run([CLI, "partition", model, "--backends", "ref,onednn", "--cost", "roofline", "--emit", d, *args],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError(f"{model}: exit {r.returncode}: {r.stderr}")
    return onnx.load(os.path.join(d, "module.onnx"))


def if_nodes(m):
    """Every If node of the module's main graph and functions, with their branch attributes."""
    for n in list(m.graph.node) + [n for f in m.functions for n in f.node]:
        if n.op_type == "If":
            yield n


class EmitOnnxTest(unittest.TestCase):
    def check(self, m):
        onnx.checker.check_model(m)
        onnx.checker.check_model(m, full_check=True)

    def test_an_if_whose_branch_was_left_out(self):
        m = emit(os.path.join(GOOD, "if_left_out.onnx"))
        self.check(m)
        [node] = list(if_nodes(m))
        branches = {a.name: a for a in node.attribute}
        self.assertEqual(branches["then_branch"].type, onnx.AttributeProto.GRAPH)
        self.assertEqual(branches["else_branch"].type, onnx.AttributeProto.GRAPH)
        left_out = branches["else_branch"].g
        self.assertTrue(left_out.doc_string.startswith("left out by tessera: else_branch does not type"), left_out.doc_string)
        self.assertEqual([o.type.tensor_type.shape.dim[1].dim_value for o in left_out.output], [2])

    def test_loops(self):
        for name in ("loop_scan.onnx", "loop_while.onnx", "loop_if_body.onnx", "scan.onnx"):
            with self.subTest(name):
                m = emit(os.path.join(GOOD, name))
                self.check(m)
                loops = [n for f in m.functions for n in f.node if n.op_type in ("Loop", "Scan")]
                self.assertEqual(len(loops), 1)
                self.assertNotIn("captured_inputs", {a.name for a in loops[0].attribute})

    def test_silero_vad(self):
        shapes = ["--input-shape", "input=1x512", "--input-shape", "state=2x1x128"]
        for name in ("silero_vad.onnx", "silero_vad_16k_op15.onnx"):
            path = os.path.join(SILERO, name)
            if not os.path.exists(path):
                self.skipTest(path + " missing: run scripts/fetch_silero.sh")
            with self.subTest(name):
                self.check(emit(path, *shapes))


if __name__ == "__main__":
    unittest.main()
