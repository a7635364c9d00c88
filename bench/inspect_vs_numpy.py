#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times `parity inspect` against numpy computing the same statistics on the same file.

Both run as whole processes on a 1 GiB float32 .npy with the page cache warm, alternating,
REPEATS times each; the medians and their ratio are printed (and written with --json).
`cat FILE > /dev/null` is timed as the I/O reference.

numpy's side is the code a numpy user writes for min, max, mean, std over the finite
elements and the NaN / Inf / zero counts (see NUMPY_SCRIPT).

Usage: inspect_vs_numpy.py [--parity build/parity] [--dir DIR] [--repeats 5] [--json OUT]
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
a = np.load(sys.argv[1], mmap_mode="r")
finite = np.isfinite(a)
v = a[finite]
stats = dict(min=float(v.min()), max=float(v.max()), mean=float(v.mean(dtype=np.float64)),
             std=float(v.std(dtype=np.float64)), nan=int(np.isnan(a).sum()),
             inf=int(np.isinf(a).sum()), zeros=int((a == 0).sum()))
print(stats)
"""

N = 1 << 28  # 268,435,456 float32 = 1 GiB


def make_file(path):
    if os.path.exists(path) and os.path.getsize(path) == N * 4 + 128:
        return
    rng = np.random.default_rng(1)
    out = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(N,))
    step = 1 << 24
    for i in range(0, N, step):
        out[i:i + step] = rng.standard_normal(step, dtype=np.float32)
    out[[7, 1000, N - 1]] = [np.nan, np.inf, 0.0]
    out.flush()
    del out


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parity", default="build/parity")
    ap.add_argument("--dir", default="build/bench-data")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, "inspect_1gib_f32.npy")
    make_file(path)
    subprocess.run(["sh", "-c", "cat '%s' > /dev/null" % path], check=True)  # warm the cache

    times = {"parity": [], "numpy": [], "cat": []}
    for _ in range(args.repeats):
        times["cat"].append(timed(["sh", "-c", "cat '%s' > /dev/null" % path]))
        times["parity"].append(timed([args.parity, "inspect", "--quiet", "--json",
                                      os.devnull, path]))
        times["numpy"].append(timed(["/usr/bin/python3", "-c", NUMPY_SCRIPT, path]))
    med = {k: statistics.median(v) for k, v in times.items()}
    size_gb = os.path.getsize(path) / 1e9
    result = {
        "benchmark": "inspect 1 GiB float32 .npy, warm page cache, whole process",
        "machine": "%s, %d CPUs, %s" % (platform.processor() or platform.machine(),
                                        os.cpu_count(), platform.platform()),
        "repeats": args.repeats,
        "seconds": times,
        "median_s": med,
        "GB_per_s": {k: size_gb / v for k, v in med.items()},
        "speedup_vs_numpy": med["numpy"] / med["parity"],
        "fraction_of_cat_throughput": med["cat"] / med["parity"],
    }
    print("parity inspect : median %.3f s  (%.2f GB/s)" % (med["parity"], size_gb / med["parity"]))
    print("numpy          : median %.3f s  (%.2f GB/s)" % (med["numpy"], size_gb / med["numpy"]))
    print("cat > /dev/null: median %.3f s  (%.2f GB/s)" % (med["cat"], size_gb / med["cat"]))
    print("parity is %.1fx faster than numpy, at %.0f%% of cat's throughput"
          % (result["speedup_vs_numpy"], 100 * result["fraction_of_cat_throughput"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
