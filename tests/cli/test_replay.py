#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity replay` (data: tests/gen/gen_oracle.py, gen_compare.py)."""
import json
import os
import subprocess
import unittest

BIN = os.environ["PARITY_BIN"]
DATA = os.environ["PARITY_TESTDATA"]
with open(os.path.join(DATA, "oracle", "expected.json")) as f:
    ORACLE = json.load(f)
with open(os.path.join(DATA, "compare", "expected.json")) as f:
    COMPARE = json.load(f)

FIELDS = {"seq", "rank", "step", "name", "op", "pass", "call", "replayable", "reason", "max_abs",
          "rmse", "rel_rmse", "bound", "tolerance", "within_bound", "judged"}


def replay(*args):
    return subprocess.run([BIN, "replay", *args], capture_output=True, text=True, timeout=300)


class Replay(unittest.TestCase):
    def test_every_op_within_its_bound(self):
        r = replay(ORACLE["f32_dir"], "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual((doc["format"], doc["version"]), ("parity-replay", 1))
        self.assertEqual(doc["summary"]["outside_bound"], 0)
        self.assertEqual(len(doc["ops"]), len(ORACLE["f32"]))
        for op in doc["ops"]:
            self.assertEqual(set(op) - {"time_us"}, FIELDS, op["name"])
            if not op["judged"]:  # dropout: its drop rate checked, its values never "within"
                self.assertFalse(op["within_bound"], op)
                self.assertIn("not judged (random op", op["reason"])
                continue
            self.assertTrue(op["within_bound"], op)
        self.assertEqual(doc["summary"]["not_judged"],
                         sum(1 for op in doc["ops"] if not op["judged"]))
        self.assertGreaterEqual(doc["summary"]["not_judged"], 1)

    def test_tf32_ops_are_outside_their_float32_bound(self):
        case = COMPARE["dumps"][1]  # its fc1 ran on tf32-rounded inputs
        r = replay(case["b"], "--json", "-")
        self.assertEqual(r.returncode, 1, r.stderr)
        ops = {o["name"]: o for o in json.loads(r.stdout)["ops"]}
        self.assertFalse(ops["fc1"]["within_bound"])
        self.assertTrue(ops["softmax"]["within_bound"])
        self.assertGreater(ops["fc1"]["rel_rmse"], 1e-4)

    def test_a_tensor_that_no_longer_matches_its_record_is_exit_2(self):
        # A mutated dump whose .npy changed shape or dtype: the file and the problem, exit 2.
        for bad in COMPARE["bad_dumps"]:
            if not bad["dir"].endswith("_mismatch"):
                continue
            r = replay(bad["dir"])
            self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
            self.assertIn("parity: error:", r.stderr)
            self.assertIn("tensors/y.npy", r.stderr)
            self.assertIn(bad["error"], r.stderr)

    def test_unfit_records_are_skipped_with_a_reason(self):
        r = replay(ORACLE["unfit_dir"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("SKIP", r.stdout)
        self.assertIn("0 replayed", r.stdout)
        r = replay(ORACLE["unfit_dir"], "--json", "-")
        for op, case in zip(json.loads(r.stdout)["ops"], ORACLE["unfit"]):
            self.assertFalse(op["replayable"])
            self.assertIn(case["why"], op["reason"])

    def test_selection(self):
        r = replay(ORACLE["f64_dir"], "--name", "conv*", "--json", "-")
        self.assertEqual({o["op"] for o in json.loads(r.stdout)["ops"]}, {"conv1d", "conv2d"})
        r = replay(ORACLE["f64_dir"], "--seq", "3", "--json", "-")
        self.assertEqual([o["seq"] for o in json.loads(r.stdout)["ops"]], [3])
        r = replay(ORACLE["f64_dir"], "--name", "nothing*")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no record matches", r.stderr)

    def test_broken_dumps_are_exit_2(self):
        for case in COMPARE["bad_dumps"]:
            r = replay(case["dir"])
            self.assertEqual(r.returncode, 2, case["dir"])
            self.assertTrue(r.stderr.startswith("parity: error: "), r.stderr)
            self.assertIn(case["error"], r.stderr)


if __name__ == "__main__":
    unittest.main()
