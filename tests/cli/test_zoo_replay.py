# SPDX-License-Identifier: Apache-2.0
"""`parity replay` on the model zoo (issue 46): one training step of each model-library
workload of parity_workloads at size tiny (forward, backward and its own optimizer), captured
in tensors mode, replayed in float64.

- At least 98% of each workload's computing op calls are replayed (random ops such as dropout's
  bernoulli_ apart), and every replayed call lies within its bound: torch's own float32 kernels
  are rounding, so any call beyond its bound is a false alarm.
- The ops torch 2.x's model code runs are among those replayed: the CPU flash attention kernel
  and its backward (Llama's grouped-query attention included), RMSNorm's pow and rsqrt, the
  rotary embedding's sin and cos, silu_backward, _safe_softmax, the foreach AdamW's lerp, the
  fused AdamW.
- torch's fused Adam and AdamW kernels in float64 agree with their replay to float64 rounding.
- A planted error is caught: one element of the flash attention backward's grad_query, and one
  of its forward's output, multiplied by (1 + 2^-8) in the dump, make that call beyond its
  bound.

Under torch 1.13 (no transformers, timm, TorchRec) each test is skipped naming the library.
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
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402

import parity_dump  # noqa: E402
import parity_workloads  # noqa: E402
from parity_workloads import registry  # noqa: E402
from parity_workloads.common import MissingLibraryError  # noqa: E402

RANDOM = {"bernoulli_", "bernoulli", "uniform_", "normal_"}
# What each workload must show replayed: the ops of torch 2.x's model code it runs.
MUST_REPLAY = {
    "hf-llama": {"_scaled_dot_product_flash_attention_for_cpu",
                 "_scaled_dot_product_flash_attention_for_cpu_backward", "pow", "rsqrt", "sin",
                 "cos", "silu_backward", "slice_backward", "_fused_adamw_"},
    "hf-bert": {"_safe_softmax", "_foreach_lerp_", "_foreach_add_", "where", "scalar_tensor"},
    "timm-vit": {"_scaled_dot_product_flash_attention_for_cpu",
                 "_scaled_dot_product_flash_attention_for_cpu_backward", "select_backward"},
    "timm-resnet": {"convolution_backward"},
    "torchrec-dlrm": {"_embedding_bag_backward", "index", "index_put"},
    "minilm": {"_safe_softmax", "arange"},
}


def capture(name, out):
    parity_workloads.get(name, size="tiny", seed=0).captured_step(out, mode="tensors")


def replay(dump, *args):
    r = subprocess.run([BIN, "replay", dump, "--json", "-", "-q", *args], capture_output=True,
                       text=True, timeout=900)
    return r.returncode, json.loads(r.stdout)["ops"]


def records(dump):
    with open(os.path.join(dump, "records.jsonl")) as f:
        return [json.loads(line) for line in f]


class ZooReplay(unittest.TestCase):
    def dump(self, name):
        try:
            registry.get(name, size="tiny")
        except MissingLibraryError as e:
            self.skipTest(str(e))
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        out = os.path.join(tmp.name, name)
        capture(name, out)
        return out

    def check(self, name):
        dump = self.dump(name)
        code, ops = replay(dump)
        computing = [o for o in ops if o["op"] not in RANDOM]
        replayed = [o for o in computing if o.get("replayable")]
        beyond = [(o["seq"], o["op"], o["reason"]) for o in replayed
                  if o.get("judged", True) and not o.get("within_bound")]
        self.assertEqual(beyond, [], name)
        self.assertEqual(code, 0, name)
        not_replayed = sorted({(o["op"], o.get("reason")) for o in computing
                               if not o.get("replayable")})
        self.assertGreaterEqual(len(replayed), 0.98 * len(computing), (name, not_replayed))
        missing = MUST_REPLAY.get(name, set()) - {o["op"] for o in replayed}
        self.assertEqual(missing, set(), name)

    def test_fused_adam_matches_pytorch_float64(self):
        """torch's own fused Adam and AdamW kernels in float64 (amsgrad, L2 and decoupled
        weight decay, maximize): the replay agrees to float64 rounding, over two steps."""
        if not hasattr(torch.ops.aten, "_fused_adamw_"):
            self.skipTest("torch %s has no fused Adam" % torch.__version__)
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        for name, make in (
                ("adamw", lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1, fused=True)),
                ("adam", lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1, amsgrad=True,
                                                    maximize=True, fused=True))):
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(),
                                        torch.nn.Linear(7, 1)).double()
            opt = make(model.parameters())
            x, y = torch.randn(16, 5, dtype=torch.float64), torch.randn(16, 1, dtype=torch.float64)
            out = os.path.join(tmp.name, name)
            with parity_dump.capture(model, out, optimizer=opt, mode="tensors") as cap:
                for _ in range(2):
                    opt.zero_grad()
                    torch.nn.functional.mse_loss(model(x), y).backward()
                    opt.step()
                    cap.step()
            fused = [r for r in records(out) if r["op"].startswith("_fused_adam")]
            self.assertEqual(len(fused), 2, name)
            for r in fused:
                code, ops = replay(out, "--seq", str(r["seq"]))
                self.assertTrue(ops[0]["replayable"], (name, ops[0].get("reason")))
                self.assertLessEqual(ops[0]["rel_rmse"], 1e-14, name)
                self.assertEqual(code, 0, name)

    def test_a_planted_error_in_flash_attention_is_caught(self):
        dump = self.dump("hf-llama")
        recs = records(dump)
        for op, slot in (("_scaled_dot_product_flash_attention_for_cpu_backward", 0),
                         ("_scaled_dot_product_flash_attention_for_cpu", 0)):
            record = next(r for r in recs if r["op"] == op)
            path = os.path.join(dump, record["outputs"][slot]["file"])
            original = np.load(path)
            planted = original.copy()
            flat = planted.reshape(-1)
            i = int(np.argmax(np.abs(flat)))
            flat[i] = np.float32(flat[i] * (1 + 2.0 ** -8))
            np.save(path, planted)
            try:
                code, ops = replay(dump, "--seq", str(record["seq"]))
            finally:
                np.save(path, original)
            self.assertEqual(code, 1, op)
            self.assertFalse(ops[0]["within_bound"], (op, ops[0]["reason"]))
            code, ops = replay(dump, "--seq", str(record["seq"]))
            self.assertEqual((code, ops[0]["within_bound"]), (0, True), op)


def _add(name):
    def test(self):
        self.check(name)
    test.__name__ = "test_" + name.replace("-", "_")
    setattr(ZooReplay, test.__name__, test)


for _name in ("hf-llama", "hf-bert", "timm-vit", "timm-resnet", "torchrec-dlrm", "minilm"):
    _add(_name)


if __name__ == "__main__":
    unittest.main()
