#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Capture(stack=True): each record carries where in the user's code its op was called (the
innermost frame outside torch and parity), a backward op its forward op's (torch 2.x, whose
autograd engine names the node executing), as DebugMode's record_stack_trace does; a frame
that cannot be read gives a record without one, never an exception; results are bitwise those
of the step without the capture. Runs under torch 1.13 and 2.x (scripts/venv)."""
import json
import os
import tempfile
import unittest
from unittest import mock

import torch

import parity_dump
from parity_dump import sources

HAS_NODE = hasattr(torch._C, "_current_autograd_node")
HERE = os.path.abspath(__file__)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        h = self.fc(x)  # LINE fc
        return torch.tanh(h)  # LINE tanh


def line_of(tag):
    with open(HERE) as f:
        for number, text in enumerate(f, 1):
            if text.rstrip().endswith("# LINE " + tag):
                return number
    raise AssertionError(tag)


def run(stack, patch=None):
    """One step of Net under a capture; (records, loss, grads)."""
    torch.manual_seed(0)
    model = Net()
    x = torch.randn(2, 4)
    with tempfile.TemporaryDirectory() as d:
        dump = os.path.join(d, "dump")
        ctx = patch if patch is not None else mock.patch.object(sources, "_TORCH_DIR",
                                                                sources._TORCH_DIR)
        with ctx, parity_dump.capture(model, dump, stack=stack):
            loss = model(x).sum()  # LINE loss
            loss.backward()
        with open(os.path.join(dump, "records.jsonl")) as f:
            recs = [json.loads(line) for line in f]
    return recs, loss.detach(), [p.grad for p in model.parameters()]


def uncaptured():
    torch.manual_seed(0)
    model = Net()
    x = torch.randn(2, 4)
    loss = model(x).sum()
    loss.backward()
    return loss.detach(), [p.grad for p in model.parameters()]


class Sources(unittest.TestCase):
    def assert_same_as_uncaptured(self, loss, grads):
        want_loss, want_grads = uncaptured()
        self.assertTrue(torch.equal(loss, want_loss))
        for g, w in zip(grads, want_grads):
            self.assertTrue(torch.equal(g, w))

    def test_forward_ops_name_the_users_line(self):
        recs, loss, grads = run(stack=True)
        by_op = {(r["pass"], r["op"]): r for r in recs}
        for op, tag in (("addmm", "fc"), ("tanh", "tanh"), ("sum", "loss")):
            src = by_op[("forward", op)].get("source")
            self.assertIsNotNone(src, op)
            self.assertEqual((src["file"], src["line"]), (HERE, line_of(tag)), op)
        self.assertEqual(by_op[("forward", "tanh")]["source"]["function"], "forward")
        self.assertIn("torch.tanh(h)", by_op[("forward", "tanh")]["source"]["code"])
        self.assert_same_as_uncaptured(loss, grads)

    def test_backward_ops_name_their_forward_ops_line(self):
        if not HAS_NODE:
            self.skipTest("torch %s names no executing autograd node "
                          "(torch._C._current_autograd_node): backward records carry no "
                          "source" % torch.__version__)
        recs, loss, grads = run(stack=True)
        by_op = {(r["pass"], r["op"]): r for r in recs}
        self.assertEqual(by_op[("backward", "tanh_backward")]["source"]["line"],
                         line_of("tanh"))
        self.assertEqual(by_op[("backward", "mm")]["source"]["line"], line_of("fc"))
        self.assert_same_as_uncaptured(loss, grads)
        # Anomaly mode was only the capture's: it is off again.
        self.assertFalse(torch.is_anomaly_enabled())

    def test_without_stack_no_source(self):
        recs, _, _ = run(stack=False)
        self.assertTrue(recs)
        self.assertFalse(any("source" in r for r in recs))

    def test_a_frame_that_cannot_be_read_gives_none(self):
        def broken(*_):
            raise ValueError("call stack is not deep enough")
        recs, loss, grads = run(stack=True,
                                patch=mock.patch.object(sources, "_getframe", broken))
        self.assertTrue(any(r["pass"] == "forward" for r in recs))
        self.assertFalse(any("source" in r for r in recs if r["pass"] == "forward"))
        self.assert_same_as_uncaptured(loss, grads)

    def test_a_traceback_that_cannot_be_parsed_gives_none(self):
        self.assertIsNone(sources.from_traceback(["garbage", None, 3]))
        self.assertIsNone(sources.from_traceback([]))
        src = sources.from_traceback(['  File "/home/u/train.py", line 12, in step\n'
                                      '    loss = model(x)\n'])
        self.assertEqual(src, {"file": "/home/u/train.py", "line": 12, "function": "step",
                               "code": "loss = model(x)"})


if __name__ == "__main__":
    unittest.main()
