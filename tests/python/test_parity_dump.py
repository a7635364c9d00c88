#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""python/parity_dump on real PyTorch CPU models, read back by the parity binary.

Environment: PARITY_BIN (the CLI). The interpreter running this must import parity_dump
(installed into a venv by CTest's python.install step, or through PYTHONPATH).
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np
import torch

import parity_dump

BIN = os.environ["PARITY_BIN"]


def records(path):
    with open(os.path.join(path, "records.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def parity(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300)


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8),
                               torch.nn.Softmax(dim=-1))


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.head = torch.nn.Linear(4 * 8 * 8, 5)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        return self.head(x.flatten(1))


class Block(torch.nn.Module):
    """A transformer block written with the functional ops parity replays."""

    def __init__(self, d=32, ff=64):
        super().__init__()
        self.q, self.k, self.v = (torch.nn.Linear(d, d) for _ in range(3))
        self.proj = torch.nn.Linear(d, d)
        self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.fc1, self.fc2 = torch.nn.Linear(d, ff), torch.nn.Linear(ff, d)
        self.act = torch.nn.GELU()
        self.drop = torch.nn.Dropout(0.1)
        self.d = d

    def forward(self, x):
        scores = torch.matmul(self.q(x), self.k(x).transpose(-1, -2)) * (self.d ** -0.5)
        attn = self.drop(torch.softmax(scores, dim=-1))
        x = self.norm1(x + self.proj(torch.matmul(attn, self.v(x))))
        return self.norm2(x + self.fc2(self.act(self.fc1(x))))


def run(model, x, out, **kwargs):
    parity_dump.seed_everything(0)
    with parity_dump.capture(model, out, level="modules", **kwargs):
        return model(x)


class Models(unittest.TestCase):
    def check_model(self, make, x, expected_ops, train=False):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
            torch.manual_seed(1)
            model = make()
            model.train(train)
            run(model, x, a)
            run(model, x, b)
            recs = records(a)
            self.assertEqual([r["op"] for r in recs], expected_ops)
            self.assertEqual([r["seq"] for r in recs], list(range(len(recs))))
            for r in recs:  # every tensor entry names a file that exists
                for t in r["inputs"] + list(r["params"].values()) + r["outputs"]:
                    self.assertTrue(os.path.exists(os.path.join(a, t["file"])), t)
            c = parity("compare", a, b, "--json", "-")
            self.assertEqual(c.returncode, 0, c.stdout[-2000:] + c.stderr)
            doc = json.loads(c.stdout)
            self.assertEqual(doc["summary"]["failed"], 0)
            self.assertEqual(doc["summary"]["structural"], 0)
            rp = parity("replay", a, "--json", "-")
            self.assertEqual(rp.returncode, 0, rp.stdout[-3000:] + rp.stderr)
            ops = json.loads(rp.stdout)["ops"]
            # Dropout is not judged by value (a random op): its drop rate agrees with p.
            self.assertTrue(all(o["replayable"] and (o["within_bound"] or (
                not o["judged"] and "agrees with p" in o["reason"])) for o in ops),
                            [o for o in ops if not o.get("within_bound")])
            return recs

    def test_mlp(self):
        recs = self.check_model(mlp, torch.randn(6, 16), ["linear", "relu", "linear", "softmax"])
        self.assertEqual([r["name"] for r in recs], ["0", "1", "2", "3"])
        self.assertEqual(set(recs[0]["params"]), {"weight", "bias"})
        self.assertEqual(recs[3]["attrs"]["dim"], -1)

    def test_cnn_with_batch_norm(self):
        recs = self.check_model(Cnn, torch.randn(2, 3, 8, 8),
                                ["conv2d", "batch_norm", "relu", "linear"])
        self.assertEqual(recs[0]["name"], "conv")
        self.assertEqual(recs[0]["attrs"]["padding"], [1, 1])
        self.assertEqual(set(recs[1]["params"]), {"running_mean", "running_var", "weight", "bias"})
        self.assertFalse(recs[1]["attrs"]["training"])
        self.assertEqual(recs[2]["name"], "relu")  # a functional call at the top level

    def test_transformer_block_in_training_mode(self):
        ops = ["linear", "linear", "matmul", "mul", "softmax", "dropout", "linear", "matmul",
               "linear", "add", "layer_norm", "linear", "gelu", "linear", "add", "layer_norm"]
        recs = self.check_model(Block, torch.randn(2, 5, 32), ops, train=True)
        names = [r["name"] for r in recs]
        self.assertEqual(names[:2], ["q", "k"])
        self.assertIn("drop", names)
        self.assertEqual(recs[3]["attrs"]["other"], 32 ** -0.5)
        self.assertTrue(recs[5]["attrs"]["training"])


class Recording(unittest.TestCase):
    def test_crash_leaves_a_readable_prefix(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "dump")
            # The child writes half of its 7th record line, flushes, and is killed.
            script = textwrap.dedent("""
                import importlib, os, signal, sys, torch, parity_dump
                dumpdir = importlib.import_module("parity_dump.dumpdir")
                real_write = dumpdir.RecordsFile.write
                def write(self, record):
                    if record["seq"] == 6:
                        line = __import__("json").dumps(record).encode()
                        os.write(self.fd, line[: len(line) // 2])
                        os.kill(os.getpid(), signal.SIGKILL)
                    real_write(self, record)
                dumpdir.RecordsFile.write = write
                torch.manual_seed(0)
                m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU())
                with parity_dump.capture(m, sys.argv[1], level="modules"):
                    x = torch.randn(4, 8)
                    for _ in range(10):
                        x = m(x)
            """)
            r = subprocess.run([sys.executable, "-c", script, out], capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(r.returncode, -signal.SIGKILL, r.stderr)
            with open(os.path.join(out, "records.jsonl")) as f:
                self.assertFalse(f.read().endswith("\n"))
            rp = parity("replay", out, "--json", "-")
            self.assertEqual(rp.returncode, 0, rp.stderr)
            doc = json.loads(rp.stdout)
            self.assertEqual(len(doc["ops"]), 6)
            self.assertIn("cut off", " ".join(doc["warnings"]))
            self.assertIn("cut off", rp.stderr)  # --json - sends warnings to stderr

    def test_statistics_only_past_max_bytes(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
            torch.manual_seed(3)
            model, x = mlp(), torch.randn(6, 16)
            run(model, x, a, max_bytes=4000)
            run(model, x, b, max_bytes=4000)
            recs = records(a)
            entries = [t for r in recs for t in r["inputs"] + list(r["params"].values())
                       + r["outputs"]]
            saved = [t for t in entries if "file" in t]
            stats = [t for t in entries if "stats" in t]
            self.assertTrue(saved and stats)
            self.assertLessEqual(sum(np.load(os.path.join(a, t["file"])).nbytes for t in saved),
                                 4000)
            for t in stats:
                self.assertEqual(set(t["stats"]),
                                 {"min", "max", "mean", "l2", "nan", "inf", "zero", "hash"})
            c = parity("compare", a, b, "--json", "-")
            self.assertEqual(c.returncode, 0, c.stderr)
            compared = json.loads(c.stdout)["tensors"]
            self.assertTrue(any("statistics" in t for t in compared))
            rp = json.loads(parity("replay", a, "--json", "-").stdout)
            self.assertTrue(any(not o["replayable"] and "statistics only" in o["reason"]
                                for o in rp["ops"]))

    def test_bfloat16_timing_rank_and_backward(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "d")
            torch.manual_seed(4)
            model = torch.nn.Sequential(torch.nn.Linear(8, 4)).to(torch.bfloat16)
            x = torch.randn(3, 8, dtype=torch.bfloat16, requires_grad=True)
            with parity_dump.capture(model, out, timing=True, rank=3, backward=True,
                                     level="modules"):
                model(x).sum().backward()
            recs = records(out)
            forward = [r for r in recs if r["pass"] == "forward" and r["op"] == "linear"]
            backward = [r for r in recs if r["pass"] == "backward"]
            self.assertEqual(len(forward), 1)
            self.assertTrue(backward)
            self.assertEqual(backward[0]["op"], "linear_backward")
            rec = forward[0]
            self.assertEqual(rec["rank"], 3)
            self.assertGreater(rec["time_us"], 0)
            self.assertEqual(rec["outputs"][0]["dtype"], "bfloat16")
            arr = np.load(os.path.join(out, rec["outputs"][0]["file"]))
            self.assertEqual(arr.dtype, np.uint16)
            self.assertTrue(rec["outputs"][0]["file"].startswith("tensors/r3_"))
            # The bits are bfloat16's: widen them and compare with torch's own float32 view.
            want = model(x).detach().float().numpy()
            got = (arr.astype(np.uint32) << 16).view(np.float32)
            np.testing.assert_array_equal(got, want)
            rp = parity("replay", out, "--json", "-")
            self.assertEqual(rp.returncode, 0, rp.stdout + rp.stderr)

    def test_manifest_records_the_numerics_settings(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "d")
            script = ("import sys, torch, parity_dump\n"
                      "m = torch.nn.Linear(2, 2)\n"
                      "with parity_dump.capture(m, sys.argv[1]): m(torch.ones(1, 2))\n")
            env = dict(os.environ, CUBLAS_WORKSPACE_CONFIG=":4096:8", PYTHONHASHSEED="0")
            r = subprocess.run([sys.executable, "-c", script, out], env=env,
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(out, "manifest.json")) as f:
                m = json.load(f)
            self.assertEqual((m["format"], m["version"], m["level"]), ("parity-dump", 2, "aten"))
            self.assertEqual(m["platform"]["device"], "cpu")
            self.assertEqual(m["framework"]["version"], torch.__version__)
            settings = m["framework"]["settings"]
            for key in ("allow_tf32_matmul", "allow_tf32_cudnn", "float32_matmul_precision",
                        "deterministic_algorithms", "cudnn_benchmark", "default_dtype"):
                self.assertIn(key, settings)
            self.assertEqual(m["environment"]["CUBLAS_WORKSPACE_CONFIG"], ":4096:8")
            self.assertEqual(m["environment"]["PYTHONHASHSEED"], "0")

    def test_seed_everything(self):
        saved = os.environ.pop("PYTHONHASHSEED", None)
        try:
            with self.assertWarns(UserWarning):
                note = parity_dump.seed_everything(5)
            self.assertIn("before launching Python", note)
        finally:
            if saved is not None:
                os.environ["PYTHONHASHSEED"] = saved
        first = torch.randn(3)
        os.environ["PYTHONHASHSEED"] = "0"
        self.assertIsNone(parity_dump.seed_everything(5))
        np.testing.assert_array_equal(first.numpy(), torch.randn(3).numpy())


if __name__ == "__main__":
    unittest.main()
