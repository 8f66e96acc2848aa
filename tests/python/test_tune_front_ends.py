"""Every front end tunes through one pipeline (include/tessera/tune.h): on one cost database,
`tessera tune`, `tessera partition --cost measure`, `tessera bench`'s row for the same backends,
Python's tessera.tune and tessera.partition(cost="measure") write byte-identical plans, and only
the first of them measures anything.

Run by ctest with PYTHONPATH=build/python and TESSERA=build/tessera, from the source tree.
"""
import json
import os
import subprocess
import tempfile
import unittest

import tessera

TESSERA = os.environ.get("TESSERA", "build/tessera")
# A small real network (convolutions, batch norm, ReLU, pooling) and a hand-written conv block.
CASES = [
    ("data/models/conv_block.json", ["ref", "onednn", "eigen"]),
    ("data/models/squeezenet1_1.onnx", ["ref", "onednn"]),
]
# Quick measurements: what tune measures first, the others find in the database.
TUNE_FLAGS = ["--budget-ms", "2", "--repeat", "5"]


def cli(*args):
    # A sanitized build preloads the sanitizers' runtime for python (tests/python/CMakeLists.txt);
    # the CLI links its own.
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    r = subprocess.run([TESSERA, *args], capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise AssertionError("tessera %s: exit %d\n%s" % (" ".join(args), r.returncode, r.stderr))
    return r


def read(path):
    with open(path, "rb") as f:
        return f.read()


class OnePipelineTest(unittest.TestCase):
    def check_model(self, model_path, backends):
        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "costs.db")
            joined = ",".join(backends)
            plans = {}

            plans["tessera tune"] = os.path.join(d, "tune.json")
            cli("tune", model_path, "--backends", joined, "--cache", db, "--plan", plans["tessera tune"], *TUNE_FLAGS)
            tuned = read(plans["tessera tune"])
            # The race ran and chose, unless there was nothing to race: a search's plan on one backend
            # is every single-backend contender's plan too (the race keeps distinct plans only).
            if b'"verified"' not in tuned:
                on = {p["backend"] for p in json.loads(tuned)["partitions"]}
                self.assertEqual(len(on), 1, "no race, although the search's plan mixes backends")
            size = os.path.getsize(db)

            plans["tessera partition --cost measure"] = os.path.join(d, "partition.json")
            cli("partition", model_path, "--backends", joined, "--cost", "measure", "--cache", db,
                "--plan", plans["tessera partition --cost measure"])

            bench_dir = os.path.join(d, "bench")
            cli("bench", model_path, "--combos", joined, "--cost", "measure", "--cache", db, "--repeat", "1",
                "--plan-dir", bench_dir)
            plans["tessera bench"] = os.path.join(bench_dir, "+".join(backends) + ".json")

            model = tessera.Model(model_path)
            plans["tessera.tune"] = os.path.join(d, "py_tune.json")
            tessera.tune(model, backends=backends, cache=db).save(plans["tessera.tune"])
            plans["tessera.partition(cost='measure')"] = os.path.join(d, "py_partition.json")
            tessera.partition(model, backends=backends, cost="measure", cache=db).save(
                plans["tessera.partition(cost='measure')"])

            for front_end, path in plans.items():
                with self.subTest(model=model_path, front_end=front_end):
                    self.assertEqual(read(path), tuned, "%s wrote another plan than tessera tune" % front_end)
            # Every later front end found every price and verdict in the database.
            self.assertEqual(os.path.getsize(db), size)

    def test_without_the_race_every_front_end_returns_the_search_plan(self):
        model_path, backends = CASES[0]
        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "costs.db")
            joined = ",".join(backends)
            tune, part, py = (os.path.join(d, n) for n in ("tune.json", "partition.json", "py.json"))
            cli("tune", model_path, "--backends", joined, "--cache", db, "--plan", tune, "--no-verify", *TUNE_FLAGS)
            cli("partition", model_path, "--backends", joined, "--cost", "measure", "--cache", db, "--plan", part,
                "--no-verify")
            tessera.tune(tessera.Model(model_path), backends=backends, cache=db, verify=False).save(py)
            self.assertNotIn(b'"verified"', read(tune))
            self.assertEqual(read(part), read(tune))
            self.assertEqual(read(py), read(tune))

    def test_conv_block(self):
        self.check_model(*CASES[0])

    def test_squeezenet(self):
        self.check_model(*CASES[1])


if __name__ == "__main__":
    unittest.main()
