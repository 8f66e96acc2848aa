#!/usr/bin/python3
"""Where tessera's time goes against ONNX Runtime's, per op family, on the same model.

    /usr/bin/python3 scripts/profile_vs_ort.py --models resnext50_32x4d mnasnet1_0 ... \\
        [--build build] [--zoo DIR] [--out DIR] [--backends L] [--cache DB] [--plan-dir DIR] \\
        [--threads T] [--repeat N] [--rounds R] [--cpu-ms MS] [--input-shape NAME=AxB]... [--json OUT.json]

Per model (an ONNX file, or a name of scripts/export_models.py's zoo, exported into --zoo on first
use): the plan is --plan-dir/NAME.json when it exists, else `tessera tune` over --backends writes
it (database --cache, kept between invocations). Then, R rounds alternating the two sides:

- tessera: `tessera run --plan P --profile --json` times every call of the plan. A call on a
  backend other than oneDNN is the family of its anchor (its Conv, ConvTranspose, MatMul or Gemm,
  else its first node); one with several anchors is "whole <backend> functions". oneDNN calls,
  usually most of the model, are split by oneDNN's verbose log of the same run (DNNL_VERBOSE=1,
  exec time per primitive): the log's last runs are periodic, one period per executor run, and
  each primitive's median over the profiled runs goes to its family (a convolution's by its
  problem descriptor: groups, channels, kernel). What a oneDNN call spends outside its
  primitives is in no log line: its host steps (the SiLU, GELU and Softmax passes, linear
  Resize, Concat copies, channel shuffles) and the dispatch of every step. That is the family
  "oneDNN host steps, dispatch": the oneDNN calls' time in a second profiled run without the log
  (whose writes cost time inside the calls) less the primitives' sum; being a difference of two
  runs, it also holds their difference (a few percent of the calls' time under load). Without
  it, that time would be spread over every family by the scaling to CPU time below.
- ORT: bench/peer/ort_bench.js --profile, ORT's own per-node profile, one row per node ORT runs
  after its graph optimizations (FusedConv, NCHWc Conv, the ReorderInput/ReorderOutput it adds);
  a Conv's family comes from its input and weight shapes.

Families: dense / 1x1 / grouped / depthwise-by-kernel convolution, ConvTranspose, MatMul/Gemm,
normalization, activation/elementwise, pooling/reduction, Resize, data movement, and crossings
(layout conversions: tessera's calls between backends and oneDNN's reorders inside a function;
ORT's NCHWc reorders and the Transposes its layout transformer adds). Prints one markdown table
per model (per family: tessera ms, ORT ms, the difference, node counts; then, for each family
where tessera is behind, the three costliest primitives, calls or nodes of each side) and a
summary over the models: the end-to-end figures, and per family the sums over the models and
their ratio. --input-shape goes to both sides for every model (symbolic input dimensions).

End to end, each side is the CPU time of one run: a process's CPU time (wait4's rusage) for
N + 1 runs less that for 1 run, over N (N: --cpu-ms of runs by the plan's prediction), in rounds alternating the two sides; tessera / ORT is
the median of the rounds' ratios. On a machine that others share, wall-clock medians of 1-thread
runs move with the load by 2-4x within minutes; CPU time moves far less (cache and core sharing,
some percent), and alternating rounds share what remains. Per family: the medians over rounds of
the sums of per-node wall-clock medians, scaled on each side so that they add up to its CPU time
per run (the work between kernels spread over the families); `wall / CPU` is that scale. The
unscaled column is the difference of the wall-clock sums themselves: where the two disagree, load
hit some nodes of one side's profile and not others, and neither column is to be trusted alone
(scripts/pointwise_vs_ort.py compares the 1x1 convs node by node). A oneDNN matmul primitive over a
1x1 conv's [C, O] (onednn_pointwise.cc runs small 1x1 convs as matmuls of pixel rows) counts as a
1x1 conv, as ORT's Conv node for it does.
"""

