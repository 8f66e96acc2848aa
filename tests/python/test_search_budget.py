"""The search under a memory budget, end to end through the CLI (src/search/bounded_search.h).

A random 600-node convolutional DAG (scripts/random_model.py) whose nodes alternate between six
real backends, partitioned with roofline costs:
  - with --search-memory 1 the exact search cannot finish: the CLI still exits 0, says in one
    warning line which fallback gave the plan, and the plan records "optimality" with a lower bound
    and a gap that add up to its total;
  - with the default budget it finishes (exactly or not) and the plan covers every node;
  - the same command gives the byte-identical plan at -j 1 and -j 2.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TESSERA = os.environ.get("TESSERA", os.path.join(ROOT, "build", "tessera"))
BACKENDS = "ref,onednn,xnnpack,halide,eigen,blas"


def partition(model, plan, *extra):
    cmd = [TESSERA, "partition", model, "--backends", BACKENDS, "--cost", "roofline", "--plan", plan, *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr}"
    with open(plan) as f:
        return json.load(f), r.stderr


def main():
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "random.onnx")
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "random_model.py"), "--nodes", "600",
                        "--seed", "7", "--out", model], check=True, capture_output=True)

        plan, err = partition(model, os.path.join(tmp, "tiny.json"), "--search-memory", "1")
        opt = plan.get("optimality")
        assert opt is not None and opt["proven"] is False, plan.keys()
        assert opt["fallback"] in ("layout-blind", "beam", "greedy"), opt
        assert opt["memory_budget_mb"] == 1, opt
        assert 0 <= opt["lower_bound"] <= plan["total_cost"], opt
        assert abs(opt["lower_bound"] + opt["gap"] - plan["total_cost"]) <= 1e-9 * max(1.0, plan["total_cost"]), opt
        lines = [l for l in err.splitlines() if "fell back to the " + opt["fallback"] in l]
        assert len(lines) == 1, err

        full, _ = partition(model, os.path.join(tmp, "default.json"))
        nodes = sum(len(p["nodes"]) for p in full["partitions"])
        with_budget = sum(len(p["nodes"]) for p in plan["partitions"])
        assert nodes == with_budget, (nodes, with_budget)
        if "optimality" not in full:   # proven: no fallback can beat it
            assert full["total_cost"] <= plan["total_cost"] * (1 + 1e-9), (full["total_cost"], plan["total_cost"])

        a = os.path.join(tmp, "j1.json")
        b = os.path.join(tmp, "j2.json")
        partition(model, a, "--search-memory", "1", "-j", "1")
        partition(model, b, "--search-memory", "1", "-j", "2")
        assert open(a, "rb").read() == open(b, "rb").read(), "plans differ between -j 1 and -j 2"
    print("search budget: ok")


if __name__ == "__main__":
    main()
