#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""examples/plan/exec.yaml's command: a few epochs of logistic regression in numpy, printing its
throughput and writing OUT/metrics.json ({"eval": {"loss": ...}}).

Usage: train.py --out OUT [--threads N]
"""
import argparse
import json
import os
import time

import numpy as np


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((20000, 64))
    y = (x @ rng.standard_normal(64) > 0).astype(np.float64)
    w = np.zeros(64)
    start = time.perf_counter()
    for epoch in range(20):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        w -= 0.5 * x.T @ (p - y) / len(y)
        rate = (epoch + 1) * len(y) / (time.perf_counter() - start)
        print("epoch %d samples/s: %.1f" % (epoch + 1, rate), flush=True)
    p = np.clip(1.0 / (1.0 + np.exp(-(x @ w))), 1e-12, 1 - 1e-12)
    loss = float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))
    with open(os.path.join(args.out, "metrics.json"), "w") as f:
        json.dump({"eval": {"loss": loss}}, f)


if __name__ == "__main__":
    main()
