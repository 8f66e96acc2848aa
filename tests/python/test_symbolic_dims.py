#!/usr/bin/python3
"""Symbolic input dimensions through the CLI: `info` marks them (text and --json), the "bound to 1"
warning comes once per command, `run --plan` binds them as the plan records, and every
--input-shape the CLI suggests is accepted syntax (needs python3-onnx).
"""
import json
import os
import re
import subprocess
import tempfile
import unittest

import onnx
from onnx import TensorProto, helper

CLI = os.environ.get("TESSERA", "build/tessera")
SYMBOLIC = "tests/inputs/good/symbolic.onnx"   # x: [batch, 3, h, w] -> Conv 1x1 -> y


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True)


def write_model(path, nodes, initializers=()):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "h", "w"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "g", [x], [y], initializer=list(initializers))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)


def suggested_shapes(message):
    return re.findall(r"--input-shape (\S+?=[0-9x]+)", message)


class SymbolicDimsTest(unittest.TestCase):
    def test_info_marks_symbolic_dimensions_in_text_and_json(self):
        text = cli("info", SYMBOLIC)
        self.assertEqual(text.returncode, 0, text.stderr)
        self.assertIn("x: f32 1x3x1x1  (symbolic: batch bound to 1, h bound to 1, w bound to 1;", text.stdout)
        self.assertEqual(text.stderr.count("bound to 1"), 1)
        j = json.loads(cli("info", SYMBOLIC, "--json").stdout)
        self.assertEqual(j["inputs"][0]["symbolic"], [{"axis": 0, "name": "batch", "bound_to": 1},
                                                      {"axis": 2, "name": "h", "bound_to": 1},
                                                      {"axis": 3, "name": "w", "bound_to": 1}])
        bound = json.loads(cli("info", SYMBOLIC, "--json", "--input-shape", "x=2x3x8x8").stdout)
        self.assertNotIn("symbolic", bound["inputs"][0])

    def test_the_bound_to_1_warning_comes_once_per_command(self):
        with tempfile.TemporaryDirectory() as d:
            plan = os.path.join(d, "plan.json")
            r = cli("partition", SYMBOLIC, "--backends", "ref", "--cost", "roofline", "--plan", plan)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr.count("bound to 1"), 1, r.stderr)
            for hint in suggested_shapes(r.stderr):
                self.assertEqual(cli("info", SYMBOLIC, "--input-shape", hint).returncode, 0, hint)

    def test_run_binds_symbolic_dimensions_as_the_plan_records(self):
        with tempfile.TemporaryDirectory() as d:
            plan = os.path.join(d, "plan.json")
            made = cli("partition", SYMBOLIC, "--input-shape", "x=1x3x8x8", "--backends", "ref", "--cost", "roofline",
                       "--plan", plan)
            self.assertEqual(made.returncode, 0, made.stderr)
            r = cli("run", SYMBOLIC, "--plan", plan, "--repeat", "1", "--check")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("bound as the plan records them: --input-shape x=1x3x8x8", r.stderr)
            self.assertNotIn("bound to 1", r.stderr)
            # An explicit --input-shape still wins, and the plan's binding check names the fix.
            other = cli("run", SYMBOLIC, "--plan", plan, "--repeat", "1", "--input-shape", "x=1x3x4x4")
            self.assertEqual(other.returncode, 2)
            self.assertIn("the plan was made for x=1x3x8x8", other.stderr)

    def test_every_suggested_input_shape_is_accepted_syntax(self):
        with tempfile.TemporaryDirectory() as d:
            # A 3x3 convolution without padding: 1x1 does not import, 224x224 does.
            conv = os.path.join(d, "conv.onnx")
            w = helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], [0.1] * 108)
            write_model(conv, [helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3])], [w])
            r = cli("partition", conv, "--backends", "ref", "--cost", "roofline")
            self.assertEqual(r.returncode, 2)
            hints = suggested_shapes(r.stderr)
            self.assertTrue(hints, r.stderr)
            for hint in hints:
                ok = cli("partition", conv, "--backends", "ref", "--cost", "roofline", "--input-shape", hint)
                self.assertEqual(ok.returncode, 0, hint + ": " + ok.stderr)
            # The convolution's output added to a 5x5 constant: only h, w in {3, 7} import, no common
            # size does, and the form the hint gives still parses.
            fixed = os.path.join(d, "fixed.onnx")
            b = helper.make_tensor("b", TensorProto.FLOAT, [1, 4, 5, 5], [0.0] * 100)
            write_model(fixed, [helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3]),
                                helper.make_node("Add", ["c", "b"], ["y"])], [w, b])
            r = cli("partition", fixed, "--backends", "ref", "--cost", "roofline")
            self.assertEqual(r.returncode, 2)
            hints = suggested_shapes(r.stderr)
            self.assertTrue(hints, r.stderr)
            for hint in hints:
                parsed = cli("info", fixed, "--input-shape", hint)
                self.assertNotIn("is not a positive integer", parsed.stderr, hint)
                self.assertNotIn("expected NAME=", parsed.stderr, hint)


if __name__ == "__main__":
    unittest.main(verbosity=1)
