#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes synthetic parity-bench v1 documents with known noise, and what `parity bench compare`
must say of them, computed independently with numpy and scipy.

  OUT/bench/base.json          the base: stream, gemm (two sizes), latency (a time: lower is
                               better) and a transfer result skipped on both sides; 99 samples
                               each with lognormal noise (sigma 0.03), as one run of
                               `parity bench` writes them
  OUT/bench/cand_faster.json   the same benchmarks at 1.25 times the base's performance
  OUT/bench/cand_same.json     ... at 1.0
  OUT/bench/cand_slower.json   ... at 0.8
  OUT/bench/cand_params.json   cand_same with stream.triad run at another n (a param mismatch)
  OUT/bench/cand_invalid.json  cand_same with gemm float32 invalid (valid false, a reason)
  OUT/bench/base_r.json, cand_r.json
                               `parity bench --repeat 5` documents: "repeat": 5, 5 runs of 19
                               samples, "runs" holding each run's median; a planted ratio per
                               benchmark
  OUT/bench/expected.json      per pair and benchmark (key "benchmark|dtype|size", as parity
                               matches them): numpy medians and their ratio, a numpy percentile
                               bootstrap of the median ratio (a loose reference for parity's),
                               and for the repeat pair scipy's Welch t interval of
                               exp(mean log cand - mean log base) with Welch-Satterthwaite df,
                               the ratio of geometric means and the verdict. For times (better
                               "lower") the ratio is base/cand and the interval inverted, as
                               parity reports them: above 1 the candidate is faster.

Within-run medians are pinned (every sample scaled) so that median(cand) / median(base) is the
planted ratio; repeat runs are pinned so that the run medians' log noise has mean zero, which
makes the geometric-mean ratio the planted one. The noise itself stays random (fixed seeds).

Usage: gen_bench.py OUT
"""
import json
import os
import sys

import numpy as np
import scipy.stats as st

SIGMA = 0.03          # within-run lognormal noise
RUN_SIGMA = 0.04      # run-to-run lognormal noise (repeat documents)
SAMPLES = 99          # one run of `parity bench --reps 100`: the first repetition dropped
RUNS = 5              # --repeat 5
RUN_SAMPLES = 19      # --reps 20 per run
CONFIDENCE = 0.95
BOOT_RESAMPLES = 20000

N_STREAM = 33554432
# (benchmark, dtype, params, unit, better, typical base figure)
BENCHMARKS = [
    ("stream.triad", "float64", {"n": N_STREAM, "reps": 100}, "GB/s", "higher", 150.0),
    ("stream.copy", "float32", {"n": N_STREAM, "reps": 100}, "GB/s", "higher", 120.0),
    ("gemm", "float32", {"size": 2048, "m": 2048, "n": 2048, "k": 2048, "reps": 100},
     "GFLOP/s", "higher", 1500.0),
    ("gemm", "float64", {"size": 1024, "m": 1024, "n": 1024, "k": 1024, "reps": 100},
     "GFLOP/s", "higher", 600.0),
    ("latency.launch", None, {"reps": 100, "launches": 1000}, "us", "lower", 5.0),
]
SKIPPED = ("transfer.h2d_pinned", None, {"size": 4096}, "GB/s", "higher",
           "the cpu backend has no separate device memory: page-locked staging buffers do not "
           "apply")
# Planted run-level ratios of the repeat pair (candidate's performance over the base's).
REPEAT_RATIOS = {"stream.triad": 1.25, "stream.copy": 1.0, "gemm|float32": 0.8,
                 "gemm|float64": 1.0, "latency.launch": 1.25}


def key(benchmark, dtype, params):
    size = params.get("size")
    return f"{benchmark}|{dtype or ''}|{'' if size is None else json.dumps(size)}"


def repeat_ratio(benchmark, dtype):
    return REPEAT_RATIOS.get(f"{benchmark}|{dtype}", REPEAT_RATIOS.get(benchmark))


def figure(base_value, ratio, better):
    """The candidate's figure for a performance ratio: rates scale up, times down."""
    return base_value * ratio if better == "higher" else base_value / ratio


def pinned_samples(rng, median, count, sigma):
    """Lognormal samples scaled so that their median is `median`."""
    x = np.exp(rng.normal(0.0, sigma, count))
    x *= median / np.median(x)
    return x


def result(benchmark, dtype, params, unit, better, samples, runs=None):
    s = np.asarray(samples, dtype=np.float64)
    best = s.max() if better == "higher" else s.min()
    r = {"benchmark": benchmark, "dtype": dtype, "params": params, "unit": unit,
         "better": better, "median": float(np.median(s)), "min": float(s.min()),
         "max": float(s.max()), "cv": float(s.std(ddof=1) / s.mean()), "best": float(best),
         "samples": [float(v) for v in s]}
    if runs is not None:
        r["runs"] = [float(v) for v in runs]
    r.update({"valid": True, "status": "ok",
              "validation": {"method": "synthetic: lognormal noise of known sigma"},
              "peak": None, "efficiency": None})
    return r


def skipped_result():
    benchmark, dtype, params, unit, better, reason = SKIPPED
    return {"benchmark": benchmark, "dtype": dtype, "params": params, "unit": unit,
            "better": better, "median": None, "min": None, "max": None, "cv": None,
            "best": None, "samples": [], "valid": None, "status": "skipped", "reason": reason,
            "validation": {}, "peak": None, "efficiency": None}


def document(device, results, repeat=1):
    return {
        "format": "parity-bench", "version": 1,
        "platform": {"hostname": "synthetic", "cpu": {"model": "Synthetic CPU"},
                     "memory": {"total_bytes": 1 << 34}, "os": {"kernel": "synthetic"},
                     "blas": {"name": "none"}, "environment": {},
                     "device": {"backend": "synthetic", "index": 0, "name": device}},
        "backend": "synthetic", "device": device, "suites": ["stream", "gemm", "latency",
                                                              "transfer"],
        "repeat": repeat, "settings": {"seed": 42}, "started": "2025-01-01T00:00:00Z",
        "duration_s": 1.0, "results": results,
    }


def bootstrap_median_ratio(base, cand, rng):
    """numpy's percentile bootstrap of median(cand) / median(base)."""
    b = np.median(rng.choice(base, size=(BOOT_RESAMPLES, len(base))), axis=1)
    c = np.median(rng.choice(cand, size=(BOOT_RESAMPLES, len(cand))), axis=1)
    alpha = 1.0 - CONFIDENCE
    return np.quantile(c / b, [alpha / 2, 1 - alpha / 2])


def welch_log_ratio(base_runs, cand_runs):
    """scipy's Welch t interval of exp(mean log cand - mean log base), and its df."""
    lb, lc = np.log(base_runs), np.log(cand_runs)
    vb, vc = np.var(lb, ddof=1) / len(lb), np.var(lc, ddof=1) / len(lc)
    se2 = vb + vc
    df = se2 ** 2 / (vb ** 2 / (len(lb) - 1) + vc ** 2 / (len(lc) - 1))
    t = st.t.ppf(1 - (1 - CONFIDENCE) / 2, df)
    diff = lc.mean() - lb.mean()
    half = t * np.sqrt(se2)
    # Cross-check the half width against scipy's own Welch test (same df, same standard error).
    test = st.ttest_ind(lc, lb, equal_var=False)
    assert abs(test.statistic - diff / np.sqrt(se2)) <= 1e-9 * max(1.0, abs(test.statistic))
    return np.exp(diff - half), np.exp(diff + half), float(df)


def verdict(low, high):
    return "faster" if low > 1.0 else "slower" if high < 1.0 else "same"


def write(out, name, doc):
    with open(os.path.join(out, name), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_bench.py OUT")
    out = os.path.join(sys.argv[1], "bench")
    os.makedirs(out, exist_ok=True)
    expected = {"confidence": CONFIDENCE, "within": {}, "repeat": {}, "suite_geomean": {}}

    # --- one run per side: 99 samples, medians pinned -----------------------------------------
    rng = np.random.default_rng(20240611)
    base_samples = {}
    base_results = []
    for benchmark, dtype, params, unit, better, value in BENCHMARKS:
        s = pinned_samples(rng, value, SAMPLES, SIGMA)
        base_samples[key(benchmark, dtype, params)] = s
        base_results.append(result(benchmark, dtype, params, unit, better, s))
    base_results.append(skipped_result())
    write(out, "base.json", document("Synthetic Base", base_results))

    boot_rng = np.random.default_rng(99)
    cand_docs = {}
    for name, ratio, seed in (("cand_faster", 1.25, 1), ("cand_same", 1.0, 2),
                              ("cand_slower", 0.8, 3)):
        crng = np.random.default_rng(seed)
        results, exp = [], {}
        for benchmark, dtype, params, unit, better, value in BENCHMARKS:
            k = key(benchmark, dtype, params)
            b = base_samples[k]
            c = pinned_samples(crng, figure(np.median(b), ratio, better), SAMPLES, SIGMA)
            results.append(result(benchmark, dtype, params, unit, better, c))
            lo, hi = bootstrap_median_ratio(b, c, boot_rng)
            r = np.median(c) / np.median(b)
            if better == "lower":
                r, lo, hi = 1.0 / r, 1.0 / hi, 1.0 / lo
            want = "faster" if ratio > 1 else "slower" if ratio < 1 else "same"
            # The planted verdict is what numpy's bootstrap says too (the data are as meant).
            assert verdict(lo, hi) == want, (name, k, lo, hi)
            exp[k] = {"benchmark": benchmark, "dtype": dtype, "better": better,
                      "base_median": float(np.median(b)), "cand_median": float(np.median(c)),
                      "ratio": float(r), "planted_ratio": ratio, "boot_low": float(lo),
                      "boot_high": float(hi), "verdict": want}
        results.append(skipped_result())
        exp[key(*SKIPPED[:3])] = {"benchmark": SKIPPED[0], "verdict": "skipped"}
        doc = document(f"Synthetic {name}", results)
        cand_docs[name] = doc
        write(out, name + ".json", doc)
        expected["within"][name] = exp
        geo = {}
        for e in exp.values():
            if "ratio" in e:
                geo.setdefault(e["benchmark"].split(".")[0], []).append(np.log(e["ratio"]))
        expected["suite_geomean"][name] = {s: float(np.exp(np.mean(v))) for s, v in geo.items()}

    # --- a parameter mismatch, and an invalid result ------------------------------------------
    params_doc = json.loads(json.dumps(cand_docs["cand_same"]))
    for r in params_doc["results"]:
        if r["benchmark"] == "stream.triad":
            r["params"]["n"] = N_STREAM // 2
    write(out, "cand_params.json", params_doc)
    expected["params_mismatch"] = {"label": "stream.triad float64",
                                   "difference": f"n: {N_STREAM} vs {N_STREAM // 2}"}

    invalid_doc = json.loads(json.dumps(cand_docs["cand_same"]))
    invalid_reason = ("C[0, 0] = -5.22244644 but the float64 product is -5.22715514 "
                      "(planted by gen_bench.py)")
    for r in invalid_doc["results"]:
        if r["benchmark"] == "gemm" and r["dtype"] == "float32":
            r.update({"status": "invalid", "valid": False, "reason": invalid_reason,
                      "validation": {"checked": 256, "failures": 255}})
    write(out, "cand_invalid.json", invalid_doc)
    expected["invalid"] = {"key": key("gemm", "float32", {"size": 2048}),
                           "reason": invalid_reason}

    # --- --repeat 5 documents: run-level noise, run medians pinned ----------------------------
    rrng = np.random.default_rng(777)
    base_r, cand_r = [], []
    for benchmark, dtype, params, unit, better, value in BENCHMARKS:
        k = key(benchmark, dtype, params)
        ratio = repeat_ratio(benchmark, dtype)
        sides = []
        for center in (value, figure(value, ratio, better)):
            noise = rrng.normal(0.0, RUN_SIGMA, RUNS)
            targets = center * np.exp(noise - noise.mean())
            runs = [pinned_samples(rrng, t, RUN_SAMPLES, SIGMA) for t in targets]
            medians = np.array([np.median(r) for r in runs])
            sides.append((np.concatenate(runs), medians))
        (bs, bm), (cs, cm) = sides
        base_r.append(result(benchmark, dtype, params, unit, better, bs, bm))
        cand_r.append(result(benchmark, dtype, params, unit, better, cs, cm))
        # What parity reads back from the files is what scipy gets here.
        bm = np.array(base_r[-1]["runs"])
        cm = np.array(cand_r[-1]["runs"])
        lo, hi, df = welch_log_ratio(bm, cm)
        r = st.gmean(cm) / st.gmean(bm)
        if better == "lower":
            r, lo, hi = 1.0 / r, 1.0 / hi, 1.0 / lo
        want = "faster" if ratio > 1 else "slower" if ratio < 1 else "same"
        assert verdict(lo, hi) == want, (k, lo, hi)
        assert abs(r / ratio - 1.0) < 1e-9, (k, r, ratio)
        expected["repeat"][k] = {"benchmark": benchmark, "dtype": dtype, "better": better,
                                 "ratio": float(r), "planted_ratio": ratio, "ci_low": float(lo),
                                 "ci_high": float(hi), "df": df, "verdict": want}
    base_r.append(skipped_result())
    cand_r.append(skipped_result())
    write(out, "base_r.json", document("Synthetic Base", base_r, repeat=RUNS))
    write(out, "cand_r.json", document("Synthetic Cand", cand_r, repeat=RUNS))

    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
