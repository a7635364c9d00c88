#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs `parity explain` on the planted-cause corpus (tests/gen/gen_explain.py) and prints the
confusion matrix (planted label vs found label, over every op call of every case) and the
per-case origins, as Markdown for docs/EXPLAIN.md.

Usage: explain_confusion.py PARITY_BIN CORPUS_DIR   (CORPUS_DIR = OUT/explain of gen_explain.py)
"""
import collections
import json
import os
import subprocess
import sys

CAUSES = ["identical", "within-rounding", "reduced-precision", "rng-divergence", "nonfinite",
          "inherited", "algorithmic", "structural"]


def main():
    parity, corpus = sys.argv[1], sys.argv[2]
    with open(os.path.join(corpus, "expected.json")) as f:
        expected = json.load(f)
    matrix = collections.Counter()
    rows = []
    for case, want in expected.items():
        r = subprocess.run([parity, "explain", os.path.join(corpus, case, "a"),
                            os.path.join(corpus, case, "b"), "--json", "-"],
                           capture_output=True, text=True)
        doc = json.loads(r.stdout)
        found = {o["name"]: o["cause"] for o in doc["ops"]}
        for name, cause in want["labels"].items():
            matrix[(cause, found.get(name, "missing"))] += 1
        origins = ", ".join("%s %s%s" % (o["name"], o["cause"],
                                         " (%s)" % o["effective_precision"]
                                         if o["effective_precision"] else "")
                            for o in doc["origins"]) or "none"
        planted = ", ".join("%s %s%s" % (n, c, " (%s)" % p if p else "")
                            for n, c, p in want["origins"]) or "none"
        rows.append((case, planted, origins, r.returncode, want["exit"]))
    print("| planted \\ found | " + " | ".join(CAUSES) + " |")
    print("|---" * (len(CAUSES) + 1) + "|")
    for planted in CAUSES:
        counts = [matrix[(planted, found)] for found in CAUSES]
        if sum(counts):
            print("| %s | %s |" % (planted, " | ".join(str(c) if c else "·" for c in counts)))
    off = sum(n for (p, f), n in matrix.items() if p != f)
    print("\n%d op calls, %d off the diagonal.\n" % (sum(matrix.values()), off))
    print("| case | planted origins | found origins | exit (expected) |")
    print("|---|---|---|---|")
    for case, planted, origins, code, want_code in rows:
        print("| %s | %s | %s | %d (%d) |" % (case, planted, origins, code, want_code))


if __name__ == "__main__":
    main()
