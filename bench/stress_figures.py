#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The two figures of issue 10 for `parity stress`, in one run, on the CPU backend:

1. Recovery time after SIGKILL of a worker: a gemm-burn run with `--inject kill:every=S` long
   enough for --drills kills (default 20); the median and the maximum of the recovery times the
   result reports (from the kill to the first step the restarted worker completes). The seed
   asks for 30 s; the target is under 2 s.
2. Supervisor overhead: the same gemm-burn run bare (`--inline`: the workload in parity's own
   process, no supervisor, checkpoints or telemetry) and supervised (a worker process, protocol
   lines, checkpoints every 50 steps, telemetry every second), --rounds times each, alternating;
   throughput (GFLOP/s over the steps after the first) supervised / bare. Target: at least 98%.

    ./scripts/build release && /usr/bin/python3 bench/stress_figures.py [--n 1024] [--seconds 20]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def stress(binary, *args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        p = subprocess.run([binary, "stress", *args, "--json", out, "--quiet"],
                           capture_output=True, text=True)
        if p.returncode not in (0, 1):
            sys.exit(f"parity stress {' '.join(args)} exited {p.returncode}: {p.stderr}")
        with open(out) as f:
            return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parity", default=os.path.join(ROOT, "build", "parity"))
    parser.add_argument("--n", type=int, default=1024, help="gemm-burn matrix size")
    parser.add_argument("--drills", type=int, default=20)
    parser.add_argument("--every", type=float, default=1.5, help="seconds between kills")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of each throughput run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    workload = ["--workload", "gemm-burn", "--param", f"n={args.n}"]

    duration = args.every * (args.drills + 0.5)
    doc = stress(args.parity, *workload, "--duration", str(duration),
                 "--inject", f"kill:every={args.every}")
    kills = [f for f in doc["faults"] if f["kind"] == "kill"]
    recovered = [f["recovery_s"] for f in kills if f["recovered"]]
    recovery = {
        "drills": len(kills), "recovered": len(recovered),
        "median_s": statistics.median(recovered) if recovered else None,
        "max_s": max(recovered) if recovered else None,
        "lost_steps": doc["lost_steps"], "duplicated_steps": doc["duplicated_steps"],
        "verdict": doc["verdict"],
    }
    print(f"recovery after SIGKILL, gemm-burn n={args.n}: {len(kills)} drills, "
          f"{len(recovered)} recovered, median {recovery['median_s']:.3f} s, "
          f"max {recovery['max_s']:.3f} s (lost steps {doc['lost_steps']}, "
          f"done twice {doc['duplicated_steps']})")

    bare, supervised = [], []
    for r in range(args.rounds):
        b = stress(args.parity, *workload, "--inline", "--duration", str(args.seconds))
        s = stress(args.parity, *workload, "--duration", str(args.seconds))
        bare.append(b["throughput"]["value"])
        supervised.append(s["throughput"]["value"])
        print(f"round {r + 1}: bare {bare[-1]:.2f} GFLOP/s ({b['steps']} steps), supervised "
              f"{supervised[-1]:.2f} GFLOP/s ({s['steps']} steps): "
              f"{100 * supervised[-1] / bare[-1]:.1f}%")
    ratio = statistics.median(supervised) / statistics.median(bare)
    print(f"supervised / bare (medians of {args.rounds}): {100 * ratio:.1f}%")
    figures = {"machine": f"{platform.node()} {os.cpu_count()} CPUs", "n": args.n,
               "recovery": recovery,
               "throughput": {"bare_gflops": bare, "supervised_gflops": supervised,
                              "ratio": ratio}}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)


if __name__ == "__main__":
    main()
