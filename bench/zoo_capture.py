#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The capture on the model zoo (issue 45): per workload of python/parity_workloads (the
model-library ones under the torch 2.x environment, the reference ones under either torch),
the aten op calls a training step makes (forward, backward and the workload's own optimizer),
the stats-mode capture's step time against the uncaptured step, and the dump's size per step.

    PYTHONPATH=python $(scripts/venv) bench/zoo_capture.py [--workloads hf-llama,...]
        [--size tiny] [--steps 5] [--rounds 3] [--mode stats] [--threads 1] [--dir DIR]
        [--compile]

Each round runs every workload uncaptured and captured for --steps steps from the same start
(one warm-up step outside the timing); the figure is the median step time over all rounds.
"op calls" counts every aten call the capture's dispatch mode saw in one step, recorded or
not (the records are the calls left once views and allocations are omitted). --compile runs
each model under torch.compile (inductor; compiled in the warm-up step, before the capture
starts): the capture then records each compiled region's execution as one record.
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import tempfile
import time

import torch

import parity_dump
import parity_workloads
from parity_workloads import registry

DEFAULT = ("hf-llama", "hf-bert", "timm-vit", "timm-resnet", "torchrec-dlrm", "minilm")


def dir_size(path):
    return sum(os.path.getsize(os.path.join(base, f))
               for base, _, files in os.walk(path) for f in files)


def steps_of(name, size, steps, out=None, mode="stats", compile_model=False):
    """Per-step wall times of `steps` steps after a warm-up step; captured into `out` when
    given. Returns (times, records per step, omitted calls per step)."""
    w = parity_workloads.get(name, size=size, seed=0)
    opt = w.make_optimizer()
    if compile_model:
        w.model = torch.compile(w.model)
    batches = list(w.batches(steps + 1))
    torch.manual_seed(0)
    w.train_step(w.model, batches[0], opt)
    times = []
    if out is None:
        for batch in batches[1:]:
            start = time.perf_counter()
            w.train_step(w.model, batch, opt)
            times.append(time.perf_counter() - start)
        return times, None, None
    with parity_dump.capture(w.model, out, optimizer=opt, mode=mode) as cap:
        for batch in batches[1:]:
            start = time.perf_counter()
            w.train_step(w.model, batch, opt)
            cap.step()
            times.append(time.perf_counter() - start)
    with open(os.path.join(out, "records.jsonl")) as f:
        records = sum(1 for _ in f)
    with open(os.path.join(out, "manifest.json")) as f:
        omitted = sum(json.load(f).get("omitted", {}).values())
    return times, records / steps, omitted / steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default=",".join(DEFAULT))
    ap.add_argument("--size", default="tiny", choices=parity_workloads.SIZES)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mode", default="stats", choices=("stats", "tensors"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dir", default=None, help="where the dumps go")
    ap.add_argument("--compile", action="store_true", help="torch.compile each model")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    names = [n for n in args.workloads.split(",") if n]
    unknown = [n for n in names if n not in registry.all_names()]
    if unknown:
        ap.error("unknown workload(s): %s" % ", ".join(unknown))
    print("torch %s, python %s, %s, %d thread(s), size %s, %d rounds x %d steps, mode %s%s"
          % (torch.__version__, platform.python_version(), platform.processor() or
             platform.machine(), args.threads, args.size, args.rounds, args.steps, args.mode,
             ", torch.compile (inductor)" if args.compile else ""))
    rows = []
    for name in names:
        plain, captured, records, omitted, sizes = [], [], None, None, []
        for _ in range(args.rounds):
            plain += steps_of(name, args.size, args.steps, compile_model=args.compile)[0]
            out = tempfile.mkdtemp(prefix="zoo_%s_" % name, dir=args.dir)
            shutil.rmtree(out)
            times, records, omitted = steps_of(name, args.size, args.steps, out, args.mode,
                                               args.compile)
            captured += times
            sizes.append(dir_size(out) / args.steps)
            shutil.rmtree(out)
        p, c = statistics.median(plain), statistics.median(captured)
        rows.append((name, records + omitted, records, p * 1e3, c * 1e3, c / p,
                     statistics.median(sizes) / 1e6))
        print("%-14s op calls %7.0f  records %7.0f  uncaptured %8.2f ms  %s %8.2f ms  "
              "x%.2f  dump %.2f MB/step" % (name, *rows[-1][1:4], args.mode, *rows[-1][4:]),
              flush=True)
    print("\n| workload | aten op calls per step | records per step | uncaptured step (ms) "
          "| %s step (ms) | × uncaptured | dump per step |" % args.mode)
    print("|---|---|---|---|---|---|---|")
    for name, calls, records, p, c, ratio, mb in rows:
        print("| %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f MB |"
              % (name, calls, records, p, c, ratio, mb))


if __name__ == "__main__":
    main()
