#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the reference data of `parity rng check` into tests/data/rng/ (checked in): pairs
of random samples, and scipy's two-sample KS test (ks_2samp), chi-square goodness of fit
(scipy.stats.chisquare over equal-probability bins) and moments (numpy, scipy.stats.skew and
kurtosis) for each.

Usage: gen_rng.py [OUT]   (default: tests/data/rng)
"""
import json
import os
import sys

import numpy as np
import scipy.stats as st

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "data", "rng")


def chi2(x, dist):
    n = len(x)
    bins = int(min(100, max(2, n // 5)))
    u = x if dist == "uniform" else st.norm.cdf(x)
    u = np.clip(u, 0.0, np.nextafter(1.0, 0.0))
    counts = np.bincount((u * bins).astype(np.int64), minlength=bins)
    r = st.chisquare(counts)
    return {"bins": bins, "statistic": float(r.statistic), "p_value": float(r.pvalue)}


def moments(x):
    return {"mean": float(np.mean(x)), "variance": float(np.var(x, ddof=1)),
            "skewness": float(st.skew(x)), "kurtosis": float(st.kurtosis(x))}


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(42)
    u1 = rng.random(5000).astype(np.float32)
    cases = {
        "same-stream": (u1, u1.copy(), "uniform"),
        "same-distribution": (u1, rng.random(5000).astype(np.float32), "uniform"),
        "different-distribution": (u1, (rng.random(5000) ** 1.15).astype(np.float32), "uniform"),
        "normal-asymp": (np.random.default_rng(7).standard_normal(20000),
                         np.random.default_rng(8).standard_normal(15000), "normal"),
    }
    expected = {}
    for name, (a, b, dist) in cases.items():
        np.save(os.path.join(OUT, name + "_a.npy"), a)
        np.save(os.path.join(OUT, name + "_b.npy"), b)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        ks = st.ks_2samp(a64, b64)
        same = len(a) == len(b)
        expected[name] = {
            "dist": dist,
            "identical": float(np.mean(a64.view(np.uint64) == b64.view(np.uint64))) if same
            else None,
            "max_abs": float(np.max(np.abs(a64 - b64))) if same else None,
            "ks": {"statistic": float(ks.statistic), "p_value": float(ks.pvalue),
                   "method": "exact" if max(len(a), len(b)) <= 10000 else "asymp"},
            "chi2": {"a": chi2(a64, dist), "b": chi2(b64, dist)},
            "moments": {"a": moments(a64), "b": moments(b64)},
        }
    with open(os.path.join(OUT, "check_expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main()
