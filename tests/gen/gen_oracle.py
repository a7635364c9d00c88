#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the float64 oracle's test dumps, with outputs from independent implementations.

  OUT/oracle/f64/     one record per op case: float64 inputs, and the output PyTorch computes in
                      float64 (numpy float64 formulas for the ops this torch lacks:
                      scaled_dot_product_attention and rms_norm before torch 2.1/2.4)
  OUT/oracle/f32/     the same cases in float32, outputs from PyTorch's float32 kernels
  OUT/oracle/unfit/   records whose attrs or tensors don't fit their op, or that can't be
                      replayed (expected.json "unfit": seq -> the reason's key words)

Usage: gen_oracle.py OUT
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

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

    def add(self, name, op, inputs, outputs, params=None, attrs=None):
        rec = {"seq": self.seq, "name": name, "op": op, "pass": "forward", "call": 0,
               "attrs": attrs or {},
               "inputs": [self.tensor("in%d" % i, t) for i, t in enumerate(inputs)],
               "params": {k: self.tensor(k, v) for k, v in (params or {}).items()},
               "outputs": [self.tensor("out%d" % i, t) for i, t in enumerate(outputs)]}
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
    if op == "scaled_dot_product_attention":
        return sdpa(*inputs[:3], mask=inputs[3] if len(inputs) > 3 else None,
                    causal=attrs["is_causal"], scale=attrs.get("scale"))
    raise ValueError(op)


def gen_ops(kind, dtype):
    gen = torch.Generator().manual_seed(20261202)
    dump = Dump(kind)
    for name, op, inputs, params, attrs in cases(dtype, gen):
        outputs = compute(op, inputs, params, attrs, gen)
        seq = dump.add(name, op, inputs, [outputs], params, attrs)
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
    dump.close()
    EXPECTED["unfit_dir"] = dump.root


def main():
    global OUT
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    OUT = os.path.abspath(sys.argv[1])
    torch.set_num_threads(1)
    gen_ops("f64", torch.float64)
    gen_ops("f32", torch.float32)
    gen_unfit()
    with open(os.path.join(OUT, "oracle", "expected.json"), "w") as f:
        json.dump(EXPECTED, f, indent=1)


if __name__ == "__main__":
    main()
