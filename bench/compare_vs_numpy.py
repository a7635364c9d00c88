#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times `parity compare` against numpy computing the usual comparison metrics, in one run.

Two 1 GiB float32 .npy files (a ~ N(0,1), b = a + 1e-4·N(0,1)), page cache warm. Whole
processes, alternating, REPEATS times each; `cat A B > /dev/null` is the I/O reference.
numpy's side (NUMPY_SCRIPT below) computes max_abs, mean_abs, rmse, max_rel, cosine and NaN
mismatches, as a numpy user writes them.

Usage: compare_vs_numpy.py [--parity build/parity] [--dir DIR] [--repeats 5] [--json OUT]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

NUMPY_SCRIPT = r"""
import sys, numpy as np
a = np.load(sys.argv[1], mmap_mode="r"); b = np.load(sys.argv[2], mmap_mode="r")
d = a - b; ad = np.abs(d)
max_abs  = ad.max()
mean_abs = np.mean(ad, dtype=np.float64)
rmse     = np.sqrt(np.mean(d.astype(np.float64) ** 2))
absb = np.abs(b); mask = absb > 1e-30
max_rel  = (ad[mask] / absb[mask]).max()
a64 = a.astype(np.float64); b64 = b.astype(np.float64)
cosine   = np.dot(a64, b64) / (np.sqrt(np.dot(a64, a64)) * np.sqrt(np.dot(b64, b64)))
nan_mismatch = np.count_nonzero(np.isnan(a) != np.isnan(b))
print(max_abs, mean_abs, rmse, max_rel, cosine, nan_mismatch)
"""

N = 1 << 28  # 268,435,456 float32 = 1 GiB per file


def write_pair(a_path, b_path, n, step):
    """Two float32 .npy files of n elements, a ~ N(0,1) and b = a + 1e-4·N(0,1) (seed 2, drawn
    `step` elements at a time), unless both exist with the right size. Returns the paths."""
    size = n * 4 + 128
    if all(os.path.exists(p) and os.path.getsize(p) == size for p in (a_path, b_path)):
        return a_path, b_path
    rng = np.random.default_rng(2)
    a = np.lib.format.open_memmap(a_path, mode="w+", dtype=np.float32, shape=(n,))
    b = np.lib.format.open_memmap(b_path, mode="w+", dtype=np.float32, shape=(n,))
    for i in range(0, n, step):
        m = min(step, n - i)
        chunk = rng.standard_normal(m, dtype=np.float32)
        a[i:i + m] = chunk
        b[i:i + m] = chunk + np.float32(1e-4) * rng.standard_normal(m, dtype=np.float32)
    a.flush()
    b.flush()
    del a, b
    return a_path, b_path


def make_files(directory):
    return write_pair(os.path.join(directory, "compare_a.npy"),
                      os.path.join(directory, "compare_b.npy"), N, 1 << 24)


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parity", default="build/parity")
    ap.add_argument("--dir", default="build/bench-data")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    a, b = make_files(args.dir)
    cat = ["sh", "-c", "cat '%s' '%s' > /dev/null" % (a, b)]
    subprocess.run(cat, check=True)  # warm the page cache
    times = {"parity": [], "numpy": [], "cat": []}
    for _ in range(args.repeats):
        times["cat"].append(timed(cat))
        # exit code 1 (tensors differ beyond tolerance) is a result here, not a failure
        times["parity"].append(timed([args.parity, "compare", "--quiet", "--json", os.devnull,
                                      a, b]))
        times["numpy"].append(timed(["/usr/bin/python3", "-c", NUMPY_SCRIPT, a, b]))
    med = {k: statistics.median(v) for k, v in times.items()}
    size_gb = (os.path.getsize(a) + os.path.getsize(b)) / 1e9
    result = {
        "benchmark": "compare two 1 GiB float32 .npy files, warm page cache, whole process",
        "machine": "%s, %d CPUs, %s" % (platform.processor() or platform.machine(),
                                        os.cpu_count(), platform.platform()),
        "repeats": args.repeats, "seconds": times, "median_s": med,
        "GB_per_s": {k: size_gb / v for k, v in med.items()},
        "speedup_vs_numpy": med["numpy"] / med["parity"],
        "fraction_of_cat_throughput": med["cat"] / med["parity"],
    }
    for k in ("parity", "numpy", "cat"):
        print("%-7s median %.3f s  (%.2f GB/s)  runs %s" % (
            k, med[k], size_gb / med[k], " ".join("%.3f" % t for t in times[k])))
    print("parity compare is %.1fx faster than numpy, at %.0f%% of cat's throughput"
          % (result["speedup_vs_numpy"], 100 * result["fraction_of_cat_throughput"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
