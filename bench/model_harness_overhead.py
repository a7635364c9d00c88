#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The model suite's own overhead: each reference workload's samples/s under `parity bench
--suite model` against a plain PyTorch timing loop of the same steps (the same model, data,
DataLoader and Adam step, timed with one clock around the loop), in one run, each in a fresh
process. Target: the harness reaches at least 98% of the plain loop's rate.

    PYTHONPATH=python /usr/bin/python3 bench/model_harness_overhead.py --parity build/parity
        [--size small] [--steps 40] [--warmup 3] [--rounds 3]

Rounds alternate the two ways; each figure is the median over rounds of the rate of the
median timed step (batch size / step time; warm-up steps left out of both). Whole runs of
the same loop differ by up to 15% on a small CPU model (allocation, caches): use several
rounds.
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

import torch

import parity_workloads


def plain_loop(name, size, steps, warmup, seed=0):
    """samples/s of the same training steps in the plainest loop a user would time: the clock
    read around each step, no loss read back (the CPU needs no synchronisation); the rate of
    the median step."""
    w = parity_workloads.get(name, size=size, seed=seed)
    torch.manual_seed(seed)
    model, loss_fn = w.model, w.loss_fn
    opt = torch.optim.Adam(model.parameters(), lr=w.lr)
    it = iter(w.loader(warmup + steps))
    times = []
    for i in range(warmup + steps):
        start = time.perf_counter()
        inputs, target = next(it)
        opt.zero_grad(set_to_none=True)
        loss_fn(model(*inputs), target).backward()
        opt.step()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return w.batch_size / statistics.median(times)


def plain_process(name, size, steps, warmup):
    """plain_loop in a fresh interpreter, as the harness runs."""
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--plain", name,
                           "--size", size, "--steps", str(steps), "--warmup", str(warmup)],
                          check=True, capture_output=True, text=True)
    return float(done.stdout.strip().splitlines()[-1])


def harness(parity, name, size, steps, warmup):
    """samples/s of the median step of `parity bench --suite model` (its result's median)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "model.json")
        subprocess.run([parity, "bench", "--suite", "model", "--workload", name, "--size", size,
                        "--steps", str(steps), "--warmup", str(warmup), "--json", out,
                        "--quiet", "--python", sys.executable], check=True)
        with open(out) as f:
            (r,) = json.load(f)["results"]
    return r["median"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parity", default="build/parity")
    ap.add_argument("--size", default="small", choices=parity_workloads.SIZES)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--plain", metavar="WORKLOAD", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.plain:
        print(plain_loop(args.plain, args.size, args.steps, args.warmup))
        return
    print("model suite overhead: size %s, %d timed steps after %d warm-up, %d rounds; torch %s, "
          "%d threads, %s, load %.2f" % (args.size, args.steps, args.warmup, args.rounds,
                                          torch.__version__, torch.get_num_threads(),
                                          platform.processor() or platform.machine(),
                                          os.getloadavg()[0]))
    print()
    print("| workload | plain loop (samples/s) | parity bench --suite model (samples/s) | "
          "harness / plain |")
    print("|---|---|---|---|")
    for name in parity_workloads.names():
        plain, ours = [], []
        for _ in range(args.rounds):
            plain.append(plain_process(name, args.size, args.steps, args.warmup))
            ours.append(harness(args.parity, name, args.size, args.steps, args.warmup))
        p, h = statistics.median(plain), statistics.median(ours)
        print("| %s | %.1f | %.1f | %.1f%% |" % (name, p, h, 100 * h / p))


if __name__ == "__main__":
    main()
