#!/usr/bin/python3
"""tessera's int8 plan under an accuracy budget against ONNX Runtime running the whole model quantized.

    /usr/bin/python3 scripts/int8_vs_ort.py MODEL.onnx [--budgets 0.01,0.02] [--cost measure|roofline]
                      [--held-out K] [--samples S] [--rounds R] [--runs N] [--out DIR]
                      [--backends ref,onednn,onednn_int8]

Per model, with S calibration samples in one file (standard normal, seed 7, stacked along axis 0;
the input's shape from the model; default 1) and K held-out inputs (standard normal, seeds 100..100+K-1; never seen by calibration):
1. ORT's whole-model static QDQ: scripts/quantize_qdq.py on the same calibration input (per-channel
   s8 weights, u8 activations, int32 biases, min/max; output quantization, so ORT fuses QLinearConv).
2. Per budget E: `tessera tune` (or `partition --cost roofline`: int8 priced at 4x f32 everywhere,
   so only the budget limits it, the hardest case for the budget) over --backends with
   --max-rel-error E --calibration; `tessera show --qdq` writes the plan as QDQ ONNX.
3. Errors on every held-out input, relative L2 against ONNX Runtime's fp32 run of the model (max
   over outputs): the tessera plan (`tessera run --input --output-dir`), ORT's whole-model QDQ,
   and ORT running the plan's qdq.onnx against tessera's own int8 outputs (the plan checked by
   another runtime).
4. --rounds R > 0: CPU time per run, 1 thread, alternating rounds (scripts/cpu_pair.py): the
   tessera plan against ORT on the whole-model QDQ.
Prints one JSON object per (model, E) line and a summary table; exits 1 when a held-out error
exceeds its budget (the budget did not hold).
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import onnx

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESSERA = os.environ.get("TESSERA", os.path.join(REPO, "build", "tessera"))
ORT = os.path.join(REPO, "bench", "peer", "ort_bench.js")


def env():
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)
    return e


def sh(args, **kw):
    r = subprocess.run(args, capture_output=True, text=True, env=env(), **kw)
    if r.returncode != 0:
        raise SystemExit(f"int8_vs_ort: {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()[-2000:]}")
    return r.stdout


def input_of(model):
    m = onnx.load(model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    ins = [i for i in m.graph.input if i.name not in inits]
    if len(ins) != 1:
        raise SystemExit(f"int8_vs_ort: {model}: expected one input, found {len(ins)}")
    dims = [d.dim_value for d in ins[0].type.tensor_type.shape.dim]
    return ins[0].name, dims


def outputs(d):
    return [np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")]


def rel(ys, ts):
    return max(float(np.linalg.norm(y.astype(np.float64) - t) / np.linalg.norm(t.astype(np.float64))) for y, t in zip(ys, ts))


def ort_out(model, name, x, d):
    os.makedirs(d, exist_ok=True)
    sh(["node", ORT, model, "1", "--runs", "1", "--warmup", "0", "--input", f"{name}={x}", "--output-dir", d])
    return outputs(d)


def tessera_out(model, plan, name, x, d):
    os.makedirs(d, exist_ok=True)
    sh([TESSERA, "run", model, "--plan", plan, "--input", f"{name}={x}", "--repeat", "1", "--threads", "1", "--output-dir", d])
    return outputs(d)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--budgets", default="0.01,0.02")
    ap.add_argument("--cost", default="measure", choices=["measure", "roofline"])
    ap.add_argument("--held-out", type=int, default=3)
    ap.add_argument("--samples", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--backends", default="ref,onednn,onednn_int8")
    ap.add_argument("--out", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "tessera_int8_vs_ort"))
    a = ap.parse_args()
    stem = os.path.splitext(os.path.basename(a.model))[0]
    out = os.path.join(a.out, stem)
    os.makedirs(out, exist_ok=True)
    name, dims = input_of(a.model)
    cal = os.path.join(out, "cal.npy")
    np.save(cal, np.random.default_rng(7).standard_normal([a.samples * dims[0]] + dims[1:]).astype(np.float32))
    held = []
    for k in range(a.held_out):
        p = os.path.join(out, f"held{k}.npy")
        np.save(p, np.random.default_rng(100 + k).standard_normal(dims).astype(np.float32))
        held.append(p)
    qdq = os.path.join(out, "whole_qdq.onnx")
    sh(["/usr/bin/python3", os.path.join(REPO, "scripts", "quantize_qdq.py"), a.model, qdq, "--input", f"{name}={cal}",
        "--tessera", TESSERA])
    fp32 = [ort_out(a.model, name, x, os.path.join(out, f"fp32_{k}")) for k, x in enumerate(held)]
    whole = [rel(ort_out(qdq, name, x, os.path.join(out, f"whole_{k}")), fp32[k]) for k, x in enumerate(held)]
    failed = False
    rows = []
    for E in a.budgets.split(","):
        plan = os.path.join(out, f"plan_{E}.json")
        cmd = [TESSERA, "tune" if a.cost == "measure" else "partition", a.model, "--backends", a.backends,
               "--max-rel-error", E, "--calibration", f"{name}={cal}", "--plan", plan]
        cmd += ["--cache", os.path.join(out, "costs.db"), "--threads", "1"] if a.cost == "measure" else ["--cost", "roofline"]
        sh(cmd)
        j = json.load(open(plan))
        acc = j.get("accuracy", {})
        int8 = [p for p in j["partitions"] if p["backend"].endswith("_int8")]
        row = {"model": stem, "E": float(E), "cost": a.cost, "samples": a.samples, "int8_partitions": len(int8),
               "partitions": len(j["partitions"]), "verified_error": acc.get("verified_error"),
               "stayed_fp32": len(acc.get("stayed_fp32", []))}
        errs, agree = [], []
        plan_qdq = os.path.join(out, f"plan_{E}_qdq.onnx")
        has_qdq = bool(int8)
        if has_qdq:
            sh([TESSERA, "show", a.model, "--plan", plan, "--qdq", plan_qdq])
        for k, x in enumerate(held):
            mine = tessera_out(a.model, plan, name, x, os.path.join(out, f"t_{E}_{k}"))
            errs.append(rel(mine, fp32[k]))
            if has_qdq:
                agree.append(rel(ort_out(plan_qdq, name, x, os.path.join(out, f"q_{E}_{k}")), mine))
        row["held_out_error_max"] = max(errs)
        row["held_out_errors"] = [round(e, 6) for e in errs]
        row["ort_whole_qdq_errors"] = [round(e, 6) for e in whole]
        row["ort_on_plan_qdq_vs_tessera"] = max(agree) if agree else None
        row["budget_held"] = max(errs) <= float(E)
        failed |= not row["budget_held"]
        if a.rounds > 0:
            r = sh(["/usr/bin/python3", os.path.join(REPO, "scripts", "cpu_pair.py"), str(a.rounds), str(a.runs),
                    "--", "ort_qdq", "node", ORT, qdq, "1", "--runs", "{N}", "--warmup", "1",
                    "--", "tessera", TESSERA, "run", a.model, "--plan", plan, "--repeat", "{N}", "--threads", "1"])
            row["cpu_pair"] = r.strip().splitlines()
            row["tessera_over_ort_qdq"] = float(r.strip().splitlines()[-1].split(":")[-1])
        print(json.dumps(row), flush=True)
        rows.append(row)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
