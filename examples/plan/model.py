#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The reference plan's workload: a small click-through model (embedding -> MLP -> sigmoid) on
this machine's CPU through PyTorch.

  model.py dump OUT [--config C] [--threads N]    one forward pass recorded op by op with
                                                  parity_dump (a parity-dump directory)
  model.py score OUT [--config C] [--threads N]   scores and labels of a synthetic labelled set:
                                                  OUT/scores.npy, OUT/labels.npy

--config reference (the default) computes each op in float64 from its float32 inputs and rounds
the result to float32: every op correctly rounded, the trusted configuration. --config
optimised computes in float32 throughout, as the platform's kernels do. --threads N runs torch
on N threads (0: one per CPU; default 1).

The weights and data come from fixed seeds, so two platforms run the same model on the same
inputs; what differs is how each one computes.
"""
import argparse
import contextlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import parity_dump  # noqa: E402
from torch.overrides import TorchFunctionMode  # noqa: E402

F = torch.nn.functional
# The ops the model calls, each run in float64 and rounded to float32 by the reference config.
_FLOAT64_OPS = {F.linear, F.gelu, F.relu, torch.sigmoid, torch.Tensor.sigmoid, torch.matmul}


class Float64Ops(TorchFunctionMode):
    """Runs each of _FLOAT64_OPS in float64 on its float32 arguments and rounds the result to
    float32. Entered outside parity_dump.capture, so the dump records the op's float32 inputs
    and its rounded float32 output."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func not in _FLOAT64_OPS:
            return func(*args, **kwargs)

        def up(v):
            return v.double() if isinstance(v, torch.Tensor) and v.dtype == torch.float32 else v
        out = func(*[up(a) for a in args], **{k: up(v) for k, v in kwargs.items()})
        return out.float() if out.dtype == torch.float64 else out


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32), torch.nn.ReLU(),
        torch.nn.Linear(32, 1))


def data(n, seed):
    """Inputs, and labels drawn from the model's own float64 logits with noise, so the scores
    carry signal (an AUC near 0.8) and the labels are the same on every platform."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 32)).astype(np.float32)
    with torch.no_grad():
        logits = model().double()(torch.from_numpy(x).double()).squeeze(1).numpy()
    noisy = logits / logits.std() + 0.8 * rng.standard_normal(n)
    labels = (noisy > np.median(noisy)).astype(np.uint8)
    return torch.from_numpy(x), labels


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["dump", "score"])
    parser.add_argument("out")
    parser.add_argument("--config", choices=["reference", "optimised"], default="reference")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    out = args.out
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(args.threads if args.threads > 0 else (os.cpu_count() or 1))
    net = model().eval()
    precise = Float64Ops() if args.config == "reference" else contextlib.nullcontext()
    if args.what == "dump":
        x, _ = data(64, 1)
        # Module level: the reference config computes each op in float64 beneath the function
        # call, which an aten-level capture would record as other ops (casts, float64 addmm).
        with torch.no_grad(), precise, parity_dump.capture(net, out, level="modules"):
            net(x)
        return
    x, labels = data(20000, 2)
    with torch.no_grad(), precise:
        scores = torch.sigmoid(net(x)).squeeze(1).double().numpy()
    np.save(os.path.join(out, "scores.npy"), scores)
    np.save(os.path.join(out, "labels.npy"), labels)


if __name__ == "__main__":
    main()
