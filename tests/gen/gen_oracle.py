#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the float64 oracle's test dumps, with outputs from independent implementations.

  OUT/oracle/f64/     one record per op case: float64 inputs, and the output PyTorch computes in
                      float64 (numpy float64 formulas for the ops this torch lacks:
                      scaled_dot_product_attention and rms_norm before torch 2.1/2.4)
  OUT/oracle/f32/     the same cases in float32, outputs from PyTorch's float32 kernels
  OUT/oracle/unfit/   records whose attrs or tensors don't fit their op, or that can't be
                      replayed (expected.json "unfit": seq -> the reason's key words)
  OUT/oracle/f64_aten/, f32_aten/
                      version 2 dumps of aten ops (forward, backward, optimizer arithmetic)
                      called through torch.ops.aten under python/parity_dump's capture: the
                      outputs are PyTorch's own kernels in float64 and in float32

Usage: gen_oracle.py OUT
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import parity_dump  # noqa: E402  (the checkout's capture, pure Python)
from oracle_attention_cases import (flash_backward, flash_backward_inputs,  # noqa: E402
                                    flash_forward, gpu_kernel_cases)

OUT = None
EXPECTED = {"f64": [], "f32": [], "unfit": []}


def path(*parts):
    full = os.path.join(OUT, "oracle", *parts)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    return full


class Dump:
    def __init__(self, name):
        self.root = path(name, "x")[:-2]
        os.makedirs(os.path.join(self.root, "tensors"), exist_ok=True)
        with open(os.path.join(self.root, "manifest.json"), "w") as f:
            json.dump({"format": "parity-dump", "version": 1,
                       "platform": {"device": "cpu", "device_name": "generated"},
                       "framework": {"name": "torch", "version": torch.__version__,
                                     "settings": {"allow_tf32_matmul": False}}}, f)
        self.records = open(os.path.join(self.root, "records.jsonl"), "w")
        self.seq = 0

    def tensor(self, slot, t):
        if isinstance(t, dict):
            return t
        a = t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t)
        rel = "tensors/%04d_%s.npy" % (self.seq, slot)
        np.save(os.path.join(self.root, rel), a)
        dtype = {"f": {2: "float16", 4: "float32", 8: "float64"}, "i": {4: "int32", 8: "int64"},
                 "b": {1: "bool"}}[a.dtype.kind][a.dtype.itemsize]
        return {"file": rel, "dtype": dtype, "shape": list(a.shape)}

    def add(self, name, op, inputs, outputs, params=None, attrs=None, args=None):
        """`args`: the schema argument each input was passed as, as version 2 records name
        them (none by default: inputs by position)."""
        rec = {"seq": self.seq, "name": name, "op": op, "pass": "forward", "call": 0,
               "attrs": attrs or {},
               "inputs": [self.tensor("in%d" % i, t) for i, t in enumerate(inputs)],
               "params": {k: self.tensor(k, v) for k, v in (params or {}).items()},
               "outputs": [self.tensor("out%d" % i, t) for i, t in enumerate(outputs)]}
        for entry, arg in zip(rec["inputs"], args or []):
            entry["arg"] = arg
        self.records.write(json.dumps(rec) + "\n")
        self.seq += 1
        return rec["seq"]

    def close(self):
        self.records.close()


def rms_norm(x, shape, w, eps):
    dims = tuple(range(-len(shape), 0))
    x64 = x.double()
    y = x64 / torch.sqrt((x64 * x64).mean(dim=dims, keepdim=True) + eps)
    return (y * w.double()).to(x.dtype)


def sdpa(q, k, v, mask=None, causal=False, scale=None):
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = (q.double() @ k.double().transpose(-1, -2)) * scale
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else s + mask.double()
    if causal:
        l, sk = s.shape[-2], s.shape[-1]
        s = s.masked_fill(torch.ones(l, sk, dtype=torch.bool).triu(1), float("-inf"))
    return (torch.softmax(s, dim=-1) @ v.double()).to(q.dtype)


