#!/usr/bin/python3
"""Models as people ship them, run by tessera over every real backend, against ONNX Runtime's outputs.

tests/data/shipped_models/ holds small models of each kind (fp32, fp16 after half(), static QDQ,
QOperator, ONNX Runtime's dynamic quantization, its com.microsoft QLinear ops, torch ViT and Swin
exports whose shapes are computed in-graph), seeded inputs, and ONNX Runtime's outputs on those
inputs (onnxruntime-node, CPU provider), all written by scripts/shipped_models.py; manifest.json
says how each output is compared. For every model and every plan (ref alone; ref with each other
real backend; all of them together), `tessera partition --cost roofline` then `tessera run
--input ... --output-dir` must match ONNX Runtime: relative L2 error at most the manifest's bound
(fp32 1e-4, fp16 1e-2), or, for outputs that are dequantized quantized values, every element
within one quantization step.

Prints one line per model and plan with the error found (the figures docs/benchmarks.md quotes)
and how many functions its backend's compiler refused (they run on ref's kernels, with a warning:
a roofline plan may still place a node where the compiler cannot take it).
Run by ctest with Debian's /usr/bin/python3 from the source root; TESSERA is the CLI. Exits 77
(Skipped) without numpy.
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError as e:  # ctest's SKIP_RETURN_CODE
    print(f"skipped: {e}")
    sys.exit(77)

CLI = os.environ.get("TESSERA", "build/tessera")
DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "shipped_models")
BACKENDS = ["onednn", "xnnpack", "eigen", "blas", "halide"]
PLANS = [["ref"]] + [["ref", b] for b in BACKENDS] + [["ref"] + BACKENDS]


def env():
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)   # the sanitized CLI carries its own runtime
    return e


def tessera(*args):
    r = subprocess.run([CLI, *args], capture_output=True, text=True, env=env())
    if r.returncode != 0:
        raise AssertionError(f"tessera {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def error(got, want, rule):
    """(measure, passes) for one output under the manifest's rule."""
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}", False
    g, w = got.astype(np.float64), want.astype(np.float64)
    if rule["metric"] == "rel_l2":
        e = float(np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-30))
        return f"rel_l2 {e:.2e}", e <= rule["max"]
    steps = float(np.max(np.abs(g - w))) / rule["step"]
    return f"{steps:.2f} steps", steps <= rule["max"] + 1e-3


def check(model, backends):
    """Partitions and runs `model` over `backends`; returns (line, failures)."""
    with tempfile.TemporaryDirectory(prefix="shipped_") as d:
        shapes = []
        inputs = []
        for name, f in model["inputs"].items():
            shape = np.load(os.path.join(DATA, f), mmap_mode="r").shape
            shapes += ["--input-shape", f"{name}={'x'.join(map(str, shape))}"]
            inputs += ["--input", f"{name}={os.path.join(DATA, f)}"]
        path = os.path.join(DATA, model["model"])
        plan = os.path.join(d, "plan.json")
        tessera("partition", path, "--backends", ",".join(backends), "--cost", "roofline", "--plan", plan, *shapes)
        r = tessera("run", path, "--plan", plan, "--repeat", "1", "--output-dir", d, *inputs)
        failures = []
        fallbacks = r.stderr.count("runs on ref kernels")
        used = sorted({p["backend"] for p in json.load(open(plan))["partitions"]})
        parts = []
        for out, rule in model["outputs"].items():
            got = np.load(os.path.join(d, out.replace(":", "_") + ".npy"))
            want = np.load(os.path.join(DATA, rule["file"]))
            measure, ok = error(got, want, rule)
            parts.append(f"{out}: {measure}")
            if not ok:
                failures.append(f"output {out}: {measure} beyond {rule}")
    line = f"{model['name']:17} {','.join(backends):37} on {','.join(used):31} {'; '.join(parts)}"
    if fallbacks:
        line += f" ({fallbacks} functions on ref: refused by their compiler)"
    return line, [f"{model['name']} over {','.join(backends)}: {f}" for f in failures]


def main():
    manifest = json.load(open(os.path.join(DATA, "manifest.json")))
    kinds = {m["kind"] for m in manifest["models"]}
    for kind in ("fp32", "fp16", "static qdq", "static qoperator", "dynamic", "com.microsoft qlinear",
                 "fp32 in-graph shapes"):
        assert kind in kinds, f"manifest.json has no model of kind {kind}"
    assert all(m["shape_ops"] > 0 for m in manifest["models"] if m["kind"] == "fp32 in-graph shapes")
    jobs = [(m, b) for m in manifest["models"] for b in PLANS]
    failures = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for line, bad in pool.map(lambda job: check(*job), jobs):
            print(line, flush=True)
            failures += bad
    if failures:
        print("\n".join(failures), file=sys.stderr)
        return 1
    print(f"{len(jobs)} runs ({len(manifest['models'])} models x {len(PLANS)} plans) match ONNX Runtime")
    return 0


if __name__ == "__main__":
    sys.exit(main())
