#!/usr/bin/python3
"""tessera's outputs against PyTorch's on the bundled torchvision/torch models.

scripts/export_models.py writes each model's weights and, beside them, PyTorch's reference:
data/models/reference/<name>.{input.npy,output.npy,json}. This test loads each model through the
Python API, partitions it over the real backends, saves and reloads the plan, runs it on the
reference input and requires  max |tessera - torch| <= 1e-4 * max |torch|  (the output's scale).

A fresh clone has neither weights nor references (both are generated, git-ignored); a checkout
whose weights were regenerated after the references has references that no longer match. In
both cases there is nothing to compare with: the test says so and exits 77, which ctest reports
as Skipped (SKIP_RETURN_CODE), never as a pass. Run /usr/bin/python3 scripts/export_models.py.
"""
import hashlib
import json
import os
import sys
import tempfile

import numpy as np

import tessera

MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1", "bert_encoder", "bert_encoder_24"]
BACKENDS = ["ref", "onednn", "eigen", "blas"]
TOLERANCE = 1e-4
SKIP = 77


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# Where the models, weights and references are: data/models, or a folder of their own that
# scripts/export_models.py --out wrote (ctest's fixture does that, so the test always runs).
MODELS_DIR = os.environ.get("TESSERA_MODELS_DIR", os.path.join("data", "models"))


def reference(name):
    """(input, output, why-not): the reference when it matches the weights on disk."""
    ref = os.path.join(MODELS_DIR, "reference", name)
    weights = os.path.join(MODELS_DIR, name + ".weights")
    if not os.path.exists(ref + ".json"):
        return None, None, "no reference (%s.json)" % ref
    if not os.path.exists(weights):
        return None, None, "no weights (%s)" % weights
    with open(ref + ".json") as f:
        meta = json.load(f)
    if meta.get("weights_sha256") != sha256(weights):
        return None, None, "%s was regenerated after the reference" % weights
    return np.load(ref + ".input.npy"), np.load(ref + ".output.npy"), None


def main():
    checked, skipped, failed = 0, [], []
    for name in MODELS:
        x, expected, why = reference(name)
        if why:
            skipped.append("%s: %s" % (name, why))
            continue
        model = tessera.Model(os.path.join(MODELS_DIR, name + ".onnx"))
        plan = tessera.partition(model, backends=BACKENDS, cost="roofline")
        with tempfile.TemporaryDirectory() as d:
            plan.save(os.path.join(d, "plan.json"))
            plan = tessera.Plan.load(os.path.join(d, "plan.json"))
        (in_name, _, _), = model.inputs
        (out_name, _, _), = model.outputs
        got = tessera.Session(model, plan).run({in_name: x})[out_name]
        scale = float(np.max(np.abs(expected)))
        err = float(np.max(np.abs(got.astype(np.float64) - expected)))
        used = sorted({p["backend"] for p in plan.partitions})
        ok = got.shape == expected.shape and err <= TOLERANCE * scale
        print("%-16s %3d partitions on %-24s max abs error %.3g, scale %.3g, ratio %.2e  %s" % (
            name, len(plan.partitions), ",".join(used), err, scale, err / scale if scale else 0.0,
            "ok" if ok else "FAILED"))
        checked += 1
        if not ok:
            failed.append(name)
    for s in skipped:
        print("skipped %s" % s)
    if failed:
        print("FAILED: %s beyond %g of the output's scale" % (", ".join(failed), TOLERANCE))
        return 1
    if checked == 0:
        print("SKIPPED: no model has a PyTorch reference matching its weights; "
              "run /usr/bin/python3 scripts/export_models.py to make them")
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
