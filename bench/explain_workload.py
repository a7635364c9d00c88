#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times `parity explain` on two captured training steps of python/parity_workloads'
`transformer`, at the aten level (forward, backward and Adam), with its peak memory.

A is captured on one thread, B on two (so summation orders differ and every op is judged);
both with dropout seeded alike. `parity explain A B` runs under /usr/bin/time -v: wall time
and maximum resident set size, against each dump's size and the largest single op call's
tensors (inputs and outputs as stored, one side).

Usage: explain_workload.py [--parity build/parity] [--size base] [--batch 2] [--steps 2]
                           [--dir DIR] [--repeats 2] [--json OUT]
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

CAPTURE = r"""
import sys, torch
sys.path.insert(0, {python!r})
import parity_dump
import parity_workloads.harness as harness
torch.set_num_threads({threads})
w = harness.load("transformer", size={size!r}, seed=0, batch_size={batch})
opt = w.make_optimizer()
torch.manual_seed(1)
with parity_dump.capture(w.model, {out!r}, optimizer=opt) as cap:
    for batch in w.batches({steps}):
        w.train_step(w.model, batch, opt)
        cap.step()
"""

ITEMSIZE = {"float64": 8, "float32": 4, "int64": 8, "int32": 4, "float16": 2, "bfloat16": 2,
            "bool": 1, "uint8": 1, "int8": 1, "int16": 2}


def dump_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def largest_op(path):
    """(bytes, op) of the record whose tensors, as stored, are the largest."""
    best = (0, "")
    with open(os.path.join(path, "records.jsonl")) as f:
        for line in f:
            r = json.loads(line)
            n = 0
            for t in r["inputs"] + r["outputs"] + list(r.get("params", {}).values()):
                count = 1
                for d in t["shape"]:
                    count *= d
                n += count * ITEMSIZE.get(t["dtype"], 8)
            best = max(best, (n, r["op"]))
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parity", default=os.path.join(HERE, "..", "build", "parity"))
    ap.add_argument("--size", default="base")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--dir", help="where the dumps go (default: a temporary directory on disk)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args()
    work = args.dir or tempfile.mkdtemp(prefix="explain_workload_", dir="/var/tmp")
    try:
        dumps = {}
        for side, threads in (("A", 1), ("B", 2)):
            out = os.path.join(work, side)
            shutil.rmtree(out, ignore_errors=True)
            code = CAPTURE.format(python=os.path.join(HERE, "..", "python"), threads=threads,
                                  size=args.size, batch=args.batch, steps=args.steps, out=out)
            subprocess.run(["/usr/bin/python3", "-c", code], check=True)
            dumps[side] = out
        walls, rss = [], []
        for _ in range(args.repeats):
            p = subprocess.run(["/usr/bin/time", "-v", args.parity, "explain", dumps["A"],
                                dumps["B"], "-q", "--json", os.path.join(work, "explain.json")],
                               capture_output=True, text=True)
            if p.returncode not in (0, 1):
                sys.exit(f"parity explain failed ({p.returncode}): {p.stderr[-2000:]}")
            m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)",
                          p.stderr)
            walls.append(int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3)))
            rss.append(int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
                           .group(1)) * 1024)
        with open(os.path.join(work, "explain.json")) as f:
            doc = json.load(f)
        biggest, op = largest_op(dumps["A"])
        result = {
            "machine": f"{platform.node()} {os.cpu_count()} CPUs",
            "size": args.size, "batch": args.batch, "steps": args.steps,
            "records": len(doc["ops"]), "origins": len(doc["origins"]),
            "dump_bytes": {s: dump_bytes(d) for s, d in dumps.items()},
            "largest_op_bytes": biggest, "largest_op": op,
            "wall_s": walls, "wall_s_median": statistics.median(walls),
            "peak_rss_bytes": max(rss),
        }
        print(f"transformer size {args.size} batch {args.batch}, {args.steps} steps: "
              f"{result['records']} op calls, dumps A {result['dump_bytes']['A'] / 2**30:.2f} GiB, "
              f"B {result['dump_bytes']['B'] / 2**30:.2f} GiB; largest op ({op}) "
              f"{biggest / 2**20:.1f} MiB")
        print(f"parity explain: {result['wall_s_median']:.1f} s (median of {len(walls)}), peak RSS "
              f"{result['peak_rss_bytes'] / 2**20:.0f} MiB, {result['origins']} origins")
        if args.json:
            with open(args.json, "w") as f:
                json.dump(result, f, indent=1)
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
