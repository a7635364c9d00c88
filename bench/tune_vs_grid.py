#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""parity tune against an exhaustive grid of the same space, in one run. The tuner runs its
successive halving under --budget; the grid is the same command with a single rung
(--min-steps = --max-steps = the tuner's last rung) and no budget to speak of: every
configuration measured at the full step count and judged by the same loss envelope. How close
the tuner came: the grid's rate of the tuner's pick over the grid's best; at what cost: the
tuner's wall time over the grid's.

    PYTHONPATH=python /usr/bin/python3 bench/tune_vs_grid.py --parity build/parity
        [--workload cnn] [--size small] [--budget 150] [--space FILE]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

DEFAULT_SPACE = """\
knobs:
  batch_size: [default, 64, 128]
  num_workers: [default, 1]
  amp: [default, bf16]
  channels_last: [default, true]
"""


def tune(parity, workload, size, space, out, *extra):
    start = time.perf_counter()
    subprocess.run([parity, "tune", workload, "--space", space, "--size", size, "--json", out,
                    "--quiet", "--python", sys.executable, *extra], check=False)
    seconds = time.perf_counter() - start
    with open(out) as f:
        return json.load(f), seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parity", default="build/parity")
    ap.add_argument("--workload", default="cnn")
    ap.add_argument("--size", default="small")
    ap.add_argument("--budget", default="150")
    ap.add_argument("--max-steps", default="45")
    ap.add_argument("--space", help="a space file (default: a 24-configuration space)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        space = args.space
        if not space:
            space = os.path.join(tmp, "space.yaml")
            with open(space, "w") as f:
                f.write(DEFAULT_SPACE)
        halving, halving_s = tune(args.parity, args.workload, args.size, space,
                                  os.path.join(tmp, "tune.json"), "--budget", args.budget,
                                  "--max-steps", args.max_steps)
        grid, grid_s = tune(args.parity, args.workload, args.size, space,
                            os.path.join(tmp, "grid.json"), "--budget", "24h",
                            "--min-steps", args.max_steps, "--max-steps", args.max_steps,
                            "--max-configs", "10000")
    rates = {t["label"]: t for t in grid["trials"] if not t["envelope"]}
    best, pick = grid["best"], halving["best"]
    print("parity tune %s (size %s) against the exhaustive grid of the same %d-configuration "
          "space (every configuration at %s steps, the same loss envelope), load %.2f"
          % (args.workload, args.size, grid["space_size"], args.max_steps, os.getloadavg()[0]))
    print()
    print("| | best configuration | x default (its own run, 95% interval) | grid's samples/s "
          "for it | trials | wall time (s) |")
    print("|---|---|---|---|---|---|")
    for name, doc, seconds in (("successive halving", halving, halving_s),
                               ("exhaustive grid", grid, grid_s)):
        b = doc["best"]
        s = doc["speedup"]
        grid_rate = rates[b["label"]]["samples_per_s"] if b else None
        print("| %s | %s | %s | %s | %d | %.0f |" % (
            name, b["label"] if b else "none",
            "%.3f [%.3f, %.3f]" % (s["ratio"], s["low"], s["high"]) if s else "-",
            "%.1f" % grid_rate if grid_rate else "-", len(doc["trials"]), seconds))
    flagged = sum(1 for t in grid["trials"]
                  if t.get("loss_check") and not t["loss_check"]["inside_envelope"])
    print()
    if best and pick:
        print("the tuner's pick reaches %.1f%% of the grid's best rate, in %.0f%% of the grid's "
              "time; the grid flagged %d of %d configurations (losses outside the default's "
              "seed envelope)" % (100 * rates[pick["label"]]["samples_per_s"] /
                                  rates[best["label"]]["samples_per_s"],
                                  100 * halving_s / grid_s, flagged, grid["space_size"]))


if __name__ == "__main__":
    main()
