#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""parity tune against an exhaustive grid of the same space, in one run: the tuner's best
configuration, its lift over the default with the interval, its trials and wall time; then
every configuration of the space measured by `parity bench --suite model` at the tuner's last
rung's steps. How close the tuner came: the grid's rate of the tuner's pick over the grid's
best rate; at what cost: the tuner's wall time over the grid's.

    PYTHONPATH=python /usr/bin/python3 bench/tune_vs_grid.py --parity build/parity
        [--workload cnn] [--size small] [--budget 240] [--space FILE]
"""
import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time

import yaml

DEFAULT_SPACE = {"knobs": {"batch_size": ["default", 64, 128], "num_workers": ["default", 1],
                           "amp": ["default", "bf16"], "channels_last": ["default", True]}}


def bench(parity, workload, size, steps, warmup, knobs, env):
    """The grid's figure for one configuration: median samples/s of the model suite."""
    args = [parity, "bench", "--suite", "model", "--workload", workload, "--size", size,
            "--steps", str(steps), "--warmup", str(warmup), "--json", "-", "--quiet",
            "--python", sys.executable]
    for key, value in knobs.items():
        args += ["--set", "%s=%s" % (key, str(value).lower() if isinstance(value, bool)
                                     else value)]
    done = subprocess.run(args, capture_output=True, text=True, check=True,
                          env=dict(os.environ, **env))
    (r,) = json.loads(done.stdout)["results"]
    return r["median"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parity", default="build/parity")
    ap.add_argument("--workload", default="cnn")
    ap.add_argument("--size", default="small")
    ap.add_argument("--budget", default="240")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--space", help="a space file (default: a 24-configuration space)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        space_path = args.space
        if not space_path:
            space_path = os.path.join(tmp, "space.yaml")
            with open(space_path, "w") as f:
                yaml.safe_dump(DEFAULT_SPACE, f)
        with open(space_path) as f:
            space = yaml.safe_load(f)
        out = os.path.join(tmp, "tune.json")
        start = time.perf_counter()
        subprocess.run([args.parity, "tune", args.workload, "--space", space_path, "--size",
                        args.size, "--budget", args.budget, "--warmup", str(args.warmup),
                        "--json", out, "--quiet", "--python", sys.executable], check=False)
        tune_s = time.perf_counter() - start
        with open(out) as f:
            tune = json.load(f)
    steps = tune["rung_steps"][tune["final_rung"]]
    knobs = space.get("knobs", {})
    env = space.get("env", {})
    names = list(knobs) + list(env)
    grid = []
    start = time.perf_counter()
    for values in itertools.product(*(list(knobs.values()) + list(env.values()))):
        k = {n: v for n, v in zip(names[:len(knobs)], values[:len(knobs)]) if v != "default"}
        e = {n: str(v) for n, v in zip(names[len(knobs):], values[len(knobs):])
             if v != "default"}
        grid.append((k, e, bench(args.parity, args.workload, args.size, steps, args.warmup, k, e)))
    grid_s = time.perf_counter() - start
    grid.sort(key=lambda g: -g[2])
    best = tune["best"]
    picked = next(g for g in grid if g[0] == best["knobs"] and g[1] == best["env"])
    default = next(g for g in grid if not g[0] and not g[1])
    print("parity tune %s (size %s) against the exhaustive grid of the same %d-configuration "
          "space, load %.2f" % (args.workload, args.size, len(grid), os.getloadavg()[0]))
    print()
    print("| | configuration | samples/s | x default (grid) | trials | wall time (s) |")
    print("|---|---|---|---|---|---|")
    print("| tune | %s | %.1f | %.3f (tune: %.3f [%.3f, %.3f]) | %d | %.0f |" % (
        best["label"], picked[2], picked[2] / default[2], tune["speedup"]["ratio"],
        tune["speedup"]["low"], tune["speedup"]["high"], len(tune["trials"]), tune_s))
    label = " ".join(["%s=%s" % kv for kv in list(grid[0][0].items()) + list(grid[0][1].items())])
    print("| grid | %s | %.1f | %.3f | %d | %.0f |" % (label or "default", grid[0][2],
                                                      grid[0][2] / default[2], len(grid), grid_s))
    print()
    print("tune's pick reaches %.1f%% of the grid's best rate, in %.0f%% of the grid's time "
          "(grid at %d timed steps per configuration)" % (100 * picked[2] / grid[0][2],
                                                          100 * tune_s / grid_s, steps))


if __name__ == "__main__":
    main()
