#!/usr/bin/python3
"""Loop and Scan (docs/control_flow.md) end to end: the models of tests/inputs/good/make_control_flow_onnx.py are
imported, partitioned over ref and oneDNN (the Loop stays on ref, the rest partitions around it),
run, and checked against the numpy references in that script within 1e-5.

Run by ctest with Debian's /usr/bin/python3 and PYTHONPATH=build/python, from the source root.
"""
import os
import sys
import unittest

import numpy as np

import tessera

GOOD = "tests/inputs/good"
sys.path.insert(0, GOOD)
import make_control_flow_onnx as ref  # noqa: E402

BACKENDS = ["ref", "onednn", "eigen"]


def run(name, inputs, backends=BACKENDS):
    model = tessera.Model(os.path.join(GOOD, name))
    plan = tessera.partition(model, backends=backends, cost="roofline")
    loop_parts = [p for p in plan.partitions if any(n in ("loop", "while", "scan") for n in p["nodes"])]
    return plan, loop_parts, tessera.Session(model, plan).run(inputs)


def assert_close(test, got, want):
    test.assertEqual(set(got), set(want))
    for name, w in want.items():
        test.assertEqual(got[name].shape, w.shape, name)
        np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-5, err_msg=name)


class LoopTest(unittest.TestCase):
    def test_counted_loop_with_scan_output_and_captures(self):
        rng = np.random.default_rng(3)
        for _ in range(3):
            x = rng.standard_normal((2, 3)).astype(np.float32)
            plan, loop_parts, out = run("loop_scan.onnx", {"x": x})
            assert_close(self, out, ref.scan_reference(x))
            self.assertEqual([p["backend"] for p in loop_parts], ["ref"])
            # The nodes around the loop partition on the other backends.
            self.assertEqual(loop_parts[0]["nodes"], ["loop"])
            others = {n: p["backend"] for p in plan.partitions for n in p["nodes"] if n != "loop"}
            self.assertEqual(sorted(others), ["matmul", "relu", "sigmoid"])
            self.assertNotIn("ref", others.values())

    def test_while_loop_stops_on_its_condition(self):
        x = np.array([0.5, -1.0, 2.0, 0.0], np.float32)
        for limit in (1.0, 40.0, 1000.0):
            _, loop_parts, out = run("loop_while.onnx", {"x": x, "limit": np.array(limit, np.float32)})
            assert_close(self, out, ref.while_reference(x, np.float32(limit)))
            self.assertEqual([p["backend"] for p in loop_parts], ["ref"])

    def test_if_inside_the_body_and_an_early_stop(self):
        x = np.array([0.3, -0.7, 1.1], np.float32)
        _, _, out = run("loop_if_body.onnx", {"x": x})
        assert_close(self, out, ref.if_body_reference(x))

    def test_a_plan_with_every_backend_keeps_the_loop_on_ref(self):
        x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
        _, loop_parts, out = run("loop_scan.onnx", {"x": x}, backends=["ref", "onednn", "xnnpack", "eigen", "blas"])
        self.assertEqual([p["backend"] for p in loop_parts], ["ref"])
        assert_close(self, out, ref.scan_reference(x))

    def test_stopping_before_the_trip_count_with_scan_outputs_is_an_error(self):
        x = np.ones((2, 3), np.float32)
        with self.assertRaises(tessera.Error) as e:
            run("loop_stops_early.onnx", {"x": x})
        msg = str(e.exception)
        self.assertIn("node 'loop' (Loop)", msg)
        self.assertIn("stopped after 2 of 4 iterations", msg)
        self.assertNotIn("\n", msg)
        self.assertNotIn("internal error", msg)


class ScanTest(unittest.TestCase):
    def test_axes_directions_states_and_captures(self):
        rng = np.random.default_rng(5)
        for _ in range(3):
            inputs = {"x0": rng.standard_normal(4).astype(np.float32), "a": rng.standard_normal((3, 4)).astype(np.float32),
                      "b": rng.standard_normal((4, 3)).astype(np.float32)}
            _, scan_parts, out = run("scan.onnx", inputs)
            assert_close(self, out, ref.scan_op_reference(**inputs))
            self.assertEqual([p["backend"] for p in scan_parts], ["ref"])


if __name__ == "__main__":
    unittest.main()
