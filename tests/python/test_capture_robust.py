#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""parity_dump's capture never breaks the user's training step: tensors it cannot store
(sparse gradients of nn.EmbeddingBag(sparse=True), nested, quantized tensors, a conversion
that raises) become entries marked "not stored", complex tensors are stored as complex .npy,
submodules called with keyword arguments own their backward ops, stop() leaves a user's mode
entered after start() working, and higher-order ops (torch.cond, flex_attention) run under
the capture. Every step gives bitwise the results it gives without the capture.

Runs under Debian's torch 1.13 and under torch 2.x (scripts/venv); what a torch lacks is a
skipped test naming why. Self-contained: json and numpy read the dumps back."""
import os
import unittest
import warnings
from unittest import mock

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils import _python_dispatch as python_dispatch
from torch.utils._python_dispatch import TorchDispatchMode

import parity_dump
from dumpv2 import records, tempdir
from parity_dump import tensors as dump_tensors

TORCH_1 = torch.__version__.startswith("1.")


def entries(recs):
    """Every tensor entry of `recs` with its record: (record, entry)."""
    for r in recs:
        for e in r["inputs"] + r["outputs"] + list(r["params"].values()):
            yield r, e


def dispatch_stack():
    return python_dispatch._get_current_dispatch_mode_stack()


def same(test, a, b):
    """Asserts two lists of tensors are bitwise equal (torch.equal, dtype and shape)."""
    test.assertEqual(len(a), len(b))
    for i, (x, y) in enumerate(zip(a, b)):
        test.assertEqual((x.dtype, x.shape), (y.dtype, y.shape), "tensor %d" % i)
        test.assertTrue(torch.equal(x, y), "tensor %d differs with the capture" % i)


class CountingMode(TorchDispatchMode):
    """A user's dispatch mode: counts the aten calls it sees."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


