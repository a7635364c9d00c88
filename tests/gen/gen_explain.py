#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the corpus of `parity explain`: pairs of dumps of one small model with planted causes.

The model (float32, batch 16): conv (conv2d 3->8, 3x3) -> relu -> fc1 (linear 512->256) ->
act (gelu) -> drop (dropout p=0.1) -> fc2 (linear 256->128) -> add (+ a skip input) ->
norm (layer_norm) -> head (linear 128->10) -> prob (softmax). Every op is computed here with
numpy, independently of parity: A is the plain float32 run; each B plants one cause at one op
and computes everything after it from B's own outputs, as a second platform would.

  OUT/explain/<case>/a, OUT/explain/<case>/b   the two dumps of each case
  OUT/explain/expected.json   {case: {"origins": [[name, cause, precision|null]], "exit": N,
                                       "input_difference": bool, "labels": {name: cause}}}

Usage: gen_explain.py OUT
"""
import json
import math
import os
import shutil
import sys

import numpy as np

F32 = np.float32


# --- rounding, as the hardware formats define it (numpy bit arithmetic, ties to even) ---------
def round_bits(x, drop):
    """float32 -> float32 with the low `drop` significand bits rounded off (ties to even)."""
    u = np.asarray(x, dtype=F32).view(np.uint32).astype(np.uint64)
    half = (1 << (drop - 1)) - 1
    u = (u + half + ((u >> drop) & 1)) & ~np.uint64((1 << drop) - 1)
    return u.astype(np.uint32).view(F32)


def tf32(x):
    return round_bits(x, 13)


def tf32_away(x):
    """tf32 with ties away from zero (PTX cvt.rna): half a tf32 unit added to the magnitude's
    bits, then the 13 low bits cleared (float32's sign is apart from its magnitude bits)."""
    u = np.asarray(x, dtype=F32).view(np.uint32).astype(np.uint64)
    return ((u + 0x1000) & ~np.uint64(0x1FFF)).astype(np.uint32).view(F32)


def tf32_truncated(x):
    """tf32 toward zero: the 13 low significand bits cleared."""
    return (np.asarray(x, dtype=F32).view(np.uint32) & np.uint32(0xFFFFE000)).view(F32)


def with_ties(x):
    """Every other value snapped to 12 significant bits ending in a one: a tf32 tie, exactly
    halfway between two tf32 values (its 13 low bits are 0x1000), as data on a coarse grid has."""
    u = np.asarray(x, dtype=F32).copy().view(np.uint32).reshape(-1)
    u[::2] = (u[::2] & np.uint32(0xFFFFE000)) | np.uint32(0x1000)
    return u.view(F32).reshape(np.shape(x))


def bf16(x):
    return round_bits(x, 16)


def fp16(x):
    return np.asarray(x, dtype=F32).astype(np.float16).astype(F32)


# --- the ops, in float32 -----------------------------------------------------------------------
def conv2d_direct(x, w, b):
    """3x3 convolution, padding 1: a sum over (c, i, j) accumulated in float32, in that order."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, o, h, wd), dtype=F32)
    for ci in range(c):
        for i in range(3):
            for j in range(3):
                patch = xp[:, ci, i:i + h, j:j + wd]  # n, h, w
                y += (patch[:, None, :, :] * w[None, :, ci, i, j, None, None]).astype(F32)
    return (y + b[None, :, None, None]).astype(F32)


def conv2d_im2col(x, w, b):
    """The same convolution as a float32 GEMM over im2col columns, its sum over (c, i, j) taken
    in the reverse order: another algorithm, by its accumulation order alone. The GEMM is
    written out rather than left to the BLAS: OpenBLAS picks its kernel by the CPU, and on one
    it does not recognise (a VM's generic Xeon) its Prescott kernel sums in conv2d_direct's
    order, bit for bit the same."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    cols = np.stack([xp[:, ci, i:i + h, j:j + wd] for ci in range(c) for i in range(3)
                     for j in range(3)], axis=1)  # n, c*9, h, w
    cols = cols.transpose(0, 2, 3, 1).reshape(-1, c * 9)
    wm = w.reshape(o, -1)
    y = np.zeros((cols.shape[0], o), dtype=F32)
    for k in reversed(range(c * 9)):
        y += (cols[:, k, None] * wm[None, :, k]).astype(F32)
    y = (y + b).astype(F32)
    return y.reshape(n, h, wd, o).transpose(0, 3, 1, 2).astype(F32).copy()


