#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Figures of `parity capture -- python SCRIPT` (issue 53, docs/PERFORMANCE.md): the
launcher's added start-up time and per-step time against the in-code capture of the same
script, same workload, same mode, timed in the same run (rounds alternate the two; the
uncaptured script is timed too, as the floor).

Each run is one process: the script builds a parity_workloads workload, makes its batches and
optimizer, then trains STEPS steps, timing each with perf_counter, and prints the times. The
steps are timed in wall time and in the process's CPU time (every thread's: the CPU time is not
charged for time a virtual machine's host takes the CPU away, which wall time is). The
start-up time is the process's wall time (from the bench's side: for the launcher that
includes the parity binary, the sitecustomize and the launcher's install) minus its steps.
Medians over the rounds (each in another order, the disk synced before each run); ratios
launcher / in-code.

The start-up is also taken alone, more precisely: the same script at size tiny for one step,
--startup-rounds times.

Usage: capture_launcher.py [--parity build/parity] [--python PY] [--workload transformer]
                           [--size tiny] [--steps 20] [--rounds 5] [--startup-rounds 10]
                           [--mode stats] [--json OUT]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SCRIPT = '''
import json
import sys
import time
import torch
import parity_workloads

name, size, steps, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
mode = sys.argv[5]
w = parity_workloads.get(name, size=size, seed=0)
torch.manual_seed(7)
batches = list(w.batches(steps))
opt = w.make_optimizer()
cap = None
if out != "-":
    import parity_dump
    cap = parity_dump.capture(w.model, out, optimizer=opt, mode=mode).start()
times, cpu = [], []
for inputs, target in batches:
    t, c = time.perf_counter(), time.process_time()
    opt.zero_grad(set_to_none=True)
    loss = w.loss_fn(w.forward(w.model, inputs), target)
    loss.backward()
    opt.step()
    if cap is not None:
        cap.step()
    times.append(time.perf_counter() - t)
    cpu.append(time.process_time() - c)
if cap is not None:
    cap.stop()
print(json.dumps([times, cpu]))
'''


def main():
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parity", default=os.path.join(root, "build", "parity"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--workload", default="transformer")
    ap.add_argument("--size", default="tiny")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--startup-rounds", type=int, default=10)
    ap.add_argument("--mode", default="stats", choices=("stats", "tensors"))
    ap.add_argument("--json")
    args = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"), OMP_NUM_THREADS="1")
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "train.py")
        with open(script, "w") as f:
            f.write(SCRIPT)
        results = {"plain": [], "in_code": [], "launcher": []}
        kinds = list(results)
        for r in range(args.rounds):
            # Each round in another order, each run after the previous one's dump is on disk
            # (os.sync): no kind always follows another's writes.
            for kind in kinds[r % 3:] + kinds[:r % 3]:
                os.sync()
                out = os.path.join(tmp, "%s%d" % (kind, r))
                base = [args.python, script, args.workload, args.size, str(args.steps)]
                if kind == "plain":
                    cmd = base + ["-", args.mode]
                elif kind == "in_code":
                    cmd = base + [out, args.mode]
                else:
                    cmd = [args.parity, "capture", "--mode", args.mode, "-o", out, "--"] + \
                        base + ["-", args.mode]
                t = time.perf_counter()
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
                wall = time.perf_counter() - t
                if p.returncode != 0:
                    sys.exit("%s failed (%d): %s" % (kind, p.returncode, p.stderr[-2000:]))
                steps, cpu = json.loads(p.stdout.strip().splitlines()[-1])
                results[kind].append({"wall": wall, "steps": steps, "cpu": cpu})
        # Start-up alone: the same script at size tiny for one step, many rounds.
        startup = {"plain": [], "in_code": [], "launcher": []}
        for r in range(args.startup_rounds):
            for kind in kinds[r % 3:] + kinds[:r % 3]:
                os.sync()
                out = os.path.join(tmp, "s_%s%d" % (kind, r))
                base = [args.python, script, args.workload, "tiny", "1"]
                cmd = {"plain": base + ["-", args.mode], "in_code": base + [out, args.mode],
                       "launcher": [args.parity, "capture", "--mode", args.mode, "-o", out,
                                    "--"] + base + ["-", args.mode]}[kind]
                t = time.perf_counter()
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
                wall = time.perf_counter() - t
                if p.returncode != 0:
                    sys.exit("%s failed (%d): %s" % (kind, p.returncode, p.stderr[-2000:]))
                startup[kind].append(wall - sum(json.loads(p.stdout.strip().splitlines()[-1])[0]))
    summary = {}
    for kind, runs in results.items():
        # Steps after the first (warm), medians over every step of every round.
        per_step = statistics.median(s for run in runs for s in run["steps"][1:])
        per_step_cpu = statistics.median(s for run in runs for s in run["cpu"][1:])
        startup_of_run = statistics.median(run["wall"] - sum(run["steps"]) for run in runs)
        summary[kind] = {"startup_s": startup_of_run, "step_s": per_step,
                         "step_cpu_s": per_step_cpu,
                         "startup_tiny_s": statistics.median(startup[kind])}
    summary["ratio_launcher_over_in_code"] = {
        "startup": summary["launcher"]["startup_s"] / summary["in_code"]["startup_s"],
        "step": summary["launcher"]["step_s"] / summary["in_code"]["step_s"],
        "step_cpu": summary["launcher"]["step_cpu_s"] / summary["in_code"]["step_cpu_s"],
        "startup_tiny": (summary["launcher"]["startup_tiny_s"]
                         / summary["in_code"]["startup_tiny_s"])}
    import platform
    doc = {"workload": args.workload, "size": args.size, "steps": args.steps,
           "rounds": args.rounds, "mode": args.mode, "python": args.python,
           "host": platform.node(), "summary": summary}
    print("%-9s %12s %12s %14s %18s" % ("", "start-up s", "step ms", "step cpu ms",
                                        "start-up tiny s"))
    for kind in ("plain", "in_code", "launcher"):
        print("%-9s %12.3f %12.3f %14.3f %18.3f" % (
            kind, summary[kind]["startup_s"], 1e3 * summary[kind]["step_s"],
            1e3 * summary[kind]["step_cpu_s"], summary[kind]["startup_tiny_s"]))
    ratio = summary["ratio_launcher_over_in_code"]
    print("launcher / in-code: start-up %.3f, step %.3f, step cpu %.3f, start-up tiny %.3f"
          % (ratio["startup"], ratio["step"], ratio["step_cpu"], ratio["startup_tiny"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
