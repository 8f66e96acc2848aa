#!/usr/bin/python3
"""Every 1x1 convolution of a model, tessera's oneDNN primitive beside ONNX Runtime's node.

    /usr/bin/python3 scripts/pointwise_vs_ort.py MODEL.onnx PLAN.json [--build build] [--repeat N]
        [--ort-profile ORT.json] [--json OUT.json]

scripts/profile_vs_ort.py sums op families and scales each side's wall-clock profile to its CPU
time per run; work that is not a primitive (a host SiLU pass, the executor between steps) then
lands in whichever family is largest, which is usually the 1x1 convs. This script compares the
1x1 convs themselves, one row per conv:

- tessera: `tessera run --plan PLAN --profile --repeat N` with DNNL_VERBOSE=1; each primitive's
  median over the N profiled runs (the log's periodic tail, as profile_vs_ort.onednn_runs finds
  it), with its implementation, layouts and post-ops from the same log line. A 1x1 conv run as a
  matmul of pixel rows (onednn_pointwise.cc) is a 2-D matmul [P, C] x [C, O]; its image is
  taken as square (H = sqrt(P)); a matmul with another row count (a classifier's one row is
  H = 1) matches only an ORT conv of that key.
- ORT: bench/peer/ort_bench.js --profile (or --ort-profile, a profile written before), ORT's own
  per-node medians after its graph optimizations.

Rows are matched by (input channels, input height, output channels, stride), in order of
appearance on each side. ORT's NCHWc convolutions report channels padded to its block (440 as
448), so both sides' channel counts are rounded up to 16 before matching. Prints a markdown table
and the sums; tessera - ORT > 0 where tessera is slower. Wall-clock per node on a shared machine:
compare rows of one invocation, and repeat it to see what holds.
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

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
import profile_vs_ort  # noqa: E402  (onednn_runs' periodic-tail rule, the ORT conv op names)

# A convolution's problem descriptor in oneDNN's verbose log: g26mb1_ic208oc208_ih14oh14kh3sh1...
DESC = re.compile(r"(?:g(\d+))?mb\d+_?(?:g(\d+))?_?ic(\d+)oc(\d+)_(?:id\d+od\d+kd\d+\S*?_)?"
                  r"ih(\d+)oh\d+kh(\d+)sh(\d+)\S*?_iw\d+ow\d+kw(\d+)")
BLOCK = 16


def padded(channels):
    """Channels rounded up to ORT's NCHWc block: the key both sides are matched by."""
    return (channels + BLOCK - 1) // BLOCK * BLOCK


def verbose_execs(lines):
    """(kind, implementation, rest of the line, ms) of every `exec` line of a oneDNN verbose log."""
    out = []
    for line in lines:
        f = line.rstrip("\n").split(",")
        if len(f) > 5 and f[0] in ("onednn_verbose", "dnnl_verbose") and f[1] == "exec":
            out.append((f[3], f[4], ",".join(f[5:-1]), float(f[-1])))
    return out


