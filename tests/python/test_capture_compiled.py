#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""parity_dump's capture of torch.compile'd models (python/parity_dump/compiled.py): the
compiled code runs under the capture as it does without it (bitwise the same losses,
gradients and parameters), each execution of a compiled region is one record (op
"compiled_region", forward and backward) holding its runtime inputs and outputs, the
region's graphs are saved beside the dump, the ops inside a region are not records, and the
manifest says so. Ops outside compiled regions (a graph break's eager code, the loss, the
optimizer) are recorded as before. Eager higher-order ops still are one record each.

Runs under torch 2.x (scripts/venv), with the inductor backend (g++ compiles its C++ on the
CPU) and "aot_eager"; under Debian's torch 1.13 (no torch.compile) every test is skipped,
naming why. Self-contained: json and numpy read the dumps back."""
import os
import unittest
import warnings

import numpy as np
import torch

import parity_dump
from dumpv2 import manifest, records, tempdir

HAS_COMPILE = hasattr(torch, "compile")
# The ops the models' forward and backward are made of, eagerly: none may be a record.
INNER_OPS = {"addmm", "mm", "relu", "threshold_backward", "t", "permute", "sin", "cos",
             "native_batch_norm", "native_batch_norm_backward", "_native_batch_norm_legit",
             "_native_batch_norm_legit_functional", "tanh", "tanh_backward", "linear"}


def read(dump):
    return records(dump), manifest(dump)


class Net(torch.nn.Module):
    """Linear, BatchNorm (a buffer the compiled graph writes), ReLU, Linear."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.bn = torch.nn.BatchNorm1d(16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


@torch.compiler.disable if hasattr(torch, "compiler") else (lambda f: f)
def eager_part(h):
    return h.sin() * 2


