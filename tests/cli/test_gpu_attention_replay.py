# SPDX-License-Identifier: Apache-2.0
"""`parity replay` on torch 2.x's GPU attention kernels, recorded by the real capture on the CPU.

The flash, memory-efficient and cuDNN kernels of scaled_dot_product_attention and their
backwards run on GPUs only. Here each gets a CPU implementation (torch.library) from the math
formula and its autograd, with the kernels' schemas and the outputs they leave besides the
values (the memory-efficient kernel's logsumexp rows padded to a multiple of 32 with +inf,
cuDNN's trailing 1, RNG state, empty placeholders). python/parity_dump's capture records the
calls as it would on a GPU (arguments named, None tensors absent, the SymInts max_q/max_k not
outputs), and:

- every call is replayed and within its bound (the CPU's float32 rounding is all there is);
- one element of each value output multiplied by (1 + 2^-8) in the dump is beyond its bound;
  the outputs that are not values (RNG state, placeholders) are never judged.

Under a torch without these kernels' schemas (1.13) the tests are skipped saying so.
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

BIN = os.environ["PARITY_BIN"]
sys.path.insert(0, os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..",
                                                 "python")))

import torch  # noqa: E402

import parity_dump  # noqa: E402

A = torch.ops.aten
KERNELS = ("_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
           "_scaled_dot_product_cudnn_attention")
MISSING = [k for k in KERNELS + tuple(k + "_backward" for k in KERNELS)
           if not hasattr(A, k)]


def scores(q, k, bias, causal, scale):
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ k.transpose(-1, -2)) * scale
    if bias is not None:
        s = s + bias
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2], s.shape[-1], dtype=torch.bool).triu(1),
                          float("-inf"))
    return s


def forward(q, k, v, bias, causal, scale):
    s = scores(q, k, bias, causal, scale)
    return torch.softmax(s, -1) @ v, torch.logsumexp(s, -1)


def grads(go, q, k, v, bias, causal, scale, want_bias=False):
    """(dQ, dK, dV[, dBias]) in closed form (a kernel runs below autograd): dV = Pᵀ·dO,
    dS = P ∘ (dO·Vᵀ − rowsum(P ∘ dO·Vᵀ)), dQ = scale·dS·K, dK = scale·dSᵀ·Q, dBias = dS."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    p = torch.softmax(scores(q, k, bias, causal, scale), -1)
    dp = go @ v.transpose(-1, -2)
    ds = p * (dp - (p * dp).sum(-1, keepdim=True))
    got = (scale * ds @ k, scale * ds.transpose(-1, -2) @ q, p.transpose(-1, -2) @ go)
    return got + (ds,) if want_bias else got


def seed():
    return torch.tensor(0)


def flash(q, k, v, dropout_p=0.0, is_causal=False, return_debug_mask=False, *, scale=None):
    out, lse = forward(q, k, v, None, is_causal, scale)
    # (output, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k, rng_state, unused, debug mask)
    return (out, lse, None, None, q.shape[-2], k.shape[-2], torch.zeros(2, dtype=torch.int64),
            torch.tensor(0), torch.zeros(0))


def flash_backward(go, q, k, v, out, lse, cum_q, cum_k, max_q, max_k, dropout_p, is_causal,
                   philox_seed, philox_offset, *, scale=None):
    return grads(go, q, k, v, None, is_causal, scale)


def efficient(q, k, v, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False, *,
              scale=None):
    out, lse = forward(q, k, v, attn_bias, is_causal, scale)
    pad = -lse.shape[-1] % 32
    lse = (torch.cat([lse, torch.full(lse.shape[:-1] + (pad,), float("inf"))], -1)
           if compute_log_sumexp else torch.zeros(0))
    return out, lse, seed(), seed()


def efficient_backward(go, q, k, v, attn_bias, out, lse, philox_seed, philox_offset, dropout_p,
                       grad_input_mask, is_causal=False, *, scale=None):
    want_bias = attn_bias is not None and grad_input_mask[3]
    got = grads(go, q, k, v, attn_bias, is_causal, scale, want_bias)
    return got if want_bias else got + (torch.zeros(0),)


def cudnn(q, k, v, attn_bias, compute_log_sumexp, dropout_p=0.0, is_causal=False,
          return_debug_mask=False, *, scale=None):
    out, lse = forward(q, k, v, attn_bias, is_causal, scale)
    return (out, lse.unsqueeze(-1), None, None, q.shape[-2], k.shape[-2], seed(), seed(),
            torch.zeros(0))


def cudnn_backward(go, q, k, v, out, lse, philox_seed, philox_offset, attn_bias, cum_q, cum_k,
                   max_q, max_k, dropout_p, is_causal, *, scale=None):
    return grads(go, q, k, v, attn_bias, is_causal, scale)