def last_runs(execs, repeat):
    """The last `repeat` executor runs of the log: lists of exec tuples, one list per run.

    The same rule as profile_vs_ort.onednn_runs: the largest period p whose last
    (2 * repeat + 1) * p entries repeat with period p is one whole run.
    """
    keys = [(k, i, d) for k, i, d, _ in execs]
    need = 2 * repeat + 1
    for p in range(len(execs) // need, 0, -1):
        tail = keys[len(keys) - need * p:]
        if all(tail[i] == tail[i + p] for i in range(len(tail) - p)):
            return [execs[len(execs) - (repeat - r) * p:len(execs) - (repeat - r - 1) * p] for r in range(repeat)]
    return []


def pointwise_key(desc):
    """(padded C, H, padded O, stride) of a dense 1x1 convolution's descriptor, else None."""
    m = DESC.search(desc)
    if not m:
        return None
    groups = int(m.group(1) or m.group(2) or 1)
    ic, oc, ih, kh, sh, kw = (int(m.group(i)) for i in (3, 4, 5, 6, 7, 8))
    if groups != 1 or kh != 1 or kw != 1:
        return None
    return (padded(ic), ih, padded(oc), sh)


MATMUL = re.compile(r"(?:^|,)(\d+)x(\d+):(\d+)x(\d+):(\d+)x(\d+)$")


def matmul_key(desc):
    """The key of a pointwise conv oneDNN ran as a matmul of pixel rows ([P, C] x [C, O], P = H*H
    pixels of a square image: onednn_pointwise.cc), else None (other shapes, batched matmuls)."""
    m = MATMUL.search(desc.strip())
    if not m:
        return None
    rows, k, _, n = (int(m.group(i)) for i in (1, 2, 3, 4))
    h = math.isqrt(rows)
    return (padded(k), h, padded(n), 1) if h * h == rows else None


def tessera_rows(execs, repeat):
    """The 1x1 convolutions of one run, in order: (key, median ms, implementation, post-ops, src, dst)."""
    runs = last_runs(execs, repeat)
    if not runs:
        raise RuntimeError("oneDNN's verbose log had no periodic tail")
    rows = []
    for j, (kind, impl, rest, _) in enumerate(runs[0]):
        key = pointwise_key(rest) if kind == "convolution" else matmul_key(rest) if kind == "matmul" else None
        if key is None:
            continue
        post = re.search(r"attr-post-ops:(\S*)", rest)
        src = re.search(r"src_f32::blocked:(\w+)", rest)
        dst = re.search(r"dst_f32::blocked:(\w+)", rest)
        rows.append((key, statistics.median(r[j][3] for r in runs), impl, post.group(1) if post else "",
                     src.group(1) if src else "?", dst.group(1) if dst else "?"))
    return rows


def ort_rows(profile):
    """The 1x1 convolutions of an ORT profile, in order: (key, median ms, node name)."""
    rows = []
    for n in profile["nodes"]:
        shapes = n.get("input_shapes") or []
        if n["op"] not in profile_vs_ort.CONVS or len(shapes) < 2 or len(shapes[0]) != 4 or len(shapes[1]) != 4:
            continue
        x, w, y = shapes[0], shapes[1], (n.get("output_shapes") or [[0, 0, 0, 0]])[0]
        if w[2:] != [1, 1] or w[1] != x[1]:   # not 1x1, or grouped
            continue
        stride = x[2] // y[2] if len(y) == 4 and y[2] else 1
        rows.append(((padded(x[1]), x[2], padded(w[0]), stride), n["median_ms"], n["name"]))
    return rows


def match(t_rows, o_rows):
    """Pairs (tessera row, ORT row) by key, the k-th of a key on one side with the k-th on the
    other; then the keys left over on each side (a count per key)."""
    by_key = collections.defaultdict(list)
    for r in t_rows:
        by_key[r[0]].append(r)
    used = collections.Counter()
    pairs = []
    for o in o_rows:
        k = o[0]
        if used[k] < len(by_key[k]):
            pairs.append((by_key[k][used[k]], o))
            used[k] += 1
    t_count = collections.Counter(r[0] for r in t_rows)
    o_count = collections.Counter(r[0] for r in o_rows)
    return pairs, dict(t_count - o_count), dict(o_count - t_count)


def render(pairs, left_t, left_o):
    lines = ["| C -> O at H, stride | tessera ms | ORT ms | tessera - ORT | tessera kernel | post-ops | src / dst |",
             "|---|---:|---:|---:|---|---|---|"]
    t_sum = o_sum = 0.0
    for (key, t, impl, post, src, dst), (_, o, _) in pairs:
        t_sum += t
        o_sum += o
        c, h, oc, s = key
        lines.append("| %d -> %d at %d, s%d | %.4f | %.4f | %+.4f | %s | %s | %s / %s |"
                     % (c, oc, h, s, t, o, t - o, impl, post or "-", src, dst))
    lines.append("| sum of %d | %.3f | %.3f | %+.3f | | | |" % (len(pairs), t_sum, o_sum, t_sum - o_sum))
    if left_t or left_o:
        lines.append("")
        lines.append("unmatched: tessera %s, ORT %s" % (left_t, left_o))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("plan")
    ap.add_argument("--build", default="build")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--ort-profile", help="an ORT profile written before (ort_bench.js --profile)")
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args()
    for path in (args.model, args.plan):
        if not os.path.exists(path):
            sys.stderr.write("pointwise_vs_ort: %s: no such file\n" % path)
            return 2
    env = dict(os.environ, DNNL_VERBOSE="1")
    env.pop("ONEDNN_VERBOSE", None)
    cmd = [os.path.join(args.build, "tessera"), "run", args.model, "--plan", args.plan, "--profile", "--json",
           "--repeat", str(args.repeat), "--threads", "1"]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
    if r.returncode != 0:
        sys.stderr.write("pointwise_vs_ort: %s failed: %s\n" % (" ".join(cmd), r.stderr.strip()[-500:]))
        return 2
    t_rows = tessera_rows(verbose_execs(r.stdout.splitlines()), args.repeat)
    ort_path = args.ort_profile
    if not ort_path:
        ort_path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "pointwise_vs_ort.%d.json" % os.getpid())
        subprocess.run(["node", "bench/peer/ort_bench.js", args.model, "1", "--runs", str(args.repeat), "--warmup", "3",
                        "--profile", ort_path], check=True, capture_output=True, cwd=REPO)
    o_rows = ort_rows(json.load(open(ort_path)))
    pairs, left_t, left_o = match(t_rows, o_rows)
    print(render(pairs, left_t, left_o))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pairs": [{"key": list(t[0]), "tessera_ms": t[1], "ort_ms": o[1], "impl": t[2], "post_ops": t[3],
                                  "src": t[4], "dst": t[5], "ort_node": o[2]} for t, o in pairs],
                       "unmatched_tessera": {str(k): v for k, v in left_t.items()},
                       "unmatched_ort": {str(k): v for k, v in left_o.items()}}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