class CountingFunctionMode(torch.overrides.TorchFunctionMode):
    """A user's function mode: counts the torch function calls it sees."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


class Case(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()
        self.dispatch_depth = len(dispatch_stack())
        self.function_depth = len(torch.overrides._get_current_function_mode_stack())
        warnings.simplefilter("ignore")  # nested tensors' prototype warning, flex_attention's

    def tearDown(self):
        # A failing test may leave modes behind: the next test starts clean.
        while len(dispatch_stack()) > self.dispatch_depth:
            python_dispatch._pop_mode()
        while len(torch.overrides._get_current_function_mode_stack()) > self.function_depth:
            torch.overrides._pop_mode()
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def captured(self, fn, name, **kwargs):
        """(fn(), records) with fn run under a capture (no model) into dump `name`."""
        out = self.path(name)
        with parity_dump.capture(None, out, **kwargs):
            result = fn()
        return result, records(out)

    def assert_coherent(self, out, recs):
        """Every entry names a dtype and holds exactly one of file (that exists), stats and
        "not stored" (a reason); a "not stored" entry names its layout."""
        for r, e in entries(recs):
            self.assertIsInstance(e["dtype"], str)
            held = [k for k in ("file", "stats", "not stored") if k in e]
            self.assertEqual(len(held), 1, (r["name"], e))
            if "file" in e:
                self.assertTrue(os.path.isfile(os.path.join(out, e["file"])), e)
            if "not stored" in e:
                self.assertTrue(e["not stored"])
                self.assertIn("layout", e)

    def not_stored(self, recs):
        return [e for _, e in entries(recs) if "not stored" in e]


# --- tensors the capture cannot store ---------------------------------------------------------
class Recommender(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(50, 8, mode="sum", sparse=True)
        self.top = torch.nn.Linear(8, 1)

    def forward(self, ids, offsets):
        return self.top(self.bag(ids, offsets)).squeeze(-1)


def train_recommender(out=None, steps=2):
    """`steps` SGD steps of Recommender (sparse embedding gradients), captured into `out`
    when given. Returns the losses and the parameters after the last step."""
    torch.manual_seed(0)
    model = Recommender()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1)
    batches = [(torch.randint(0, 50, (12,), generator=gen), torch.tensor([0, 3, 7]),
                torch.randn(3, generator=gen)) for _ in range(steps)]
    losses = []
    cap = parity_dump.capture(model, out, optimizer=opt).start() if out else None
    try:
        for ids, offsets, y in batches:
            opt.zero_grad(set_to_none=True)
            loss = F.mse_loss(model(ids, offsets), y)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
            if cap is not None:
                cap.step()
    finally:
        if cap is not None:
            cap.stop()
    return losses + [p.detach().clone() for p in model.parameters()]


class UnstorableTensors(Case):
    def test_sparse_embedding_bag_gradients(self):
        out = self.path("rec")
        same(self, train_recommender(out), train_recommender())
        recs = records(out)
        self.assert_coherent(out, recs)
        sparse = [e for e in self.not_stored(recs) if e.get("layout") == "sparse_coo"]
        self.assertTrue(sparse, "no sparse gradient recorded as not stored")
        self.assertIn({"dtype": "float32", "shape": [50, 8], "layout": "sparse_coo",
                       "not stored": "sparse_coo layout"}, sparse)
        self.assertIn("backward", {r["pass"] for r, e in entries(recs) if e in sparse})
        self.assertIn("optimizer", {r["pass"] for r, e in entries(recs) if e in sparse})

    def test_nested_tensors(self):
        layouts = [None] + ([torch.jagged] if hasattr(torch, "jagged") else [])
        for layout in layouts:
            with self.subTest(layout=str(layout)):
                def step():
                    torch.manual_seed(0)
                    w = torch.randn(3, 3, requires_grad=True)
                    parts = [torch.randn(2, 3), torch.randn(4, 3)]
                    if layout is None:
                        nt = torch.nested.nested_tensor(parts)
                    else:
                        nt = torch.nested.nested_tensor(parts, layout=layout)
                    padded = torch.nested.to_padded_tensor(nt, 0.0)
                    loss = (padded @ w).sum()
                    loss.backward()
                    return [loss.detach(), w.grad]

                (got, recs) = self.captured(step, "nested%s" % layout)
                same(self, got, step())
                self.assert_coherent(self.path("nested%s" % layout), recs)
                nested = [e for e in self.not_stored(recs) if e["not stored"] == "nested tensor"]
                self.assertTrue(nested)
                self.assertEqual({e["dtype"] for e in nested}, {"float32"})

    def test_quantized_tensor(self):
        def step():
            torch.manual_seed(0)
            w = torch.randn(4, requires_grad=True)
            q = torch.quantize_per_tensor(torch.randn(3, 4), 0.05, 10, torch.quint8)
            loss = (q.dequantize() * w).sum()
            loss.backward()
            return [loss.detach(), w.grad, q.int_repr()]

        got, recs = self.captured(step, "q")
        same(self, got, step())
        self.assert_coherent(self.path("q"), recs)
        quantized = [e for e in self.not_stored(recs) if e["dtype"] == "quint8"]
        self.assertTrue(quantized)
        self.assertEqual(quantized[0]["shape"], [3, 4])
        self.assertIn("quantized", quantized[0]["not stored"])

    def test_complex_tensors_are_stored_as_complex(self):
        for dtype, name in ((torch.complex64, "complex64"), (torch.complex128, "complex128")):
            for mode in ("tensors", "stats"):
                with self.subTest(dtype=name, mode=mode):
                    def step():
                        torch.manual_seed(0)
                        z = torch.randn(3, 4, dtype=dtype)
                        w = torch.randn(4, requires_grad=True,
                                        dtype=torch.float32 if name == "complex64"
                                        else torch.float64)
                        y = z * w
                        loss = y.abs().sum()
                        loss.backward()
                        return [z, y.detach(), loss.detach(), w.grad]

                    out = "%s_%s" % (name, mode)
                    got, recs = self.captured(step, out, mode=mode)
                    same(self, got, step())
                    self.assert_coherent(self.path(out), recs)
                    z, y = got[0], got[1]
                    mul = next(r for r in recs if r["op"] == "mul" and r["pass"] == "forward")
                    self.assertEqual([e["dtype"] for e in mul["inputs"] + mul["outputs"]],
                                     [name, mul["inputs"][1]["dtype"], name])
                    for e, t in ((mul["inputs"][0], z), (mul["outputs"][0], y)):
                        if mode == "tensors":
                            array = np.load(os.path.join(self.path(out), e["file"]))
                            self.assertEqual(array.dtype, np.dtype(name))
                            self.assertTrue(np.array_equal(array, t.numpy()))
                        else:
                            parts = torch.view_as_real(t).numpy()
                            self.assertEqual(e["stats"]["min"], float(parts.min()))
                            self.assertEqual(e["stats"]["max"], float(parts.max()))

    def test_a_conversion_that_raises(self):
        def step():
            torch.manual_seed(0)
            w = torch.randn(4, 2, requires_grad=True)
            loss = (torch.randn(3, 4) @ w).tanh().sum()
            loss.backward()
            return [loss.detach(), w.grad]

        with mock.patch.object(dump_tensors, "_bits", side_effect=RuntimeError("no bytes")):
            got, recs = self.captured(step, "raises")
        same(self, got, step())
        self.assert_coherent(self.path("raises"), recs)
        self.assertTrue(recs)
        reasons = {e["not stored"] for e in self.not_stored(recs)}
        self.assertEqual(reasons, {"cannot be stored: RuntimeError: no bytes"})


# --- submodules called with keyword arguments ----------------------------------------------
class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, hidden_states, attention_mask=None):
        return torch.tanh(self.fc(hidden_states)) * attention_mask


class Model(torch.nn.Module):
    def __init__(self, keywords):
        super().__init__()
        self.embed = torch.nn.Linear(3, 4)
        self.block = Block()
        self.keywords = keywords

    def forward(self, x):
        h = torch.sigmoid(self.embed(x))  # the parent's op between two children
        mask = torch.ones_like(h)
        if self.keywords:
            h = self.block(hidden_states=h, attention_mask=mask)
        else:
            h = self.block(h, mask)
        return (h * h).sum()


class KeywordCalls(Case):
    def run_model(self, keywords, out=None):
        torch.manual_seed(0)
        model = Model(keywords)
        x = torch.randn(2, 3)
        if out is None:
            loss = model(x)
            loss.backward()
        else:
            with parity_dump.capture(model, out):
                loss = model(x)
                loss.backward()
        return [loss.detach()] + [p.grad for p in model.parameters()]

    def test_child_called_with_keywords_owns_its_backward_ops(self):
        same(self, self.run_model(True, self.path("kw")), self.run_model(True))
        same(self, self.run_model(False, self.path("pos")), self.run_model(True))
        backward = {name: [(r["module"], r["op"]) for r in records(self.path(name))
                           if r["pass"] == "backward"] for name in ("kw", "pos")}
        ops = dict((op, module) for module, op in backward["kw"])
        self.assertEqual(ops["tanh_backward"], "block")
        self.assertEqual(ops["sigmoid_backward"], "")  # the parent's, not the block's
        self.assertIn(("block.fc", "mm"), backward["kw"])
        self.assertEqual(backward["kw"], backward["pos"])


# --- a user's mode entered after start() -------------------------------------------------------
def small_step(model, x):
    loss = model(x).square().sum()
    loss.backward()
    return [loss.detach()] + [p.grad.clone() for p in model.parameters()]


class UserModes(Case):
    def model(self):
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(), torch.nn.Linear(3, 2))

    def check_user_mode_survives_stop(self, user, counted, level="aten", stack=dispatch_stack):
        """start(); user's mode entered; a step; stop(); a step: the user's mode counts the
        second step (counted(user) grows), the capture records nothing after stop(), and the
        user's mode leaves by its own __exit__ with the stack as before start()."""
        x = torch.randn(5, 4)
        expected = small_step(self.model(), x)
        model, out = self.model(), self.path(level)
        before = list(stack())
        cap = parity_dump.capture(model, out, level=level).start()
        user.__enter__()
        try:
            same(self, small_step(model, x), expected)
            n = len(records(out))
            self.assertGreater(n, 0)
            seen = counted(user)
            self.assertGreater(seen, 0)
            cap.stop()
            model.zero_grad(set_to_none=True)
            same(self, small_step(model, x), expected)
            self.assertGreater(counted(user), seen, "the user's mode stopped counting")
            self.assertEqual(len(records(out)), n, "the capture recorded after stop()")
        finally:
            cap.stop()
            user.__exit__(None, None, None)
        self.assertEqual([id(m) for m in stack()], [id(m) for m in before])

    def test_user_dispatch_mode_entered_after_start(self):
        self.check_user_mode_survives_stop(CountingMode(), lambda m: m.count)

    def test_flop_counter_entered_after_start(self):
        try:
            from torch.utils.flop_counter import FlopCounterMode
        except ImportError:
            self.skipTest("torch %s has no torch.utils.flop_counter.FlopCounterMode (torch "
                          "2.x); test_user_dispatch_mode_entered_after_start covers a mode of "
                          "our own" % torch.__version__)
        self.check_user_mode_survives_stop(FlopCounterMode(display=False),
                                           lambda m: m.get_total_flops())
        if hasattr(python_dispatch, "is_in_torch_dispatch_mode"):
            self.assertFalse(python_dispatch.is_in_torch_dispatch_mode())

    def test_user_function_mode_entered_after_start_at_level_modules(self):
        self.check_user_mode_survives_stop(
            CountingFunctionMode(), lambda m: m.count, level="modules",
            stack=torch.overrides._get_current_function_mode_stack)