def cases(dtype, gen):
    """(name, op, inputs, params, attrs) for every op case."""
    r = lambda *shape: torch.randn(*shape, generator=gen, dtype=torch.float64).to(dtype)
    x3, w, b = r(2, 3, 16), r(8, 16), r(8)
    img, k2 = r(2, 4, 9, 7), r(6, 2, 3, 2)
    seq1d, k1 = r(2, 4, 20), r(4, 2, 3)
    q, kk, v = r(2, 2, 5, 8), r(2, 2, 7, 8), r(2, 2, 7, 4)
    bn_x, bn_x2 = r(6, 3), r(2, 3, 4, 4)
    mean, var, bw, bb = r(3), r(3).abs() + 0.5, r(3), r(3)
    ids = torch.tensor([[0, 3, 9], [2, 2, 1]])
    table = r(10, 5)
    out = [
        ("linear_bias", "linear", [x3], {"weight": w, "bias": b}, {}),
        ("linear_plain", "linear", [r(5, 16)], {"weight": w}, {}),
        ("matmul_2d", "matmul", [r(4, 6), r(6, 3)], {}, {}),
        ("matmul_broadcast", "matmul", [r(2, 1, 3, 4), r(5, 4, 6)], {}, {}),
        ("matmul_vec_mat", "matmul", [r(6), r(6, 3)], {}, {}),
        ("matmul_mat_vec", "matmul", [r(4, 6), r(6)], {}, {}),
        ("matmul_dot", "matmul", [r(6), r(6)], {}, {}),
        ("bmm", "bmm", [r(3, 4, 5), r(3, 5, 2)], {}, {}),
        ("conv1d", "conv1d", [seq1d], {"weight": k1, "bias": r(4)},
         {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}),
        ("conv2d", "conv2d", [img], {"weight": k2, "bias": r(6)},
         {"stride": [2, 1], "padding": [1, 2], "dilation": 1, "groups": 2}),
        ("conv2d_same", "conv2d", [r(1, 3, 8, 8)], {"weight": r(4, 3, 3, 3)},
         {"stride": 1, "padding": "same", "dilation": [2, 1], "groups": 1}),
        ("conv2d_unbatched", "conv2d", [r(3, 6, 6)], {"weight": r(2, 3, 3, 3)},
         {"stride": 1, "padding": 0, "dilation": 1, "groups": 1}),
        ("softmax", "softmax", [r(3, 5, 4) * 4], {}, {"dim": 1}),
        ("log_softmax", "log_softmax", [r(3, 7) * 4], {}, {"dim": -1}),
        ("layer_norm", "layer_norm", [r(2, 3, 4, 5)], {"weight": r(4, 5), "bias": r(4, 5)},
         {"normalized_shape": [4, 5], "eps": 1e-5}),
        ("layer_norm_plain", "layer_norm", [r(6, 8)], {}, {"normalized_shape": [8],
                                                             "eps": 1e-6}),
        ("rms_norm", "rms_norm", [r(4, 6)], {"weight": r(6)}, {"normalized_shape": [6],
                                                                "eps": 1e-6}),
        ("batch_norm_eval", "batch_norm", [bn_x2],
         {"running_mean": mean, "running_var": var, "weight": bw, "bias": bb},
         {"training": False, "momentum": 0.1, "eps": 1e-5}),
        ("batch_norm_train", "batch_norm", [bn_x], {"weight": bw, "bias": bb},
         {"training": True, "momentum": 0.1, "eps": 1e-5}),
        ("gelu", "gelu", [r(50) * 3], {}, {"approximate": "none"}),
        ("gelu_tanh", "gelu", [r(50) * 3], {}, {"approximate": "tanh"}),
        ("silu", "silu", [r(50) * 3], {}, {}),
        ("relu", "relu", [torch.cat([r(20), torch.zeros(3, dtype=dtype)])], {}, {}),
        ("add_alpha", "add", [r(4, 3), r(3)], {}, {"alpha": 2}),
        ("add_scalar", "add", [r(4, 3)], {}, {"other": 0.75, "alpha": 1}),
        ("mul", "mul", [r(2, 1, 3), r(4, 1)], {}, {}),
        ("mul_scalar", "mul", [r(5)], {}, {"other": -1.5}),
        ("sum_dims", "sum", [r(3, 4, 5)], {}, {"dim": [0, 2], "keepdim": True}),
        ("sum_all", "sum", [r(3, 4)], {}, {"dim": None, "keepdim": False}),
        ("mean_dim", "mean", [r(3, 4, 5)], {}, {"dim": 1, "keepdim": False}),
        ("embedding", "embedding", [ids], {"weight": table}, {}),
        ("dropout_eval", "dropout", [r(10)], {}, {"p": 0.3, "training": False}),
        ("dropout_train", "dropout", [r(200)], {}, {"p": 0.3, "training": True}),
        ("sdpa_causal", "scaled_dot_product_attention", [q, r(2, 2, 5, 8), r(2, 2, 5, 4)], {},
         {"is_causal": True, "dropout_p": 0.0}),
        ("sdpa_mask", "scaled_dot_product_attention",
         [q, kk, v, torch.rand(5, 7, generator=gen) > 0.3], {},
         {"is_causal": False, "dropout_p": 0.0, "scale": 0.2}),
        # torch 2.x's CPU flash kernel and its backward, under their aten schemas (inputs by
        # position: query, key, value, attn_mask; grad_out, query, key, value, out,
        # logsumexp, attn_mask), outputs from the math formula and its autograd in float64.
        ("sdpa_flash_cpu", "_scaled_dot_product_flash_attention_for_cpu", [q, kk, v, r(5, 7)],
         {}, {"dropout_p": 0.0, "is_causal": False, "scale": 0.3}),
        ("sdpa_flash_cpu_causal", "_scaled_dot_product_flash_attention_for_cpu",
         [q, r(2, 2, 5, 8), r(2, 2, 5, 4)], {}, {"dropout_p": 0.0, "is_causal": True}),
        ("sdpa_flash_cpu_backward", "_scaled_dot_product_flash_attention_for_cpu_backward",
         flash_backward_inputs(q, kk, v, r(2, 2, 5, 4), r(5, 7), False, 0.3), {},
         {"dropout_p": 0.0, "is_causal": False, "scale": 0.3}),
        ("sdpa_flash_cpu_backward_causal",
         "_scaled_dot_product_flash_attention_for_cpu_backward",
         flash_backward_inputs(q, r(2, 2, 5, 8), r(2, 2, 5, 4), r(2, 2, 5, 4), None, True, None),
         {}, {"dropout_p": 0.0, "is_causal": True}),
        # Grouped-query attention (Llama): one key/value head for the two query heads.
        ("sdpa_flash_cpu_gqa", "_scaled_dot_product_flash_attention_for_cpu",
         [q, r(2, 1, 7, 8), r(2, 1, 7, 4)], {}, {"dropout_p": 0.0, "is_causal": False}),
        ("sdpa_flash_cpu_backward_gqa", "_scaled_dot_product_flash_attention_for_cpu_backward",
         flash_backward_inputs(q, r(2, 1, 5, 8), r(2, 1, 5, 4), r(2, 2, 5, 4), None, True, 0.5),
         {}, {"dropout_p": 0.0, "is_causal": True, "scale": 0.5}),
        # torch 2.5's _safe_softmax: a line masked out entirely gives zeros.
        ("safe_softmax", "_safe_softmax",
         [torch.cat([r(2, 6) * 3, torch.full((1, 6), float("-inf"), dtype=dtype)])], {},
         {"dim": -1}),
    ]
    return out


