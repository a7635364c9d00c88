#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`parity explain` end to end: a real PyTorch CPU model captured twice with parity_dump under
different settings (threads, bf16 autocast, dropout seed, tf32-rounded operands in one layer),
then explained.

Environment: PARITY_BIN (the CLI). The interpreter running this must import parity_dump.
"""
import json
import os
import subprocess
import tempfile
import unittest

import torch
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode

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


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(256, 128)
        self.fc2 = torch.nn.Linear(128, 64)
        self.fc3 = torch.nn.Linear(64, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def tf32_bits(t, rounding):
    """float32 `t` rounded to tf32 by integer arithmetic on its bits: "away" (ties away from
    zero, as PTX cvt.rna: half a tf32 unit added to the magnitude's bits) or "even"; then the
    13 low significand bits cleared."""
    u = t.detach().contiguous().view(torch.int32)
    if rounding == "away":
        u = u + 0x1000
    else:
        u = u + 0xFFF + ((u >> 13) & 1)
    return (u & ~0x1FFF).view(torch.float32)


def with_ties(t):
    """Every other value snapped to 12 significant bits ending in a one: a tf32 tie."""
    u = t.contiguous().view(torch.int32).clone().view(-1)
    u[::2] = (u[::2] & ~0x1FFF) | 0x1000
    return u.view(torch.float32).view(t.shape)


class Tf32Operands(TorchFunctionMode):
    """Runs the linear whose weight is `weight` on tf32-rounded input and weight (the bias as
    it is), as a tensor-core kernel does. Entered outside the capture, it sees the call after
    the capture recorded its float32 operands."""

    def __init__(self, weight, rounding):
        super().__init__()
        self.weight = weight
        self.rounding = rounding
        self.calls = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.linear and len(args) >= 2 and args[1] is self.weight:
            self.calls += 1
            args = (tf32_bits(args[0], self.rounding), tf32_bits(args[1], self.rounding),
                    *args[2:])
        return func(*args, **kwargs)


def capture_mlp(out, tf32=None):
    """The MLP on an input full of tf32 ties, fc1 in tf32 (`tf32`: "away" or "even") or not."""
    torch.manual_seed(0)
    model = Mlp()
    x = with_ties(torch.randn(32, 256))
    old_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        if tf32 is None:
            with parity_dump.capture(model, out, level="modules"):
                model(x)
            return
        mode = Tf32Operands(model.fc1.weight, tf32)
        with mode, parity_dump.capture(model, out, level="modules"):
            model(x)
        assert mode.calls == 1, mode.calls
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



# What a capture on the CPU cannot record: B's manifest as an A100's (compute capability 8.0).
AMPERE = {"device": "cuda:0", "device_name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}


def as_platform(dump, platform):
    """Rewrites `dump`'s manifest to say it ran on `platform`."""
    path = os.path.join(dump, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    manifest["platform"].update(platform)
    with open(path, "w") as f:
        json.dump(manifest, f)


class ExplainTf32Rounding(unittest.TestCase):
    """A three-layer MLP whose first linear ran on tf32-rounded operands in B: that linear is
    the one origin, reduced-precision. Ties rounded away from zero tell tf32 from fp16 (a cast
    to fp16 rounds to nearest even): tf32, the rounding named. Rounded to nearest even, tf32 and
    fp16 replay alike on these operands (all inside fp16's normal range): captured on the CPU,
    where TF32 cannot exist, fp16; with B's manifest an A100's, both: fp16|tf32."""

    def check(self, rounding, platform=None):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
            capture_mlp(a)
            capture_mlp(b, tf32=rounding)
            if platform:
                as_platform(b, platform)
            r, doc = explain(a, b)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        origins = [(o["name"], o["cause"]) for o in doc["origins"]]
        self.assertEqual(origins, [("fc1", "reduced-precision")], doc["origins"])
        labels = {o["name"]: o["cause"] for o in doc["ops"]}
        for name in ("fc2", "fc3"):
            self.assertEqual(labels[name], "inherited", name)
        origin = doc["origins"][0]
        self.assertNotIn("did not reach", origin["reason"])
        return origin["effective_precision"], origin["reason"]

    def test_ties_away_from_zero(self):
        precision, reason = self.check("away")
        self.assertEqual(precision, "tf32", reason)
        self.assertIn("a replay with tf32-rounded inputs (ties away from zero) matches B", reason)
        self.assertIn("ran in tf32 (ties away from zero)", reason)
        self.assertIn("as no cast to fp16 rounds", reason)
        self.assertIn("B's device (cpu) has no TF32", reason)
        self.assertNotIn("ties to even", reason)

    def test_ties_to_even_on_the_cpu_is_fp16(self):
        precision, reason = self.check("even")
        self.assertEqual(precision, "fp16", reason)
        self.assertIn("a replay with inputs rounded to 10 fraction bits (ties to even) matches B",
                      reason)
        self.assertIn("B's device (cpu) has no TF32", reason)
        self.assertNotIn("ties away from zero", reason)

    def test_ties_to_even_on_an_ampere_gpu_names_both(self):
        precision, reason = self.check("even", AMPERE)
        self.assertEqual(precision, "fp16|tf32", reason)
        self.assertIn("ran in fp16 or tf32: 10 fraction bits", reason)
        self.assertIn("compute capability 8.0) has TF32", reason)


if __name__ == "__main__":
    unittest.main()