class Broken(torch.nn.Module):
    """A graph break: fc1 and fc2 are two compiled regions, eager_part runs eagerly."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        torch._dynamo.graph_break()
        return self.fc2(eager_part(h))


class Compiled(unittest.TestCase):
    def setUp(self):
        if not HAS_COMPILE:
            self.skipTest("torch %s has no torch.compile (torch 2.x)" % torch.__version__)
        self.tmp = tempdir()
        warnings.simplefilter("ignore")
        torch._dynamo.reset()

    def tearDown(self):
        self.tmp.cleanup()
        torch._dynamo.reset()

    def train(self, make, backend, out=None, compile_first=False, **kwargs):
        """Two SGD steps (momentum: foreach optimizer ops) of torch.compile(make()),
        captured into `out` when given (compile_first: one forward compiled before the
        capture starts). Returns (results, x, the last output): results are the losses, the
        last step's gradients and the parameters and buffers after it."""
        torch.manual_seed(0)
        model = make()
        compiled = torch.compile(model, backend=backend)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = torch.randn(6, 8)
        target = torch.randn(6, 4)
        if compile_first:  # a forward (BatchNorm's statistics move, with or without capture)
            compiled(x)
        counters = torch._dynamo.utils.counters["stats"]
        graphs = counters["unique_graphs"]
        cap = parity_dump.capture(model, out, optimizer=opt, **kwargs).start() if out else None
        losses = []
        try:
            for _ in range(2):
                opt.zero_grad(set_to_none=True)
                y = compiled(x)
                loss = (y - target).square().mean()
                loss.backward()
                grads = [p.grad.clone() for p in model.parameters()]
                opt.step()
                losses.append(loss.detach())
                if cap is not None:
                    cap.step()
        finally:
            if cap is not None:
                cap.stop()
        self.graphs_compiled = counters["unique_graphs"] - graphs  # from start() on
        state = [t.detach().clone() for t in model.state_dict().values()]
        return losses + grads + state, x, y.detach()

    def same(self, a, b):
        self.assertEqual(len(a), len(b))
        for i, (u, v) in enumerate(zip(a, b)):
            self.assertTrue(torch.equal(u, v), "tensor %d differs with the capture" % i)

    def check_no_inner_ops(self, recs):
        inner = sorted({r["op"] for r in recs} & INNER_OPS)
        self.assertEqual(inner, [], "ops inside compiled regions were recorded")

    def check_model(self, backend):
        plain = self.train(Net, backend)[0]
        torch._dynamo.reset()
        out = os.path.join(self.tmp.name, backend)
        captured, x, y = self.train(Net, backend, out)
        self.same(plain, captured)
        # It really ran compiled: dynamo compiled one graph under the capture (no graph
        # break, no recompile), and its regions ran (below).
        self.assertEqual(self.graphs_compiled, 1)
        recs, manifest = read(out)
        self.check_no_inner_ops(recs)
        regions = [r for r in recs if r["op"] == "compiled_region"]
        self.assertEqual([(r["step"], r["pass"]) for r in regions],
                         [(0, "forward"), (0, "backward"), (1, "forward"), (1, "backward")])
        fwd, bwd = regions[2], regions[3]
        self.assertEqual(fwd["name"], "compiled_region")
        self.assertRegex(fwd["attrs"]["region"], r"^\d+/\d+$")  # dynamo's compile id
        self.assertEqual(fwd["attrs"]["backend"], backend)
        # Inputs: the input batch, the parameters and BatchNorm's buffers, as the graph's
        # placeholders; the output is the model's.
        self.assertEqual(len(fwd["inputs"]), 1 + len(list(Net().state_dict())))
        self.assertEqual(len(fwd["outputs"]), 1)
        by_arg = {e["arg"]: e for e in fwd["inputs"]}
        x_entry = next(e for a, e in by_arg.items() if a.endswith("_x_") or "args_0" in a)
        np.testing.assert_array_equal(np.load(os.path.join(out, x_entry["file"])), x.numpy())
        np.testing.assert_array_equal(np.load(os.path.join(out, fwd["outputs"][0]["file"])),
                                      y.numpy())
        self.assertEqual([e["arg"] for e in bwd["inputs"]], ["grad_output"])
        self.assertEqual(len(bwd["outputs"]), len(list(Net().parameters())))
        # Graph files: the record names them, and they hold the graph's ops.
        for record, kind, op in ((fwd, "forward", "aten.addmm"), (bwd, "backward", "aten.mm"),
                                 (fwd, "dynamo", "linear")):
            name = record["attrs"]["dynamo_graph" if kind == "dynamo" else "graph"]
            self.assertTrue(name.startswith("graphs/") and name.endswith(kind + ".py"), name)
            with open(os.path.join(out, name)) as f:
                self.assertIn(op, f.read(), name)
        # The manifest says what was compiled and that its inner ops are not records.
        compiled = manifest["compiled"]
        self.assertEqual(compiled["mode"], "regions")
        self.assertIn("not recorded", compiled["inner_ops"])
        self.assertEqual(len(compiled["regions"]), 1)
        region = compiled["regions"][0]
        self.assertEqual((region["region"], region["backend"], region["inner_ops"]),
                         (fwd["attrs"]["region"], backend, "not recorded"))
        self.assertEqual(region["calls"], {"forward": 2, "backward": 2})
        self.assertEqual(sorted(region["graphs"]), ["backward", "dynamo", "forward"])
        # Outside the region, as before: the loss's ops and the optimizer's.
        self.assertTrue({"pow", "mean"} <= {r["op"] for r in recs if r["pass"] == "forward"})
        self.assertTrue(any(r["pass"] == "optimizer" for r in recs))

    def test_inductor(self):
        self.check_model("inductor")

    def test_aot_eager(self):
        self.check_model("aot_eager")

    def test_graph_break(self):
        plain = self.train(Broken, "aot_eager")[0]
        torch._dynamo.reset()
        out = os.path.join(self.tmp.name, "break")
        self.same(plain, self.train(Broken, "aot_eager", out)[0])
        recs, manifest = read(out)
        self.check_no_inner_ops([r for r in recs if r["op"] not in ("sin", "cos")])
        step = [(r["pass"], r["op"], r["attrs"].get("region"))
                for r in recs if r["step"] == 0 and r["pass"] != "optimizer"]
        regions = sorted({region for _, op, region in step if op == "compiled_region"})
        self.assertEqual(len(regions), 2, step)
        first, second = sorted(step.index(("forward", "compiled_region", r)) for r in regions)
        regions = [step[first][2], step[second][2]]  # in the order they ran
        # Forward: region 1, the eager sin and mul between, region 2; backward the reverse.
        self.assertEqual([op for _, op, _ in step[first + 1:second]], ["sin", "mul"])
        backward = [(op, region) for p, op, region in step if p == "backward"]
        b2 = backward.index(("compiled_region", regions[1]))
        b1 = backward.index(("compiled_region", regions[0]))
        self.assertLess(b2, b1)
        self.assertIn("cos", [op for op, _ in backward[b2 + 1:b1]])
        self.assertEqual(sorted(r["region"] for r in manifest["compiled"]["regions"]), regions)

    def test_compiled_before_start(self):
        plain = self.train(Net, "aot_eager", compile_first=True)[0]
        torch._dynamo.reset()
        out = os.path.join(self.tmp.name, "before")
        self.same(plain, self.train(Net, "aot_eager", out, compile_first=True)[0])
        self.assertEqual(self.graphs_compiled, 0)  # the capture made dynamo recompile nothing
        recs, manifest = read(out)
        self.check_no_inner_ops(recs)
        regions = [r for r in recs if r["op"] == "compiled_region" and r["step"] == 0]
        self.assertEqual([r["pass"] for r in regions], ["forward", "backward"])
        self.assertEqual(regions[0]["inputs"][0]["arg"], "arg0")
        self.assertNotIn("graph", regions[0]["attrs"])
        entries = manifest["compiled"]["regions"]
        self.assertEqual(len(entries), 1)
        self.assertTrue(entries[0]["compiled_before_start"])
        self.assertEqual(entries[0]["graphs"], {})

    def test_compiled_outside_the_window(self):
        # Compiled in step 0, which is not captured: the hooks are in place from start().
        out = os.path.join(self.tmp.name, "window")
        self.train(Net, "aot_eager", out, steps=[1])
        recs, manifest = read(out)
        self.assertEqual({r["step"] for r in recs}, {1})
        self.check_no_inner_ops(recs)
        entry, = manifest["compiled"]["regions"]
        self.assertEqual(entry["calls"], {"forward": 1, "backward": 1})
        self.assertNotIn("compiled_before_start", entry)
        self.assertEqual(sorted(entry["graphs"]), ["backward", "dynamo", "forward"])

    def test_eager_mode(self):
        out = os.path.join(self.tmp.name, "eager")
        self.train(Net, "aot_eager", out, compiled="eager")
        recs, manifest = read(out)
        self.assertEqual(manifest["compiled"]["mode"], "eager")
        ops = {r["op"] for r in recs}
        self.assertNotIn("compiled_region", ops)
        self.assertIn("addmm", ops)  # every op, eagerly
        with self.assertRaises(ValueError):
            parity_dump.Capture(None, out, compiled="fast")

    def test_eager_cond_is_one_record(self):
        if not hasattr(torch, "cond"):
            self.skipTest("torch %s has no torch.cond" % torch.__version__)
        out = os.path.join(self.tmp.name, "cond")
        x = torch.randn(3, 4)
        with parity_dump.capture(None, out):
            got = torch.cond(x.sum() > 0, lambda t: t.sin(), lambda t: t.cos(), (x,))
        expected = x.sin() if x.sum() > 0 else x.cos()
        self.assertTrue(torch.equal(got, expected))
        recs, manifest = read(out)
        self.assertIn("cond", [r["op"] for r in recs])
        self.assertNotIn("compiled_region", [r["op"] for r in recs])
        self.assertEqual(manifest["compiled"]["regions"], [])


if __name__ == "__main__":
    unittest.main()
