#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`parity explain` end to end: a real PyTorch CPU model captured twice with parity_dump under
different settings (threads, bf16 autocast, dropout seed), then explained.

Environment: PARITY_BIN (the CLI). The interpreter running this must import parity_dump.
"""
import json
import os
import subprocess
import tempfile
import unittest

import torch

import parity_dump

BIN = os.environ["PARITY_BIN"]


class Net(torch.nn.Module):
    def __init__(self, norm=True):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc1 = torch.nn.Linear(8 * 8 * 8, 256)
        self.act = torch.nn.GELU()
        self.drop = torch.nn.Dropout(0.1)
        self.fc2 = torch.nn.Linear(256, 64)
        # torch 1.13's CPU autocast can't run layer_norm on bf16 inputs with float32 weights.
        self.norm = torch.nn.LayerNorm(64) if norm else torch.nn.Identity()
        self.head = torch.nn.Linear(64, 10)

    def forward(self, x):
        x = torch.relu(self.conv(x))
        x = self.drop(self.act(self.fc1(x.flatten(1))))
        x = self.norm(self.fc2(x))
        return torch.softmax(self.head(x), dim=-1)


def capture(out, threads=1, seed=1, autocast=False, norm=True):
    torch.manual_seed(0)
    model = Net(norm).train()
    x = torch.randn(32, 3, 8, 8)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch.manual_seed(seed)
        with parity_dump.capture(model, out, level="modules"):
            if autocast:
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    model(x)
            else:
                model(x)
    finally:
        torch.set_num_threads(old_threads)


def explain(a, b):
    r = subprocess.run([BIN, "explain", a, b, "--json", "-"], capture_output=True, text=True,
                       timeout=300)
    doc = json.loads(r.stdout) if r.stdout else None
    return r, doc


class ExplainTorch(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.a = os.path.join(self.tmp.name, "a")
        capture(self.a)

    def tearDown(self):
        self.tmp.cleanup()

    def labels(self, doc):
        return {o["name"]: o["cause"] for o in doc["ops"]}

    def test_same_settings_are_identical(self):
        b = os.path.join(self.tmp.name, "b")
        capture(b)
        r, doc = explain(self.a, b)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(set(self.labels(doc).values()), {"identical"})

    def test_threads_give_no_origin(self):
        b = os.path.join(self.tmp.name, "b")
        capture(b, threads=2)
        r, doc = explain(self.a, b)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(doc["origins"], [])
        self.assertFalse(doc["input_difference"])
        self.assertLessEqual(set(self.labels(doc).values()),
                             {"identical", "within-rounding", "inherited"})

    def test_dropout_seed_is_rng_divergence(self):
        b = os.path.join(self.tmp.name, "b")
        capture(b, seed=2)
        r, doc = explain(self.a, b)
        self.assertEqual(r.returncode, 1, r.stderr)
        origins = [(o["name"], o["cause"]) for o in doc["origins"]]
        self.assertEqual(origins, [("drop", "rng-divergence")])
        labels = self.labels(doc)
        for name in ("conv", "fc1", "act"):
            self.assertEqual(labels[name], "identical", name)
        for name in ("fc2", "norm", "head"):
            self.assertEqual(labels[name], "inherited", name)

    def test_bf16_autocast_is_reduced_precision(self):
        a, b = os.path.join(self.tmp.name, "a32"), os.path.join(self.tmp.name, "b")
        capture(a, norm=False)
        capture(b, autocast=True, norm=False)
        r, doc = explain(a, b)
        self.assertEqual(r.returncode, 1, r.stderr)
        origins = doc["origins"]
        self.assertTrue(origins, doc)
        # Autocast runs conv and linear layers in bf16: each is an origin of that precision,
        # and the first is the first op.
        self.assertEqual(origins[0]["name"], "conv")
        for o in origins:
            self.assertEqual((o["cause"], o["effective_precision"]),
                             ("reduced-precision", "bf16"), o)
            self.assertIn(o["op"], {"conv2d", "linear"}, o)
        self.assertEqual({o["name"] for o in origins} & {"act", "drop"}, set())
        labels = self.labels(doc)
        self.assertEqual(labels["act"], "inherited")


if __name__ == "__main__":
    unittest.main()
