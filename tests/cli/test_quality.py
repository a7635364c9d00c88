#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity quality` against scikit-learn, R's pROC and scipy (the numbers
in tests/data/quality/expected.json, written by tests/gen/gen_quality.py)."""
import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

BIN = os.environ["PARITY_BIN"]
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "quality")
with open(os.path.join(DATA, "expected.json")) as f:
    EXPECTED = json.load(f)


def d(name):
    return os.path.join(DATA, name)


def quality(*args):
    return subprocess.run([BIN, "quality", *args], capture_output=True, text=True, timeout=300)


def run_json(*args, code=None):
    r = quality(*args, "--json", "-")
    if code is not None:
        assert r.returncode == code, (r.returncode, r.stderr)
    doc = json.loads(r.stdout)
    assert (doc["format"], doc["version"]) == ("parity-quality", 1)
    return r, doc


class Auc(unittest.TestCase):
    def assertRel(self, got, want, rel=1e-6):
        self.assertLessEqual(abs(got - want), rel * abs(want) + 1e-15, (got, want))

    def test_paired_delong_matches_proc(self):
        want = EXPECTED["paired"]
        r, doc = run_json("auc", "--labels", d("labels.npy"), "--a", d("a.npy"), "--b", d("b.npy"))
        self.assertRel(doc["auc_a"], want["sklearn_auc_a"], 1e-12)
        self.assertRel(doc["auc_b"], want["sklearn_auc_b"], 1e-12)
        proc = want["proc"]
        delong = doc["delong"]
        self.assertRel(delong["var_a"], proc["var_a"])
        self.assertRel(delong["var_b"], proc["var_b"])
        self.assertRel(delong["covariance"], proc["covariance"])
        self.assertRel(delong["z"], -proc["z_a_minus_b"])  # B - A against pROC's A - B
        self.assertRel(delong["p_value"], proc["p_value"])
        self.assertRel(delong["se"], want["se"])
        lo, hi = delong["ci95"]
        self.assertRel((lo + hi) / 2, doc["delta"], 1e-9)
        self.assertRel((hi - lo) / 2, 1.959963984540054 * want["se"])
        self.assertIsNone(doc["seeds"])
        self.assertIsNone(doc["bootstrap"])
        self.assertEqual(doc["margin"]["how"], "0.15% of A's auc")
        self.assertRel(doc["margin"]["value"], 0.0015 * want["sklearn_auc_a"], 1e-12)
        # Δ = -0.0034 with se 0.0015: significant, but not surely beyond 0.0012.
        self.assertEqual(doc["verdict"], "inconclusive")
        self.assertEqual(r.returncode, 1)

    def test_text_and_npy_inputs_agree(self):
        _, npy = run_json("auc", "--labels", d("labels.npy"), "--a", d("a.npy"), "--b", d("b.npy"))
        _, txt = run_json("auc", "--labels", d("labels.txt"), "--a", d("a.txt"), "--b", d("b.txt"))
        _, u8 = run_json("auc", "--labels", d("labels_u8.npy"), "--a", d("a.npy"), "--b",
                         d("b.txt"))
        _, csv = run_json("auc", "--labels", d("labels.txt"), "--a", d("scores.csv"), "--b",
                          d("b.txt"), "--column", "score_a")
        for other in (txt, u8, csv):
            self.assertEqual(other["delong"], npy["delong"])

    def test_absolute_margin_and_tost(self):
        want = EXPECTED["paired"]
        r, doc = run_json("auc", "--labels", d("labels.npy"), "--a", d("a.npy"), "--b",
                          d("b.npy"), "--margin", "0.01", "--absolute")
        self.assertEqual((r.returncode, doc["verdict"]), (0, "pass"))
        self.assertEqual(doc["margin"]["value"], 0.01)
        self.assertRel(doc["tost"]["p_value"], want["tost_p_margin_0.01_abs"])
        self.assertIn("equivalent", doc["reason"])

    def test_ties_match_proc(self):
        want = EXPECTED["ties"]
        _, doc = run_json("auc", "--labels", d("labels.npy"), "--a", d("ties_a.npy"), "--b",
                          d("ties_b.npy"))
        self.assertRel(doc["auc_a"], want["sklearn_auc_a"], 1e-12)
        self.assertRel(doc["auc_b"], want["sklearn_auc_b"], 1e-12)
        self.assertRel(doc["delong"]["p_value"], want["proc"]["p_value"])
        self.assertRel(doc["delong"]["covariance"], want["proc"]["covariance"])

    def test_all_equal_scores(self):
        r, doc = run_json("auc", "--labels", d("labels.npy"), "--a", d("constant.npy"), "--b",
                          d("constant.npy"))
        self.assertEqual(doc["auc_a"], EXPECTED["constant"]["sklearn_auc"])
        self.assertEqual(doc["delta"], 0.0)
        self.assertEqual(doc["delong"]["p_value"], 1.0)
        self.assertEqual((r.returncode, doc["verdict"]), (0, "pass"))

    def test_seeds_welch_matches_scipy(self):
        want = EXPECTED["seeds"]
        a = [d("seed_a%d.npy" % k) for k in range(5)]
        b = [d("seed_b%d.npy" % k) for k in range(5)]
        r, doc = run_json("auc", "--labels", d("labels.npy"), "--a", *a, "--b", *b)
        for got, ref in zip(doc["runs_a"] + doc["runs_b"],
                            want["sklearn_auc_a"] + want["sklearn_auc_b"]):
            self.assertRel(got, ref, 1e-12)
        welch = doc["seeds"]["welch"]
        self.assertRel(welch["t"], want["welch_t"])
        self.assertRel(welch["p_value"], want["welch_p"])
        self.assertRel(welch["df"], want["welch_df"])
        self.assertRel(doc["tost"]["p_value"], want["tost_p_default_margin"])
        self.assertIsNone(doc["delong"])
        self.assertEqual((r.returncode, doc["verdict"]), (1, "fail"))
        self.assertIn("seed-to-seed sd", doc["reason"])

    def test_bootstrap_is_seeded_and_brackets_delta(self):
        args = ("auc", "--labels", d("labels.npy"), "--a", d("a.npy"), "--b", d("b.npy"),
                "--bootstrap", "300", "--seed", "7")
        _, one = run_json(*args)
        _, two = run_json(*args)
        self.assertEqual(one["bootstrap"], two["bootstrap"])
        lo, hi = one["bootstrap"]["ci95"]
        self.assertLess(lo, one["delta"])
        self.assertGreater(hi, one["delta"])
        # The bootstrap's se estimates DeLong's.
        self.assertLess(abs(one["bootstrap"]["se"] / one["delong"]["se"] - 1), 0.25)

    def test_allow_inconclusive(self):
        r = quality("auc", "--labels", d("labels.npy"), "--a", d("a.npy"), "--b", d("b.npy"),
                    "--allow-inconclusive")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Verdict: inconclusive", r.stdout)


class OtherMetrics(unittest.TestCase):
    def test_logloss_matches_sklearn(self):
        want = EXPECTED["paired"]
        _, doc = run_json("logloss", "--labels", d("labels.npy"), "--a", d("a.npy"), "--b",
                          d("b.npy"))
        self.assertAlmostEqual(doc["logloss_a"], want["sklearn_logloss_a"], places=12)
        self.assertAlmostEqual(doc["logloss_b"], want["sklearn_logloss_b"], places=12)
        self.assertAlmostEqual(doc["normalized_entropy_a"],
                               want["sklearn_logloss_a"] / want["base_entropy"], places=12)
        self.assertAlmostEqual(doc["paired"]["se"], want["logloss_paired_se"], places=12)
        self.assertIsNone(doc["delong"])

    def test_accuracy_matches_sklearn(self):
        want = EXPECTED["paired"]
        _, doc = run_json("accuracy", "--labels", d("labels.npy"), "--a", d("a.npy"), "--b",
                          d("b.npy"))
        self.assertEqual(doc["accuracy_a"], want["sklearn_accuracy_a"])
        self.assertEqual(doc["accuracy_b"], want["sklearn_accuracy_b"])


class Curve(unittest.TestCase):
    def test_departure_and_final_values(self):
        want = EXPECTED["curve"]
        a = [d("curve_a%d.csv" % k) for k in range(3)]
        b = [d("curve_b%d.csv" % k) for k in range(3)]
        r, doc = run_json("curve", "--a", *a, "--b", *b)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(doc["metric"], "curve")
        self.assertEqual(doc["first_departure"], want["first_departure"])
        self.assertEqual(doc["steps_outside"], want["steps_outside"])
        self.assertAlmostEqual(doc["final"]["welch"]["t"], want["welch_t"], places=9)
        self.assertLess(abs(doc["final"]["welch"]["p_value"] / want["welch_p"] - 1), 1e-6)
        self.assertEqual(doc["verdict"], "fail")
        self.assertEqual(doc["steps"], len(doc["points"]))

    def test_same_side_stays_inside(self):
        a = [d("curve_a%d.csv" % k) for k in range(3)]
        _, doc = run_json("curve", "--a", *a, "--b", *a, "--value-column", "loss")
        self.assertIsNone(doc["first_departure"])
        self.assertEqual(doc["steps_outside"], 0)
        # Three seeds with sd 0.002 can't show equivalence within 0.15% (0.0005)...
        self.assertEqual(doc["verdict"], "inconclusive")
        # ...but can within 5%.
        _, doc = run_json("curve", "--a", *a, "--b", *a, "--margin", "0.05")
        self.assertEqual(doc["verdict"], "pass")

    def test_one_run_per_side_is_inconclusive(self):
        r, doc = run_json("curve", "--a", d("curve_a0.csv"), "--b", d("curve_b0.csv"))
        self.assertEqual((r.returncode, doc["verdict"]), (1, "inconclusive"))
        self.assertIn("no seed envelope", doc["reason"])

    def test_bad_curve(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.csv")
            with open(bad, "w") as f:
                f.write("step,value\n1,0.5\n1,0.4\n")
            r = quality("curve", "--a", bad, "--b", d("curve_b0.csv"))
            self.assertEqual(r.returncode, 2)
            self.assertIn("appears twice", r.stderr)
            r = quality("curve", "--a", d("curve_a0.csv"), "--b", d("curve_b0.csv"),
                        "--step-column", "epoch")
            self.assertEqual(r.returncode, 2)
            self.assertIn("no column 'epoch'", r.stderr)


class BadInput(unittest.TestCase):
    def assert_error(self, r, *words):
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertTrue(r.stderr.startswith("parity: error:"), r.stderr)
        for w in words:
            self.assertIn(w, r.stderr)

    def write(self, tmp, name, values):
        path = os.path.join(tmp, name)
        np.save(path, np.asarray(values, dtype=np.float64))
        return path

    def test_bad_inputs(self):
        with tempfile.TemporaryDirectory() as tmp:
            labels = self.write(tmp, "y.npy", [0, 1, 0, 1])
            zeros = self.write(tmp, "zeros.npy", [0, 0, 0, 0])
            twos = self.write(tmp, "twos.npy", [0, 2, 0, 1])
            s = self.write(tmp, "s.npy", [0.1, 0.9, 0.2, 0.8])
            nan = self.write(tmp, "nan.npy", [0.1, float("nan"), 0.2, 0.8])
            short = self.write(tmp, "short.npy", [0.1, 0.9, 0.2])
            big = self.write(tmp, "big.npy", [0.1, 1.5, 0.2, 0.8])
            self.assert_error(quality("auc", "--labels", zeros, "--a", s, "--b", s),
                              "zeros.npy", "no positive samples")
            self.assert_error(quality("auc", "--labels", twos, "--a", s, "--b", s),
                              "twos.npy", "not 0 or 1")
            self.assert_error(quality("auc", "--labels", labels, "--a", s, "--b", nan),
                              "nan.npy", "not finite")
            self.assert_error(quality("auc", "--labels", labels, "--a", short, "--b", s),
                              "short.npy", "3 scores for 4 labels")
            self.assert_error(quality("auc", "--labels", labels, "--a", s, s, "--b", s),
                              "one run per side")
            self.assert_error(quality("logloss", "--labels", labels, "--a", s, "--b", big),
                              "big.npy", "probability")
            self.assert_error(quality("auc", "--labels", os.path.join(tmp, "missing.txt"),
                                      "--a", s, "--b", s), "missing.txt")
            text = os.path.join(tmp, "bad.txt")
            with open(text, "w") as f:
                f.write("0.5\nzero\n")
            self.assert_error(quality("auc", "--labels", labels, "--a", text, "--b", s),
                              "bad.txt", "line 2")
            self.assert_error(quality("auc", "--labels", labels, "--a", d("scores.csv"),
                                      "--b", s, "--column", "nope"), "no column 'nope'")

    def test_usage(self):
        r = quality("acu", "--labels", "x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("did you mean 'auc'", r.stderr)
        self.assertEqual(quality().returncode, 2)
        self.assertEqual(quality("auc", "--labels", "x").returncode, 2)
        r = quality("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("logloss", r.stdout)


if __name__ == "__main__":
    unittest.main()
