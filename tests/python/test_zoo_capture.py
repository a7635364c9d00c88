#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The capture on the model zoo (issue 45): each model-library workload of parity_workloads
at size tiny, two steps with its own optimizer, in float32 and under CPU bfloat16 autocast,
uncaptured and captured at the aten level (stats mode): losses and parameters bitwise equal
with and without the capture, every pass (forward, backward, optimizer) present in every
captured step, and no record of a pass empty. Under torch 1.13 (no transformers, timm,
TorchRec) each test is skipped naming the library."""
import collections
import json
import os
import tempfile
import unittest

import torch

import parity_dump
import parity_workloads
from parity_workloads import registry
from parity_workloads.common import MissingLibraryError

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def train(name, autocast, out=None, steps=2):
    """(losses, parameters after the last step) of `steps` steps of workload `name`, captured
    into `out` when given."""
    w = parity_workloads.get(name, size="tiny", seed=0)
    opt = w.make_optimizer()
    torch.manual_seed(7)
    batches = list(w.batches(steps))
    losses = []
    cap = None
    if out is not None:
        cap = parity_dump.capture(w.model, out, optimizer=opt, mode="stats").start()
    try:
        for batch in batches:
            losses.append(w.train_step(w.model, batch, opt, autocast=autocast))
            if cap is not None:
                cap.step()
    finally:
        if cap is not None:
            cap.stop()
    return losses, [p.detach().clone() for p in w.model.parameters()]


class ZooCapture(unittest.TestCase):
    def check(self, name, autocast):
        try:
            registry.get(name, size="tiny")
        except MissingLibraryError as e:
            self.skipTest(str(e))
        plain_losses, plain_params = train(name, autocast)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "dump")
            losses, params = train(name, autocast, out)
            with open(os.path.join(out, "records.jsonl")) as f:
                records = [json.loads(line) for line in f]
        for i, (a, b) in enumerate(zip(plain_losses, losses)):
            self.assertTrue(torch.equal(a, b), "%s step %d: loss %r with the capture, %r "
                            "without" % (name, i, b, a))
        self.assertEqual(len(plain_params), len(params))
        for i, (a, b) in enumerate(zip(plain_params, params)):
            self.assertTrue(torch.equal(a, b), "%s: parameter %d differs with the capture"
                            % (name, i))
        passes = collections.Counter((r["step"], r["pass"]) for r in records)
        for step in (0, 1):
            for pass_ in ("forward", "backward", "optimizer"):
                self.assertGreater(passes[step, pass_], 0, (name, step, pass_, passes))
        if autocast:
            dtypes = {e["dtype"] for r in records if r["pass"] == "forward"
                      for e in r["outputs"]}
            self.assertIn("bfloat16", dtypes, name)


def _add(name):
    def fp32(self):
        self.check(name, False)

    def bf16(self):
        self.check(name, torch.bfloat16)
    slug = name.replace("-", "_")
    setattr(ZooCapture, "test_%s_float32" % slug, fp32)
    setattr(ZooCapture, "test_%s_bf16_autocast" % slug, bf16)


for _name in registry.zoo_names():
    _add(_name)


if __name__ == "__main__":
    unittest.main()
