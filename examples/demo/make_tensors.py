#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the demo's tensors: one layer of a small model as two platforms computed it.

  OUT/baseline/   .npy files: float32 inputs, weights and the float32 product (the trusted run)
  OUT/candidate/  the same layer where the matmul ran on tf32-rounded inputs (as on an A100
                  with TF32 enabled), saved as .safetensors with a bfloat16 copy of the output,
                  plus an .npz of the embedding table

Usage: make_tensors.py OUT
"""
import json
import os
import struct
import sys

import numpy as np


def tf32(x):
    """Rounds float32 to tf32 precision (10 fraction bits), ties to even."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0xFFF + ((u >> 13) & 1)) & 0xFFFFE000
    return u.astype(np.uint32).view(np.float32)


def bf16_bits(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def write_safetensors(path, tensors):
    header, blobs, offset = {"__metadata__": {"platform": "candidate"}}, [], 0
    for name, (code, arr) in tensors.items():
        raw = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": code, "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    out = sys.argv[1]
    rng = np.random.default_rng(2026)
    x = rng.standard_normal((64, 512), dtype=np.float32)
    w = (rng.standard_normal((1024, 512)) / np.sqrt(512)).astype(np.float32)
    b = (rng.standard_normal(1024) * 0.1).astype(np.float32)
    y = (x.astype(np.float64) @ w.T.astype(np.float64) + b).astype(np.float32)
    y_tf32 = (tf32(x).astype(np.float64) @ tf32(w).T.astype(np.float64) + b).astype(np.float32)
    emb = rng.standard_normal((1000, 32), dtype=np.float32)
    os.makedirs(os.path.join(out, "baseline"), exist_ok=True)
    os.makedirs(os.path.join(out, "candidate"), exist_ok=True)
    for name, arr in {"fc1.input": x, "fc1.weight": w, "fc1.bias": b, "fc1.output": y}.items():
        np.save(os.path.join(out, "baseline", name + ".npy"), arr)
    write_safetensors(os.path.join(out, "candidate", "fc1.safetensors"), {
        "fc1.input": ("F32", x), "fc1.weight": ("F32", w), "fc1.bias": ("F32", b),
        "fc1.output": ("F32", y_tf32), "fc1.output.bf16": ("BF16", bf16_bits(y_tf32))})
    np.savez_compressed(os.path.join(out, "candidate", "embedding.npz"), table=emb,
                        ids=rng.integers(0, 1000, 64))


if __name__ == "__main__":
    main()
