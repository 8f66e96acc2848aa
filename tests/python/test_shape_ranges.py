#!/usr/bin/python3
"""One plan for a range of shapes (src/search/shape_range.h), through the CLI and Python, on a
BERT-style encoder exported by torch with dynamic batch and sequence axes
(scripts/export_dynamic.py, hidden size 64): `partition`/`tune --shape-range` write one plan file,
`run` and `Session` run any shape inside it, checked against ref, and refuse shapes outside it.
Exits 77 (Skipped) when torch or onnx cannot be imported.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

CLI = os.environ.get("TESSERA", "build/tessera")
# Child processes run without a sanitized build's preloaded runtime: the CLI links its own, and
# torch is not to be run under it.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
RANGE = "input=1x16x64:1x32x64:1x128x64"   # buckets at 16, 32, 64, 128

try:
    import numpy as np
    import tessera
    subprocess.run([sys.executable, "-c", "import torch, onnx"], check=True, capture_output=True, env=CHILD_ENV)
except Exception as e:  # noqa: BLE001 - any import failure means the test cannot run here
    print("skipped: needs numpy, torch, onnx and the tessera module:", e)
    sys.exit(77)


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=CHILD_ENV)


class ShapeRangesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        d = cls.dir.name
        subprocess.run([sys.executable, "scripts/export_dynamic.py", d, "--hidden", "64", "--only", "bert"], check=True,
                       capture_output=True, env=CHILD_ENV)
        cls.model = os.path.join(d, "bert_dynamic.onnx")
        cls.plan = os.path.join(d, "plan.json")
        r = cli("partition", cls.model, "--backends", "ref,onednn,eigen", "--cost", "roofline", "--shape-range", RANGE,
                "--plan", cls.plan)
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_the_plan_file_holds_every_bucket_and_opt_at_the_top(self):
        with open(self.plan) as f:
            j = json.load(f)
        self.assertEqual(j["input_shapes"], {"input": [1, 32, 64]})
        self.assertEqual(j["shape_ranges"], [{"input": "input", "min": [1, 16, 64], "opt": [1, 32, 64], "max": [1, 128, 64]}])
        self.assertEqual([b["input_shapes"]["input"][1] for b in j["buckets"]], [16, 32, 64, 128])
        for b in j["buckets"]:
            self.assertIn(b["plan"], range(1 + len(j["bucket_plans"])))

    def test_run_any_length_in_range_matches_ref(self):
        for length in (16, 23, 32, 100, 128):
            r = cli("run", self.model, "--plan", self.plan, "--input-shape", f"input=1x{length}x64", "--check", "--json",
                    "--repeat", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
            out = json.loads(r.stdout)
            self.assertTrue(out["ok"], out)
            expected_bucket = {16: 16, 23: 32, 32: 32, 100: 128, 128: 128}[length]
            self.assertEqual(out["bucket"]["input_shapes"], f"input=1x{expected_bucket}x64")

    def test_a_shape_outside_the_range_is_exit_2_naming_input_dimension_and_range(self):
        r = cli("run", self.model, "--plan", self.plan, "--input-shape", "input=1x200x64")
        self.assertEqual(r.returncode, 2)
        self.assertIn("input_shapes.input: dimension 1 of input=1x200x64 is 200, outside the plan's range 16..128", r.stderr)
        self.assertIn("input=1x16x64:1x32x64:1x128x64", r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)

    def test_run_binds_the_input_files_shapes(self):
        x = np.random.default_rng(0).standard_normal((1, 40, 64)).astype(np.float32)
        path = os.path.join(self.dir.name, "x.npy")
        np.save(path, x)
        r = cli("run", self.model, "--plan", self.plan, "--input", f"input={path}", "--check", "--json", "--repeat", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["bucket"]["input_shapes"], "input=1x64x64")

    def test_each_bucket_is_one_row(self):
        r = cli("run", self.model, "--plan", self.plan, "--each-bucket", "--check", "--json", "--repeat", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = json.loads(r.stdout)["buckets"]
        self.assertEqual(len(rows), 4)
        self.assertTrue(all(row["ok"] and row["latency_ms"] > 0 for row in rows), rows)

    def test_bench_times_every_bucket_and_writes_one_plan_file_per_combination(self):
        plan_dir = os.path.join(self.dir.name, "bench_plans")
        r = cli("bench", self.model, "--combos", "ref", "ref,onednn", "--cost", "roofline", "--shape-range",
                "input=1x16x64:1x16x64:1x32x64", "--repeat", "2", "--json", "--plan-dir", plan_dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = json.loads(r.stdout)
        self.assertEqual(sorted((row["input_shapes"], ",".join(row["backends"])) for row in rows),
                         [("input=1x16x64", "ref"), ("input=1x16x64", "ref,onednn"),
                          ("input=1x32x64", "ref"), ("input=1x32x64", "ref,onednn")])
        self.assertTrue(all(row["measured_ms"] > 0 for row in rows), rows)
        with open(os.path.join(plan_dir, "ref+onednn.json")) as f:
            self.assertEqual(len(json.load(f)["buckets"]), 2)
        model = tessera.Model(self.model, input_shapes={"input": (1, 16, 64)})
        rows = tessera.bench(model, ["ref,onednn"], cost="roofline", repeat=2, shapes={"input": [(1, 16, 64), (1, 24, 64)]})
        self.assertEqual([row["input_shapes"] for row in rows], ["input=1x16x64", "input=1x24x64"])

    def test_python_session_runs_every_shape_with_one_plan(self):
        model = tessera.Model(self.model, input_shapes={"input": (1, 32, 64)})
        plan = tessera.partition(model, backends=["ref", "onednn", "eigen"], cost="roofline",
                                 shape_ranges={"input": ((1, 16, 64), (1, 32, 64), (1, 128, 64))})
        with open(self.plan) as f:
            self.assertEqual(plan.to_json(), f.read())   # the CLI's plan, byte for byte
        self.assertEqual(len(plan.buckets), 4)
        session = tessera.Session(model, plan)
        rng = np.random.default_rng(1)
        for length in (16, 50, 128, 50):
            x = rng.standard_normal((1, length, 64)).astype(np.float32)
            got = session.run({"input": x})["output"]
            alone = tessera.Model(self.model, input_shapes={"input": (1, length, 64)})
            want = tessera.Session(alone, tessera.partition(alone, backends=["ref"], cost="roofline")).run({"input": x})["output"]
            self.assertEqual(got.shape, (1, length, 64))
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        self.assertEqual(session.shapes_compiled, 4)   # 32 (the model's), 16, 50, 128
        self.assertEqual(session.bucket({"input": (1, 50, 64)}), {"bucket": 2, "exact": False, "plan": plan.buckets[2]["plan"]})
        with self.assertRaisesRegex(tessera.Error, "outside the plan's range 16..128"):
            session.run({"input": np.zeros((1, 129, 64), np.float32)})
        self.assertEqual(tessera.Session(model, plan, compile_ahead=True).shapes_compiled, 4)

    def test_explicit_buckets(self):
        plan = os.path.join(self.dir.name, "explicit.json")
        r = cli("partition", self.model, "--backends", "ref,onednn", "--cost", "roofline", "--shapes",
                "input=1x64x64,1x16x64", "--plan", plan)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(plan) as f:
            j = json.load(f)
        self.assertEqual(j["input_shapes"], {"input": [1, 64, 64]})   # the first listed is opt
        self.assertEqual(j["shape_ranges"][0]["min"], [1, 16, 64])
        r = cli("run", self.model, "--plan", plan, "--input-shape", "input=1x20x64", "--check", "--json", "--repeat", "1")
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_tune_over_a_range_measures_once_per_function_and_writes_one_plan(self):
        plan = os.path.join(self.dir.name, "tuned.json")
        report = os.path.join(self.dir.name, "report.json")
        db = os.path.join(self.dir.name, "costs.db")
        # Buckets 16, 32, 64: the anchors (16 = MIN = OPT, 64 = MAX) are searched, 32 races their plans.
        args = ["tune", self.model, "--backends", "ref,onednn", "--shape-range", "input=1x16x64:1x16x64:1x64x64",
                "--cache", db, "--plan", plan, "--report", report, "--budget-ms", "2", "--repeat", "3"]
        r = cli(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count("bucket input="), 3, r.stdout)
        self.assertEqual(r.stdout.count(", searched in"), 2, r.stdout)
        self.assertEqual(r.stdout.count(", raced the anchors' plans in"), 1, r.stdout)
        with open(report) as f:
            first = json.load(f)
        self.assertEqual(first["models"][0]["buckets"], 3)
        self.assertEqual(len(first["models"][0]["bucket_tune_s"]), 3)
        with open(plan) as f:
            text = f.read()
        again = cli(*args)
        self.assertEqual(again.returncode, 0, again.stderr)
        with open(report) as f:
            second = json.load(f)
        self.assertEqual(sum(second["measured_per_rank"]), 0)   # every measurement and race is in the database
        self.assertEqual(second["from_database"], first["distinct"])
        with open(plan) as f:
            self.assertEqual(f.read(), text)                     # the same plan file, byte for byte
        for length in (20, 32, 50):
            r = cli("run", self.model, "--plan", plan, "--input-shape", f"input=1x{length}x64", "--check", "--json",
                    "--repeat", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
        # --bucket-tune all searches every bucket.
        r = cli(*args, "--bucket-tune", "all", "--no-verify")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.count(", searched in"), 3, r.stdout)


if __name__ == "__main__":
    unittest.main()
