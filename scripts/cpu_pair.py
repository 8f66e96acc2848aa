#!/usr/bin/python3
"""Paired CPU time per run of commands that run a model N times, on a machine others share.

    /usr/bin/python3 scripts/cpu_pair.py ROUNDS N -- LABEL CMD... -- LABEL CMD... [-- ...]

Each CMD contains `{N}` where its run count goes (`tessera run M --plan P --repeat {N}`,
`node bench/peer/ort_bench.js M 1 --runs {N} --warmup 1`). One measurement of a command is the CPU
time (user + system, wait4's rusage) of the process with {N} = N + 1 less that with {N} = 1, over
N: the CPU time of one run, start-up and compilation cancelled out. Rounds run every command
once, in alternating order. Prints per command the median over rounds and the median of its
round-by-round ratios to the first command. 1-thread runs only: CPU time is the latency there,
and unlike wall-clock time it does not move with what else the machine runs (2-4x on a shared
2-core machine), though cache and core sharing still move it by some percent, which the
alternating rounds share out.
"""
import os
import statistics
import subprocess
import sys


def cpu_ms(cmd):
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        raise SystemExit("cpu_pair: failed: " + " ".join(cmd))
    return (usage.ru_utime + usage.ru_stime) * 1e3


def main():
    if len(sys.argv) < 5 or sys.argv[3] != "--":
        raise SystemExit(__doc__)
    rounds, n = int(sys.argv[1]), int(sys.argv[2])
    specs = []
    for a in sys.argv[3:]:
        if a == "--":
            specs.append([])
        else:
            specs[-1].append(a)

    def per_run(spec):
        one = cpu_ms([x.replace("{N}", "1") for x in spec[1:]])
        many = cpu_ms([x.replace("{N}", str(n + 1)) for x in spec[1:]])
        return (many - one) / n

    res = [[] for _ in specs]
    for r in range(rounds):
        order = range(len(specs)) if r % 2 == 0 else reversed(range(len(specs)))
        for i in order:
            res[i].append(per_run(specs[i]))
    for i, spec in enumerate(specs):
        ratio = statistics.median(x / y for x, y in zip(res[i], res[0]))
        print("%-14s CPU ms/run %8.3f  (rounds %s)  / %s: %.3f" % (
            spec[0], statistics.median(res[i]), ", ".join("%.2f" % x for x in res[i]), specs[0][0], ratio))
    return 0


if __name__ == "__main__":
    sys.exit(main())
