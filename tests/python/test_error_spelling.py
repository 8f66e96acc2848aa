#!/usr/bin/python3
"""The library's errors name its own arguments, and each front end spells them its own way: the
same mistake reads `input_shapes={"x": (...)}` in Python and `--input-shape x=...` from the CLI, and
neither front end's message speaks of the other's spelling (needs python3-onnx).
"""
import os
import subprocess
import sys
import tempfile
import unittest

from onnx import TensorProto, helper
import numpy
import onnx

import tessera

CLI = os.environ.get("TESSERA", "build/tessera")
SYMBOLIC = "tests/inputs/good/symbolic.onnx"   # x: [batch, 3, h, w] -> Conv 1x1 -> y


def cli(*args):
    # The sanitizer stage preloads ASan for Python; the CLI is not built with it.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env)


def python_error(f):
    try:
        f()
    except tessera.Error as e:
        return str(e)
    raise AssertionError("no tessera.Error")


class ErrorSpellingTest(unittest.TestCase):
    def test_the_bound_to_1_warning(self):
        # Python prints import warnings on stderr: a child process, so that they can be read.
        child = subprocess.run([sys.executable, "-c", "import tessera; tessera.Model(%r)" % SYMBOLIC],
                               capture_output=True, text=True)
        self.assertEqual(child.returncode, 0, child.stderr)
        self.assertIn('bound to 1; use input_shapes={"x": (1, 3, 1, 1)} to choose', child.stderr)
        self.assertNotIn("--input-shape", child.stderr)
        r = cli("info", SYMBOLIC)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bound to 1; use --input-shape x=1x3x1x1 to choose", r.stderr)

    def test_a_binding_the_model_contradicts(self):
        py = python_error(lambda: tessera.Model(SYMBOLIC, input_shapes={"x": (1, 4, 8, 8)}))
        self.assertIn("input_shapes sets dimension 1 to 4, the model fixes it to 3", py)
        self.assertNotIn("--input-shape", py)
        r = cli("info", SYMBOLIC, "--input-shape", "x=1x4x8x8")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--input-shape sets dimension 1 to 4, the model fixes it to 3", r.stderr)
        self.assertNotIn("input_shapes", r.stderr)

    def test_a_binding_for_an_input_the_model_lacks(self):
        py = python_error(lambda: tessera.Model(SYMBOLIC, input_shapes={"nope": (1, 3, 8, 8)}))
        self.assertIn("input_shapes: the model has no input named 'nope'", py)
        r = cli("info", SYMBOLIC, "--input-shape", "nope=1x3x8x8")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--input-shape: the model has no input named 'nope'", r.stderr)

    def test_the_suggested_binding_is_in_each_front_ends_syntax(self):
        with tempfile.TemporaryDirectory() as d:
            # A 3x3 convolution without padding: symbolic sizes bound to 1 do not import, 224 does.
            conv = os.path.join(d, "conv.onnx")
            x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "h", "w"])
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
            w = helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], [0.1] * 108)
            graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[3, 3])], "g", [x], [y],
                                      initializer=[w])
            onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), conv)
            py = python_error(lambda: tessera.Model(conv))
            self.assertIn('give them sizes, e.g. input_shapes={"x": (1, 3, 224, 224)}', py)
            self.assertNotIn("--input-shape", py)
            r = cli("info", conv)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("give them sizes, e.g. --input-shape x=1x3x224x224", r.stderr)
            self.assertNotIn("input_shapes", r.stderr)

    def test_a_plan_for_other_shapes_names_the_binding_it_needs(self):
        small = tessera.Model(SYMBOLIC, input_shapes={"x": (1, 3, 8, 8)})
        plan = tessera.partition(small, backends=["ref"], cost="roofline")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "plan.json")
            plan.save(path)
            big = tessera.Model(SYMBOLIC, input_shapes={"x": (1, 3, 16, 16)})
            py = python_error(lambda: tessera.Session(big, tessera.Plan.load(path)))
            self.assertIn('(load the model with input_shapes={"x": (1, 3, 8, 8)}, or make a plan for these shapes)', py)
            r = cli("run", SYMBOLIC, "--input-shape", "x=1x3x16x16", "--plan", path, "--repeat", "1")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("(load the model with --input-shape x=1x3x8x8, or make a plan for these shapes)", r.stderr)

    def test_library_errors_reaching_python_name_no_cli_flag(self):
        # Errors of the library's shape ranges and of a Session name the library's arguments
        # (shape_ranges, shapes), which are Python's keywords; the CLI spells the same mentions as its flags.
        wide = ((1, 3, 1, 1), (1, 3, 8, 8), (1, 3, 1 << 20, 1 << 21))   # two axes of 21 and 22 sizes
        model = tessera.Model(SYMBOLIC, input_shapes={"x": (1, 3, 8, 8)})
        py = python_error(lambda: tessera.partition(model, backends=["ref"], cost="roofline", shape_ranges={"x": wide}))
        self.assertIn("shape_ranges: x=1x3x1x1:1x3x8x8:1x3x1048576x2097152: makes more than 64 buckets; narrow the "
                      "ranges or list buckets with shapes", py)
        self.assertNotRegex(py, r"--[a-z]")
        with tempfile.TemporaryDirectory() as d:
            r = cli("partition", SYMBOLIC, "--backends", "ref", "--cost", "roofline", "--plan", os.path.join(d, "p.json"),
                    "--shape-range", "x=1x3x1x1:1x3x8x8:1x3x1048576x2097152")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--shape-range: x=1x3x1x1:1x3x8x8:1x3x1048576x2097152: makes more than 64 buckets; narrow the "
                      "ranges or list buckets with --shapes", r.stderr)

        ranged = tessera.partition(model, backends=["ref"], cost="roofline",
                                   shape_ranges={"x": ((1, 3, 4, 4), (1, 3, 8, 8), (1, 3, 16, 16))})
        session = tessera.Session(model, ranged)
        py = python_error(lambda: session.run({"x": numpy.zeros((1, 3, 32, 32), numpy.float32)}))
        self.assertIn("outside the plan's range 4..16", py)
        self.assertIn("tune with wider shape_ranges)", py)
        self.assertNotRegex(py, r"--[a-z]")

        single = tessera.Session(model, tessera.partition(model, backends=["ref"], cost="roofline"))
        py = python_error(lambda: single.run({"x": numpy.zeros((1, 3, 16, 16), numpy.float32)}))
        self.assertIn("only (a plan made over shape_ranges runs a range of shapes)", py)
        self.assertNotRegex(py, r"--[a-z]")


if __name__ == "__main__":
    unittest.main()
