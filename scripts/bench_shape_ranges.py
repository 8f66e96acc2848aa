#!/usr/bin/python3
"""One plan over a range of shapes against plans tuned at exactly each shape, and against ONNX
Runtime (docs/benchmarks.md, "Shape ranges").

  scripts/bench_shape_ranges.py [--build DIR] [--out DIR] [--backends L] [--only bert|cnn]
                                [--rounds R] [--threads T] [--image-size S] [--fresh]
                                [--bucket-tune anchors|all] [--no-tune-curve]

Per model (scripts/export_dynamic.py: a BERT-style encoder with dynamic batch and sequence axes,
hidden 256; ResNet-18 with a dynamic batch axis, at --image-size):
  1. `tessera tune --shape-range` over the range (BERT: sequence 16..512, opt 128; CNN: batch
     1..16, opt 1) with --bucket-tune (default anchors), on a cost database of its own, timed;
     and (unless --no-tune-curve) the tune time against the number of buckets over the same
     range, in both --bucket-tune modes: the anchors alone, the range's buckets, and those plus
     extra points between, each on a fresh database.
  2. `tessera tune` at exactly each point (8 sequence lengths spread over the range; batches 1, 3,
     8, 16) on another database.
  3. Per point: `tessera run --plan RANGE --input-shape ... --check` (outputs against ref), then
     `run --plan RANGE --against EXACT`, the two plans raced in one process in interleaved rounds
     (paired: the ratio is what the range costs at that shape), and R rounds alternating `tessera
     run --plan RANGE` with ONNX Runtime (bench/peer/ort_bench.js, scripts/fetch_onnxruntime.sh),
     each side's figure the median of its round medians.
Prints markdown tables; every raw figure is in OUT/results.json. --fresh deletes OUT's databases
first (the tune times are only the range's own with fresh databases).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr[-2000:]}")
    return r.stdout


def shape_text(shape):
    return "x".join(str(d) for d in shape)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--build", default=os.path.join(REPO, "build"))
    p.add_argument("--out", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "tessera_shape_ranges"))
    p.add_argument("--backends", default="ref,onednn,eigen,blas,xnnpack")
    p.add_argument("--only", choices=["bert", "cnn"])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--image-size", type=int, default=112)
    p.add_argument("--fresh", action="store_true")
    p.add_argument("--bucket-tune", choices=["anchors", "all"], default="anchors")
    p.add_argument("--no-tune-curve", dest="tune_curve", action="store_false",
                   help="tune the range in --bucket-tune's mode only (not both modes, three bucket counts)")
    a = p.parse_args()
    tessera = os.path.join(a.build, "tessera")
    os.makedirs(a.out, exist_ok=True)
    sh([os.path.join(REPO, "scripts", "fetch_onnxruntime.sh")])
    print(f"# {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {os.cpu_count()} cores, load "
          f"{open('/proc/loadavg').read().split()[:3]}, backends {a.backends}, {a.threads} thread(s)")

    s = a.image_size
    models = {
        "bert": dict(file="bert_dynamic.onnx", export=["--only", "bert"], input="input",
                     shape=lambda n: (1, n, 256), range=((1, 16, 256), (1, 128, 256), (1, 512, 256)), axis=1,
                     points=[16, 48, 100, 128, 200, 300, 400, 512], extras=[24, 48, 96, 192, 384],
                     what="sequence length"),
        "cnn": dict(file="resnet18_dynamic.onnx", export=["--only", "cnn", "--image-size", str(s)], input="input",
                    shape=lambda n: (n, 3, s, s), range=((1, 3, s, s), (1, 3, s, s), (16, 3, s, s)), axis=0,
                    points=[1, 3, 8, 16], extras=[3, 6, 12], what="batch"),
    }
    results = {}
    for name, m in models.items():
        if a.only and a.only != name:
            continue
        model = os.path.join(a.out, m["file"])
        if not os.path.exists(model):
            sh([sys.executable, os.path.join(REPO, "scripts", "export_dynamic.py"), a.out, *m["export"]])
        rng = ":".join(shape_text(x) for x in m["range"])
        flags = ["--backends", a.backends, "--threads", str(a.threads), "-j", "1"]
        res = results[name] = {"range": f"{m['input']}={rng}", "tunes": [], "points": []}
        if a.fresh:
            for f in os.listdir(a.out):
                if f.endswith(".db") and f.startswith(name):
                    os.remove(os.path.join(a.out, f))

        # 1. The range, tuned with --bucket-tune (the plan the points below run), then the tune time
        #    against the number of buckets over the same range: its anchors alone (--shapes MIN,OPT,MAX),
        #    the range's own buckets, and those plus the extra points; each on a fresh database, in
        #    both modes (--bucket-tune all searches every bucket, anchors races the anchors' plans at
        #    the others).
        sizes = [m["range"][0][m["axis"]], m["range"][1][m["axis"]], m["range"][2][m["axis"]]]
        anchors = f"{m['input']}=" + ",".join(shape_text(m["shape"](n)) for n in [sizes[1], sizes[0], sizes[2]])
        extras = f"{m['input']}=" + ",".join(shape_text(m["shape"](n)) for n in m["extras"])
        variants = [("anchors", ["--shapes", anchors]), ("range", ["--shape-range", f"{m['input']}={rng}"]),
                    ("range+extras", ["--shape-range", f"{m['input']}={rng}", "--shapes", extras])]
        range_plan = os.path.join(a.out, f"{name}_range_{a.bucket_tune}.json")   # written by the loop below
        report = os.path.join(a.out, f"{name}_report.json")
        for mode in [a.bucket_tune] + [x for x in ("all", "anchors") if x != a.bucket_tune]:
            for label, bucket_flags in variants:
                if not a.tune_curve and (mode != a.bucket_tune or label != "range"):
                    continue
                db = os.path.join(a.out, f"{name}_{label}_{mode}.db")
                plan_path = os.path.join(a.out, f"{name}_{label}_{mode}.json")
                if os.path.exists(db):
                    os.remove(db)
                t0 = time.time()
                sh([tessera, "tune", model, *flags, *bucket_flags, "--bucket-tune", mode, "--cache", db, "--plan", plan_path,
                    "--report", report])
                plan = json.load(open(plan_path))
                rep = json.load(open(report))
                res["tunes"].append({"mode": mode, "buckets": len(plan["buckets"]), "wall_s": time.time() - t0,
                                     "measured": sum(rep["measured_per_rank"]), "distinct": rep["distinct"],
                                     "plans": 1 + len(plan["bucket_plans"]), "what": label,
                                     "bucket_tune_s": rep["models"][0]["bucket_tune_s"]})
                print(json.dumps(res["tunes"][-1]), flush=True)

        # 2. Plans tuned at exactly each point; 3. the paired race and ONNX Runtime.
        for n in m["points"]:
            shape = f"{m['input']}={shape_text(m['shape'](n))}"
            exact = os.path.join(a.out, f"{name}_exact_{n}.json")
            t0 = time.time()
            if not os.path.exists(exact) or a.fresh:   # kept between invocations (one database for all)
                sh([tessera, "tune", model, *flags, "--input-shape", shape, "--cache",
                    os.path.join(a.out, f"{name}_exact.db"), "--plan", exact])
            exact_s = time.time() - t0
            check = json.loads(sh([tessera, "run", model, "--plan", range_plan, "--input-shape", shape, "--check",
                                   "--repeat", "1", "--json", "--threads", str(a.threads)]))
            race = json.loads(sh([tessera, "run", model, "--plan", range_plan, "--input-shape", shape, "--against",
                                  exact, "--json", "--repeat", "10", "--threads", str(a.threads)]))["race"]
            ours, ort = [], []
            for r in range(a.rounds):
                def t():
                    ours.append(json.loads(sh([tessera, "run", model, "--plan", range_plan, "--input-shape", shape,
                                               "--json", "--repeat", "20", "--threads", str(a.threads)]))["latency_ms"])

                def o():
                    ort.append(json.loads(sh(["node", os.path.join(REPO, "bench", "peer", "ort_bench.js"), model,
                                              str(a.threads), "--runs", "20", "--warmup", "3", "--input-shape",
                                              shape]))["median_ms"])
                (t, o)[r % 2]()
                (o, t)[r % 2]()
            res["points"].append({"n": n, "bucket": check["bucket"]["input_shapes"], "exact_bucket": check["bucket"]["exact"],
                                  "ok": check["ok"], "max_abs_error": check["max_abs_error"],
                                  "range_ms": race[0]["latency_ms"], "exact_ms": race[1]["latency_ms"],
                                  "tessera_ms": statistics.median(ours), "ort_ms": statistics.median(ort),
                                  "exact_tune_s": exact_s, "compile_ms": check["bucket"]["compile_ms"]})
            print(json.dumps(res["points"][-1]), flush=True)
        json.dump(results, open(os.path.join(a.out, "results.json"), "w"), indent=1)

        print(f"\n## {name}: {res['range']}\n")
        print(f"| {m['what']} | bucket | check (max abs err) | range plan ms | exact plan ms | range/exact | "
              f"tessera ms | ORT ms | tessera/ORT |")
        print("|---:|---|---|---:|---:|---:|---:|---:|---:|")
        for q in res["points"]:
            print(f"| {q['n']} | {q['bucket']}{'' if not q['exact_bucket'] else ' (own)'} | "
                  f"{'ok' if q['ok'] else 'FAILED'} ({q['max_abs_error']:.1e}) | {q['range_ms']:.3f} | {q['exact_ms']:.3f} | "
                  f"{q['range_ms'] / q['exact_ms']:.2f} | {q['tessera_ms']:.3f} | {q['ort_ms']:.3f} | "
                  f"{q['tessera_ms'] / q['ort_ms']:.2f} |")
        print(f"\n| --bucket-tune | buckets | plans in the file | tune s | measured | per-bucket s (search or race) |\n"
              f"|---|---:|---:|---:|---:|---|")
        for t in sorted(res["tunes"], key=lambda t: (t["mode"], t["buckets"])):
            print(f"| {t['mode']} | {t['buckets']} | {t['plans']} | {t['wall_s']:.1f} | {t['measured']} | "
                  f"{' '.join(f'{x:.1f}' for x in t['bucket_tune_s'])} |")
        print(f"\nexact tunes: {sum(q['exact_tune_s'] for q in res['points']):.1f} s for {len(res['points'])} shapes "
              f"(one database)")


if __name__ == "__main__":
    main()