def compute(op, inputs, params, attrs, gen):
    """The output as PyTorch (or, for ops this torch lacks, a numpy/float64 formula) gives it."""
    p = params
    if op == "linear":
        return F.linear(inputs[0], p["weight"], p.get("bias"))
    if op == "matmul":
        return torch.matmul(*inputs)
    if op == "bmm":
        return torch.bmm(*inputs)
    if op in ("conv1d", "conv2d"):
        f = F.conv1d if op == "conv1d" else F.conv2d
        return f(inputs[0], p["weight"], p.get("bias"), attrs["stride"], attrs["padding"],
                 attrs["dilation"], attrs["groups"])
    if op == "softmax":
        return torch.softmax(inputs[0], attrs["dim"])
    if op == "log_softmax":
        return torch.log_softmax(inputs[0], attrs["dim"])
    if op == "layer_norm":
        return F.layer_norm(inputs[0], attrs["normalized_shape"], p.get("weight"), p.get("bias"),
                            attrs["eps"])
    if op == "rms_norm":
        return rms_norm(inputs[0], attrs["normalized_shape"], p["weight"], attrs["eps"])
    if op == "batch_norm":
        return F.batch_norm(inputs[0], p.get("running_mean"), p.get("running_var"),
                            p.get("weight"), p.get("bias"), attrs["training"], attrs["momentum"],
                            attrs["eps"])
    if op == "gelu":
        return F.gelu(inputs[0], approximate=attrs["approximate"])
    if op == "silu":
        return F.silu(inputs[0])
    if op == "relu":
        return F.relu(inputs[0])
    if op == "add":
        other = inputs[1] if len(inputs) > 1 else attrs["other"]
        return torch.add(inputs[0], other, alpha=attrs["alpha"])
    if op == "mul":
        return torch.mul(inputs[0], inputs[1] if len(inputs) > 1 else attrs["other"])
    if op == "sum":
        return torch.sum(inputs[0]) if attrs["dim"] is None else torch.sum(
            inputs[0], attrs["dim"], attrs["keepdim"])
    if op == "mean":
        return torch.mean(inputs[0], attrs["dim"], attrs["keepdim"])
    if op == "embedding":
        return F.embedding(inputs[0], p["weight"])
    if op == "dropout":
        torch.manual_seed(7)
        return F.dropout(inputs[0], attrs["p"], attrs["training"])
    if op == "_scaled_dot_product_flash_attention_for_cpu":
        return flash_forward(*inputs[:3], inputs[3] if len(inputs) > 3 else None,
                             attrs["is_causal"], attrs.get("scale"))
    if op == "_scaled_dot_product_flash_attention_for_cpu_backward":
        return flash_backward(inputs, attrs["is_causal"], attrs.get("scale"))
    if op == "_safe_softmax":
        x = inputs[0]
        masked = (x == float("-inf")).all(dim=attrs["dim"], keepdim=True)
        return torch.softmax(x, attrs["dim"]).masked_fill(masked, 0.0)
    if op == "scaled_dot_product_attention":
        return sdpa(*inputs[:3], mask=inputs[3] if len(inputs) > 3 else None,
                    causal=attrs["is_causal"], scale=attrs.get("scale"))
    raise ValueError(op)


