#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity rng` against scipy (tests/data/rng/, written by
tests/gen/gen_rng.py)."""
import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

BIN = os.environ["PARITY_BIN"]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "rng")
with open(os.path.join(DATA, "check_expected.json")) as f:
    CHECK = json.load(f)
VERDICTS = {"same-stream": "same-stream", "same-distribution": "same-distribution",
            "different-distribution": "different-distribution",
            "normal-asymp": "same-distribution"}


def rng(*args):
    return subprocess.run([BIN, "rng", *args], capture_output=True, text=True, timeout=300)


class Check(unittest.TestCase):
    def assertRel(self, got, want, rel=1e-6):
        self.assertLessEqual(abs(got - want), rel * abs(want) + 1e-300, (got, want))

    def test_against_scipy(self):
        for name, want in CHECK.items():
            with self.subTest(name):
                r = rng("check", os.path.join(DATA, name + "_a.npy"),
                        os.path.join(DATA, name + "_b.npy"), "--json", "-")
                doc = json.loads(r.stdout)
                self.assertEqual((doc["format"], doc["version"]), ("parity-rng-check", 1))
                self.assertEqual(doc["verdict"], VERDICTS[name])
                self.assertEqual(r.returncode, 1 if VERDICTS[name] == "different-distribution"
                                 else 0)
                self.assertEqual(doc["identical"], want["identical"])
                self.assertEqual(doc["max_abs"], want["max_abs"])
                self.assertEqual(doc["ks"]["method"], want["ks"]["method"])
                self.assertRel(doc["ks"]["statistic"], want["ks"]["statistic"], 1e-15)
                self.assertRel(doc["ks"]["p_value"], want["ks"]["p_value"])
                for side in ("a", "b"):
                    chi = doc["chi2"][side]
                    self.assertEqual(chi["dist"], want["dist"])
                    self.assertEqual(chi["bins"], want["chi2"][side]["bins"])
                    self.assertRel(chi["statistic"], want["chi2"][side]["statistic"], 1e-9)
                    self.assertRel(chi["p_value"], want["chi2"][side]["p_value"])
                    for key, value in want["moments"][side].items():
                        self.assertRel(doc["moments"][side][key], value, 1e-9)

    def test_text_and_alpha(self):
        a = os.path.join(DATA, "different-distribution_a.npy")
        b = os.path.join(DATA, "different-distribution_b.npy")
        r = rng("check", a, b)
        self.assertEqual(r.returncode, 1)
        self.assertIn("Verdict: different-distribution", r.stdout)
        # At alpha 1e-6 the same pair shows no evidence of a difference.
        r = rng("check", a, b, "--alpha", "1e-6", "--json", "-")
        self.assertEqual(json.loads(r.stdout)["verdict"], "same-distribution")

    def test_bad_input(self):
        with tempfile.TemporaryDirectory() as tmp:
            nan = os.path.join(tmp, "nan.npy")
            np.save(nan, np.array([0.1, np.nan, 0.3]))
            empty = os.path.join(tmp, "empty.npy")
            np.save(empty, np.zeros(0))
            good = os.path.join(DATA, "same-stream_a.npy")
            for args, word in (((nan, good), "not finite"), ((empty, good), "no values"),
                               ((good, os.path.join(tmp, "missing.npy")), "missing.npy"),
                               ((good, good, "--dist", "poisson"), "poisson")):
                r = rng("check", *args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertTrue(r.stderr.startswith("parity: error:"), r.stderr)
                self.assertIn(word, r.stderr)
        r = rng("chek")
        self.assertEqual(r.returncode, 2)
        self.assertIn("did you mean 'check'", r.stderr)


if __name__ == "__main__":
    unittest.main()
