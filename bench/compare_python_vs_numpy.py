#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times `parity.compare(a, b)` (the Python bindings, arrays in memory) against numpy
computing the same metrics on the same arrays, in one run (issue 34).

Two float32 arrays of --mib MiB each in memory (a ~ N(0,1), b = a + 1e-4·N(0,1), seed 2, as
compare_vs_numpy.py's files), alternating: one round runs each once, in turn; --repeats rounds
(numpy's side --numpy-repeats of them); medians and their ratio. numpy's side is
compare_vs_numpy.py's script on the arrays themselves: max_abs, mean_abs, rmse, max_rel,
cosine and NaN mismatches, as a numpy user writes them. parity.compare runs the `torch` policy
(no k), judging every element, with its violation histogram and worst elements.

Usage: PYTHONPATH=build/python:python /usr/bin/python3 bench/compare_python_vs_numpy.py
           [--mib 1024] [--repeats 5] [--numpy-repeats 3] [--threads 0] [--json OUT]
"""
import argparse
import json
import os
import platform
import statistics
import time

import numpy as np

import parity


def numpy_metrics(a, b):
    """compare_vs_numpy.py's NUMPY_SCRIPT, on arrays."""
    d = a - b
    ad = np.abs(d)
    max_abs = ad.max()
    mean_abs = np.mean(ad, dtype=np.float64)
    rmse = np.sqrt(np.mean(d.astype(np.float64) ** 2))
    absb = np.abs(b)
    mask = absb > 1e-30
    max_rel = (ad[mask] / absb[mask]).max()
    a64 = a.astype(np.float64)
    b64 = b.astype(np.float64)
    cosine = np.dot(a64, b64) / (np.sqrt(np.dot(a64, a64)) * np.sqrt(np.dot(b64, b64)))
    nan_mismatch = np.count_nonzero(np.isnan(a) != np.isnan(b))
    return max_abs, mean_abs, rmse, max_rel, cosine, nan_mismatch


def make_arrays(n, step=1 << 24):
    rng = np.random.default_rng(2)
    a = np.empty(n, np.float32)
    b = np.empty(n, np.float32)
    for i in range(0, n, step):
        m = min(step, n - i)
        chunk = rng.standard_normal(m, dtype=np.float32)
        a[i:i + m] = chunk
        b[i:i + m] = chunk + np.float32(1e-4) * rng.standard_normal(m, dtype=np.float32)
    return a, b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=1024, help="size of each array")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--numpy-repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="parity.set_threads (0: one per CPU)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    parity.set_threads(args.threads)
    a, b = make_arrays(args.mib * (1 << 20) // 4)
    times = {"parity.compare": [], "numpy": []}
    check = None
    for r in range(args.repeats):
        start = time.perf_counter()
        result = parity.compare(a, b)
        times["parity.compare"].append(time.perf_counter() - start)
        if r < args.numpy_repeats:
            start = time.perf_counter()
            check = numpy_metrics(a, b)
            times["numpy"].append(time.perf_counter() - start)
    t = result.tensors[0]
    # The same figures from both (float64 accumulation on both sides).
    assert abs(t.max_abs - float(check[0])) <= 1e-6 * float(check[0]), (t.max_abs, check[0])
    assert abs(t.rmse - float(check[2])) <= 1e-6 * float(check[2]), (t.rmse, check[2])
    medians = {k: statistics.median(v) for k, v in times.items()}
    ratio = medians["numpy"] / medians["parity.compare"]
    gb = 2 * a.nbytes / 1e9
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, numpy {np.__version__}, "
          f"parity {parity.__version__}, {parity.thread_count()} parity threads")
    for name, v in times.items():
        print(f"{name:16} runs {' '.join(f'{x:.3f}' for x in v)}  median {medians[name]:.3f} s"
              f"  {gb / medians[name]:.2f} GB/s")
    print(f"parity.compare is {ratio:.1f}x faster than numpy (target 10x)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"mib": args.mib, "times": times, "medians": medians, "ratio": ratio,
                       "threads": parity.thread_count(), "numpy": np.__version__}, f, indent=2)


if __name__ == "__main__":
    main()