def gen_ops(kind, dtype):
    gen = torch.Generator().manual_seed(20261202)
    dump = Dump(kind)
    for name, op, inputs, params, attrs in cases(dtype, gen):
        outputs = compute(op, inputs, params, attrs, gen)
        outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
        seq = dump.add(name, op, inputs, outputs, params, attrs)
        EXPECTED[kind].append({"seq": seq, "name": name, "op": op})
    for name, op, named, attrs, outputs in gpu_kernel_cases(dtype, gen):
        seq = dump.add(name, op, [t for _, t in named], outputs, {}, attrs,
                       [arg for arg, _ in named])
        EXPECTED[kind].append({"seq": seq, "name": name, "op": op})
    dump.close()
    EXPECTED[kind + "_dir"] = dump.root


def gen_unfit():
    gen = torch.Generator().manual_seed(5)
    r = lambda *shape: torch.randn(*shape, generator=gen)
    dump = Dump("unfit")
    x = r(2, 4, 5, 5)

    def add(name, op, inputs, params, attrs, why, outputs=None):
        seq = dump.add(name, op, inputs, outputs if outputs is not None else [r(2, 2)], params,
                       attrs)
        EXPECTED["unfit"].append({"seq": seq, "name": name, "why": why})

    add("conv_wrong_weight", "conv2d", [x], {"weight": r(3, 3, 3, 3)},
        {"stride": 1, "padding": 0, "dilation": 1, "groups": 1}, "does not fit")
    add("conv_bad_stride", "conv2d", [x], {"weight": r(3, 4, 3, 3)},
        {"stride": "two", "padding": 0, "dilation": 1, "groups": 1}, "stride")
    add("conv_zero_stride", "conv2d", [x], {"weight": r(3, 4, 3, 3)},
        {"stride": 0, "padding": 0, "dilation": 1, "groups": 1}, "positive")
    add("conv_padding_mode", "conv2d", [x], {"weight": r(3, 4, 3, 3)},
        {"padding": "reflect"}, "padding mode")
    add("matmul_inner", "matmul", [r(3, 4), r(5, 2)], {}, {}, "inner dimensions differ")
    add("softmax_dim", "softmax", [r(3, 4)], {}, {"dim": 5}, "out of range")
    add("softmax_dim_type", "softmax", [r(3, 4)], {}, {"dim": "last"}, "attr 'dim' is not an int")
    add("layer_norm_shape", "layer_norm", [r(3, 4)], {}, {"normalized_shape": [5]},
        "does not end input")
    add("layer_norm_missing", "layer_norm", [r(3, 4)], {}, {}, "normalized_shape is missing")
    add("add_broadcast", "add", [r(3, 4), r(5)], {}, {}, "do not broadcast")
    add("linear_no_weight", "linear", [r(3, 4)], {}, {}, "weight")
    add("embedding_range", "embedding", [torch.tensor([0, 12])], {"weight": r(10, 3)}, {},
        "out of range")
    add("batch_norm_no_stats", "batch_norm", [r(4, 3)], {}, {"training": False},
        "running_mean")
    add("gelu_approx", "gelu", [r(4)], {}, {"approximate": "cubic"}, "approximate")
    add("unknown_op", "frobnicate", [r(4)], {}, {}, "no float64 replay")
    add("container", "module", [r(4)], {}, {}, "container")
    add("stats_only_input", "relu", [{"dtype": "float32", "shape": [4],
                                      "stats": {"min": 0, "max": 1, "mean": 0.5, "l2": 1.0,
                                                "nan": 0, "inf": 0}}], {}, {},
        "statistics only")
    add("shape_mismatch", "relu", [r(4)], {}, {}, "shape", outputs=[r(5)])
    # aten ops (positional inputs: this dump names no arguments)
    add("convolution_transposed", "convolution", [x, r(4, 3, 3, 3)], {}, {"transposed": True},
        "transposed")
    add("native_batch_norm_unnamed", "native_batch_norm", [r(4, 3)], {}, {"training": True},
        "named inputs")
    add("attention_gpu_unnamed", "_scaled_dot_product_efficient_attention",
        [r(1, 2, 3, 4), r(1, 2, 3, 4), r(1, 2, 3, 4)], {}, {"dropout_p": 0.0},
        "names no arguments")
    add("embedding_bag_2d", "_embedding_bag", [r(10, 3), torch.tensor([[1, 2]]),
                                               torch.tensor([0])], {}, {"mode": 0}, "1-d")
    add("nll_target_range", "nll_loss_forward", [r(3, 4), torch.tensor([0, 7, 1])], {},
        {"reduction": 1, "ignore_index": -100}, "out of range")
    add("foreach_unnamed", "_foreach_add_", [r(3)], {}, {"scalar": 1.0}, "named self list")
    add("new_zeros_huge", "new_zeros", [r(2)], {}, {"size": [1 << 20, 1 << 20]},
        "implausibly large")
    add("avg_pool_padding", "avg_pool2d", [x], {}, {"kernel_size": [2, 2], "padding": [3, 3]},
        "more than half")
    add("cat_ranks", "cat", [r(2, 3), r(2)], {}, {"dim": 0}, "different ranks")
    add("reduction_bad", "mse_loss", [r(3), r(3)], {}, {"reduction": 7}, "reduction")
    add("embedding_bag_backward_freq", "_embedding_bag_dense_backward",
        [r(2, 3), torch.tensor([1, 2]), torch.tensor([0, 1]), torch.tensor([1, 1]),
         torch.tensor([0, 0])], {}, {"num_weights": 4, "mode": 0, "scale_grad_by_freq": True},
        "scale_grad_by_freq")
    # shapes from attrs never take more memory than the recorded output holds
    add("adaptive_huge", "_adaptive_avg_pool2d", [r(1, 2, 3, 3)], {},
        {"output_size": [60000, 60000]}, "more than the 4 it records")
    add("embedding_backward_huge", "embedding_dense_backward",
        [r(4, 3), torch.tensor([0, 1, 2, 3])], {},
        {"num_weights": 1 << 30, "padding_idx": -1, "scale_grad_by_freq": False},
        "more than the 4 it records")
    add("conv_padding_huge", "conv2d", [x], {"weight": r(3, 4, 3, 3)},
        {"stride": 1, "padding": 60000, "dilation": 1, "groups": 1}, "more than the 4 it records")
    add("output_mask_bad", "convolution_backward", [r(2, 3, 3, 3), x, r(3, 4, 3, 3)], {},
        {"output_mask": [True]}, "output_mask")
    dump.close()
    EXPECTED["unfit_dir"] = dump.root


