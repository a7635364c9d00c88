# SPDX-License-Identifier: Apache-2.0
"""Compiled regions replayed in float64 from their saved graphs (issue 46), torch 2.x.

Two training steps of a small model under torch.compile (inductor) are captured: each
execution of the compiled region is one record per pass. `python -m parity_dump.regions DUMP`
runs each region's dynamo graph in float64 on the recorded inputs (its backward through
autograd from the matching forward's inputs), and `parity replay` judges the records:

- before the replay is written, each region record is "compared only", naming the command;
- after, every forward and backward region record is within its bound (torch's own float32
  kernels are rounding);
- a (1 + 2^-8) error planted in one element of a forward output, and in one of a backward's
  gradients, is beyond the bound;
- a region whose graph file is missing, and one that draws random numbers (dropout), are
  compared only with the reason;
- a directory that is not a dump is exit 2 with `parity: error:`;
- on real model code, hf-llama's compiled training step at size tiny (its forward and
  backward regions: hundreds of ops each) is replayed within its bound (skipped naming the
  library where transformers is missing).

Skipped under a torch without torch.compile's region capture (1.13).
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

BIN = os.environ["PARITY_BIN"]
SOURCE = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))
sys.path.insert(0, SOURCE)

import torch  # noqa: E402

import parity_dump  # noqa: E402

SUPPORTED = hasattr(torch, "compile") and not torch.__version__.startswith("1.")


def capture(root, dropout=False):
    torch.manual_seed(0)
    layers = [torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16)]
    if dropout:
        layers.append(torch.nn.Dropout(0.25))
    model = torch.nn.Sequential(*layers, torch.nn.Linear(16, 4))
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with parity_dump.capture(model, root, optimizer=opt) as cap:
        for _ in range(2):
            loss = compiled(torch.randn(5, 8)).pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
            cap.step()
    torch._dynamo.reset()


def regions(*dumps):
    env = dict(os.environ, PYTHONPATH=SOURCE)
    return subprocess.run([sys.executable, "-m", "parity_dump.regions", *dumps],
                          capture_output=True, text=True, env=env, timeout=600)


def replay(root):
    out = subprocess.run([BIN, "replay", root, "--json", "-", "-q"], capture_output=True,
                         text=True, timeout=300)
    doc = json.loads(out.stdout)
    return out.returncode, [o for o in doc["ops"] if o["op"] == "compiled_region"]


def records(root):
    with open(os.path.join(root, "records.jsonl")) as f:
        return [json.loads(line) for line in f]


@unittest.skipUnless(SUPPORTED, "torch %s records no compiled regions" % torch.__version__)
class CompiledRegions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.root = os.path.join(cls.tmp.name, "dump")
        capture(cls.root)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_regions_are_replayed_within_bound_and_planted_errors_caught(self):
        _, before = replay(self.root)
        self.assertEqual(len(before), 4)  # forward and backward, two steps
        for o in before:
            self.assertFalse(o["replayable"])
            self.assertIn("python -m parity_dump.regions", o["reason"])
        done = regions(self.root)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("4 compiled region record(s), 4 replayed", done.stdout)
        rc, after = replay(self.root)
        self.assertEqual(rc, 0)
        self.assertEqual(sorted(o["pass"] for o in after), ["backward"] * 2 + ["forward"] * 2)
        for o in after:
            self.assertTrue(o["replayable"], o["reason"])
            self.assertTrue(o["within_bound"], o["reason"])
            self.assertIn("float64 run of its graph", o["reason"])
        recs = {r["seq"]: r for r in records(self.root)}
        for o in after:
            rec = recs[o["seq"]]
            path = os.path.join(self.root, rec["outputs"][-1]["file"])
            original = np.load(path)
            wrong = original.copy()
            flat = wrong.reshape(-1)
            flat[np.argmax(np.abs(flat))] *= 1 + 2.0 ** -8
            np.save(path, wrong)
            try:
                rc, planted = replay(self.root)
            finally:
                np.save(path, original)
            verdict = next(p for p in planted if p["seq"] == o["seq"])
            self.assertFalse(verdict["within_bound"], (o["pass"], verdict["reason"]))
            self.assertEqual(rc, 1)

    def test_a_missing_graph_and_random_numbers_are_compared_only(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing, dropout = os.path.join(tmp, "missing"), os.path.join(tmp, "dropout")
            capture(missing)
            capture(dropout, dropout=True)
            graph = next(r for r in records(missing) if r["pass"] == "forward"
                         and r["op"] == "compiled_region")["attrs"]["dynamo_graph"]
            os.remove(os.path.join(missing, graph))
            self.assertEqual(regions(missing, dropout).returncode, 0)
            for root, words in ((missing, "graph file %s unreadable" % graph),
                                (dropout, "draws random numbers")):
                _, verdicts = replay(root)
                self.assertEqual(len(verdicts), 4)
                for o in verdicts:
                    self.assertFalse(o["replayable"])
                    self.assertIn("compared only", o["reason"])
                    self.assertIn(words, o["reason"])

    def test_hf_llama_compiled_is_replayed_within_bound(self):
        import parity_workloads.harness as harness
        from parity_workloads.common import MissingLibraryError
        try:
            w = harness.load("hf-llama", size="tiny", seed=0)
        except harness.WorkloadError as e:
            if isinstance(e.__context__, MissingLibraryError):
                self.skipTest(str(e))
            raise
        opt = torch.optim.AdamW(w.model.parameters(), lr=w.lr)
        compiled = torch.compile(w.model)
        with tempfile.TemporaryDirectory() as tmp:
            root = os.path.join(tmp, "llama")
            with parity_dump.capture(w.model, root, optimizer=opt) as cap:
                for batch in w.batches(1):
                    w.train_step(compiled, batch, opt)
                    cap.step()
            torch._dynamo.reset()
            self.assertEqual(regions(root).returncode, 0)
            rc, verdicts = replay(root)
        self.assertEqual(rc, 0)
        self.assertEqual(sorted(o["pass"] for o in verdicts), ["backward", "forward"])
        for o in verdicts:
            self.assertTrue(o["within_bound"], o["reason"])

    def test_a_directory_that_is_not_a_dump_is_exit_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = regions(tmp)
            self.assertEqual(out.returncode, 2)
            self.assertIn("parity: error:", out.stderr)
            self.assertIn("not a parity dump", out.stderr)
            # A records file with a line that is not JSON: exit 2 naming the line; a record
            # that lacks what a region's replay needs: compared only, saying so.
            with open(os.path.join(tmp, "records.jsonl"), "w") as f:
                f.write('{"op": "compiled_region", "seq": 0}\nnot json\n')
            out = regions(tmp)
            self.assertEqual(out.returncode, 2)
            self.assertIn("records.jsonl: line 2:", out.stderr)
            with open(os.path.join(tmp, "records.jsonl"), "w") as f:
                f.write('{"op": "compiled_region", "seq": 0}\n')
            self.assertEqual(regions(tmp).returncode, 0)
            with open(os.path.join(tmp, "oracle", "regions.json")) as f:
                self.assertIn("the record is malformed", json.load(f)["regions"]["0"]["reason"])

    def test_a_distributed_dump_is_replayed_rank_by_rank(self):
        with tempfile.TemporaryDirectory() as tmp:
            capture(os.path.join(tmp, "rank0"))
            out = regions(tmp)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("rank0: 4 compiled region record(s), 4 replayed", out.stdout)
            self.assertTrue(os.path.isfile(os.path.join(tmp, "rank0", "oracle", "regions.json")))


if __name__ == "__main__":
    unittest.main()
