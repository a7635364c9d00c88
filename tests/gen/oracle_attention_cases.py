# SPDX-License-Identifier: Apache-2.0
"""gen_oracle.py's attention cases: the CPU flash kernel's outputs and gradients from the math
formula, and torch 2.x's GPU kernels (SDPA's flash, memory-efficient and cuDNN attention, the
fused RMSNorm) under their aten schemas."""
import math

import torch


def flash_scores(q, k, mask, causal, scale):
    """The CPU flash kernel's scaled, masked scores, from the math formula (keys with fewer
    heads than the queries repeated, as SDPA's enable_gqa does)."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    k = k.repeat_interleave(q.shape[-3] // k.shape[-3], dim=-3)
    s = (q @ k.transpose(-1, -2)) * scale
    if mask is not None:
        s = s + mask
    if causal:
        l, sk = s.shape[-2], s.shape[-1]
        s = s.masked_fill(torch.ones(l, sk, dtype=torch.bool).triu(1), float("-inf"))
    return s


def flash_forward(q, k, v, mask, causal, scale):
    """(output, logsumexp) of _scaled_dot_product_flash_attention_for_cpu, in q's dtype."""
    s = flash_scores(q, k, mask, causal, scale)
    v = v.repeat_interleave(q.shape[-3] // v.shape[-3], dim=-3)
    return torch.softmax(s, -1) @ v, torch.logsumexp(s, -1)


def flash_backward_inputs(q, k, v, grad_out, mask, causal, scale):
    """The inputs of _scaled_dot_product_flash_attention_for_cpu_backward, by position."""
    out, lse = flash_forward(q, k, v, mask, causal, scale)
    inputs = [grad_out, q, k, v, out, lse]
    return inputs + ([mask] if mask is not None else [])


def flash_backward(inputs, causal, scale):
    """(grad_query, grad_key, grad_value): autograd through the math formula."""
    grad_out, q, k, v = inputs[:4]
    mask = inputs[6] if len(inputs) > 6 else None
    q, k, v = (t.detach().clone().requires_grad_(True) for t in (q, k, v))
    out, _ = flash_forward(q, k, v, mask, causal, scale)
    return torch.autograd.grad(out, (q, k, v), grad_out)


def gpu_kernel_cases(dtype, gen):
    """torch 2.x's GPU kernels (SDPA's flash, memory-efficient and cuDNN attention, the fused
    RMSNorm) under their aten schemas, as a capture on a GPU records them (arguments named;
    None tensors absent; the SymInts max_q/max_k are attrs): (name, op, [(arg, tensor)], attrs,
    outputs), the values from the math formula and its autograd, the other tensor outputs (RNG
    state, placeholders) as the kernels leave them."""
    r = lambda *shape: torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)
    q, k, v, go = r(2, 2, 5, 8), r(2, 2, 7, 8), r(2, 2, 7, 4), r(2, 2, 5, 4)
    bias = r(2, 2, 5, 7)
    seed, offset = torch.tensor(0), torch.tensor(0)
    rng, unused, empty = torch.zeros(2, dtype=torch.int64), torch.tensor(0), torch.zeros(0)
    qkv = [("query", q), ("key", k), ("value", v)]
    out, lse = flash_forward(q, k, v, None, True, 0.3)
    out_b, lse_b = flash_forward(q, k, v, bias, False, None)
    # the memory-efficient kernel pads logsumexp's rows to a multiple of 32, with +inf
    lse_pad = torch.cat([lse_b, torch.full((2, 2, 27), float("inf"), dtype=torch.float32)
                         .to(lse_b.dtype)], -1)
    grads = flash_backward([go, q, k, v], True, 0.3)
    qb, kb, vb, bb = (t.detach().clone().requires_grad_(True) for t in (q, k, v, bias))
    grads_b = torch.autograd.grad(flash_forward(qb, kb, vb, bb, False, None)[0], (qb, kb, vb, bb),
                                  go)
    fw = {"dropout_p": 0.0, "max_q": 5, "max_k": 7}
    x, w, gy = r(3, 4, 6), r(6), r(3, 4, 6)
    eps_none = torch.finfo(torch.float64 if dtype == torch.float64 else torch.float32).eps

    def rms(x, w, eps):
        rstd = torch.rsqrt((x * x).mean(-1, keepdim=True) + eps)
        return x * rstd * (1 if w is None else w), rstd

    y, rstd = rms(x, w, 1e-6)
    xg, wg = (t.detach().clone().requires_grad_(True) for t in (x, w))
    dx, dw = torch.autograd.grad(rms(xg, wg, 1e-6)[0], (xg, wg), gy)
    return [
        ("rms_norm_fused", "_fused_rms_norm", [("input", x), ("weight", w)],
         {"normalized_shape": [6], "eps": 1e-6}, [y, rstd]),
        ("rms_norm_fused_default_eps", "_fused_rms_norm", [("input", x)],
         {"normalized_shape": [4, 6], "weight": None, "eps": None},
         [t.reshape(shape) for t, shape in zip(rms(x.reshape(3, 24), None, eps_none),
                                               ((3, 4, 6), (3, 1, 1)))]),
        ("rms_norm_fused_backward", "_fused_rms_norm_backward",
         [("grad_out", gy), ("input", x), ("rstd", rstd), ("weight", w)],
         {"normalized_shape": [6], "output_mask": [True, True]}, [dx, dw]),
        ("rms_norm_fused_backward_dx", "_fused_rms_norm_backward",
         [("grad_out", gy), ("input", x), ("rstd", rstd), ("weight", w)],
         {"normalized_shape": [6], "output_mask": [True, False]}, [dx]),
        ("sdpa_flash_cuda", "_scaled_dot_product_flash_attention", qkv,
         dict(fw, is_causal=True, return_debug_mask=False, scale=0.3),
         [out, lse, rng, unused, empty]),
        ("sdpa_flash_cuda_backward", "_scaled_dot_product_flash_attention_backward",
         [("grad_out", go)] + qkv + [("out", out), ("logsumexp", lse), ("philox_seed", seed),
                                    ("philox_offset", offset)],
         dict(fw, is_causal=True, scale=0.3), list(grads)),
        ("sdpa_efficient", "_scaled_dot_product_efficient_attention",
         qkv + [("attn_bias", bias)],
         {"compute_log_sumexp": True, "dropout_p": 0.0, "is_causal": False, "scale": None},
         [out_b, lse_pad, seed, offset]),
        ("sdpa_efficient_no_lse", "_scaled_dot_product_efficient_attention", qkv,
         {"compute_log_sumexp": False, "dropout_p": 0.0, "is_causal": True, "scale": 0.3},
         [out, empty, seed, offset]),
        ("sdpa_efficient_backward", "_scaled_dot_product_efficient_attention_backward",
         [("grad_out_", go)] + qkv + [("attn_bias", bias), ("out", out_b),
                                     ("logsumexp", lse_pad), ("philox_seed", seed),
                                     ("philox_offset", offset)],
         {"dropout_p": 0.0, "grad_input_mask": [True, True, True, True], "is_causal": False,
          "scale": None}, list(grads_b)),
        ("sdpa_cudnn", "_scaled_dot_product_cudnn_attention", qkv + [("attn_bias", bias)],
         dict(fw, compute_log_sumexp=True, is_causal=False, return_debug_mask=False, scale=None),
         [out_b, lse_b.unsqueeze(-1), seed, offset, empty]),
        ("sdpa_cudnn_backward", "_scaled_dot_product_cudnn_attention_backward",
         [("grad_out", go)] + qkv + [("out", out_b), ("logsumexp", lse_b.unsqueeze(-1)),
                                    ("philox_seed", seed), ("philox_offset", offset),
                                    ("attn_bias", bias)],
         dict(fw, is_causal=False, scale=None), list(grads_b[:3])),
    ]