def aten_cases(dtype, gen):
    """(name, (op, args, kwargs)) pairs, every tensor made here, before any capture."""
    A = torch.ops.aten
    call = lambda op, *args, **kwargs: (op, args, kwargs)
    r = lambda *shape: torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
    pos = lambda *shape: r(*shape).abs() + 0.1
    x, y, v = r(4, 6), r(6, 3), r(3)
    img, w2, b2 = r(2, 4, 9, 7), r(6, 2, 3, 2), r(6)
    seq, w1 = r(2, 4, 20), r(4, 2, 3)
    conv_attrs = ([2, 1], [1, 1], [1, 1], False, [0, 0], 2)
    conv_out = A.convolution(img, w2, b2, *conv_attrs)
    ln_x, ln_w, ln_b = r(3, 4, 5), r(5), r(5)
    _, ln_mean, ln_rstd = A.native_layer_norm(ln_x, [5], ln_w, ln_b, 1e-5)
    bn_x, bn_w, bn_b, rm, rv = r(4, 3, 5), r(3), r(3), r(3), pos(3)
    _, bn_mean, bn_invstd = A.native_batch_norm(bn_x, bn_w, bn_b, rm.clone(), rv.clone(), True,
                                                0.1, 1e-5)
    soft = A._softmax(r(3, 5) * 3, 1, False)
    logsoft = A._log_softmax(r(4, 5) * 3, -1, False)
    table, ids = r(10, 5), torch.tensor([[0, 3, 9], [2, 2, 1]])
    bag_ids, offsets = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0]), torch.tensor([0, 4, 4, 7])
    _, bag_of, bag_size, _ = A._embedding_bag(table, bag_ids, offsets, False, 1, False, None,
                                              False, -1)
    bag_max = A._embedding_bag(table, bag_ids, offsets, False, 2, False, None, False, -1)[3]
    target = torch.tensor([0, 4, 2, -100])
    img_target = torch.randint(0, 4, (2, 9, 7), generator=gen)
    probs = torch.rand(3, 4, generator=gen, dtype=torch.float64).to(dtype) * 0.9 + 0.05
    labels = torch.randint(0, 2, (3, 4), generator=gen).to(dtype)
    pooled, pool_idx = A.max_pool2d_with_indices(img, [3, 3], [2, 2], [1, 1], [1, 1], True)
    avg_attrs = ([3, 2], [2, 1], [1, 1], True, False, None)
    avg = A.avg_pool2d(img, *avg_attrs)
    adaptive = A._adaptive_avg_pool2d(img, [4, 3])
    nll_total = A.nll_loss_forward(logsoft, target, pos(5), 1, -100)[1]
    state = [r(4, 3) for _ in range(8)]
    grads = [r(4, 3) for _ in range(4)]
    ints = torch.randint(0, 3, (4, 5), generator=gen)
    torch.manual_seed(7)  # native_dropout's mask
    return [
        ("mm", call(A.mm, x, y)),
        ("addmm", call(A.addmm, v, x, y, beta=0.5, alpha=2.0)),
        ("addmm_beta0", call(A.addmm, torch.full((4, 3), float("nan"), dtype=dtype), x, y,
                                        beta=0.0)),
        ("bmm", call(A.bmm, r(3, 4, 5), r(3, 5, 2))),
        ("baddbmm", call(A.baddbmm, r(3, 4, 2), r(3, 4, 5), r(3, 5, 2), alpha=1.5)),
        ("convolution2d", call(A.convolution, img, w2, b2, *conv_attrs)),
        ("convolution1d", call(A.convolution, seq, w1, None, [2], [1], [2], False, [0], 2)),
        ("convolution_backward", call(A.convolution_backward, 
            r(*conv_out.shape), img, w2, [6], *conv_attrs, [True, True, True])),
        ("convolution_backward_input", call(A.convolution_backward, 
            r(*conv_out.shape), img, w2, None, *conv_attrs, [True, False, False])),
        ("softmax", call(A._softmax, r(3, 5, 4) * 4, 1, False)),
        ("log_softmax_0d", call(A._log_softmax, r(), -1, False)),
        ("softmax_backward", call(A._softmax_backward_data, r(3, 5), soft, 1, dtype)),
        ("log_softmax_backward", call(A._log_softmax_backward_data, r(4, 5), logsoft, -1,
                                                                       dtype)),
        ("layer_norm", call(A.native_layer_norm, ln_x, [4, 5], None, None, 1e-6)),
        ("layer_norm_affine", call(A.native_layer_norm, ln_x, [5], ln_w, ln_b, 1e-5)),
        ("layer_norm_backward", call(A.native_layer_norm_backward, 
            r(3, 4, 5), ln_x, [5], ln_mean, ln_rstd, ln_w, ln_b, [True, True, True])),
        ("batch_norm_train", call(A.native_batch_norm, bn_x, bn_w, bn_b, rm.clone(),
                                                         rv.clone(), True, 0.1, 1e-5)),
        ("batch_norm_eval_2d", call(A.native_batch_norm, r(6, 3), bn_w, None, rm, rv, False,
                                                           0.1, 1e-5)),
        ("batch_norm_backward", call(A.native_batch_norm_backward, 
            r(4, 3, 5), bn_x, bn_w, rm, rv, bn_mean, bn_invstd, True, 1e-5,
            [True, True, True])),
        ("gelu", call(A.gelu, r(50) * 3)),
        ("gelu_tanh", call(A.gelu, r(50) * 3, approximate="tanh")),
        ("gelu_backward", call(A.gelu_backward, r(50), r(50) * 3)),
        ("gelu_tanh_backward", call(A.gelu_backward, r(50), r(50) * 3, approximate="tanh")),
        ("silu", call(A.silu, r(20))),
        ("relu", call(A.relu, r(20))),
        ("sigmoid", call(A.sigmoid, r(20) * 4)),
        ("tanh", call(A.tanh, r(20) * 2)),
        ("threshold_backward", call(A.threshold_backward, r(20), r(20), 0.0)),
        ("sigmoid_backward", call(A.sigmoid_backward, r(20), torch.sigmoid(r(20)))),
        ("tanh_backward", call(A.tanh_backward, r(20), torch.tanh(r(20)))),
        ("add_alpha", call(A.add, r(2, 1, 3), r(4, 3), alpha=2.0)),
        ("add_scalar", call(A.add, r(4), 1.5)),
        ("sub_alpha", call(A.sub, r(4, 3), r(3), alpha=0.5)),
        ("mul_scalar", call(A.mul, r(4, 3), 3.0)),
        ("div", call(A.div, r(4, 3), pos(4, 3))),
        ("div_floor", call(A.div, r(4, 3) * 5, pos(3), rounding_mode="floor")),
        ("add_inplace", call(A.add_, state[0], r(4, 3), alpha=-0.1)),
        ("sum_dims", call(A.sum, r(3, 4, 5), [1, -1], True)),
        ("sum_all", call(A.sum, r(3, 4))),
        ("sum_0d", call(A.sum, r(), [-1])),
        ("mean_dim", call(A.mean, r(3, 4), [0])),
        ("embedding", call(A.embedding, table, ids)),
        ("embedding_renorm", call(A.embedding_renorm_, table.clone(), ids, 1.0, 2.0)),
        ("embedding_backward", call(A.embedding_dense_backward, r(2, 3, 5), ids, 10, -1,
                                                                  False)),
        ("embedding_backward_freq", call(A.embedding_dense_backward, r(2, 3, 5), ids, 10, 2,
                                                                       True)),
        ("embedding_bag_sum", call(A._embedding_bag, table, bag_ids, offsets, False, 0, False,
                                                       r(9), False, -1)),
        ("embedding_bag_mean", call(A._embedding_bag, table, bag_ids, offsets, False, 1,
                                                        False, None, False, 4)),
        ("embedding_bag_max", call(A._embedding_bag_forward_only, table, bag_ids, offsets,
                                                                    False, 2, False, None,
                                                                    False, -1)),
        ("embedding_bag_backward_sum", call(A._embedding_bag_dense_backward, r(4, 5), bag_ids,
                                            bag_of, bag_size.zero_(), bag_max, 10, False, 0,
                                            r(9), -1)),
        ("embedding_bag_backward_mean", call(A._embedding_bag_dense_backward, r(4, 5), bag_ids,
                                             bag_of, A._embedding_bag(table, bag_ids, offsets,
                                                                      False, 1, False, None,
                                                                      False, -1)[2],
                                             bag_max, 10, False, 1, None, 4)),
        ("embedding_bag_backward_max", call(A._embedding_bag_dense_backward, r(4, 5), bag_ids,
                                            bag_of, bag_size, bag_max, 10, False, 2, None, -1)),
        ("max_pool2d", call(A.max_pool2d_with_indices, img, [3, 3], [2, 2], [1, 1], [1, 1],
                                                         True)),
        ("max_pool2d_backward", call(A.max_pool2d_with_indices_backward, 
            r(*pooled.shape), img, [3, 3], [2, 2], [1, 1], [1, 1], True, pool_idx)),
        ("avg_pool2d", call(A.avg_pool2d, img, *avg_attrs)),
        ("avg_pool2d_divisor", call(A.avg_pool2d, img, [2, 2], [], [0, 0], False, True, 3)),
        ("avg_pool2d_backward", call(A.avg_pool2d_backward, r(*avg.shape), img, *avg_attrs)),
        ("adaptive_avg_pool2d", call(A._adaptive_avg_pool2d, img, [4, 3])),
        ("adaptive_avg_pool2d_backward", call(A._adaptive_avg_pool2d_backward, 
            r(*adaptive.shape), img)),
        ("cat", call(A.cat, [r(2, 3), r(2, 4), torch.zeros(0, dtype=dtype)], 1)),
        ("stack", call(A.stack, [r(2, 3), r(2, 3)], -1)),
        ("index_select", call(A.index_select, r(3, 5), 1, torch.tensor([4, 0, 4]))),
        ("gather", call(A.gather, r(3, 5), 1, torch.tensor([[0, 4], [1, 1], [3, 2]]))),
        ("cumsum", call(A.cumsum, r(4, 6), -1)),
        ("native_dropout", call(A.native_dropout, r(8, 8), 0.3, True)),
        ("bce_with_logits", call(A.binary_cross_entropy_with_logits, r(3, 4) * 3, labels,
                                                                       pos(3, 4), pos(4), 1)),
        ("bce_with_logits_none", call(A.binary_cross_entropy_with_logits, r(3, 4), labels,
                                                                            None, None, 0)),
        ("bce", call(A.binary_cross_entropy, probs, labels, None, 1)),
        ("bce_backward", call(A.binary_cross_entropy_backward, r(), probs, labels, None, 1)),
        ("mse_loss", call(A.mse_loss, r(3, 4), r(3, 4), 2)),
        ("mse_loss_backward", call(A.mse_loss_backward, r(), r(3, 4), r(3, 4), 1)),
        ("nll_loss", call(A.nll_loss_forward, logsoft, target, pos(5), 1, -100)),
        ("nll_loss_none", call(A.nll_loss_forward, logsoft, target, None, 0, -100)),
        ("nll_loss2d", call(A.nll_loss2d_forward, r(2, 4, 9, 7), img_target, None, 2, -100)),
        ("nll_loss_backward", call(A.nll_loss_backward, r(), logsoft, target, pos(5), 1, -100,
                                                          nll_total)),
        ("sdpa_forward", call(A._scaled_dot_product_attention_forward, r(2, 2, 5, 8), r(2, 2, 7, 8),
                              r(2, 2, 7, 4), None, 0.0, True, True)),
        ("sqrt", call(A.sqrt, pos(4, 3))),
        ("addcmul", call(A.addcmul_, state[1], grads[0], grads[0], value=0.001)),
        ("addcdiv", call(A.addcdiv_, state[2], grads[1], pos(4, 3), value=-0.01)),
        ("lerp", call(A.lerp_, state[3], grads[2], 0.1)),
        ("foreach_add", call(A._foreach_add_, [state[4], state[5]], 1.0)),
        ("foreach_addcmul", call(A._foreach_addcmul_, [state[6], state[7]], grads[:2],
                                                        grads[2:], 0.5)),
        ("foreach_sqrt", call(A._foreach_sqrt, [pos(2), pos(3, 1)])),
        ("zeros_like", call(A.zeros_like, r(2, 3))),
        ("new_zeros", call(A.new_zeros, r(2), [3, 2])),
        ("fill", call(A.fill_, r(2, 2), 2.5)),
        ("clone", call(A.clone, r(3))),
        ("copy", call(A.copy_, r(2, 3), r(3))),
        ("to_copy", call(A._to_copy, r(5), dtype=torch.float16)),
        # torch 2.x's model code: rotary embeddings, RMSNorm, SiLU MLPs, attention masks
        ("sin", call(A.sin, r(4, 6) * 20)),
        ("cos", call(A.cos, r(4, 6) * 20)),
        ("rsqrt", call(A.rsqrt, pos(4, 3))),
        ("pow_scalar", call(A.pow, r(4, 3), 2)),
        ("pow_scalar_half", call(A.pow, pos(4, 3), -0.5)),
        ("pow_tensor", call(A.pow, pos(4, 3), r(3))),
        ("pow_scalar_base", call(A.pow, 2.0, r(4, 3))),
        ("silu_backward", call(A.silu_backward, r(30), r(30) * 3)),
        ("eq", call(A.eq, ints, 1)),
        ("ne", call(A.ne, ints, torch.randint(0, 3, (5,), generator=gen))),
        ("ge", call(A.ge, r(4, 5), r(5))),
        ("gt_scalar", call(A.gt, r(4, 5), 0.25)),
        ("lt", call(A.lt, r(4, 5), r(4, 1))),
        ("bitwise_and", call(A.bitwise_and, ints > 0, ints < 2)),
        ("logical_not", call(A.logical_not, ints > 0)),
        ("where", call(A.where, ints > 0, r(4, 5), r(5))),
        ("where_scalar", call(A.where, ints > 0, r(4, 5), torch.tensor(-1e9, dtype=dtype))),
        ("all", call(A.all, ints >= 0)),
        ("any_dim", call(A.any, ints > 1, 1)),
        ("slice_backward", call(A.slice_backward, r(4, 2, 5), [4, 7, 5], 1, 1, 6, 3)),
        ("select_backward", call(A.select_backward, r(4, 5), [4, 3, 5], 1, -1)),
        ("arange_float", call(A.arange, 0.0, 3.0, 0.25, dtype=dtype)),
        ("arange_int", call(A.arange, 7)),
        ("scalar_tensor", call(A.scalar_tensor, -2.5, dtype=dtype)),
        # advanced indexing: TorchRec's interaction (None first), BERT's mask (broadcast)
        ("index", call(A.index, r(3, 4, 5), [None, torch.tensor([0, 3, -1]),
                                            torch.tensor([4, 0, 2])])),
        ("index_broadcast", call(A.index, ints, [torch.arange(4).view(4, 1, 1),
                                                 torch.arange(5).view(1, 1, 5)])),
        ("index_put_accumulate", call(A.index_put, r(3, 4, 5), [None, torch.tensor([0, 3, 1]),
                                                               torch.tensor([4, 0, 2])],
                                      r(3, 3), True)),
    ]


