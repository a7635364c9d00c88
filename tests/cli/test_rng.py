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


with open(os.path.join(DATA, "philox_kat.json")) as f:
    STREAMS = {s["name"]: s for s in json.load(f)["curand_device"]}


def stream_values(name, call):
    """The values of one kind of call in a stream of philox_kat.json: integers, or the text
    (%.9g float, %.17g double) that `parity rng philox` prints."""
    return [c["value"] if call.startswith("curand") else c["text"]
            for c in STREAMS[name]["calls"] if c["call"] == call]


class Philox(unittest.TestCase):
    """cuRAND's device stream for seed 42: curand_kernel.h's own values, compiled for the host
    by tests/gen/gen_philox.py (tests/data/rng/philox_kat.json); cuRAND's host generator
    agrees (its first block per subsequence is the device stream's: docs/RNG.md)."""

    def lines(self, *args):
        r = rng("philox", *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.split()

    def test_streams(self):
        words = stream_values("words", "curand")
        self.assertEqual(len(words), 8)
        self.assertEqual([int(x) for x in self.lines("--seed", "42", "--count", "4")], words[:4])
        self.assertEqual(self.lines("--seed", "42", "--count", "4", "--dist", "uniform"),
                         stream_values("uniform", "uniform")[:4])
        self.assertEqual(self.lines("--seed", "42", "--count", "4", "--dist", "normal"),
                         stream_values("normal", "normal")[:4])
        self.assertEqual(self.lines("--seed", "42", "--count", "2", "--dist", "normal_double"),
                         stream_values("normal_double", "normal_double")[:2])
        # Subsequence 1 is the host generator's second block; offset 5 skips five words.
        self.assertEqual(int(self.lines("--seed", "42", "--subsequence", "1", "--count", "1")[0]),
                         stream_values("subsequence_1", "curand")[0])
        self.assertEqual(int(self.lines("--seed", "42", "--offset", "5", "--count", "1")[0]),
                         stream_values("offset_5", "curand4")[0][0])
        self.assertEqual(stream_values("offset_5", "curand4")[0][0], words[5])

    def test_npy_output(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "p.npy")
            self.assertEqual(rng("philox", "--seed", "7", "--count", "1000", "--dist", "uniform",
                                 "--out", out).returncode, 0)
            a = np.load(out)
            self.assertEqual((a.dtype, a.shape), (np.float32, (1000,)))
            text = self.lines("--seed", "7", "--count", "1000", "--dist", "uniform")
            self.assertEqual([np.float32(x) for x in text], list(a))
            self.assertTrue(((a > 0) & (a <= 1)).all())

    def test_bad_arguments(self):
        self.assertEqual(rng("philox", "--count", "3").returncode, 2)
        self.assertEqual(rng("philox", "--seed", "1", "--count", "3", "--dist", "gamma")
                         .returncode, 2)
        self.assertEqual(rng("philox", "--seed", "1", "--count", "-1").returncode, 2)


class Layout(unittest.TestCase):
    def test_one_block(self):
        # One SM of 256 threads: a single block; element 256 is lane 1 of thread 0's first
        # curand_uniform4, i.e. the stream's second value.
        r = rng("layout", "--numel", "1000", "--sm-count", "1", "--threads-per-sm", "256",
                "--seed", "42", "--show", "301", "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["format"], "parity-rng-layout")
        policy = doc["policies"][0]
        self.assertEqual((policy["grid"], policy["threads"], policy["counter_offset"]),
                         (1, 256, 4))
        e = doc["elements"]
        self.assertEqual(e[0]["sources"][0]["value"], float(np.float32(0.612959862)))
        self.assertEqual(e[256]["sources"][0]["value"], float(np.float32(0.468586504)))
        self.assertEqual((e[300]["sources"][0]["thread"], e[300]["sources"][0]["lane"]), (44, 1))

    def test_two_devices(self):
        r = rng("layout", "--numel", "1000000", "--sm-count", "108", "104", "--seed", "1",
                "--show", "0", "--json", "-")
        doc = json.loads(r.stdout)
        grids = [p["grid"] for p in doc["policies"]]
        self.assertEqual(grids, [108 * 8, 104 * 8])
        self.assertEqual([p["counter_offset"] for p in doc["policies"]], [8, 8])
        cmp = doc["comparison"]
        self.assertLess(cmp["same_source"], 0.5)
        self.assertEqual(cmp["same_value"], cmp["same_source"])


if __name__ == "__main__":
    unittest.main()
