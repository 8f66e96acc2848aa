#!/usr/bin/python3
"""The Python API (docs/deploy.md, "Python"), exercised as a user would write it.

Run by ctest with Debian's /usr/bin/python3 and PYTHONPATH=build/python, from the source root;
TESSERA is the CLI, to compare the module's plans and outputs with the CLI's.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import tessera

CLI = os.environ.get("TESSERA", "build/tessera")
MLP = "data/models/tiny_mlp.json"
CONV = "data/models/conv_block.json"
SYMBOLIC = "tests/inputs/good/symbolic.onnx"


def cli(*args):
    # A sanitized build preloads the sanitizers' runtime for python (tests/python/CMakeLists.txt);
    # the CLI links its own, and two ASan runtimes in one process refuse to start.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env)


class ModelTest(unittest.TestCase):
    def test_inputs_and_outputs_are_name_shape_dtype(self):
        model = tessera.Model(MLP)
        self.assertEqual(model.inputs, [("x", (1, 16), "float32")])
        self.assertEqual(model.outputs, [("y", (1, 8), "float32")])

    def test_input_shapes_bind_symbolic_dimensions(self):
        model = tessera.Model(SYMBOLIC, input_shapes={"x": (2, 3, 8, 8)})
        self.assertEqual(model.inputs[0][1], (2, 3, 8, 8))
        self.assertEqual(tessera.Model(SYMBOLIC, input_shapes={"x": "1x3x4x4"}).inputs[0][1], (1, 3, 4, 4))

    def test_a_missing_file_is_a_tessera_error(self):
        with self.assertRaises(tessera.Error) as e:
            tessera.Model("no/such/model.onnx")
        self.assertIn("no/such/model.onnx", str(e.exception))
        self.assertNotIn("\n", str(e.exception))
        self.assertTrue(issubclass(tessera.Error, Exception))


def model_without_weights(d, count):
    """A model exported without its weights: `count` initializers in an external file that is absent."""
    import onnx
    from onnx import TensorProto, helper
    nodes, inits = [], []
    for k in range(count):
        w = TensorProto(name=f"w{k}", data_type=TensorProto.FLOAT, dims=[4], data_location=TensorProto.EXTERNAL)
        for key, value in (("location", "weights.bin"), ("offset", str(16 * k)), ("length", "16")):
            entry = w.external_data.add()
            entry.key, entry.value = key, value
        inits.append(w)
        nodes.append(helper.make_node("Add", [f"x{k}", f"w{k}"], [f"x{k + 1}"], name=f"add{k}"))
    g = helper.make_graph(nodes, "no_weights", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info(f"x{count}", TensorProto.FLOAT, [4])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    path = os.path.join(d, "no_weights.onnx")
    onnx.save(m, path)
    return path


class WarningTest(unittest.TestCase):
    def load_in_subprocess(self, path, verbose):
        # The warnings go to the process's stderr (as the CLI's), so a child process shows them.
        code = f"import tessera; m = tessera.Model({path!r}, verbose={verbose}); print(m.num_nodes)"
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)

    def test_missing_weights_are_one_summary_line_as_in_the_cli(self):
        with tempfile.TemporaryDirectory() as d:
            path = model_without_weights(d, 5)
            r = self.load_in_subprocess(path, False)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.strip(), "5")
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
            self.assertIn("warning: 5 weights of no_weights.onnx are not on disk: running with seeded random weights "
                          "(verbose=True lists them)", r.stderr)
            cli_run = cli("info", path)
            self.assertEqual(cli_run.returncode, 0, cli_run.stderr)
            self.assertEqual(cli_run.stderr.count("\n"), 1, cli_run.stderr)
            self.assertIn("5 weights of no_weights.onnx are not on disk", cli_run.stderr)

    def test_verbose_lists_each_missing_weight(self):
        with tempfile.TemporaryDirectory() as d:
            r = self.load_in_subprocess(model_without_weights(d, 3), True)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr.count("is missing; its constants are shape-only"), 3, r.stderr)
            self.assertEqual(r.stderr.count("\n"), 4, r.stderr)


class PlanTest(unittest.TestCase):
    def test_partition_matches_the_cli_byte_for_byte(self):
        model = tessera.Model(MLP)
        plan = tessera.partition(model, backends=["ref", "onednn"], cost="roofline")
        with tempfile.TemporaryDirectory() as d:
            mine, theirs = os.path.join(d, "py.json"), os.path.join(d, "cli.json")
            plan.save(mine)
            r = cli("partition", MLP, "--backends", "ref,onednn", "--cost", "roofline", "--plan", theirs)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(mine, "rb") as a, open(theirs, "rb") as b:
                self.assertEqual(a.read(), b.read())
            again = tessera.Plan.load(mine)
            self.assertEqual(again.partitions, plan.partitions)
            self.assertEqual(again.total_cost, plan.total_cost)

    def test_partitions_are_dicts_covering_every_node(self):
        plan = tessera.partition(tessera.Model(MLP), backends=["ref", "onednn"], cost="roofline", search="collage")
        nodes = []
        for p in plan.partitions:
            self.assertEqual(set(p), {"backend", "nodes", "cost", "function"})
            self.assertIn(p["backend"], ("ref", "onednn"))
            nodes += p["nodes"]
        self.assertEqual(sorted(nodes), sorted(["mm0", "add0", "relu0", "mm1", "add1"]))
        self.assertIsInstance(plan.total_cost, float)
        self.assertAlmostEqual(plan.total_cost, sum(p["cost"] for p in plan.partitions) + plan.transfer_cost, places=9)

    def test_mock_costs(self):
        with tempfile.TemporaryDirectory() as d:
            costs = os.path.join(d, "costs.json")
            with open(costs, "w") as f:
                f.write('{"format": "tessera.mock_costs", "version": 1, '
                        '"backends": {"ref": {"per_op": 2.0}, "onednn": {"per_op": 1.0}}}')
            plan = tessera.partition(tessera.Model(MLP), backends=["ref", "onednn"], cost="mock:" + costs)
            self.assertEqual([p["backend"] for p in plan.partitions], ["onednn"])
            self.assertEqual(plan.cost_model, "mock")

    def test_tune_measures_into_the_cache_and_reuses_it(self):
        with tempfile.TemporaryDirectory() as d:
            cache = os.path.join(d, "costs.db")
            plan = tessera.tune(tessera.Model(MLP), backends=["ref", "onednn"], cache=cache)
            self.assertEqual(plan.cost_model, "measure")
            self.assertGreater(os.path.getsize(cache), 0)
            size = os.path.getsize(cache)
            again = tessera.tune(tessera.Model(MLP), backends=["ref", "onednn"], cache=cache)
            self.assertEqual(os.path.getsize(cache), size)   # nothing measured twice
            self.assertEqual(again.partitions, plan.partitions)

    def test_bad_arguments_are_tessera_errors(self):
        model = tessera.Model(MLP)
        for kwargs in ({"backends": ["nope"]}, {"backends": ["ref"], "cost": "bogus"},
                       {"backends": ["ref"], "search": "sideways"}):
            with self.assertRaises(tessera.Error):
                tessera.partition(model, **kwargs)
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write('{"format": "tessera.graph"}')
            with self.assertRaises(tessera.Error) as e:
                tessera.Plan.load(bad)
            self.assertIn("bad.json", str(e.exception))

    def test_max_rel_error_budgets_bf16_and_records_the_verified_error(self):
        model = tessera.Model(CONV)
        backends = ["ref", "onednn", "onednn_bf16"]
        with tempfile.TemporaryDirectory() as d:
            cache = os.path.join(d, "costs.db")
            fp32 = tessera.tune(model, backends=backends, cache=cache)
            self.assertIsNone(fp32.accuracy)
            self.assertNotIn("onednn_bf16", fp32.backends())
            x = np.random.default_rng(7).standard_normal(model.inputs[0][1]).astype(np.float32)
            plan = tessera.tune(model, backends=backends, cache=cache, max_rel_error=0.5,
                                calibration={model.inputs[0][0]: x})
            self.assertIsNotNone(plan.accuracy)
            self.assertLessEqual(plan.accuracy["verified_error"], 0.5)
            self.assertEqual(plan.accuracy["max_rel_error"], 0.5)
            self.assertTrue(plan.accuracy["calibration"].startswith("npy:"))
            again = tessera.partition(model, backends=backends, cost="measure", cache=cache, max_rel_error=0.5)
            self.assertEqual(again.accuracy["calibration"], "seeded:0")
        with self.assertRaises(tessera.Error):
            tessera.partition(model, backends=backends, cost="roofline", max_rel_error=-1.0)


class ProfileAndBenchTest(unittest.TestCase):
    """Session.profile and tessera.bench: the CLI's `run --profile` and `bench`, from Python."""

    def test_profile_lists_the_calls_the_cli_profiles_with_their_predicted_costs(self):
        model = tessera.Model(CONV)
        plan = tessera.partition(model, backends=["ref", "onednn", "eigen"], cost="roofline")
        calls = tessera.Session(model, plan).profile(repeat=2)
        keys = {"call", "kernel", "backend", "partition", "nodes", "predicted_ms", "measured_ms"}
        self.assertTrue(all(set(c) == keys for c in calls))
        self.assertTrue(all(c["measured_ms"] >= 0 for c in calls))
        # Every partition is one call, with the partition's cost (s) as its prediction (ms).
        parts = plan.partitions
        by_partition = {c["partition"]: c for c in calls if c["partition"] is not None}
        self.assertEqual(sorted(by_partition), list(range(len(parts))))
        for k, c in by_partition.items():
            self.assertEqual(c["backend"], parts[k]["backend"])
            self.assertAlmostEqual(c["predicted_ms"], parts[k]["cost"] * 1e3, places=9)
            self.assertEqual(sorted(c["nodes"]), sorted(parts[k]["nodes"]))
        # The same calls, in the same order, as `tessera run --profile` prints.
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "plan.json")
            plan.save(path)
            r = cli("run", CONV, "--plan", path, "--profile", "--repeat", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = [line for line in r.stdout.splitlines() if line[:1].isdigit()]
            self.assertEqual(len(rows), len(calls), r.stdout)
            for line, c in zip(rows, calls):
                self.assertIn(" " + c["kernel"][:34] + " ", line)
            # With --json stdout stays one JSON object; the calls are its "profile" list.
            r = cli("run", CONV, "--plan", path, "--profile", "--json", "--repeat", "1")
            self.assertEqual(r.returncode, 0, r.stderr)
            lines = r.stdout.splitlines()
            self.assertEqual(len(lines), 1, r.stdout)
            listed = json.loads(lines[0])["profile"]
            self.assertEqual([c["kernel"] for c in listed], [c["kernel"] for c in calls])

    def test_profile_takes_inputs_like_run_and_refuses_bad_ones(self):
        model = tessera.Model(MLP)
        session = tessera.Session(model, tessera.partition(model, backends=["ref"], cost="roofline"))
        self.assertTrue(session.profile({"x": np.ones((1, 16), np.float64)}, repeat=1))
        with self.assertRaises(tessera.Error):
            session.profile({"nope": np.ones((1, 16), np.float32)})
        with self.assertRaises(tessera.Error):
            session.profile(repeat=0)

    def test_bench_predicts_as_the_cli_and_measures_every_combination(self):
        model = tessera.Model(MLP)
        rows = tessera.bench(model, ["ref", "ref,onednn", ["ref", "eigen"]], cost="roofline", repeat=1)
        self.assertEqual([r["backends"] for r in rows], [["ref"], ["ref", "onednn"], ["ref", "eigen"]])
        for r in rows:
            self.assertEqual(set(r), {"backends", "predicted_ms", "measured_ms", "predicted_over_measured", "clock",
                                      "rel_error", "error"})
            self.assertIsNone(r["error"])
            self.assertGreater(r["measured_ms"], 0)
            self.assertAlmostEqual(r["predicted_over_measured"], r["predicted_ms"] / r["measured_ms"], places=9)
            self.assertEqual(r["clock"], "cpu")   # one thread: CPU time per run
            plan = tessera.partition(model, backends=r["backends"], cost="roofline")
            self.assertAlmostEqual(r["predicted_ms"], plan.total_cost * 1e3, places=9)
        import json
        out = cli("bench", MLP, "--combos", "ref", "ref,onednn", "ref,eigen", "--cost", "roofline", "--json", "--repeat", "1")
        self.assertEqual(out.returncode, 0, out.stderr)
        for mine, theirs in zip(rows, json.loads(out.stdout)):
            self.assertEqual(mine["backends"], theirs["backends"])
            self.assertAlmostEqual(mine["predicted_ms"], theirs["predicted_ms"], places=9)
            self.assertEqual(mine["clock"], theirs["clock"])

    def test_bench_refuses_a_misspelt_backend_before_running(self):
        with self.assertRaises(tessera.Error) as e:
            tessera.bench(tessera.Model(MLP), ["ref", "ref,onedn"])
        self.assertIn("onedn", str(e.exception))


class SessionTest(unittest.TestCase):
    def test_run_matches_the_cli_run_output_dir(self):
        model = tessera.Model(CONV)
        plan = tessera.partition(model, backends=["ref", "onednn", "eigen"], cost="roofline")
        name, shape, dtype = model.inputs[0]
        x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
        outputs = tessera.Session(model, plan, threads=1).run({name: x})
        self.assertEqual(sorted(outputs), sorted(o[0] for o in model.outputs))
        with tempfile.TemporaryDirectory() as d:
            plan.save(os.path.join(d, "plan.json"))
            np.save(os.path.join(d, "x.npy"), x)
            r = cli("run", CONV, "--plan", os.path.join(d, "plan.json"), "--input", "%s=%s" % (name, os.path.join(d, "x.npy")),
                    "--repeat", "1", "--output-dir", os.path.join(d, "out"))
            self.assertEqual(r.returncode, 0, r.stderr)
            for out_name, out_shape, out_dtype in model.outputs:
                got = outputs[out_name]
                self.assertEqual((got.shape, str(got.dtype)), (out_shape, out_dtype))
                np.testing.assert_array_equal(got, np.load(os.path.join(d, "out", out_name + ".npy")))

    def test_outputs_are_owned_and_inputs_converted_within_kind(self):
        model = tessera.Model(MLP)
        session = tessera.Session(model, tessera.partition(model, backends=["ref"], cost="roofline"))
        x = np.linspace(-1, 1, 16).reshape(1, 16)             # float64: converted to float32
        first = session.run({"x": x})["y"]
        second = session.run({"x": -x})["y"]
        self.assertFalse(np.array_equal(first, second))        # the first result was not overwritten
        np.testing.assert_array_equal(first, session.run({"x": x.astype(np.float32)})["y"])
        self.assertTrue(first.flags.owndata or first.base is not None)

    def test_wrong_inputs_are_tessera_errors(self):
        model = tessera.Model(MLP)
        session = tessera.Session(model, tessera.partition(model, backends=["ref"], cost="roofline"))
        for inputs in ({"x": np.zeros((1, 15), np.float32)}, {"x": np.zeros((1, 16), np.complex64)},
                       {}, {"x": np.zeros((1, 16), np.float32), "z": np.zeros(1)}):
            with self.assertRaises(tessera.Error) as e:
                session.run(inputs)
            self.assertNotIn("\n", str(e.exception))

    def test_a_plan_for_another_model_is_refused(self):
        conv_plan = tessera.partition(tessera.Model(CONV), backends=["ref"], cost="roofline")
        with self.assertRaises(tessera.Error) as e:
            tessera.Session(tessera.Model(MLP), conv_plan)
        self.assertNotIn("\n", str(e.exception))

    def test_a_plan_for_other_shapes_is_refused_naming_both(self):
        small = tessera.Model(SYMBOLIC, input_shapes={"x": (1, 3, 8, 8)})
        plan = tessera.partition(small, backends=["ref"], cost="roofline")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "plan.json")
            plan.save(path)
            big = tessera.Model(SYMBOLIC, input_shapes={"x": (1, 3, 16, 16)})
            with self.assertRaises(tessera.Error) as e:
                tessera.Session(big, tessera.Plan.load(path))
            msg = str(e.exception)
            self.assertIn("x=1x3x8x8", msg)
            self.assertIn("x=1x3x16x16", msg)
            # The CLI refuses it the same way: exit 2, one line.
            r = cli("run", SYMBOLIC, "--input-shape", "x=1x3x16x16", "--plan", path, "--repeat", "1")
            self.assertEqual(r.returncode, 2)
            self.assertEqual(len(r.stderr.strip().splitlines()), 1, r.stderr)
            self.assertIn("x=1x3x8x8", r.stderr)
            tessera.Session(small, tessera.Plan.load(path)).run({"x": np.ones((1, 3, 8, 8), np.float32)})


