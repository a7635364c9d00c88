#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tensors a dump holds but parity does not compare, read back by the parity binary: the sparse
gradients of nn.EmbeddingBag(sparse=True) (entries "not stored") and complex tensors (complex
.npy files, statistics of their real and imaginary parts), captured with parity_dump, then
`parity inspect`, `compare`, `replay` and `explain` on them: every command runs (exit 0 unless a
real difference is planted), such tensors are SKIP / not compared / not replayed / not-judged
with their reason, never pass or identical by what is absent; and explain shows the user's
source line (capture(..., stack=True)) beside the calls it lists.

Environment: PARITY_BIN (the CLI). The interpreter running this must import parity_dump
(PYTHONPATH=python)."""
import json
import os
import subprocess
import tempfile
import unittest

import torch
import torch.nn.functional as F

import parity_dump

BIN = os.environ["PARITY_BIN"]
TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
SPARSE = "not stored: sparse_coo layout"


def parity(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)


def parity_json(*args, code=0):
    r = parity(*args, "--json", "-")
    if r.returncode != code:
        raise AssertionError("parity %s: exit %d, expected %d\n%s" %
                             (" ".join(args), r.returncode, code, r.stderr))
    return json.loads(r.stdout)


class Recommender(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(50, 8, mode="sum", sparse=True)
        self.top = torch.nn.Linear(8, 1)

    def forward(self, ids, offsets):
        return self.top(self.bag(ids, offsets)).squeeze(-1)


def train_recommender(out, lr=0.1, steps=2):
    """`steps` SGD steps (sparse embedding gradients) captured into `out`."""
    torch.manual_seed(0)
    model = Recommender()
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(1)
    with parity_dump.capture(model, out, optimizer=opt) as cap:
        for _ in range(steps):
            ids, offsets = torch.randint(0, 50, (12,), generator=gen), torch.tensor([0, 3, 7])
            y = torch.randn(3, generator=gen)
            opt.zero_grad(set_to_none=True)
            F.mse_loss(model(ids, offsets), y).backward()
            opt.step()
            cap.step()


def complex_step():
    torch.manual_seed(0)
    z = torch.randn(3, 4, dtype=torch.complex64)
    w = torch.randn(4, requires_grad=True)
    loss = (z * w).abs().sum()
    loss.backward()


def capture_complex(out, mode="tensors"):
    with parity_dump.capture(None, out, mode=mode, stack=True):
        complex_step()


class Unstorable(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(dir=TMP)
        cls.dumps = {}
        old = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            for key, fn in [("a", lambda o: train_recommender(o)),
                            ("a2", lambda o: train_recommender(o)),
                            ("lr", lambda o: train_recommender(o, lr=0.2)),
                            ("c", capture_complex), ("c2", capture_complex),
                            ("cstats", lambda o: capture_complex(o, mode="stats"))]:
                out = os.path.join(cls.tmp.name, key)
                fn(out)
                cls.dumps[key] = out
        finally:
            torch.set_num_threads(old)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_inspect_lists_what_it_does_not_compare(self):
        doc = parity_json("inspect", self.dumps["a"])
        listed = doc["dumps"][0]["not_comparable"]
        self.assertTrue(listed)
        self.assertEqual({t["reason"] for t in listed}, {SPARSE})
        self.assertIn("optimizer", {t["pass"] for t in listed})
        self.assertIn("backward", {t["pass"] for t in listed})
        self.assertEqual(doc["coverage"]["not_comparable"], len(listed))
        self.assertEqual(doc["coverage"]["not_comparable_reasons"], {SPARSE: len(listed)})
        r = parity("inspect", self.dumps["a"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("tensors not comparable (%d)" % len(listed), r.stdout)
        # A complex dump: its complex .npy files are listed with the reason, not read as files.
        doc = parity_json("inspect", self.dumps["c"])
        listed = doc["dumps"][0]["not_comparable"]
        self.assertTrue(listed)
        self.assertEqual({t["dtype"] for t in listed}, {"complex64"})
        complex_files = {t["file"] for t in listed}
        for f in doc["files"]:
            self.assertNotIn(os.path.relpath(f["path"], self.dumps["c"]), complex_files)

    def test_compare_skips_them_and_passes_the_rest(self):
        doc = parity_json("compare", self.dumps["a"], self.dumps["a2"])
        s = doc["summary"]
        skipped = [t for t in doc["tensors"] if t["verdict"] == "skip"]
        self.assertTrue(skipped)
        self.assertEqual(s["not_compared"], len(skipped))
        self.assertEqual(s["failed"], 0)
        self.assertEqual(s["passed"] + s["not_compared"], s["tensors"])
        for t in skipped:
            self.assertTrue(t["not_compared"])
            self.assertEqual(t["reason"], "not compared: A and B: " + SPARSE)
        r = parity("compare", self.dumps["a"], self.dumps["a2"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("SKIP", r.stdout)
        self.assertIn("%d not compared" % len(skipped), r.stdout)
        # Complex tensors, with data or as statistics: skipped, the rest passes.
        doc = parity_json("compare", self.dumps["c"], self.dumps["c2"])
        skipped = [t for t in doc["tensors"] if t["verdict"] == "skip"]
        self.assertTrue(skipped)
        self.assertEqual({t["dtype"] for t in skipped}, {"complex64"})
        self.assertTrue(all("parity compares real dtypes only" in t["reason"] for t in skipped))
        self.assertEqual(doc["summary"]["failed"], 0)

    def test_replay_does_not_replay_them(self):
        doc = parity_json("replay", self.dumps["a"])
        reasons = {o["reason"] for o in doc["ops"] if not o["replayable"]}
        self.assertIn("input 1 not stored: sparse_coo layout", reasons)
        self.assertIn("output 0 not stored: sparse_coo layout", reasons)
        self.assertEqual(doc["summary"]["outside_bound"], 0)

    def test_explain_never_calls_them_identical(self):
        doc = parity_json("explain", self.dumps["a"], self.dumps["a2"])
        self.assertEqual(doc["origins"], [])
        sparse_out = [o for o in doc["ops"] if "output 0 in A and B " + SPARSE in o["reason"]]
        self.assertTrue(sparse_out)
        self.assertEqual({o["cause"] for o in sparse_out}, {"not-judged"})
        self.assertEqual(doc["summary"]["not-judged"],
                         sum(o["cause"] == "not-judged" for o in doc["ops"]))
        # SGD's add_ of a sparse gradient: its (dense) output is held on both sides and equal.
        adds = [o for o in doc["ops"] if o["op"] == "add_" and "not stored" in o["reason"]]
        self.assertTrue(adds)
        self.assertEqual({o["cause"] for o in adds}, {"identical"})
        r = parity("explain", self.dumps["a"], self.dumps["a2"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("Not judged (%d)" % doc["summary"]["not-judged"], r.stdout)

    def test_explain_finds_another_learning_rate_on_a_sparse_gradient(self):
        doc = parity_json("explain", self.dumps["a"], self.dumps["lr"], code=1)
        first = doc["origins"][0]
        self.assertEqual((first["op"], first["cause"]), ("add_", "algorithmic"))
        self.assertIn("alpha", first["reason"])

    def test_explain_of_complex_dumps_shows_the_source(self):
        for other in ("c2", "cstats"):
            with self.subTest(other):
                doc = parity_json("explain", self.dumps["c"], self.dumps[other])
                self.assertEqual(doc["origins"], [])
                complex_ops = [o for o in doc["ops"] if "complex64" in o["reason"]]
                self.assertTrue(complex_ops)
                self.assertNotIn("within-rounding", {o["cause"] for o in complex_ops})
                self.assertTrue(all(o["cause"] in ("not-judged", "identical")
                                    for o in complex_ops))
                mul = next(o for o in doc["ops"] if o["op"] == "mul" and o["pass"] == "forward")
                self.assertEqual(mul["cause"], "not-judged")
                self.assertEqual(mul["source"]["file"], os.path.abspath(__file__))
                self.assertEqual(mul["source"]["function"], "complex_step")
                self.assertEqual(mul["source"]["code"], "loss = (z * w).abs().sum()")
                r = parity("explain", self.dumps["c"], self.dumps[other])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertIn("in complex_step: loss = (z * w).abs().sum()", r.stdout)

    def test_malformed_not_stored_is_exit_2_naming_the_entry(self):
        with tempfile.TemporaryDirectory(dir=TMP) as tmp:
            with open(os.path.join(tmp, "manifest.json"), "w") as f:
                json.dump({"format": "parity-dump", "version": 2}, f)
            entry = {"dtype": "float32", "shape": [4], "layout": "sparse_coo", "not stored": 5}
            record = {"seq": 0, "name": "x", "op": "add_", "pass": "optimizer", "call": 0,
                      "inputs": [entry], "outputs": []}
            with open(os.path.join(tmp, "records.jsonl"), "w") as f:
                f.write(json.dumps(record) + "\n")
            for command in ("inspect", "replay"):
                r = parity(command, tmp)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertIn("records.jsonl:1: inputs[0]: 'not stored' is not a string",
                              r.stderr)


if __name__ == "__main__":
    unittest.main()
