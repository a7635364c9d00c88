#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the reference data of `parity quality` into tests/data/quality/ (checked in).

Inputs: labels and score vectors of a few evaluation sets, as .npy and text. Expected values
come from independent implementations, called here:
  - scikit-learn: roc_auc_score, log_loss, accuracy_score;
  - R's pROC (Debian r-cran-proc): roc.test(..., method = "delong", paired = TRUE), and var()
    and cov() of the ROC curves (DeLong);
  - scipy: ttest_ind(equal_var=False) for the seed case, the t and normal distributions for
    the two one-sided tests (TOST) written from their definition.

Usage: gen_quality.py [OUT]   (default: tests/data/quality next to this script's tests/)
"""
import json
import os
import subprocess
import sys

import numpy as np
import scipy.stats as st
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "data", "quality")


def save(name, values, text=True):
    np.save(os.path.join(OUT, name + ".npy"), values)
    if text:
        with open(os.path.join(OUT, name + ".txt"), "w") as f:
            for v in values:
                f.write("%.17g\n" % v)


def proc_delong(labels, a, b):
    """pROC's paired DeLong test of roc(labels, a) against roc(labels, b)."""
    script = """
suppressMessages(library(pROC))
args <- commandArgs(trailingOnly = TRUE)
y <- scan(args[1], quiet = TRUE); a <- scan(args[2], quiet = TRUE); b <- scan(args[3], quiet = TRUE)
ra <- roc(y, a, levels = c(0, 1), direction = "<", quiet = TRUE)
rb <- roc(y, b, levels = c(0, 1), direction = "<", quiet = TRUE)
t <- roc.test(ra, rb, method = "delong", paired = TRUE)
cat(sprintf("%.17g", c(auc(ra), auc(rb), t$statistic, t$p.value, var(ra, method = "delong"),
                       var(rb, method = "delong"), cov(ra, rb, method = "delong"))), sep = "\\n")
"""
    paths = []
    for name, v in (("y", labels), ("a", a), ("b", b)):
        p = os.path.join(OUT, "_tmp_%s.txt" % name)
        np.savetxt(p, v, fmt="%.17g")
        paths.append(p)
    out = subprocess.run(["Rscript", "-e", script, *paths], capture_output=True, text=True,
                         check=True).stdout.split()
    for p in paths:
        os.remove(p)
    auc_a, auc_b, z, p, var_a, var_b, cov = map(float, out)
    return {"auc_a": auc_a, "auc_b": auc_b, "z_a_minus_b": z, "p_value": p, "var_a": var_a,
            "var_b": var_b, "covariance": cov}


def tost(delta, se, margin, df=None):
    dist = st.t(df) if df is not None else st.norm()
    p_lower = dist.sf((delta + margin) / se)
    p_upper = dist.sf((margin - delta) / se)
    return max(p_lower, p_upper)


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261202)
    expected = {}

    # One evaluation set, two platforms: B's scores are A's plus small noise (correlated runs),
    # rounded to 3 decimals so that ties occur.
    n = 3000
    y = (rng.random(n) < 0.3).astype(np.uint8)
    signal = y * 1.2 + rng.standard_normal(n)
    p_a = 1.0 / (1.0 + np.exp(-signal))
    p_b = 1.0 / (1.0 + np.exp(-(signal + 0.15 * rng.standard_normal(n) - 0.02)))
    a = np.round(p_a, 3)
    b = np.round(p_b, 3)
    save("labels", y.astype(np.float64))
    np.save(os.path.join(OUT, "labels_u8.npy"), y)
    save("a", a)
    save("b", b)
    with open(os.path.join(OUT, "scores.csv"), "w") as f:
        f.write("id,label,score_a\n")
        for i in range(n):
            f.write("%d,%d,%.17g\n" % (i, y[i], a[i]))
    d = proc_delong(y, a, b)
    se = np.sqrt(d["var_a"] + d["var_b"] - 2 * d["covariance"])
    expected["paired"] = {
        "sklearn_auc_a": roc_auc_score(y, a), "sklearn_auc_b": roc_auc_score(y, b),
        "proc": d, "se": float(se),
        "tost_p_margin_0.01_abs": float(tost(d["auc_b"] - d["auc_a"], se, 0.01)),
        "sklearn_logloss_a": log_loss(y, a), "sklearn_logloss_b": log_loss(y, b),
        "sklearn_accuracy_a": accuracy_score(y, a >= 0.5),
        "sklearn_accuracy_b": accuracy_score(y, b >= 0.5),
        "base_entropy": float(-(y.mean() * np.log(y.mean()) +
                                (1 - y.mean()) * np.log(1 - y.mean()))),
    }
    la = -(y * np.log(np.clip(a, 2.220446049250313e-16, 1 - 2.220446049250313e-16)) +
           (1 - y) * np.log(1 - np.clip(a, 2.220446049250313e-16, 1 - 2.220446049250313e-16)))
    lb = -(y * np.log(np.clip(b, 2.220446049250313e-16, 1 - 2.220446049250313e-16)) +
           (1 - y) * np.log(1 - np.clip(b, 2.220446049250313e-16, 1 - 2.220446049250313e-16)))
    diff = lb - la
    expected["paired"]["logloss_paired_se"] = float(diff.std(ddof=1) / np.sqrt(n))

    # Heavy ties: scores on a grid of 0.1.
    t_a, t_b = np.round(p_a, 1), np.round(p_b, 1)
    save("ties_a", t_a)
    save("ties_b", t_b)
    expected["ties"] = {"sklearn_auc_a": roc_auc_score(y, t_a),
                        "sklearn_auc_b": roc_auc_score(y, t_b), "proc": proc_delong(y, t_a, t_b)}

    # All scores equal: AUC 0.5.
    save("constant", np.full(n, 0.25))
    expected["constant"] = {"sklearn_auc": roc_auc_score(y, np.full(n, 0.25))}

    # Seeds: five runs per side (independent noise per seed), B shifted down a little.
    runs = {"a": [], "b": []}
    for side, shift in (("a", 0.0), ("b", -0.05)):
        for k in range(5):
            s = 1.0 / (1.0 + np.exp(-(signal + 0.3 * rng.standard_normal(n) + shift * y)))
            save("seed_%s%d" % (side, k), np.round(s, 4), text=False)
            runs[side].append(roc_auc_score(y, np.round(s, 4)))
    w = st.ttest_ind(runs["b"], runs["a"], equal_var=False)
    va, vb = np.var(runs["a"], ddof=1) / 5, np.var(runs["b"], ddof=1) / 5
    df = (va + vb) ** 2 / (va ** 2 / 4 + vb ** 2 / 4)
    delta = np.mean(runs["b"]) - np.mean(runs["a"])
    expected["seeds"] = {
        "sklearn_auc_a": runs["a"], "sklearn_auc_b": runs["b"],
        "welch_t": float(w.statistic), "welch_p": float(w.pvalue), "welch_df": float(df),
        "tost_p_default_margin": float(tost(delta, np.sqrt(va + vb),
                                            0.0015 * np.mean(runs["a"]), df)),
    }
    # Training curves: three seeds per side; B drifts up from step 60 on.
    steps = np.arange(0, 200, 2)
    curves = {"a": [], "b": []}
    for side in ("a", "b"):
        for k in range(3):
            v = 1.0 / (1.0 + steps / 100.0) + 0.002 * rng.standard_normal(len(steps))
            if side == "b":
                v = v + np.where(steps >= 60, 0.02, 0.0)
            curves[side].append(v)
            with open(os.path.join(OUT, "curve_%s%d.csv" % (side, k)), "w") as f:
                f.write("step,loss,value\n")
                for st_, x in zip(steps, v):
                    f.write("%d,%.17g,%.17g\n" % (st_, x, x))
    lo = np.min(curves["a"], axis=0)
    hi = np.max(curves["a"], axis=0)
    bm = np.mean(curves["b"], axis=0)
    outside = (bm < lo) | (bm > hi)
    departure = None
    for i in range(len(steps) - 2):
        if outside[i] and outside[i + 1] and outside[i + 2]:
            departure = int(steps[i])
            break
    fa = [c[-1] for c in curves["a"]]
    fb = [c[-1] for c in curves["b"]]
    w = st.ttest_ind(fb, fa, equal_var=False)
    expected["curve"] = {"first_departure": departure, "steps_outside": int(outside.sum()),
                         "welch_t": float(w.statistic), "welch_p": float(w.pvalue)}
    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main()