def linear(x, w, b):
    return ((x @ w.T).astype(F32) + b).astype(F32)


def linear_blocked(x, w, b, block=64):
    """Another summation order: partial products over K blocks, summed last block first."""
    k = x.shape[1]
    acc = np.zeros((x.shape[0], w.shape[0]), dtype=F32)
    for s in reversed(range(0, k, block)):
        acc = (acc + (x[:, s:s + block] @ w[:, s:s + block].T).astype(F32)).astype(F32)
    return (acc + b).astype(F32)


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def gelu(x):
    x64 = x.astype(np.float64)
    return (0.5 * x64 * (1.0 + erf(x64 / math.sqrt(2.0)))).astype(F32)


def gelu_tanh(x):
    x64 = x.astype(np.float64)
    inner = math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64 ** 3)
    return (0.5 * x64 * (1.0 + np.tanh(inner))).astype(F32)


def dropout(x, p, seed, rate=None):
    """Drops at `rate` (p unless given), scales the kept values by 1/(1-p)."""
    keep = np.random.default_rng(seed).random(x.shape) >= (p if rate is None else rate)
    return np.where(keep, x / F32(1.0 - p), F32(0)).astype(F32)


def layer_norm(x, w, b, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True, dtype=F32)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True, dtype=F32)
    return (((x - mean) / np.sqrt(var + F32(eps))) * w + b).astype(F32)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(F32)


# --- dumps -------------------------------------------------------------------------------------
class Dump:
    def __init__(self, root, settings=None):
        self.root = root
        os.makedirs(os.path.join(root, "tensors"), exist_ok=True)
        with open(os.path.join(root, "manifest.json"), "w") as f:
            json.dump({"format": "parity-dump", "version": 1,
                       "platform": {"device": "cpu", "device_name": "gen_explain"},
                       "framework": {"name": "numpy", "version": np.__version__,
                                     "settings": settings or {}}}, f)
        self.records = open(os.path.join(root, "records.jsonl"), "w")
        self.seq = 0

    def tensor(self, slot, a):
        a = np.ascontiguousarray(a)
        rel = "tensors/%04d_%s.npy" % (self.seq, slot)
        np.save(os.path.join(self.root, rel), a)
        return {"file": rel, "dtype": str(a.dtype), "shape": list(a.shape)}

    def add(self, name, op, inputs, outputs, params=None, attrs=None, time_us=None):
        rec = {"seq": self.seq, "name": name, "op": op, "pass": "forward", "call": 0,
               "attrs": attrs or {},
               "inputs": [self.tensor("in%d" % i, t) for i, t in enumerate(inputs)],
               "params": {k: self.tensor(k, v) for k, v in (params or {}).items()},
               "outputs": [self.tensor("out%d" % i, t) for i, t in enumerate(outputs)]}
        if time_us is not None:
            rec["time_us"] = time_us
        self.records.write(json.dumps(rec) + "\n")
        self.seq += 1

    def close(self):
        self.records.close()


def model_params(ties=False):
    """The model's input and parameters; with `ties`, fc1's weight has tf32 ties at every other
    element (so that rounding them to nearest even and away from zero differ at every output)."""
    rng = np.random.default_rng(20261202)
    def u(shape, fan_in):
        bound = 1.0 / math.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(F32)
    p = {
        "x": rng.standard_normal((16, 3, 8, 8)).astype(F32),
        "skip": rng.standard_normal((16, 128)).astype(F32),
        "conv.weight": u((8, 3, 3, 3), 27), "conv.bias": u((8,), 27),
        "fc1.weight": u((256, 512), 512), "fc1.bias": u((256,), 512),
        "fc2.weight": u((128, 256), 256), "fc2.bias": u((128,), 256),
        "norm.weight": (1.0 + 0.1 * rng.standard_normal(128)).astype(F32),
        "norm.bias": (0.1 * rng.standard_normal(128)).astype(F32),
        "head.weight": u((10, 128), 128) * F32(4.0), "head.bias": u((10,), 128),
    }
    if ties:
        p["fc1.weight"] = with_ties(p["fc1.weight"])
    return p


