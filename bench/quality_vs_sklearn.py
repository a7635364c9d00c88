#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times `parity quality auc` (two AUCs and DeLong's paired test) against scikit-learn's
roc_auc_score computing one AUC, on the same 10,000,000 samples, in one run.

Data: labels (uint8, 30% positive) and two float32 score vectors (B = A + small noise) as
.npy files, page cache warm. Whole processes, alternating, REPEATS times each: parity as
`parity quality auc --labels L --a A --b B --json /dev/null --quiet`, sklearn as a Python
process that loads L and A with numpy and calls roc_auc_score(L, A) once.

Usage: quality_vs_sklearn.py [--parity build/parity] [--dir DIR] [--n 10000000] [--repeats 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

SKLEARN = r"""
import sys, numpy as np
from sklearn.metrics import roc_auc_score
y = np.load(sys.argv[1]); a = np.load(sys.argv[2])
print(roc_auc_score(y, a))
"""


def timed(cmd):
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if r.returncode not in (0, 1):
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stderr))
    return elapsed, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parity", default="build/parity")
    ap.add_argument("--dir", default="build/bench-data/quality")
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    paths = [os.path.join(args.dir, "%s_%d.npy" % (k, args.n)) for k in ("y", "a", "b")]
    if not all(os.path.exists(p) for p in paths):
        rng = np.random.default_rng(1)
        y = (rng.random(args.n) < 0.3).astype(np.uint8)
        s = (y * 1.0 + rng.standard_normal(args.n)).astype(np.float32)
        np.save(paths[0], y)
        np.save(paths[1], s)
        np.save(paths[2], (s + 0.1 * rng.standard_normal(args.n)).astype(np.float32))
    for p in paths:
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass
    parity_cmd = [args.parity, "quality", "auc", "--labels", paths[0], "--a", paths[1], "--b",
                  paths[2], "--json", "/dev/null", "--quiet"]
    sklearn_cmd = ["/usr/bin/python3", "-c", SKLEARN, paths[0], paths[1]]
    times = {"parity": [], "sklearn": []}
    for _ in range(args.repeats):
        times["parity"].append(timed(parity_cmd)[0])
        times["sklearn"].append(timed(sklearn_cmd)[0])
    # Agreement: parity's AUC of A against sklearn's.
    out = subprocess.run(parity_cmd[:-3] + ["--json", "-", "--quiet"], capture_output=True,
                         text=True).stdout
    auc_parity = json.loads(out)["auc_a"]
    auc_sklearn = float(timed(sklearn_cmd)[1])
    med = {k: statistics.median(v) for k, v in times.items()}
    print("n = %d samples" % args.n)
    for k in ("parity", "sklearn"):
        print("%-8s %s  median %.2f s" % (k, " ".join("%.2f" % t for t in times[k]), med[k]))
    print("parity (2 AUCs + DeLong) / sklearn (1 AUC): %.2fx the time; AUC %.15f vs %.15f"
          % (med["parity"] / med["sklearn"], auc_parity, auc_sklearn))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"n": args.n, "times": times, "median": med,
                       "auc_parity": auc_parity, "auc_sklearn": auc_sklearn}, f, indent=1)


if __name__ == "__main__":
    main()