# --- higher-order ops ------------------------------------------------------------------------
class Gated(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        return torch.cond(h.sum() > 0, lambda t: t.sin() * 2, lambda t: t.cos(), (h,))


class HigherOrderOps(Case):
    def train(self, model, loss_of, out=None):
        """One SGD step: loss_of(model) backward and step, captured into `out` when given.
        Returns the loss and the parameters after the step."""
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        cap = parity_dump.capture(model, out, optimizer=opt).start() if out else None
        try:
            loss = loss_of(model)
            loss.backward()
            opt.step()
        finally:
            if cap is not None:
                cap.stop()
        return [loss.detach()] + [p.detach().clone() for p in model.parameters()]

    def test_cond(self):
        if not hasattr(torch, "cond"):
            self.skipTest("torch %s has no higher-order ops (torch.cond: torch 2.x)"
                          % torch.__version__)
        for sign in (1.0, -1.0):  # each branch
            with self.subTest(sign=sign):
                def loss_of(model):
                    return model(torch.full((3, 4), sign)).sum()

                def fresh():
                    torch.manual_seed(0)
                    return Gated()

                out = self.path("cond%d" % sign)
                same(self, self.train(fresh(), loss_of, out), self.train(fresh(), loss_of))
                recs = records(out)
                self.assert_coherent(out, recs)
                passes = {r["pass"] for r in recs if r["op"] == "cond"}
                self.assertIn("forward", passes)
                forward = next(r for r in recs if r["op"] == "cond")
                self.assertEqual([e["arg"] for e in forward["inputs"]], ["pred", "operands"])

    def test_flex_attention(self):
        try:
            from torch.nn.attention.flex_attention import flex_attention
        except ImportError:
            self.skipTest("torch %s has no torch.nn.attention.flex_attention (torch 2.5 and "
                          "later)" % torch.__version__)
        # flex_attention has no backward on the CPU: there it scales a trained path.
        device = "cuda" if torch.cuda.is_available() else "cpu"
        trained = device == "cuda"

        def bias(score, b, h, q, kv):
            return score + (q - kv).to(score.dtype) * 0.1

        def loss_of(model):
            torch.manual_seed(1)
            x = torch.randn(1, 8, 16, device=device)
            q, k, v = model(x).view(1, 8, 3, 2, 8).permute(2, 0, 3, 1, 4)
            if not trained:
                q, k, v = q.detach(), k.detach(), v.detach()
            attended = flex_attention(q, k, v, score_mod=bias)
            return (attended.sum() * model(x)).square().mean()

        def fresh():
            torch.manual_seed(0)
            return torch.nn.Linear(16, 48).to(device)

        out = self.path("flex")
        same(self, self.train(fresh(), loss_of, out), self.train(fresh(), loss_of))
        recs = records(out)
        self.assert_coherent(out, recs)
        flex = [r for r in recs if r["op"] == "flex_attention"]
        self.assertEqual([r["pass"] for r in flex], ["forward"])
        self.assertEqual([e["arg"] for e in flex[0]["inputs"][:3]], ["query", "key", "value"])
        if trained:
            self.assertIn("flex_attention_backward", {r["op"] for r in recs})


if __name__ == "__main__":
    unittest.main()