import argparse
import collections
import json
import math
import os
import re
import statistics
import subprocess
import sys

import onnx

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANCHORS = ("Conv", "ConvTranspose", "MatMul", "Gemm")

UNARY = {"Relu", "Sigmoid", "HardSigmoid", "HardSwish", "Clip", "Tanh", "Erf", "Gelu", "FastGelu", "BiasGelu",
         "QuickGelu", "Sqrt", "Exp", "Neg", "Abs", "Softmax", "LogSoftmax", "LeakyRelu", "Elu", "Selu", "Mish",
         "Softplus", "PRelu", "Cast", "Reciprocal", "Log", "Floor", "Ceil", "Round", "Sign", "Not"}
BINARY = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Where", "Equal", "Less", "Greater", "And", "Or",
          "Sum", "Mean", "BiasAdd"}
NORMS = {"BatchNormalization", "LayerNormalization", "InstanceNormalization", "SimplifiedLayerNormalization",
         "SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "GroupNorm", "GroupNormalization", "LRN"}
POOLS = {"GlobalAveragePool", "AveragePool", "MaxPool", "GlobalMaxPool", "ReduceMean", "ReduceSum", "ReduceMax",
         "ReduceMin", "ReduceProd", "ReduceL2", "ArgMax", "ArgMin", "LpPool"}
MOVES = {"Concat", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Split", "Slice", "Gather", "Pad", "Identity",
         "Shape", "Size", "Expand", "Tile", "Transpose", "DepthToSpace", "SpaceToDepth", "Constant", "ConstantOfShape",
         "GatherElements", "ScatterND", "Range", "NonZero"}
MATMULS = {"MatMul", "Gemm", "FusedMatMul", "FusedGemm", "MatMulNBits", "MatMulInteger", "QGemm"}
CONVS = {"Conv", "FusedConv", "NhwcConv", "NhwcFusedConv", "QLinearConv", "ConvInteger"}
CROSSINGS = {"ReorderInput", "ReorderOutput", "layout"}
RECURRENT = {"LSTM", "GRU", "RNN", "DynamicQuantizeLSTM"}
CONTROL = {"If", "Loop", "Scan"}


def conv_family(in_channels, out_channels, groups, kh, kw):
    """The family of a 2-D convolution from its problem shape (the same rule on both sides)."""
    if groups > 1 and in_channels == groups and kh == 1 and kw == 1:
        return "normalization"   # a per-channel affine: ORT runs a lone BatchNormalization so
    if groups > 1 and in_channels == groups:
        return "depthwise conv %dx%d" % (kh, kw)
    if groups > 1:
        return "grouped conv %dx%d" % (kh, kw)
    if kh == 1 and kw == 1:
        return "1x1 conv"
    return "dense conv %dx%d" % (kh, kw)


def op_family(op):
    if op in CONVS:
        return "conv"
    if op in MATMULS:
        return "MatMul/Gemm"
    if op in NORMS:
        return "normalization"
    if op in UNARY or op in BINARY:
        return "activation/elementwise"
    if op in POOLS:
        return "pooling/reduction"
    if op in ("Resize", "Upsample"):
        return "Resize"
    if op in CROSSINGS:
        return "crossing/layout"
    if op in MOVES:
        return "data movement"
    if op == "ConvTranspose":
        return "ConvTranspose"
    if op in RECURRENT:
        return "recurrent (LSTM, GRU, RNN)"
    if op in CONTROL:
        return "control flow (If, Loop, Scan)"
    return "other (%s)" % op


# ---- ORT -----------------------------------------------------------------------------------------

def ort_family(node):
    op = node["op"]
    shapes = node.get("input_shapes") or []
    if op in CONVS and len(shapes) >= 2 and len(shapes[1]) == 4 and len(shapes[0]) == 4:
        x, w = shapes[0], shapes[1]
        groups = max(1, x[1] // w[1]) if w[1] else 1
        return conv_family(x[1], w[0], groups, w[2], w[3])
    if op == "Transpose" and node["name"].startswith(("Transpose_token", "TransposeNCHW", "TransposeNHWC")):
        return "crossing/layout"   # inserted by ORT's layout transformer, not the model's
    return op_family(op)


# ---- tessera -------------------------------------------------------------------------------------

class ModelInfo:
    """Node name -> (op, family) from the ONNX file, for calls outside oneDNN; the nodes of
    control-flow bodies (If's branches, Loop's and Scan's bodies) too, since tessera inlines an If
    whose condition is constant. `branch[name]`: the names of the nodes directly in a control-flow
    node's bodies (a nested one's own body nodes are its own)."""

    def __init__(self, path):
        m = onnx.load_model(path, load_external_data=False)
        self.family = {}
        self.op = {}
        self.branch = {}
        self._pointwise, self._matmuls = set(), set()
        self._add(m.graph, {})
        # (C, O) of the model's 1x1 convs that no MatMul/Gemm weight shares: a oneDNN matmul of
        # that [C, O] is a 1x1 conv run as a matmul of pixel rows (onednn_pointwise.cc).
        self.pointwise = frozenset(self._pointwise - self._matmuls)

    def _add(self, graph, outer_dims):
        """Registers a graph's nodes, then its nodes' bodies; returns the names of its nodes."""
        dims = dict(outer_dims)
        dims.update({t.name: list(t.dims) for t in graph.initializer})
        for n in graph.node:
            if n.op_type == "Constant":
                for a in n.attribute:
                    if a.name == "value" and a.type == onnx.AttributeProto.TENSOR:
                        dims[n.output[0]] = list(a.t.dims)
        names = []
        for i, n in enumerate(graph.node):
            name = n.name or "%s_%d" % (n.op_type, i)
            names.append(name)
            self.op[name] = n.op_type
            fam = op_family(n.op_type)
            if n.op_type == "Conv" and len(n.input) > 1 and len(dims.get(n.input[1], [])) == 4:
                w = dims[n.input[1]]
                groups = next((a.i for a in n.attribute if a.name == "group"), 1)
                fam = conv_family(w[1] * groups, w[0], groups, w[2], w[3])
                if fam == "1x1 conv":
                    self._pointwise.add((w[1], w[0]))
            if n.op_type in MATMULS:
                for v in n.input[1:2]:
                    if len(dims.get(v, [])) == 2:
                        self._matmuls.update({tuple(dims[v]), tuple(reversed(dims[v]))})
            self.family[name] = fam
            bodies = [a.g for a in n.attribute if a.type == onnx.AttributeProto.GRAPH]
            if bodies:
                self.branch[name] = set().union(*(self._add(g, dims) for g in bodies))
        return names

    def anchors(self, nodes):
        return sum(1 for name in nodes if self.op.get(name) in ANCHORS)

    def call_family(self, nodes):
        for name in nodes:
            if self.op.get(name) in ANCHORS:
                return self.family[name]
        return self.family.get(nodes[0], "other") if nodes else "other"


DESC = re.compile(r"(?:g(\d+))?mb\d+_?(?:g(\d+))?_?ic(\d+)oc(\d+)_(?:id\d+od\d+kd\d+\S*?_)?ih\d+oh\d+kh(\d+)\S*?_iw\d+ow\d+kw(\d+)")


MATMUL_DESC = re.compile(r"(?:^|,)(\d+)x(\d+):(\d+)x(\d+):(\d+)x(\d+)$")


def onednn_family(kind, desc, pointwise=frozenset()):
    """The family of a oneDNN primitive from its verbose kind and descriptor. A 2-D matmul whose
    [C, O] is in `pointwise` (ModelInfo.pointwise) is a 1x1 conv that the onednn backend runs as a
    matmul of pixel rows, and counts as a 1x1 conv, as ORT's node for it does."""
    if kind == "matmul":
        m = MATMUL_DESC.search(desc)
        if m and (int(m.group(2)), int(m.group(4))) in pointwise:
            return "1x1 conv"
    if kind == "convolution":
        m = DESC.search(desc)
        if m:
            g = int(m.group(1) or m.group(2) or 1)
            return conv_family(int(m.group(3)), int(m.group(4)), g, int(m.group(5)), int(m.group(6)))
        return "conv"
    return {"deconvolution": "ConvTranspose", "inner_product": "MatMul/Gemm", "matmul": "MatMul/Gemm",
            "batch_normalization": "normalization", "layer_normalization": "normalization", "lrn": "normalization",
            "eltwise": "activation/elementwise", "binary": "activation/elementwise",
            "softmax": "activation/elementwise", "logsoftmax": "activation/elementwise",
            "softmax_v2": "activation/elementwise", "prelu": "activation/elementwise",
            "pooling": "pooling/reduction", "pooling_v2": "pooling/reduction", "reduction": "pooling/reduction",
            "resampling": "Resize", "reorder": "crossing/layout", "concat": "data movement", "sum": "activation/elementwise",
            "shuffle": "data movement"}.get(kind, "other (onednn %s)" % kind)


def periodic_tail(lines, repeat):
    """The executions of a DNNL_VERBOSE=1 log as (kind, descriptor, ms), and the period p of its
    last `repeat` executor runs (0: none found).

    `run --profile` runs the executor 2 * (repeat + 1) times; before them come compile-time
    executions (weight reorders). The runs are the log's periodic tail: the largest period p whose
    last (2 * repeat + 1) * p entries repeat with period p (the first warm-up may execute more).
    A smaller period can also fit (a model of identical blocks); the largest is one whole run.
    """
    execs = []
    for line in lines:
        f = line.rstrip("\n").split(",")
        if len(f) > 5 and f[0] in ("onednn_verbose", "dnnl_verbose") and f[1] == "exec":
            execs.append((f[3], ",".join(f[4:-1]), float(f[-1])))
    keys = [(k, d) for k, d, _ in execs]
    need = 2 * repeat + 1
    for p in range(len(execs) // need, 0, -1):
        tail = keys[len(keys) - need * p:]
        if all(tail[i] == tail[i + p] for i in range(len(tail) - p)):
            return execs, p
    return execs, 0


def onednn_runs(lines, repeat, pointwise=frozenset()):
    """The last `repeat` executor runs of a DNNL_VERBOSE=1 log: lists of (family, ms)."""
    execs, p = periodic_tail(lines, repeat)
    runs = []
    for r in range(repeat if p else 0):
        start = len(execs) - (repeat - r) * p
        runs.append([(onednn_family(k, d, pointwise), t) for k, d, t in execs[start:start + p]])
    return runs


def primitive_label(kind, desc):
    """A short name of a oneDNN primitive from its verbose kind and descriptor: kind, the
    implementation and the problem (the descriptor's last field)."""
    f = desc.split(",")
    return "%s %s %s" % (kind, f[0], f[-1] if len(f) > 1 else "")


def onednn_primitives(lines, repeat, pointwise=frozenset()):
    """Each primitive of one executor run as (family, label, median ms over the last `repeat` runs)."""
    execs, p = periodic_tail(lines, repeat)
    if not p:
        return []
    out = []
    for i in range(p):
        k, d, _ = execs[len(execs) - repeat * p + i]
        t = statistics.median(execs[len(execs) - (repeat - r) * p + i][2] for r in range(repeat))
        out.append((onednn_family(k, d, pointwise), primitive_label(k, d), t))
    return out


def run_cmd(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
    if r.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), r.returncode, r.stderr.strip()[-2000:]))
    return r.stdout


def json_line(text):
    return json.loads(next(line for line in text.splitlines() if line.startswith("{")))


def cpu_ms(cmd):
    """CPU time (user + system) of the process `cmd` and its children, in ms."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=REPO)
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        raise RuntimeError("%s failed (status %d)" % (" ".join(cmd), status))
    return (usage.ru_utime + usage.ru_stime) * 1e3


def cpu_per_run(cmd_of_runs, n):
    """CPU ms of one run: the process with n + 1 runs less the one with 1 run, over n."""
    return (cpu_ms(cmd_of_runs(n + 1)) - cpu_ms(cmd_of_runs(1))) / n


def tessera_cpu(args, model, plan, n):
    return cpu_per_run(lambda k: [args.tessera, "run", model] + args.shape_flags + ["--plan", plan, "--repeat", str(k),
                                                                                  "--threads", str(args.threads)], n)


def ort_cpu(args, model, n):
    return cpu_per_run(lambda k: ["node", "bench/peer/ort_bench.js", model, str(args.threads)] + args.shape_flags +
                       ["--runs", str(k), "--warmup", "1"], n)


def cpu_runs(args, plan):
    """Runs per CPU-time measurement: --cpu-ms of runs by the plan's predicted latency (a process's
    start, compile included, varies by tens of ms; spread over this many runs it is noise)."""
    predicted_ms = max(json.load(open(plan))["total_cost"] * 1e3, 0.05)
    return max(args.repeat, min(1000, math.ceil(args.cpu_ms / predicted_ms)))


HOST = "oneDNN host steps, dispatch"


def tessera_calls(args, model, plan, verbose):
    """One `run --profile --json` of the plan: (its output, the profile's calls)."""
    cmd = [args.tessera, "run", model] + args.shape_flags + ["--plan", plan, "--profile", "--json", "--repeat",
                                                              str(args.repeat), "--threads", str(args.threads)]
    env = dict(os.environ)
    env.pop("ONEDNN_VERBOSE", None)
    if verbose:
        env["DNNL_VERBOSE"] = "1"
    else:
        env.pop("DNNL_VERBOSE", None)
    text = run_cmd(cmd, env)
    return text, json_line(text)["profile"]


def family_split(calls, info, primitives, quiet_calls=None):
    """({family: ms}, {family: count}, {family: [(label, ms)]}) of one profiled run.

    `calls`: the profile's calls; `primitives`: onednn_primitives of the same run's verbose log
    (empty: no oneDNN call, or no log), which stand for the oneDNN calls. What a oneDNN call
    spends outside its primitives (host steps: the SiLU, GELU and Softmax passes, linear Resize,
    Concat copies and channel shuffles; the steps' dispatch) is in no primitive: it is the oneDNN
    calls' time in `quiet_calls` (the profile of a run without the log, whose writes cost time
    inside the calls) less the primitives' sum, the family HOST.
    """
    ms, count, top = collections.Counter(), collections.Counter(), collections.defaultdict(list)
    for c in calls:
        if c.get("backend") == "onednn" and primitives:
            continue
        nodes = c.get("nodes") or []
        fam = "crossing/layout" if c["kernel"].startswith("layout.") else info.call_family(nodes)
        if c.get("backend") and c["backend"] != "(crossing)" and info.anchors(nodes) > 1:
            fam = "whole %s functions" % c["backend"]
        ms[fam] += c["measured_ms"]
        count[fam] += 1
        top[fam].append(("%s %s" % (c.get("backend"), nodes[0] if nodes else c["kernel"]), c["measured_ms"]))
    for fam, label, t in primitives:
        ms[fam] += t
        count[fam] += 1
        top[fam].append((label, t))
    if primitives and quiet_calls is not None:
        onednn = [c["measured_ms"] for c in quiet_calls if c.get("backend") == "onednn"]
        ms[HOST] += max(0.0, sum(onednn) - sum(t for _, _, t in primitives))
        count[HOST] += len(onednn)
        top[HOST].append(("%d oneDNN calls less their %d primitives" % (len(onednn), len(primitives)), ms[HOST]))
    return ms, count, top


def tessera_profile(args, model, plan, info, verbose):
    """One profiled run: ({family: ms}, {family: count}, {family: [(label, ms)]}).

    With `verbose`, a run that writes oneDNN's log splits the oneDNN calls into their primitives
    (onednn_primitives), and a run without it gives the calls' own time (family_split).
    """
    text, calls = tessera_calls(args, model, plan, verbose)
    prims = onednn_primitives(text.splitlines(), args.repeat, info.pointwise) if verbose else []
    if verbose and not prims:
        raise RuntimeError("%s: oneDNN's verbose log had no periodic tail" % model)
    quiet = tessera_calls(args, model, plan, False)[1] if verbose else None
    return family_split(calls, info, prims, quiet)


def ort_split(nodes, info):
    """({family: ms}, {family: count}, {family: [(label, ms)]}) of ORT's profile rows `nodes`.

    ORT profiles the nodes of a control-flow node's bodies on their own rows, and the node's row
    spans them: it counts for what it spends itself, its time less its body nodes' rows
    (info.branch), as the family "control flow"; the body nodes go to their own families.
    """
    ms, count, top = collections.Counter(), collections.Counter(), collections.defaultdict(list)
    by_name = collections.Counter()
    for n in nodes:
        by_name[n["name"]] += n["median_ms"]
    for n in nodes:
        fam = ort_family(n)
        t = n["median_ms"]
        if n["op"] in CONTROL:
            t = max(0.0, t - sum(by_name[b] for b in info.branch.get(n["name"], ())))
        ms[fam] += t
        count[fam] += 1
        top[fam].append(("%s %s" % (n["op"], n["name"]), t))
    return ms, count, top


def ort_profile(args, model, out_dir, name, info):
    path = os.path.join(out_dir, name + ".ort_profile.json")
    run_cmd(["node", "bench/peer/ort_bench.js", model, str(args.threads)] + args.shape_flags +
            ["--runs", str(args.repeat), "--warmup", "3", "--profile", path])
    return ort_split(json.load(open(path))["nodes"], info)


def model_path(args, name):
    if os.path.exists(name):
        return os.path.abspath(name), os.path.splitext(os.path.basename(name))[0]
    path = os.path.join(args.zoo, name + ".onnx")
    if not os.path.exists(path):
        run_cmd(["/usr/bin/python3", "scripts/export_models.py", "--only", name, "--out", args.zoo])
    return path, name


def plan_for(args, model, name):
    plan = os.path.join(args.plan_dir, name + ".json")
    if not os.path.exists(plan):
        run_cmd([args.tessera, "tune", model] + args.shape_flags + ["--backends", args.backends, "--cache", args.cache, "--plan", plan,
                 "-j", "1", "--threads", str(args.threads)])
    return plan


def median_counter(counters):
    keys = set().union(*counters)
    return {k: statistics.median(c.get(k, 0.0) for c in counters) for k in keys}


def profile_model(args, spec):
    model, name = model_path(args, spec)
    plan = plan_for(args, model, name)
    info = ModelInfo(model)
    partitions = collections.Counter(p["backend"] for p in json.load(open(plan))["partitions"])
    verbose = "onednn" in partitions
    n = cpu_runs(args, plan)
    t_cpu, o_cpu, t_fams, o_fams = [], [], [], []
    t_count = o_count = t_top = o_top = None
    for r in range(args.rounds):
        sides = ["t", "o"] if r % 2 == 0 else ["o", "t"]
        for side in sides:
            if side == "t":
                t_cpu.append(tessera_cpu(args, model, plan, n))
                ms, t_count, t_top = tessera_profile(args, model, plan, info, verbose)
                t_fams.append(ms)
            else:
                o_cpu.append(ort_cpu(args, model, n))
                ms, o_count, o_top = ort_profile(args, model, args.out, name, info)
                o_fams.append(ms)
    # Wall-clock medians read high by what load the machine had at that moment; the CPU time per
    # run does not. Each side's families are scaled to its CPU time per run, so that they are the
    # shares of what a run costs (the work between kernels spread over them); `wall / cpu` says
    # how far the load moved them.
    # The scale assumes the load inflated every family alike; where it did not (a profile run
    # that load hit in some nodes only), the unscaled medians, kept beside, tell.
    families, load, walls = {}, {}, {}
    for side, fams, cpu in (("tessera", t_fams, t_cpu), ("ort", o_fams, o_cpu)):
        med = median_counter(fams)
        wall = sum(med.values())
        load[side] = wall / statistics.median(cpu)
        families[side] = {f: v / load[side] for f, v in med.items()}
        walls[side] = med
    return {"model": name, "plan": plan, "partitions": dict(partitions),
            "tessera_ms": statistics.median(t_cpu), "ort_ms": statistics.median(o_cpu),
            "tessera_rounds": t_cpu, "ort_rounds": o_cpu,
            "ratio": statistics.median(t / o for t, o in zip(t_cpu, o_cpu)),
            "wall_over_cpu": load, "families": families, "families_wall": walls,
            "counts": {"tessera": dict(t_count), "ort": dict(o_count)},
            "top": {"tessera": largest(t_top), "ort": largest(o_top)}}


def largest(top, k=5):
    """Per family, its k costliest nodes or primitives of one profiled run (unscaled ms)."""
    return {f: sorted(items, key=lambda x: -x[1])[:k] for f, items in top.items()}


def print_model(res):
    t, o = res["families"]["tessera"], res["families"]["ort"]
    tc, oc = res["counts"]["tessera"], res["counts"]["ort"]
    parts = ", ".join("%s=%d" % kv for kv in sorted(res["partitions"].items()))
    print("\n### %s: tessera %.2f ms, ORT %.2f ms CPU per run, tessera / ORT %.2f (plan: %s; wall / CPU %.2f, %.2f)\n" % (
        res["model"], res["tessera_ms"], res["ort_ms"], res["ratio"], parts, res["wall_over_cpu"]["tessera"],
        res["wall_over_cpu"]["ort"]))
    walls = res.get("families_wall", {})
    tw, ow = walls.get("tessera", {}), walls.get("ort", {})
    print("| family | tessera ms | ORT ms | tessera - ORT | unscaled: tessera - ORT | tessera calls/primitives | ORT nodes |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    fams = sorted(set(t) | set(o), key=lambda f: -abs(t.get(f, 0.0) - o.get(f, 0.0)))
    for f in fams:
        unscaled = "%+.3f" % (tw.get(f, 0.0) - ow.get(f, 0.0)) if walls else "-"
        print("| %s | %.3f | %.3f | %+.3f | %s | %d | %d |" % (f, t.get(f, 0.0), o.get(f, 0.0), t.get(f, 0.0) - o.get(f, 0.0),
                                                             unscaled, tc.get(f, 0), oc.get(f, 0)))
    unscaled = "%+.3f" % (sum(tw.values()) - sum(ow.values())) if walls else "-"
    print("| sum | %.3f | %.3f | %+.3f | %s | | |" % (sum(t.values()), sum(o.values()), sum(t.values()) - sum(o.values()),
                                                    unscaled))
    top = res.get("top")
    behind = [f for f in fams if t.get(f, 0.0) - o.get(f, 0.0) > 0.01]
    if top and behind:
        print("\nCostliest per family where tessera is behind (one profiled run, unscaled ms):\n")
        for f in behind:
            for side in ("tessera", "ort"):
                items = top[side].get(f, [])[:3]
                if items:
                    print("- %s, %s: %s" % (f, side, "; ".join("%s %.3f" % (label, v) for label, v in items)))


def print_summary(results):
    print("\n### Summary\n")
    print("| model | tessera CPU ms/run (rounds) | ORT CPU ms/run (rounds) | tessera / ORT | largest loss (family, ms) | largest gain (family, ms) |")
    print("|---|---|---|---:|---|---|")
    ratios = []
    totals = collections.Counter()
    losing = collections.Counter()
    for r in results:
        t, o = r["families"]["tessera"], r["families"]["ort"]
        diff = {f: t.get(f, 0.0) - o.get(f, 0.0) for f in set(t) | set(o)}
        for f, d in diff.items():
            totals[f] += d
            losing[f] += d > 0
        worst = max(diff, key=diff.get)
        best = min(diff, key=diff.get)
        ratio = r["ratio"]
        ratios.append(ratio)
        print("| %s | %.2f (%s) | %.2f (%s) | %.2f | %s %+.2f | %s %+.2f |" % (
            r["model"], r["tessera_ms"], ", ".join("%.2f" % x for x in r["tessera_rounds"]), r["ort_ms"],
            ", ".join("%.2f" % x for x in r["ort_rounds"]), ratio, worst, diff[worst], best, diff[best]))
    print("\ngeometric mean tessera / ORT over %d models: %.2f" % (
        len(ratios), math.exp(sum(map(math.log, ratios)) / len(ratios))))
    print("\n| family | tessera ms | ORT ms | tessera / ORT | tessera - ORT | unscaled: tessera / ORT | models where tessera is slower |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for f in sorted(totals, key=lambda f: -totals[f]):
        t = sum(r["families"]["tessera"].get(f, 0.0) for r in results)
        o = sum(r["families"]["ort"].get(f, 0.0) for r in results)
        tw = sum(r.get("families_wall", {}).get("tessera", {}).get(f, 0.0) for r in results)
        ow = sum(r.get("families_wall", {}).get("ort", {}).get(f, 0.0) for r in results)
        print("| %s | %.2f | %.2f | %s | %+.2f | %s | %d / %d |" % (f, t, o, "%.2f" % (t / o) if o > 0 else "-", totals[f],
                                                              "%.2f" % (tw / ow) if ow > 0 else "-", losing[f], len(results)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", nargs="+", default=[], help="ONNX files or names of export_models.py's zoo")
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "tessera_profile_vs_ort"))
    ap.add_argument("--zoo", help="where zoo models are exported (default OUT/zoo)")
    ap.add_argument("--plan-dir", help="plans NAME.json to use, tuned when absent (default OUT/plans)")
    ap.add_argument("--cache", help="cost database for tune (default OUT/costs.db)")
    ap.add_argument("--backends", default="ref,onednn,eigen,blas,xnnpack,halide")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--input-shape", action="append", default=[], metavar="NAME=AxB",
                    help="an input's shape, to tessera and ORT alike (every model; repeatable)")
    ap.add_argument("--repeat", type=int, default=20, help="profiled runs per side and round")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, alternating which side runs first")
    ap.add_argument("--cpu-ms", type=float, default=2000.0,
                    help="milliseconds of runs (by the plan's prediction) per CPU-time measurement")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--render", help="print the tables of a --json file written before, and exit")
    args = ap.parse_args()
    if args.render:
        results = json.load(open(args.render))
        for res in results:
            print_model(res)
        print_summary(results)
        return 0
    args.tessera = os.path.abspath(os.path.join(REPO, args.build, "tessera")) if not os.path.isabs(args.build) \
        else os.path.join(args.build, "tessera")
    args.shape_flags = [a for s in args.input_shape for a in ("--input-shape", s)]
    args.zoo = args.zoo or os.path.join(args.out, "zoo")
    args.plan_dir = args.plan_dir or os.path.join(args.out, "plans")
    args.cache = args.cache or os.path.join(args.out, "costs.db")
    for d in (args.out, args.zoo, args.plan_dir):
        os.makedirs(d, exist_ok=True)
    run_cmd(["scripts/fetch_onnxruntime.sh"])
    results = []
    for spec in args.models:
        res = profile_model(args, spec)
        print_model(res)
        sys.stdout.flush()
        results.append(res)
    print_summary(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
