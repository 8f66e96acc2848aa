#!/usr/bin/python3
"""What comes out of an int8 plan under an accuracy budget is deployable and checkable.

A small conv net (two Conv+Relu, GlobalAveragePool, Flatten, Gemm; seeded weights), partitioned over
ref, onednn and onednn_int8 under --max-rel-error with a calibration input (roofline costs: int8 is
priced cheaper everywhere, so the plan runs int8 where the budget lets it):
- `--emit DIR` writes qdq.onnx (the plan as QDQ ONNX) and qdq_all.onnx (every convolution and matmul
  quantized with the plan's ranges); both pass onnx.checker's full check; qdq.onnx has one weight
  DequantizeLinear per int8 convolution/Gemm the plan runs, none for those it keeps fp32;
- qdq.onnx run by tessera's ref kernels (QuantizeLinear/DequantizeLinear as ONNX defines them) and,
  where onnxruntime-node is installed (scripts/fetch_onnxruntime.sh), by ONNX Runtime, agrees with
  the int8 plan's own outputs within quantization tolerance on a held-out input;
- the plan's stayed_fp32 says why each convolution/Gemm left in fp32 is (not faster; over budget);
- the files are byte-identical from run to run, and `tessera show --qdq` writes the same bytes from
  the plan file; an fp32 plan has none (show --qdq: exit 2, one line);
- Python: tessera.partition/tune take the CLI's calibration options as keywords (calibration= with
  arrays or .npy paths, calibration_ranges=) and make the CLI's plan; errors name the keyword;
- a calibration file of several samples stacked along axis 0: int8 ranges span every sample.
Exits 77 (Skipped) without numpy or onnx.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # ctest's SKIP_RETURN_CODE
    print(f"skipped: {e}")
    sys.exit(77)

CLI = os.environ.get("TESSERA", "build/tessera")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ORT = os.path.join(REPO, "bench", "peer", "ort_bench.js")
E = 0.03


def env():
    e = dict(os.environ)
    e.pop("LD_PRELOAD", None)   # the sanitized CLI carries its own runtime
    return e


def tessera(*args, ok=True):
    r = subprocess.run([CLI, *args], capture_output=True, text=True, env=env())
    if ok and r.returncode != 0:
        raise AssertionError(f"tessera {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def make_model(path):
    rng = np.random.default_rng(3)
    inits = {
        "w0": (rng.standard_normal((16, 3, 3, 3)) / np.sqrt(27)).astype(np.float32),
        "b0": (0.1 * rng.standard_normal(16)).astype(np.float32),
        "w1": (rng.standard_normal((16, 16, 3, 3)) / np.sqrt(144)).astype(np.float32),
        "b1": (0.1 * rng.standard_normal(16)).astype(np.float32),
        "wf": (rng.standard_normal((10, 16)) / 4).astype(np.float32),
        "bf": (0.1 * rng.standard_normal(10)).astype(np.float32),
    }
    conv = dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], name="conv0", **conv),
        helper.make_node("Relu", ["c0"], ["r0"], name="relu0"),
        helper.make_node("Conv", ["r0", "w1", "b1"], ["c1"], name="conv1", **conv),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("GlobalAveragePool", ["r1"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1),
    ]
    g = helper.make_graph(nodes, "int8_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.save(m, path)


def outputs(d):
    return [np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")]


def rel(a, b):
    return max(float(np.linalg.norm(x.astype(np.float64) - y) / np.linalg.norm(y.astype(np.float64))) for x, y in zip(a, b))


def check_emit(tmp, model, cal, held):
    common = ["--backends", "ref,onednn,onednn_int8", "--cost", "roofline", "--max-rel-error", str(E),
              "--calibration", f"x={cal}"]
    d = os.path.join(tmp, "emit")
    tessera("partition", model, *common, "--emit", d)
    plan = json.load(open(os.path.join(d, "plan.json")))
    int8_nodes = {n for p in plan["partitions"] if p["backend"] == "onednn_int8" for n in p["nodes"]}
    anchors = {"conv0", "conv1", "fc"} & int8_nodes
    assert anchors, f"the plan runs nothing in int8: {plan['partitions']}"
    for f in ("qdq.onnx", "qdq_all.onnx"):
        onnx.checker.check_model(onnx.load(os.path.join(d, f)), full_check=True)
    # What stayed fp32, and why: the Gemm (1x16 by 16x10) is memory-bound, int8 is priced no lower.
    stayed = dict(plan["accuracy"].get("stayed_fp32", []))
    assert set(stayed) == {"conv0", "conv1", "fc"} - anchors, (stayed, anchors)
    assert all(w.startswith(("not faster", "over the budget", "its int8 candidates' least error", "no int8 candidate"))
               for w in stayed.values()), stayed
    assert stayed.get("fc", "not faster").startswith("not faster"), stayed
    tight = os.path.join(tmp, "tight.json")
    # A budget below every anchor's end-to-end error: all three stay fp32, each saying so.
    tessera("partition", model, *[c if c != str(E) else "0.0002" for c in common], "--plan", tight)
    why = dict(json.load(open(tight))["accuracy"]["stayed_fp32"])
    assert set(why) == {"conv0", "conv1", "fc"} and all("exceeds the budget 0.0002" in w for w in why.values()), why
    q = onnx.load(os.path.join(d, "qdq.onnx"))
    producer = {o: n for n in q.graph.node for o in n.output}
    for n in q.graph.node:
        if n.op_type in ("Conv", "Gemm"):
            src, w = producer.get(n.input[0]), producer.get(n.input[1])
            quantized = n.name in anchors
            assert (src is not None and src.op_type == "DequantizeLinear") == quantized, n.name
            assert (w is not None and w.op_type == "DequantizeLinear") == quantized, n.name
            if quantized:
                axis = [a.i for a in w.attribute if a.name == "axis"]
                assert axis == [0], (n.name, axis)   # Conv weights [O, ...], Gemm transB: [N, K]
    q_all = onnx.load(os.path.join(d, "qdq_all.onnx"))
    assert sum(n.op_type == "QuantizeLinear" for n in q_all.graph.node) == 3

    # The plan's own outputs, and the QDQ model on ref and (where installed) ONNX Runtime.
    mine = os.path.join(tmp, "int8_out")
    tessera("run", model, "--plan", os.path.join(d, "plan.json"), "--input", f"x={held}", "--repeat", "1",
            "--output-dir", mine)
    fp32 = os.path.join(tmp, "fp32_out")
    tessera("partition", model, "--backends", "ref", "--cost", "roofline", "--plan", os.path.join(tmp, "ref.json"))
    tessera("run", model, "--plan", os.path.join(tmp, "ref.json"), "--input", f"x={held}", "--repeat", "1", "--output-dir", fp32)
    tessera("partition", os.path.join(d, "qdq.onnx"), "--backends", "ref", "--cost", "roofline", "--plan",
            os.path.join(tmp, "qdq_ref.json"))
    via_ref = os.path.join(tmp, "qdq_ref_out")
    tessera("run", os.path.join(d, "qdq.onnx"), "--plan", os.path.join(tmp, "qdq_ref.json"), "--input", f"x={held}",
            "--repeat", "1", "--output-dir", via_ref)
    int8_err = rel(outputs(mine), outputs(fp32))
    ref_gap = rel(outputs(via_ref), outputs(mine))
    print(f"int8 plan vs fp32 on the held-out input: {int8_err:.4g}; qdq.onnx on ref vs the int8 plan: {ref_gap:.3g}")
    assert int8_err > 1e-5, "the int8 plan computes fp32"
    # Same quantization, fp32 accumulation instead of int32 and a rare one-step rounding flip.
    assert ref_gap < 0.05 * int8_err, (ref_gap, int8_err)
    if shutil.which("node") and os.path.isdir(os.path.join(REPO, "bench", "peer", "node_modules", "onnxruntime-node")):
        via_ort = os.path.join(tmp, "qdq_ort_out")
        r = subprocess.run(["node", ORT, os.path.join(d, "qdq.onnx"), "1", "--runs", "1", "--warmup", "0", "--input",
                            f"x={held}", "--output-dir", via_ort], capture_output=True, text=True, env=env())
        assert r.returncode == 0, r.stderr
        ort_gap = rel(outputs(via_ort), outputs(mine))
        print(f"qdq.onnx on ONNX Runtime vs the int8 plan: {ort_gap:.3g}")
        assert ort_gap < 0.05 * int8_err, (ort_gap, int8_err)
    else:
        print("onnxruntime-node not installed: qdq.onnx checked on ref only")

    # Deterministic, and the same from the plan file.
    d2 = os.path.join(tmp, "emit2")
    tessera("partition", model, *common, "--emit", d2)
    for f in ("qdq.onnx", "qdq_all.onnx"):
        assert open(os.path.join(d, f), "rb").read() == open(os.path.join(d2, f), "rb").read(), f
    shown = os.path.join(tmp, "shown.onnx")
    tessera("show", model, "--plan", os.path.join(d, "plan.json"), "--qdq", shown)
    assert open(shown, "rb").read() == open(os.path.join(d, "qdq.onnx"), "rb").read()
    r = tessera("show", model, "--plan", os.path.join(tmp, "ref.json"), "--qdq", os.path.join(tmp, "none.onnx"), ok=False)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, (r.returncode, r.stderr)
    assert "no int8 partition" in r.stderr, r.stderr
    assert not os.path.exists(os.path.join(tmp, "none.onnx"))
    return os.path.join(d, "plan.json")


def check_python(tmp, model_path, cal, cli_plan):
    import tessera as ts
    model = ts.Model(model_path)
    x = np.load(cal)
    backends = ["ref", "onednn", "onednn_int8"]
    p = ts.partition(model, backends=backends, cost="roofline", max_rel_error=E, calibration={"x": x})
    p.save(os.path.join(tmp, "py.json"))
    assert open(os.path.join(tmp, "py.json")).read() == open(cli_plan).read(), "Python's plan differs from the CLI's"
    p2 = ts.partition(model, backends=backends, cost="roofline", max_rel_error=E, calibration={"x": cal})   # a path, as the CLI
    p2.save(os.path.join(tmp, "py2.json"))
    assert open(os.path.join(tmp, "py2.json")).read() == open(cli_plan).read()
    p3 = ts.partition(model, backends=backends, cost="roofline", max_rel_error=E, calibration={"x": x},
                      calibration_ranges="percentile:99.9")
    cli3 = os.path.join(tmp, "cli3.json")
    tessera("partition", model_path, "--backends", ",".join(backends), "--cost", "roofline", "--max-rel-error", str(E),
            "--calibration", f"x={cal}", "--calibration-ranges", "percentile:99.9", "--plan", cli3)
    p3.save(os.path.join(tmp, "py3.json"))
    assert open(os.path.join(tmp, "py3.json")).read() == open(cli3).read()
    assert json.load(open(cli3))["quantization"]["method"] == "percentile:99.9"

    def error_of(**kw):
        try:
            ts.partition(model, backends=backends, cost="roofline", **kw)
        except ts.Error as e:
            return str(e)
        raise AssertionError(f"no error for {kw}")

    # Several samples in one file (stacked along axis 0): ranges span them all, Python as the CLI.
    many = np.concatenate([x, 3.0 * np.random.default_rng(9).standard_normal(x.shape).astype(np.float32)])
    np.save(os.path.join(tmp, "many.npy"), many)
    cli4 = os.path.join(tmp, "cli4.json")
    tessera("partition", model_path, "--backends", ",".join(backends), "--cost", "roofline", "--max-rel-error", str(E),
            "--calibration", f"x={os.path.join(tmp, 'many.npy')}", "--plan", cli4)
    p4 = ts.partition(model, backends=backends, cost="roofline", max_rel_error=E, calibration={"x": many})
    p4.save(os.path.join(tmp, "py4.json"))
    assert open(os.path.join(tmp, "py4.json")).read() == open(cli4).read()
    one = {v: (lo, hi) for v, lo, hi in json.load(open(cli_plan))["quantization"]["ranges"]}
    two = {v: (lo, hi) for v, lo, hi in json.load(open(cli4))["quantization"]["ranges"]}
    assert two["x"][0] < one["x"][0] and two["x"][1] > one["x"][1], (one["x"], two["x"])   # the second sample is 3x wider
    msg = error_of(max_rel_error=E, calibration={"x": x}, calibration_ranges="bogus")
    assert msg.startswith("calibration_ranges") and "--" not in msg, msg
    msg = error_of(calibration_ranges="percentile:99.9")
    assert msg.startswith("calibration_ranges") and "max_rel_error" in msg, msg
    msg = error_of(max_rel_error=E, calibration={"nope": x})
    assert msg.startswith("calibration") and "nope" in msg, msg
    msg = error_of(calibration={"x": x})
    assert msg.startswith("calibration") and "max_rel_error" in msg, msg
    print("Python: calibration=, calibration_ranges= make the CLI's plans; errors name the keyword")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "net.onnx")
        make_model(model)
        cal, held = os.path.join(tmp, "cal.npy"), os.path.join(tmp, "held.npy")
        np.save(cal, np.random.default_rng(7).standard_normal((1, 3, 32, 32)).astype(np.float32))
        np.save(held, np.random.default_rng(8).standard_normal((1, 3, 32, 32)).astype(np.float32))
        plan = check_emit(tmp, model, cal, held)
        try:
            import tessera  # noqa: F401
        except ImportError as e:
            print(f"Python module not built ({e}): keyword checks skipped")
            return 0
        check_python(tmp, model, cal, plan)
    return 0


if __name__ == "__main__":
    sys.exit(main())
