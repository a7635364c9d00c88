#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""parity_dump version 2 read back by the parity binary: the reference workloads' whole
training steps (forward, backward, Adam) captured at the aten level, then `parity inspect`,
`compare` and `explain` on them.

Environment: PARITY_BIN (the CLI). The interpreter running this must import parity_dump and
parity_workloads (PYTHONPATH=python).
"""
import json
import os
import subprocess
import tempfile
import unittest

import torch

import parity_dump
import parity_workloads

BIN = os.environ["PARITY_BIN"]
# Written where file creation is cheap when there is such a place (the dumps are many files).
TMP = "/dev/shm" if os.path.isdir("/dev/shm") else None


def capture(name, out, seed=1, autocast=False, steps=2):
    """Two training steps of workload `name` (tiny), captured; `seed` is the global generator's
    seed for the steps (dropout), the model and data are fixed."""
    w = parity_workloads.get(name, size="tiny")
    opt = w.make_optimizer()
    torch.manual_seed(seed)
    with parity_dump.capture(w.model, out, optimizer=opt) as cap:
        for batch in w.batches(steps):
            w.train_step(w.model, batch, opt, autocast=autocast)
            cap.step()


def parity(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)


def parity_json(*args, codes=(0,)):
    r = parity(*args, "--json", "-")
    if r.returncode not in codes:
        raise AssertionError("parity %s: exit %d\n%s" % (" ".join(args), r.returncode, r.stderr))
    return json.loads(r.stdout)


class WholeSteps(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(dir=TMP)
        cls.dumps = {}
        old = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            for key, name, kwargs in [("a", "transformer", {}), ("a2", "transformer", {}),
                                      ("seed", "transformer", {"seed": 2}),
                                      ("bf16", "transformer", {"autocast": True}),
                                      ("cnn", "cnn", {}), ("recsys", "recsys", {})]:
                out = os.path.join(cls.tmp.name, key)
                capture(name, out, **kwargs)
                cls.dumps[key] = out
        finally:
            torch.set_num_threads(old)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_inspect_lists_every_pass_and_the_omitted_ops(self):
        # The attention's softmax: _softmax under torch 1.13, _safe_softmax under 2.x's SDPA.
        softmax = "_softmax" if torch.__version__.startswith("1.") else "_safe_softmax"
        for key, ops in [("a", {"addmm", softmax, "native_layer_norm", "bmm"}),
                         ("cnn", {"convolution", "native_batch_norm", "max_pool2d_with_indices"}),
                         ("recsys", {"_embedding_bag", "binary_cross_entropy", "sigmoid"})]:
            with self.subTest(key):
                doc = parity_json("inspect", self.dumps[key])
                cov = doc["coverage"]
                self.assertEqual((cov["version"], cov["level"]), (2, "aten"))
                self.assertEqual(cov["steps"], [0, 1])
                self.assertLessEqual(ops, set(cov["ops"]), sorted(cov["ops"]))
                passes = set()
                for entry in cov["ops"].values():
                    passes |= set(entry["passes"])
                self.assertEqual(passes, {"forward", "backward", "optimizer"})
                self.assertEqual(cov["records"], cov["replayable"] + cov["compared_only"])
                self.assertGreater(sum(cov["omitted"].values()), 0)
                self.assertNotIn("view", cov["ops"])  # alias-only ops are not records
                self.assertIn("view", cov["omitted"])

    def test_same_seed_compares_bitwise_equal(self):
        doc = parity_json("compare", self.dumps["a"], self.dumps["a2"], "--tol", "exact")
        summary = doc["summary"]
        self.assertGreater(summary["tensors"], 100)
        self.assertEqual(summary["passed"], summary["tensors"])

    def test_explain_of_equal_runs_has_no_origin_and_equal_generators(self):
        doc = parity_json("explain", self.dumps["a"], self.dumps["a2"], codes=(0, 1))
        self.assertEqual(doc["origins"], [])
        self.assertIsNone(doc["evidence"]["generators_first_differ"])
        self.assertEqual({op["step"] for op in doc["ops"]}, {0, 1})
        self.assertEqual({op["pass"] for op in doc["ops"]}, {"forward", "backward", "optimizer"})

    def test_explain_names_the_first_step_whose_generators_differ(self):
        doc = parity_json("explain", self.dumps["a"], self.dumps["seed"], codes=(0, 1))
        first = doc["evidence"]["generators_first_differ"]
        self.assertEqual((first["step"], first["generators"]), (0, ["cpu"]))
        # Dropout's mask is the first op that differs: it runs in step 0's forward pass.
        self.assertTrue(doc["origins"])
        origin = doc["origins"][0]
        self.assertEqual((origin["step"], origin["pass"]), (0, "forward"))

    def test_explain_of_bf16_autocast_starts_in_the_forward_pass(self):
        doc = parity_json("explain", self.dumps["a"], self.dumps["bf16"], codes=(0, 1))
        self.assertTrue(doc["origins"])
        self.assertEqual((doc["origins"][0]["step"], doc["origins"][0]["pass"]), (0, "forward"))
        # Generators are untouched by autocast: the same at every step.
        self.assertIsNone(doc["evidence"]["generators_first_differ"])


if __name__ == "__main__":
    unittest.main()