def run(root, plant=None, settings=None, drop_seed=7, times=None, ties=False):
    """One forward pass recorded into `root`; `plant` names what this platform does differently;
    `ties`: the parameters of model_params(ties=True)."""
    P = model_params(ties)
    d = Dump(root, settings)
    t = times or {}
    x = P["x"]
    if plant == "input-data":
        x = x.copy()
        x[0, 0, 0, :] += F32(0.01)
    cw, cb = P["conv.weight"], P["conv.bias"]
    y = conv2d_im2col(x, cw, cb) if plant == "conv-algorithm" else conv2d_direct(x, cw, cb)
    d.add("conv", "conv2d", [x], [y], {"weight": cw, "bias": cb},
          {"stride": 1, "padding": 1, "dilation": 1, "groups": 1}, t.get("conv"))
    if plant == "missing-record":
        r = np.maximum(y, 0)
    else:
        r = np.maximum(y, F32(0)).astype(F32)
        d.add("relu", "relu", [y], [r], time_us=t.get("relu"))
    h = r.reshape(16, -1)
    w1, b1 = P["fc1.weight"], P["fc1.bias"]
    if plant in ("tf32", "tf32-all"):
        z = linear(tf32(h), tf32(w1), b1)
    elif plant == "tf32-rna":
        z = linear(tf32_away(h), tf32_away(w1), b1)
    elif plant == "tf32-trunc":
        z = linear(tf32_truncated(h), tf32_truncated(w1), b1)
    elif plant == "summation-order":
        z = linear_blocked(h, w1, b1)
    else:
        z = linear(h, w1, b1)
    if plant == "early-error":
        z = z.copy()
        z[3, :] *= F32(1.0 + 2e-3)
    d.add("fc1", "linear", [h], [z], {"weight": w1, "bias": b1}, time_us=t.get("fc1"))
    a = gelu_tanh(z) if plant == "gelu-tanh" else gelu(z)
    d.add("act", "gelu", [z], [a], attrs={"approximate": "none"}, time_us=t.get("act"))
    dr = dropout(a, 0.1, drop_seed + (1 if plant == "dropout-seed" else 0),
                 0.3 if plant == "dropout-rate" else None)
    d.add("drop", "dropout", [a], [dr], attrs={"p": 0.1, "training": True},
          time_us=t.get("drop"))
    w2, b2 = P["fc2.weight"], P["fc2.bias"]
    if plant == "bf16":
        f = bf16(linear(bf16(dr), bf16(w2), bf16(b2)))
    elif plant == "tf32-all":
        f = linear(tf32(dr), tf32(w2), b2)
    else:
        f = linear(dr, w2, b2)
    d.add("fc2", "linear", [dr], [f], {"weight": w2, "bias": b2}, time_us=t.get("fc2"))
    s = (f + P["skip"]).astype(F32)
    d.add("add", "add", [f, P["skip"]], [s], time_us=t.get("add"))
    nw, nb = P["norm.weight"], P["norm.bias"]
    n = layer_norm(s, nw, nb)
    if plant == "nan":
        n = n.copy()
        n[5, 17] = np.nan
    if plant == "shape":
        d.add("norm", "layer_norm", [s], [n[:, :64]], {"weight": nw, "bias": nb},
              {"normalized_shape": [128], "eps": 1e-5}, time_us=t.get("norm"))
    else:
        d.add("norm", "layer_norm", [s], [n], {"weight": nw, "bias": nb},
              {"normalized_shape": [128], "eps": 1e-5}, time_us=t.get("norm"))
    hw, hb = P["head.weight"], P["head.bias"]
    o = linear(tf32(n), tf32(hw), hb) if plant == "tf32-all" else linear(n, hw, hb)
    d.add("head", "linear", [n], [o], {"weight": hw, "bias": hb}, time_us=t.get("head"))
    pr = fp16(softmax(fp16(o))) if plant == "fp16-softmax" else softmax(o)
    d.add("prob", "softmax", [o], [pr], attrs={"dim": -1}, time_us=t.get("prob"))
    d.close()