LIBRARY = None


def register():
    global LIBRARY
    if LIBRARY is None:
        LIBRARY = torch.library.Library("aten", "IMPL")
        for name, fn in zip(KERNELS, (flash, efficient, cudnn)):
            LIBRARY.impl(name, fn, "CPU")
        for name, fn in zip(KERNELS, (flash_backward, efficient_backward, cudnn_backward)):
            LIBRARY.impl(name + "_backward", fn, "CPU")


def capture(root):
    """One forward and backward of each kernel, as SDPA's autograd calls them."""
    gen = torch.Generator().manual_seed(46)
    r = lambda *shape: torch.randn(*shape, generator=gen)
    q, k, v, go = r(2, 4, 9, 16), r(2, 4, 11, 16), r(2, 4, 11, 8), r(2, 4, 9, 8)
    bias = r(2, 4, 9, 11)
    with parity_dump.capture(torch.nn.Module(), root):
        f = A._scaled_dot_product_flash_attention(q, k, v, 0.0, True, scale=0.2)
        A._scaled_dot_product_flash_attention_backward(go, q, k, v, f[0], f[1], f[2], f[3], f[4],
                                                        f[5], 0.0, True, f[6], f[7], scale=0.2)
        e = A._scaled_dot_product_efficient_attention(q, k, v, bias, True, 0.0, False)
        A._scaled_dot_product_efficient_attention_backward(go, q, k, v, bias, e[0], e[1], e[2],
                                                            e[3], 0.0, [True, True, True, True])
        A._scaled_dot_product_efficient_attention(q, k, v, None, False, 0.0, True)
        c = A._scaled_dot_product_cudnn_attention(q, k, v, bias, True, 0.0, False)
        A._scaled_dot_product_cudnn_attention_backward(go, q, k, v, c[0], c[1], c[6], c[7], bias,
                                                        c[2], c[3], c[4], c[5], 0.0, False)


def replay(root):
    out = subprocess.run([BIN, "replay", root, "--json", "-", "-q"], capture_output=True,
                         text=True, timeout=300)
    return out.returncode, json.loads(out.stdout)


def records(root):
    with open(os.path.join(root, "records.jsonl")) as f:
        return [json.loads(line) for line in f]


@unittest.skipIf(MISSING, "this torch has no %s" % ", ".join(MISSING))
class GpuAttentionReplay(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        register()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.root = os.path.join(cls.tmp.name, "dump")
        capture(cls.root)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_kernel_is_replayed_within_its_bound(self):
        rc, report = replay(self.root)
        ops = [o["op"] for o in report["ops"]]
        self.assertEqual(sorted(set(ops)), sorted(KERNELS + tuple(k + "_backward"
                                                                  for k in KERNELS)))
        for o in report["ops"]:
            self.assertTrue(o["replayable"], o)
            self.assertTrue(o["within_bound"], o)
        self.assertEqual(rc, 0)
        # What the capture recorded of the efficient kernel: its padded logsumexp, the bias by
        # name, max_q/max_k not among the flash kernel's outputs.
        recs = records(self.root)
        eff = next(r for r in recs if r["op"] == KERNELS[1])
        self.assertEqual(eff["outputs"][1]["shape"], [2, 4, 32])
        self.assertEqual([i["arg"] for i in eff["inputs"]],
                         ["query", "key", "value", "attn_bias"])
        self.assertEqual(len(next(r for r in recs if r["op"] == KERNELS[0])["outputs"]), 5)

    def test_a_planted_error_in_each_value_output_is_caught(self):
        recs = records(self.root)
        planted = 0
        for rec in recs:
            values = len(rec["outputs"]) if rec["op"].endswith("_backward") else 2
            for slot in range(values):
                path = os.path.join(self.root, rec["outputs"][slot]["file"])
                original = np.load(path)
                finite = np.flatnonzero(np.isfinite(original.ravel()) &
                                        (np.abs(original.ravel()) > 0.1))
                if finite.size == 0:
                    continue  # no logsumexp asked for
                wrong = original.copy()
                wrong.ravel()[finite[len(finite) // 2]] *= 1 + 2.0 ** -8
                np.save(path, wrong)
                try:
                    _, report = replay(self.root)
                finally:
                    np.save(path, original)
                verdict = next(o for o in report["ops"] if o["seq"] == rec["seq"])
                self.assertFalse(verdict["within_bound"], (rec["op"], slot))
                planted += 1
        self.assertEqual(planted, 2 * 3 + 1 + 3 + 4 + 3)


if __name__ == "__main__":
    unittest.main()
