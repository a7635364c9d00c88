#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The figure of issue 11: the overhead of `parity collect` around its stages (plan parsing,
the fingerprint, telemetry sampled every second, the manifest rewritten at each stage, the
results store) against the same stages run alone, one after another, without collect.

The plan (written to a temporary directory) has an env stage, a monitor stage, a bench stage
(stream and GEMM), a stress stage (gemm-burn for --stress seconds) and an exec stage (a numpy
training loop). "Alone" runs the very commands collect runs for those stages: `parity devices`,
`parity bench ...`, `parity stress ... --no-telemetry`, `python3 train.py`. Rounds alternate
(collect, alone, collect, ...); the figure is the median over rounds of collect's wall time
divided by the alone wall time, minus one. Target: under 2%. A second figure, free of the
stages' own run-to-run noise: collect's wall time outside its stages (what the manifest records
for each stage, the monitor aside) as a share of the time inside them.

    ./scripts/build release && /usr/bin/python3 bench/collect_overhead.py [--rounds 5]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN = os.path.join(ROOT, "examples", "plan", "train.py")

PLAN = """\
plan: overhead
stages:
  - kind: env
  - kind: monitor
    interval: 1
  - kind: bench
    suites: [stream, gemm]
    dtypes: [float64]
    n: {n}
    reps: 20
  - kind: stress
    workload: gemm-burn
    params: {{n: 256}}
    duration: {stress}
  - kind: exec
    command: [{python}, {train}, --out, "{{out}}"]
    metrics:
      - {{name: loss, json: metrics.json, key: eval.loss}}
"""


def timed(argv, **kw):
    start = time.perf_counter()
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, **kw)
    seconds = time.perf_counter() - start
    if r.returncode != 0:
        sys.exit("%s: exit %d\n%s" % (" ".join(argv), r.returncode, r.stderr[-2000:]))
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "build", "parity"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--stress", type=float, default=10.0)
    args = parser.parse_args()
    py = sys.executable
    ratios, collect_times, alone_times, outside = [], [], [], []
    per_stage = {"env": [], "bench": [], "stress": [], "exec": []}
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "plan.yaml")
        with open(plan, "w") as f:
            f.write(PLAN.format(n=args.n, stress=args.stress, python=py, train=TRAIN))
        db = os.path.join(tmp, "parity.db")
        for k in range(args.rounds):
            bundle = os.path.join(tmp, "bundle-%d" % k)
            c = timed([args.binary, "collect", plan, "-o", bundle, "--db", db, "--quiet"])
            with open(os.path.join(bundle, "manifest.json")) as f:
                stages = {s["kind"]: s["seconds"] for s in json.load(f)["stages"]}
            inside = sum(v for k, v in stages.items() if k != "monitor")
            outside.append((c - inside) / inside)
            out = os.path.join(tmp, "alone-%d" % k)
            os.makedirs(out)
            alone = {}
            alone["env"] = timed([args.binary, "devices", "--json", os.path.join(out, "d.json"),
                                  "--quiet"])
            alone["bench"] = timed([args.binary, "bench", "--backend", "cpu", "--json",
                        os.path.join(out, "b.json"), "--quiet", "--suite", "stream,gemm",
                        "--dtype", "float64", "--n", str(args.n), "--reps", "20"])
            alone["stress"] = timed([args.binary, "stress", "--workload", "gemm-burn", "--backend", "cpu",
                        "--json", os.path.join(out, "s.json"), "--quiet", "--duration",
                        str(args.stress), "--param", "n=256", "--no-telemetry"])
            alone["exec"] = timed([py, TRAIN, "--out", out])
            a = sum(alone.values())
            for kind in per_stage:
                per_stage[kind].append((stages[kind], alone[kind]))
            collect_times.append(c)
            alone_times.append(a)
            ratios.append(c / a)
            print("round %d: collect %.2f s (%.3f s outside its stages), stages alone %.2f s, "
                  "overhead %+.2f%%" % (k + 1, c, c - inside, a, 100 * (c / a - 1)), flush=True)
    print()
    print("machine: %s, %d CPUs, %s" % (platform.node(), os.cpu_count(), platform.platform()))
    print("collect: median %.2f s; stages alone: median %.2f s over %d rounds"
          % (statistics.median(collect_times), statistics.median(alone_times), args.rounds))
    print("overhead of collect: median %+.2f%% (min %+.2f%%, max %+.2f%%); target < 2%%"
          % (100 * (statistics.median(ratios) - 1), 100 * (min(ratios) - 1),
             100 * (max(ratios) - 1)))
    for kind, pairs in per_stage.items():
        print("  %-7s in collect: median %.3f s; alone: median %.3f s"
              % (kind, statistics.median(p[0] for p in pairs),
                 statistics.median(p[1] for p in pairs)))
    print("collect's time outside its stages: median %.2f%% of the time inside them (max %.2f%%)"
          % (100 * statistics.median(outside), 100 * max(outside)))


if __name__ == "__main__":
    main()
