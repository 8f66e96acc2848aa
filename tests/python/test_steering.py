#!/usr/bin/python3
"""Steering and trust in the Python API: pin=/forbid= on partition, tune and bench (the CLI's --pin and
--forbid), plans checked when a Session is built (backends, nodes they take, allow_fallback), and
Session.run refusing arrays of another dtype.

Run by ctest with Debian's /usr/bin/python3 and PYTHONPATH=build/python, from the source root.
"""
import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

import tessera

CLI = os.environ.get("TESSERA", "build/tessera")
MLP = "data/models/tiny_mlp.json"      # mm0 add0 relu0 mm1 add1, x: float32 (1, 16)
CONV = "data/models/conv_block.json"   # conv0 relu0 conv1 add0 relu1


def backend_of(plan):
    return {node: p["backend"] for p in plan.partitions for node in p["nodes"]}


class SteeringTest(unittest.TestCase):
    def test_pin_and_forbid_as_strings_lists_and_dicts(self):
        model = tessera.Model(CONV)
        free = tessera.partition(model, backends=["ref", "onednn", "eigen"], cost="roofline")
        self.assertEqual(backend_of(free)["relu0"], "onednn")
        pinned = tessera.partition(model, backends=["ref", "onednn", "eigen"], cost="roofline", pin="relu0=eigen")
        self.assertEqual(backend_of(pinned)["relu0"], "eigen")
        self.assertIsNone(free.steering)
        self.assertIsNone(free.tuned_on)   # roofline prices were not measured here
        self.assertEqual(pinned.steering,
                         [{"kind": "pin", "selector": "relu0", "backend": "eigen", "nodes": ["relu0"]}])
        forbidden = tessera.partition(model, backends=["ref", "onednn", "eigen"], cost="roofline",
                                      pin={"relu*": "eigen"}, forbid=["op:Conv=onednn"])
        self.assertEqual({n: b for n, b in backend_of(forbidden).items() if n.startswith(("relu", "conv"))},
                         {"relu0": "eigen", "relu1": "eigen", "conv0": "ref", "conv1": "ref"})

    def test_the_module_and_the_cli_give_the_same_steered_plan(self):
        model = tessera.Model(CONV)
        plan = tessera.partition(model, backends=["ref", "onednn", "eigen"], cost="roofline", pin=["op:Relu=eigen"])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "plan.json")
            r = subprocess.run([CLI, "partition", CONV, "--backends", "ref,onednn,eigen", "--cost", "roofline",
                                "--pin", "op:Relu=eigen", "--plan", path], capture_output=True, text=True,
                               env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})   # the CLI links its own sanitizer runtime
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path) as f:
                self.assertEqual(plan.to_json(), f.read())

    def test_why_answers_as_the_cli_does(self):
        model = tessera.Model(CONV)
        plan = tessera.partition(model, backends=["ref", "onednn", "eigen"], cost="roofline", why=["relu0", "conv0=eigen"])
        self.assertIsNone(tessera.partition(model, backends=["ref", "onednn"], cost="roofline").why)
        r = subprocess.run([CLI, "partition", CONV, "--backends", "ref,onednn,eigen", "--cost", "roofline",
                            "--why", "relu0", "--why", "conv0=eigen"], capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(plan.why, r.stdout)
        self.assertIn("relu0", plan.why)
        with self.assertRaisesRegex(tessera.Error, "no node named 'nosuch'"):
            tessera.partition(model, backends=["ref", "onednn"], cost="roofline", why="nosuch")

    def test_tune_obeys_a_pin_in_its_race_and_records_where_it_was_tuned(self):
        model = tessera.Model(CONV)
        with tempfile.TemporaryDirectory() as d:
            plan = tessera.tune(model, backends=["ref", "onednn", "eigen"], cache=os.path.join(d, "costs.db"),
                                pin="op:Relu=eigen")
        self.assertEqual({n: b for n, b in backend_of(plan).items() if n.startswith("relu")},
                         {"relu0": "eigen", "relu1": "eigen"})
        self.assertEqual(plan.tuned_on["threads"], 1)
        # single:onednn would put the Relus on onednn or ref: it was not raced.
        raced = plan.json["verified"]["latency_ms"]
        self.assertIn("single:eigen", raced)
        self.assertNotIn("single:onednn", raced)

    def test_steering_mistakes_are_tessera_errors(self):
        model = tessera.Model(CONV)
        for kwargs, needle in (({"pin": "nosuch=eigen"}, "matches no node"),
                               ({"pin": "relu0=onednnn"}, "'onednnn' is not among the backends"),
                               ({"pin": "conv0=eigen"}, "cannot pin node 'conv0' to eigen"),
                               ({"forbid": "relu0"}, "expected SELECTOR=BACKEND")):
            with self.assertRaises(tessera.Error) as e:
                tessera.partition(model, backends=["ref", "onednn", "eigen"], cost="roofline", **kwargs)
            self.assertIn(needle, str(e.exception))
            self.assertNotIn("\n", str(e.exception))
        with self.assertRaises(tessera.Error):
            tessera.bench(model, ["ref", "ref,onednn"], cost="roofline", pin="relu0=onednnn")


class PlanValidationTest(unittest.TestCase):
    def edited(self, model, **change):
        plan = tessera.partition(model, backends=["ref", "onednn"], cost="roofline")
        j = json.loads(plan.to_json())
        j["partitions"][0].update(change)
        d = tempfile.mkdtemp()
        path = os.path.join(d, "plan.json")
        with open(path, "w") as f:
            json.dump(j, f)
        return tessera.Plan.load(path), path

    def test_an_unknown_backend_is_a_tessera_error_naming_the_partition(self):
        model = tessera.Model(MLP)
        plan, path = self.edited(model, backend="onednnn")
        with self.assertRaises(tessera.Error) as e:
            tessera.Session(model, plan)
        self.assertIn(path + ": partitions[0].backend: unknown backend 'onednnn'", str(e.exception))

    def test_a_node_its_backend_cannot_take_needs_allow_fallback(self):
        model = tessera.Model(MLP)
        plan, _ = self.edited(model, backend="blas")
        with self.assertRaises(tessera.Error) as e:
            tessera.Session(model, plan)
        self.assertIn("node 'relu0' cannot run on blas", str(e.exception))
        self.assertIn("allow a fallback to ref with allow_fallback)", str(e.exception))   # the keyword, not the flag
        session = tessera.Session(model, plan, allow_fallback=True)
        x = np.ones((1, 16), np.float32)
        ref = tessera.Session(model, tessera.partition(model, backends=["ref"], cost="roofline"))
        np.testing.assert_allclose(session.run({"x": x})["y"], ref.run({"x": x})["y"], rtol=1e-5, atol=1e-5)


class InputDtypeTest(unittest.TestCase):
    def test_run_refuses_arrays_of_another_dtype(self):
        model = tessera.Model(MLP)
        session = tessera.Session(model, tessera.partition(model, backends=["ref"], cost="roofline"))
        for dtype in (np.int32, np.int64, np.bool_, np.uint8, np.float16):
            with self.assertRaises(tessera.Error) as e:
                session.run({"x": np.zeros((1, 16), dtype)})
            self.assertIn("expected float32", str(e.exception))
            self.assertNotIn("\n", str(e.exception))
        session.run({"x": np.zeros((1, 16), np.float64)})   # numpy's default float: converted


if __name__ == "__main__":
    unittest.main(verbosity=1)