OPS = ["conv", "relu", "fc1", "act", "drop", "fc2", "add", "norm", "head", "prob"]


def downstream(of, cause="inherited"):
    """Labels: ops before `of` identical, later ops `cause`; `of` itself is the case's."""
    i = OPS.index(of)
    return {name: ("identical" if k < i else cause) for k, name in enumerate(OPS) if k != i}


# case -> (plant, origins [(op, cause, precision)], labels of the other ops, input difference)
CASES = {
    "identical": (None, [], {name: "identical" for name in OPS}, False),
    # tf32 to nearest even on operands inside fp16's normal range replays as fp16 does; the
    # manifest says "cpu", where TF32 cannot exist: explain names fp16 (docs/EXPLAIN.md).
    "tf32-matmul": ("tf32", [("fc1", "reduced-precision", "fp16")], downstream("fc1"), False),
    # Every matmul in tf32: fc2 and head are origins too, although their inputs already differ.
    "tf32-all": ("tf32-all", [("fc1", "reduced-precision", "fp16"),
                              ("fc2", "reduced-precision", "fp16"),
                              ("head", "reduced-precision", "fp16")], downstream("fc1"), False),
    # fc1 in tf32 rounded with ties away from zero, on a weight full of ties: found as such,
    # although rounding to nearest even differs at every tie.
    "tf32-rna": ("tf32-rna", [("fc1", "reduced-precision", "tf32")], downstream("fc1"), False),
    "tf32-trunc": ("tf32-trunc", [("fc1", "reduced-precision", "tf32")], downstream("fc1"),
                   False),
    "bf16-compute": ("bf16", [("fc2", "reduced-precision", "bf16")], downstream("fc2"), False),
    "fp16-softmax": ("fp16-softmax", [("prob", "reduced-precision", "fp16")],
                     downstream("prob"), False),
    "dropout-seed": ("dropout-seed", [("drop", "rng-divergence", None)], downstream("drop"),
                     False),
    # Masks drawn at rate 0.3 where the record says p = 0.1: not a matter of seeds.
    "dropout-rate": ("dropout-rate", [("drop", "algorithmic", None)], downstream("drop"), False),
    "summation-order": ("summation-order", [], dict(downstream("fc1"), fc1="within-rounding"),
                        False),
    "nan": ("nan", [("norm", "nonfinite", None)], downstream("norm"), False),
    "early-error": ("early-error", [("fc1", "algorithmic", None)], downstream("fc1"), False),
    "gelu-tanh": ("gelu-tanh", [("act", "algorithmic", None)], downstream("act"), False),
    "conv-algorithm": ("conv-algorithm", [], dict(downstream("conv"), conv="within-rounding"),
                       False),
    "input-data": ("input-data", [], dict(downstream("conv"), conv="inherited"), True),
    "missing-record": ("missing-record", [("relu", "structural", None)],
                       dict({n: "identical" for n in OPS}, relu="structural"), False),
    "shape": ("shape", [("norm", "structural", None)],
              dict(downstream("norm", "identical"), norm="structural"), False),
}

# Cases whose two sides both run on the parameters of model_params(ties=True).
TIE_RICH = {"tf32-rna"}


def main():
    out = os.path.join(sys.argv[1], "explain")
    shutil.rmtree(out, ignore_errors=True)
    expected = {}
    base_times = {name: 100.0 + 10 * i for i, name in enumerate(OPS)}
    for case, (plant, origins, labels, input_difference) in CASES.items():
        ties = case in TIE_RICH
        run(os.path.join(out, case, "a"), times=base_times, ties=ties)
        times_b = dict(base_times)
        if case == "identical":
            times_b["fc1"] = base_times["fc1"] * 3.0  # B's slowest op, relative to A
        run(os.path.join(out, case, "b"), plant, times=times_b, ties=ties)
        labels = dict(labels)
        for name, cause, _ in origins:
            labels[name] = cause
        expected[case] = {
            "plant": plant,
            "origins": [list(o) for o in origins],
            "labels": labels,
            "input_difference": input_difference,
            "exit": 1 if origins or input_difference else 0,
        }
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)


if __name__ == "__main__":
    main()
