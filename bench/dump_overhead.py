#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The capture overhead of parity_dump (format version 2, level "aten": every op of forward,
backward and Adam) on the `transformer` workload of python/parity_workloads, on the CPU: the
same training steps uncaptured, captured in mode "stats" and captured in mode "tensors", in
one run. Target: stats mode at most 3x the uncaptured step time.

Each round runs every mode for --steps steps from the same start (after one warm-up step
outside the timing); modes alternate within a round; the figure is the median step time over
all rounds. The captured modes also report where the capture's time went (saving tensors or
computing statistics, writing record lines, the rest: dispatch, argument binding, module and
autograd bookkeeping) and the dump's size per step.

    PYTHONPATH=python /usr/bin/python3 bench/dump_overhead.py [--size small] [--steps 5]
        [--rounds 3] [--dir DIR] [--modes stats,tensors] [--hash auto|xxh3_128|sha256]

--dir: where the dumps go (default: a temporary directory under $TMPDIR); the file system
matters for mode "tensors", which writes one .npy file per tensor.
"""
import argparse
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time

import torch

import parity_dump
import parity_workloads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Meter:
    """Accumulates the wall time spent in one function while installed."""

    def __init__(self, owner, name):
        self.owner, self.name = owner, name
        self.orig = getattr(owner, name, None)  # None: this version has no such function
        self.seconds = 0.0

    def __enter__(self):
        orig = self.orig
        if orig is None:
            return self

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return orig(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start
        setattr(self.owner, self.name, timed)
        return self

    def __exit__(self, *exc):
        if self.orig is not None:
            setattr(self.owner, self.name, self.orig)
        return False


def dir_size(path):
    total = 0
    for base, _, files in os.walk(path):
        for f in files:
            total += os.path.getsize(os.path.join(base, f))
    return total


def run(size, mode, steps, base, hash_name="auto", seed=0):
    """Per-step wall times of `steps` steps (after one warm-up step), captured in `mode`
    (None: uncaptured), and for captured modes (dump bytes, records, seconds in tensor
    entries, seconds writing lines)."""
    w = parity_workloads.get("transformer", size=size, seed=seed)
    opt = w.make_optimizer()
    batches = list(w.batches(steps + 1))
    torch.manual_seed(seed)
    w.train_step(w.model, batches[0], opt)
    times = []
    if mode is None:
        for batch in batches[1:]:
            start = time.perf_counter()
            w.train_step(w.model, batch, opt)
            times.append(time.perf_counter() - start)
        return times, None
    out = tempfile.mkdtemp(prefix="dump_%s_" % mode, dir=base)
    shutil.rmtree(out)
    tensors = sys.modules["parity_dump.tensors"].TensorWriter
    records = sys.modules["parity_dump.dumpdir"].RecordsFile
    with Meter(tensors, "entry") as saving, Meter(records, "write") as writing, \
            Meter(records, "write_many") as writing_many:
        with parity_dump.capture(w.model, out, optimizer=opt, mode=mode,
                                 hash=hash_name) as cap:
            for batch in batches[1:]:
                start = time.perf_counter()
                w.train_step(w.model, batch, opt)
                cap.step()
                times.append(time.perf_counter() - start)
    with open(os.path.join(out, "records.jsonl")) as f:
        n_records = sum(1 for _ in f)
    extra = {"bytes": dir_size(out), "records": n_records, "saving": saving.seconds,
             "writing": writing.seconds + writing_many.seconds}
    shutil.rmtree(out)
    return times, extra


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="small", choices=parity_workloads.SIZES)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default=None, help="where the dumps go")
    ap.add_argument("--modes", default="stats,tensors",
                    help="captured modes to measure, comma-separated (default stats,tensors)")
    ap.add_argument("--hash", default="auto", choices=("auto", "xxh3_128", "sha256"),
                    help="the statistics' digest algorithm (default auto: xxh3_128 where the "
                    "xxhash module is installed)")
    args = ap.parse_args()
    base = args.dir or tempfile.gettempdir()
    modes = (None,) + tuple(m for m in args.modes.split(",") if m)
    times = {m: [] for m in modes}
    extras = {m: [] for m in modes[1:]}
    for _ in range(args.rounds):
        for m in modes:
            t, extra = run(args.size, m, args.steps, base, args.hash)
            times[m].extend(t)
            if extra:
                extras[m].append(extra)
    plain = statistics.median(times[None])
    w = parity_workloads.get("transformer", size=args.size)
    n_params = sum(p.numel() for p in w.model.parameters())
    print("parity_dump capture overhead: `transformer` workload, size %s (%d parameters, "
          "batch %d), Adam, CPU, %d threads; torch %s, %s; %d rounds x %d steps; dumps "
          "in %s; stats digests %s" % (
              args.size, n_params, w.batch_size, torch.get_num_threads(), torch.__version__,
              platform.processor() or platform.machine(), args.rounds, args.steps, base,
              parity_dump.tensors.hash_function(args.hash)[0]))
    print()
    plain_min = min(times[None])
    print("| mode | step time (ms, median) | x uncaptured | fastest step (ms) | x uncaptured "
          "| records/step | dump/step (MB) | tensor entries | record lines | rest of capture |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("| uncaptured | %.1f | 1.00 | %.1f | 1.00 | | | | | |" % (plain * 1e3, plain_min * 1e3))
    for m in modes[1:]:
        med = statistics.median(times[m])
        total = sum(times[m])
        saving = sum(e["saving"] for e in extras[m])
        writing = sum(e["writing"] for e in extras[m])
        overhead = max(total - plain * len(times[m]), 1e-9)
        per_step = args.rounds * args.steps
        rest = overhead - saving - writing
        fastest = min(times[m])
        print("| %s | %.1f | %.2f | %.1f | %.2f | %d | %.2f | %.0f%% | %.0f%% | %.0f%% |" % (
            m, med * 1e3, med / plain, fastest * 1e3, fastest / plain_min,
            sum(e["records"] for e in extras[m]) // per_step,
            sum(e["bytes"] for e in extras[m]) / per_step / 1e6, 100 * saving / overhead,
            100 * writing / overhead, 100 * rest / overhead))
    print()
    print("The fastest step of each mode is the least disturbed by other processes on a shared "
          "machine. Shares are of the capture's added time (captured minus uncaptured step time): "
          "tensor entries = copying tensors to numpy and writing .npy files (tensors) or "
          "computing statistics (stats; the statistics and digests of tensors of 64 KiB and "
          "more are computed on the capture's digest thread, outside these shares, except "
          "where the capture waits for them); record lines = JSON encoding and "
          "the flushed write; rest = dispatch, argument binding, module and autograd "
          "bookkeeping.")


if __name__ == "__main__":
    main()
