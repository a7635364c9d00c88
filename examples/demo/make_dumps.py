#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the demo's two dump directories: one small model run on two platforms.

The model is linear -> gelu -> linear -> softmax on a batch of 64. The baseline computes in
float32 (as a CPU or an MI250 does for float32 matmuls); the candidate ran its matmuls on
tf32-rounded inputs (as an A100 does with TF32 enabled) but its manifest says TF32 was off,
which is the trap the NGC containers' TORCH_ALLOW_TF32_CUBLAS_OVERRIDE sets.

Both are written in the parity-dump format (manifest.json, records.jsonl, tensors/*.npy), the
way python/parity_dump writes them.

Usage: make_dumps.py OUT     (writes OUT/baseline and OUT/candidate)
"""
import json
import math
import os
import sys

import numpy as np


def tf32(x):
    """float32 rounded to tf32 precision (10 fraction bits), ties to even."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0xFFF + ((u >> 13) & 1)) & 0xFFFFE000
    return u.astype(np.uint32).view(np.float32)


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def run_model(x, w1, b1, w2, matmul_input):
    """Each op in float64 on what it was given, rounded to float32: a correctly rounded op."""
    h = (matmul_input(x).astype(np.float64) @ matmul_input(w1).T.astype(np.float64) + b1)
    h = h.astype(np.float32)
    g = gelu(h.astype(np.float64)).astype(np.float32)
    y = (matmul_input(g).astype(np.float64) @ matmul_input(w2).T.astype(np.float64))
    y = y.astype(np.float32)
    e = np.exp(y.astype(np.float64) - y.max(axis=1, keepdims=True))
    p = (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    return [
        ("encoder.fc1", "linear", {}, [x], {"weight": w1, "bias": b1}, [h]),
        ("encoder.act", "gelu", {"approximate": "none"}, [h], {}, [g]),
        ("head.fc2", "linear", {}, [g], {"weight": w2}, [y]),
        ("head.softmax", "softmax", {"dim": -1}, [y], {}, [p]),
    ]


def write_dump(root, device_name, records):
    os.makedirs(os.path.join(root, "tensors"), exist_ok=True)
    manifest = {"format": "parity-dump", "version": 1,
                "platform": {"device": "cuda:0", "device_name": device_name},
                "framework": {"name": "torch", "version": "demo",
                              "settings": {"allow_tf32_matmul": False, "allow_tf32_cudnn": True,
                                           "float32_matmul_precision": "highest"}}}
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    with open(os.path.join(root, "records.jsonl"), "w") as f:
        for seq, (name, op, attrs, inputs, params, outputs) in enumerate(records):
            def save(slot, arr):
                rel = "tensors/%06d_%s.npy" % (seq, slot)
                np.save(os.path.join(root, rel), arr)
                return {"file": rel, "dtype": "float32", "shape": list(arr.shape)}
            record = {"seq": seq, "name": name, "op": op, "pass": "forward", "call": 0,
                      "attrs": attrs,
                      "inputs": [save("in%d" % i, t) for i, t in enumerate(inputs)],
                      "params": {k: save(k, v) for k, v in params.items()},
                      "outputs": [save("out%d" % i, t) for i, t in enumerate(outputs)]}
            f.write(json.dumps(record) + "\n")


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(2026)
    x = rng.standard_normal((64, 512), dtype=np.float32)
    w1 = (rng.standard_normal((1024, 512)) / np.sqrt(512)).astype(np.float32)
    b1 = (rng.standard_normal(1024) * 0.1).astype(np.float32)
    w2 = (rng.standard_normal((10, 1024)) / np.sqrt(1024)).astype(np.float32)
    write_dump(os.path.join(out, "baseline"), "AMD Instinct MI250X (simulated)",
               run_model(x, w1, b1, w2, lambda t: t))
    write_dump(os.path.join(out, "candidate"), "NVIDIA A100-SXM4-80GB (simulated)",
               run_model(x, w1, b1, w2, tf32))


if __name__ == "__main__":
    main()
