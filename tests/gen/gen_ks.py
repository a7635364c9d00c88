#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes tests/data/rng/ks_expected.json (checked in): scipy's Kolmogorov-Smirnov values that
tests/rng/ks_test.cc checks src/rng/ks.cc against.

  - "kstwo": scipy.stats.kstwo.sf and .cdf at (d, n) over a grid of n and, for each n, d in
    every region of scipy's method choice (Simard & L'Ecuyer 2011); "region" names the method
    scipy.stats._ksstats._kolmogn picks there for the sf (and the cdf where it differs), for the
    record; it is not checked.
  - "ks_2samp": scipy.stats.ks_2samp(a, b) (two-sided, method='auto'): statistic, pvalue and
    the method 'auto' resolves to. Small samples are stored; large ones as a "weyl" recipe
    that the C++ test regenerates bit for bit:
        u_i = ((i * mult + offset) mod 2^32) / 2^32,   i = 0 .. size - 1
        u_i = floor(u_i * quant) / quant               if quant > 0 (ties)
        x_i = u_i + shift

Run with /usr/bin/python3 (numpy, scipy; values recorded with scipy 1.10.1).
Usage: gen_ks.py [OUT]   (default: tests/data/rng/ks_expected.json next to this script)
"""
import json
import math
import os
import sys
import warnings

import numpy as np
import scipy
from scipy import stats

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = (sys.argv[1] if len(sys.argv) > 1 else
       os.path.join(HERE, "..", "data", "rng", "ks_expected.json"))

MAX_AUTO_N = 10000  # scipy.stats.ks_2samp: 'auto' is exact iff max(n1, n2) <= this

N_GRID = [1, 2, 3, 5, 10, 50, 100, 140, 141, 500, 1000, 10000, 100000,
          # beyond the grid asked for: either side of the one-sided sum's limit (1e6) and
          # the size ks_2samp's asymptotic branch reaches with ~1e8 samples
          999999, 1000001, 50000000]


def region(d, n, cdf):
    """The method scipy.stats._ksstats._kolmogn uses at (d, n) for the cdf or the sf."""
    if d <= 0.5 / n:
        return "below support"
    if d >= 1:
        return "above support"
    t = n * d
    if t <= 1:
        return "Ruben-Gambino lower"
    if t >= n - 1:
        return "Ruben-Gambino upper"
    if d >= 0.5:
        return "2*smirnov exact"
    nxx = t * d
    if n <= 140:
        if nxx <= 0.754693:
            return "Durbin"
        if nxx <= 4:
            return "Pomeranz"
        return "2*smirnov (Miller)"
    if not cdf:
        if nxx >= 370:
            return "sf 0"
        if nxx >= 2.2:
            return "2*smirnov" + (" approx" if n > 1000000 else "")
    if nxx >= 18:
        return "cdf 1"
    if n <= 100000 and n * d**1.5 <= 1.4:
        return "Durbin"
    return "Pelz-Good"


def d_values(n):
    """d in every region for this n, and either side of each boundary."""
    ds = [0.25 / n, 0.5 / n, 0.5 / n * (1 + 1e-9), 0.5 / n * 1.001, 0.75 / n, 0.99 / n, 1.0 / n,
          1.0 / n * (1 + 1e-12), 1.01 / n, 1.5 / n]
    # n d^2 = c: Durbin / Pomeranz / Miller (n <= 140); Durbin or Pelz-Good / smirnov / 0 above
    for c in [1e-3, 0.05, 0.3, 0.7, 0.754693, 0.76, 1.0, 1.6, 2.19, 2.21, 3.0, 3.99, 4.01,
              6.0, 10.0, 17.9, 18.1, 40.0, 100.0, 369.0, 371.0]:
        ds.append(math.sqrt(c / n))
    # n d^1.5 = c: Durbin / Pelz-Good for 140 < n <= 1e5
    for c in [0.5, 1.0, 1.39, 1.41, 2.0]:
        ds.append((c / n) ** (2.0 / 3.0))
    ds += [0.1, 0.25, 0.4, 0.499, 0.5, 0.6, 0.75, 0.9, 0.999]
    if n > 1:
        ds += [1 - 1.0 / n - 1e-9, 1 - 1.0 / n, 1 - 0.5 / n]
    ds += [1.0, 1.5]
    out = []
    for d in ds:
        d = float(d)
        if d > 0 and d not in out:
            out.append(d)
    return sorted(out)


def kstwo_cases():
    cases = []
    for n in N_GRID:
        for d in d_values(n):
            sf = float(stats.kstwo.sf(d, n))
            cdf = float(stats.kstwo.cdf(d, n))
            assert math.isfinite(sf) and math.isfinite(cdf), (d, n)
            where = region(d, n, cdf=False)
            if region(d, n, cdf=True) != where:
                where = "sf: %s; cdf: %s" % (where, region(d, n, cdf=True))
            cases.append({"n": n, "d": d, "sf": sf, "cdf": cdf, "region": where})
    return cases


def weyl(size, mult, offset=0, quant=0, shift=0.0):
    i = np.arange(size, dtype=np.uint64)
    u = ((i * np.uint64(mult) + np.uint64(offset)) % np.uint64(2**32)).astype(np.float64)
    u = u / 2.0**32
    if quant > 0:
        u = np.floor(u * quant) / quant
    return u + shift


def ks2_case(name, a, b, recipes=None):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an exact -> asymp fallback would warn
        res = stats.ks_2samp(a, b)
    case = {
        "name": name,
        "n1": len(a),
        "n2": len(b),
        "statistic": float(res.statistic),
        "pvalue": float(res.pvalue),
        "method": "exact" if max(len(a), len(b)) <= MAX_AUTO_N else "asymp",
    }
    if recipes is None:
        case["a"] = [float(x) for x in a]
        case["b"] = [float(x) for x in b]
    else:
        case["a_recipe"], case["b_recipe"] = recipes
    return case


def recipe(size, mult, offset=0, quant=0, shift=0.0):
    return {"kind": "weyl", "size": size, "mult": mult, "offset": offset, "quant": quant,
            "shift": shift}


def ks2_cases():
    rng = np.random.default_rng(20240611)

    def normal(size, loc=0.0, digits=6):
        return np.round(rng.normal(loc, 1.0, size), digits)

    cases = [
        ks2_case("3 vs 3, interleaved", [0.1, 0.5, 0.9], [0.2, 0.6, 1.0]),
        ks2_case("3 vs 3, separated", [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]),
        ks2_case("1 vs 5", [0.3], [0.1, 0.2, 0.4, 0.5, 0.6]),
        ks2_case("3 vs 10", normal(3), normal(10, 0.5)),
        ks2_case("10 vs 10, ties", [1, 2, 2, 3, 3, 3, 4, 5, 5, 6], [2, 3, 3, 4, 4, 4, 5, 6, 6, 7]),
        ks2_case("10 vs 100, shifted", normal(10, 1.0), normal(100)),
        ks2_case("100 vs 100, same", normal(100), normal(100)),
        ks2_case("identical", [0.5, 1.5, 1.5, 2.5], [0.5, 1.5, 1.5, 2.5]),
        ks2_case("50 vs 60, separated", normal(50, -10.0), normal(60, 10.0)),
        ks2_case("100 vs 1000, shifted", normal(100, 0.3), normal(1000)),
        ks2_case("1000 vs 1000, integer ties",
                 rng.integers(0, 10, 1000).astype(float), rng.integers(1, 11, 1000).astype(float)),
        ks2_case("1000 vs 700, same", normal(1000, 0.0, 4), normal(700, 0.0, 4)),
        ks2_case("997 vs 1000, shifted", normal(997, 0.1, 4), normal(1000, 0.0, 4)),
    ]
    golden = 2654435769  # floor(2^32 / golden ratio): frac(i / phi) in 32 bits
    big = [
        ("20000 vs 20000, shifted (asymp)",
         recipe(20000, golden), recipe(20000, 2246822519, 12345, 0, 0.02)),
        ("20000 vs 15000, slightly shifted, ties (asymp)",
         recipe(20000, golden, 0, 5000), recipe(15000, 3266489917, 777, 5000, 0.012)),
        ("10000 vs 9999, shifted (exact, largest lattice)",
         recipe(10000, golden), recipe(9999, 2246822519, 99, 0, 0.015)),
        ("10000 vs 10000, ties (exact)",
         recipe(10000, golden, 0, 1000), recipe(10000, 3266489917, 5, 1000, 0.001)),
        ("10001 vs 30, far apart (asymp, tiny p)",
         recipe(10001, golden), recipe(30, 2246822519, 3, 0, 0.9)),
    ]
    for name, ra, rb in big:
        a = weyl(ra["size"], ra["mult"], ra["offset"], ra["quant"], ra["shift"])
        b = weyl(rb["size"], rb["mult"], rb["offset"], rb["quant"], rb["shift"])
        cases.append(ks2_case(name, a, b, (ra, rb)))
    return cases


def main():
    data = {
        "generator": "tests/gen/gen_ks.py",
        "scipy": scipy.__version__,
        "numpy": np.__version__,
        "kstwo": kstwo_cases(),
        "ks_2samp": ks2_cases(),
    }
    os.makedirs(os.path.dirname(os.path.abspath(OUT)), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(data, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print("wrote %s: %d kstwo points, %d ks_2samp cases, %d bytes" %
          (os.path.normpath(OUT), len(data["kstwo"]), len(data["ks_2samp"]), os.path.getsize(OUT)))


if __name__ == "__main__":
    main()