def gen_aten(kind, dtype):
    """A version 2 dump of every aten case, captured by parity_dump; "<kind>_aten" lists the
    ops recorded."""
    gen = torch.Generator().manual_seed(20261206)
    root = path(kind + "_aten", "x")[:-2]
    if os.path.isdir(root):
        import shutil
        shutil.rmtree(root)
    cases = aten_cases(dtype, gen)
    with parity_dump.capture(torch.nn.Module(), root):
        for _, (op, args, kwargs) in cases:
            op(*args, **kwargs)
    with open(os.path.join(root, "records.jsonl")) as f:
        ops = sorted({json.loads(line)["op"] for line in f})
    EXPECTED[kind + "_aten"] = {"cases": [name for name, _ in cases], "ops": ops}
    EXPECTED[kind + "_aten_dir"] = root


def main():
    global OUT
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    OUT = os.path.abspath(sys.argv[1])
    torch.set_num_threads(1)
    gen_ops("f64", torch.float64)
    gen_ops("f32", torch.float32)
    gen_unfit()
    gen_aten("f64", torch.float64)
    gen_aten("f32", torch.float32)
    with open(os.path.join(OUT, "oracle", "expected.json"), "w") as f:
        json.dump(EXPECTED, f, indent=1)


if __name__ == "__main__":
    main()
