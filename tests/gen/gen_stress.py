#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the reference losses of `parity stress`'s train workload into tests/data/stress/
(checked in): the same model, data and initial weights as src/stress/workload_train.cc,
implemented independently in numpy, trained in float64.

  OUT/train_expected.json   per case: the parameters of each phase (a phase is a run of steps
                            with one batch_size and lr, as the stress matrix changes them on a
                            resume), the loss of every step, the first initial weights of W1
                            and W2 (exact: one rounding from float64 on both sides), and the
                            tolerance the test compares losses with

The model, for a batch x (batch_size x inputs): h = relu(x.W1 + b1), y = h.W2 + b2,
loss = mean((y - t)^2) over batch and outputs, targets t = x.T; SGD w -= lr * dloss/dw. Data:
GemmInputValue(seed, salt, i) of src/bench/gemm_check.cc (SplitMix64 of seed, salt and i,
53 bits mapped to [-1, 1)); x of step k (from 1) is element (k*batch_size*inputs + i) of
seed + 1000, salt 1; W1, W2 and T are salts 21, 22 and 23 of seed, scaled by 1/sqrt(inputs),
1/sqrt(hidden) and 1/sqrt(inputs) in float64 and rounded once to float32; b1 = b2 = 0.

The same bytes on every processor: parity's float32 inputs (x, T, the initial W1 and W2, lr
rounded to float32) are taken exactly, and every operation after them is in float64, with no
BLAS and no reduction whose order numpy or OpenBLAS picks per processor: each matrix product
and column sum adds its terms one elementwise operation at a time in a fixed order (each
correctly rounded, whatever the vector unit), and the loss's sum is math.fsum's (exact, then
rounded once). A float32 matmul by numpy would not be: OpenBLAS's sgemm kernels (Haswell,
Sandybridge, SkylakeX, chosen by the CPU) sum in different orders, and moved losses by up to
2.4e-7 relative.

parity computes in float32 (the backend's GEMM, its own loops), so its losses differ from
these by its own rounding: 2^-24 (6e-8) relative per operation, over sums of up to 128 terms,
carried through ten SGD steps. The test compares them at loss_rtol (1e-4); the largest
difference measured is 5.0e-7 relative (5.3e-7 against the float32 numpy losses these replaced).

Usage: gen_stress.py [OUT]   (default: tests/data/stress)
"""
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "data", "stress")

U64 = np.uint64
MASK = (1 << 64) - 1


def mix(z):
    """SplitMix64's finaliser, on uint64 arrays (wrapping multiplication)."""
    z = z ^ (z >> U64(30))
    z = z * U64(0xBF58476D1CE4E5B9)
    z = z ^ (z >> U64(27))
    z = z * U64(0x94D049BB133111EB)
    return z ^ (z >> U64(31))


def gemm_input_values(seed, salt, first, count):
    """GemmInputValue(seed, salt, first + i) for i < count, as float64."""
    base = mix(np.array([(seed * 0x9E3779B97F4A7C15 + salt) & MASK], dtype=U64))[0]
    index = (np.arange(count, dtype=U64) + U64(first & MASK)) + base
    bits = mix(index)
    return (bits >> U64(11)).astype(np.float64) * 2.0 ** -52 - 1.0


def scaled(seed, salt, count, scale):
    return (gemm_input_values(seed, salt, 0, count) * scale).astype(np.float32)


def matmul(a, b):
    """a @ b in float64 without BLAS: each element summed over k in increasing order."""
    out = np.zeros((a.shape[0], b.shape[1]))
    for k in range(a.shape[1]):
        out += a[:, k:k + 1] * b[k:k + 1, :]
    return out


def column_sums(m):
    """Sums over the rows of m in row order, in float64."""
    out = np.zeros(m.shape[1])
    for row in m:
        out += row
    return out


def train(seed, inputs, hidden, outputs, phases):
    """Losses of every step of `phases` [(batch_size, lr, first_step, last_step)], and the
    initial W1 and W2 (float32, as parity starts from them)."""
    f64 = np.float64
    w1_0 = scaled(seed, 21, inputs * hidden, 1.0 / np.sqrt(inputs)).reshape(inputs, hidden)
    w2_0 = scaled(seed, 22, hidden * outputs, 1.0 / np.sqrt(hidden)).reshape(hidden, outputs)
    teacher = scaled(seed, 23, inputs * outputs,
                     1.0 / np.sqrt(inputs)).reshape(inputs, outputs).astype(f64)
    w1, w2 = w1_0.astype(f64), w2_0.astype(f64)
    b1 = np.zeros(hidden)
    b2 = np.zeros(outputs)
    losses = []
    for batch, lr, first, last in phases:
        lr = float(np.float32(lr))  # as parity rounds it
        for step in range(first, last + 1):
            x = gemm_input_values(seed + 1000, 1, step * batch * inputs, batch * inputs)
            x = x.astype(np.float32).astype(f64).reshape(batch, inputs)
            t = matmul(x, teacher)
            pre = matmul(x, w1) + b1
            h = np.maximum(pre, 0.0)
            y = matmul(h, w2) + b2
            d = y - t
            losses.append(math.fsum((d * d).reshape(-1).tolist()) / (batch * outputs))
            dy = d * (2.0 / (batch * outputs))
            dw2 = matmul(h.T, dy)
            db2 = column_sums(dy)
            dh = matmul(dy, w2.T) * (pre > 0)
            dw1 = matmul(x.T, dh)
            db1 = column_sums(dh)
            w1 -= lr * dw1
            b1 -= lr * db1
            w2 -= lr * dw2
            b2 -= lr * db2
            assert w1.dtype == f64 and w2.dtype == f64 and b1.dtype == f64 and b2.dtype == f64
    return losses, w1_0, w2_0


CASES = [
    # name, seed, inputs, hidden, outputs, phases
    ("batch32", 1, 64, 128, 8, [(32, 0.1, 1, 10)]),
    ("odd-shapes", 42, 5, 9, 3, [(7, 0.5, 1, 10)]),
    # Resumed after step 5 with another batch size and learning rate.
    ("resume-changed", 1, 64, 128, 8, [(32, 0.1, 1, 5), (16, 0.2, 6, 10)]),
    # The default parameters.
    ("defaults", 1, 64, 128, 8, [(64, 0.01, 1, 10)]),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = []
    for name, seed, inputs, hidden, outputs, phases in CASES:
        losses, w1, w2 = train(seed, inputs, hidden, outputs, phases)
        cases.append({
            "name": name,
            "seed": seed,
            "inputs": inputs,
            "hidden": hidden,
            "outputs": outputs,
            "phases": [{"batch_size": b, "lr": lr, "first_step": s0, "last_step": s1}
                       for b, lr, s0, s1 in phases],
            "losses": losses,
            "w1_first": [float(v) for v in w1.reshape(-1)[:4]],
            "w2_first": [float(v) for v in w2.reshape(-1)[:4]],
        })
    doc = {"generator": "tests/gen/gen_stress.py", "loss_rtol": 1e-4, "cases": cases}
    with open(os.path.join(OUT, "train_expected.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