class ComputedOperandTest(unittest.TestCase):
    def test_an_operand_computed_from_the_inputs_is_read_anew_on_every_run(self):
        # y = x @ Transpose(z) with the Transpose on ref and the MatMul on a library backend: the
        # MatMul's second operand is a function input computed from a graph input, which onednn
        # and xnnpack must not keep as packed weights from the first run (BoundaryLayouts::
        # varying_inputs): every run with new inputs gives x @ z^T. Likewise y = x @ w with w a
        # graph input.
        try:
            import onnx
            from onnx import TensorProto, helper
        except ImportError:
            self.skipTest("no python3-onnx")
        nodes = [helper.make_node("Transpose", ["z"], ["zt"], perm=[1, 0], name="t"),
                 helper.make_node("MatMul", ["x", "zt"], ["y"], name="mm")]
        g = helper.make_graph(nodes, "computed_operand", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8]),
                                                          helper.make_tensor_value_info("z", TensorProto.FLOAT, [6, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
        m.ir_version = 8
        g2 = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "input_operand",
                               [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8]),
                                helper.make_tensor_value_info("w", TensorProto.FLOAT, [8, 6])],
                               [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])])
        m2 = helper.make_model(g2, opset_imports=[helper.make_opsetid("", 13)])
        m2.ir_version = 8
        with tempfile.TemporaryDirectory() as d:
            path, path2 = os.path.join(d, "m.onnx"), os.path.join(d, "m2.onnx")
            onnx.save(m, path)
            onnx.save(m2, path2)
            model, model2 = tessera.Model(path), tessera.Model(path2)
            rng = np.random.default_rng(3)
            for backend in ("onednn", "xnnpack"):
                plan = tessera.partition(model, backends=["ref", backend], cost="roofline", forbid=["op:Transpose=" + backend])
                self.assertEqual({n: p["backend"] for p in plan.partitions for n in p["nodes"]}, {"t": "ref", "mm": backend})
                session = tessera.Session(model, plan, threads=1)
                plan2 = tessera.partition(model2, backends=[backend], cost="roofline")
                session2 = tessera.Session(model2, plan2, threads=1)
                for _ in range(3):
                    x = rng.standard_normal((4, 8)).astype(np.float32)
                    z = rng.standard_normal((6, 8)).astype(np.float32)
                    np.testing.assert_allclose(session.run({"x": x, "z": z})["y"], x @ z.T, rtol=1e-5, atol=1e-5, err_msg=backend)
                    np.testing.assert_allclose(session2.run({"x": x, "w": z.T.copy()})["y"], x @ z.T, rtol=1e-5, atol=1e-5,
                                               err_msg=backend + ", graph input")


class OutputDirTest(unittest.TestCase):
    def test_output_names_are_sanitized(self):
        # A graph whose output name has characters outside [A-Za-z0-9._-].
        with tempfile.TemporaryDirectory() as d:
            graph = os.path.join(d, "g.json")
            with open(graph, "w") as f:
                f.write('{"format": "tessera.graph", "version": 1, "name": "g", "opset": 17,'
                        ' "inputs": [{"name": "x", "dtype": "f32", "shape": [2]}],'
                        ' "nodes": [{"name": "r", "op": "Relu", "inputs": ["x"], "outputs": ["out/put:0"]}],'
                        ' "outputs": ["out/put:0"]}')
            plan = os.path.join(d, "plan.json")
            self.assertEqual(cli("partition", graph, "--backends", "ref", "--cost", "roofline", "--plan", plan).returncode, 0)
            r = cli("run", graph, "--plan", plan, "--repeat", "1", "--output-dir", os.path.join(d, "o"))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(os.listdir(os.path.join(d, "o")), ["out_put_0.npy"])
            self.assertEqual(np.load(os.path.join(d, "o", "out_put_0.npy")).shape, (2,))


if __name__ == "__main__":
    unittest.main(verbosity=1)
