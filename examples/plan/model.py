#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The reference plan's workload: a small click-through model (embedding -> MLP -> sigmoid) on
this machine's CPU through PyTorch.

  model.py dump OUT    one forward pass recorded op by op with parity_dump (a parity-dump dir)
  model.py score OUT   scores and labels of a synthetic labelled set: OUT/scores.npy, labels.npy

The weights and data come from fixed seeds, so two platforms run the same model on the same
inputs; what differs is how each one computes.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import parity_dump  # noqa: E402


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32), torch.nn.ReLU(),
        torch.nn.Linear(32, 1))


def data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 32)).astype(np.float32)
    w = rng.standard_normal(32).astype(np.float32)
    logits = x @ w / 4.0 + 0.5 * rng.standard_normal(n).astype(np.float32)
    labels = (logits > 0.3).astype(np.uint8)
    return torch.from_numpy(x), labels


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("dump", "score"):
        sys.exit(__doc__)
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    net = model().eval()
    if sys.argv[1] == "dump":
        x, _ = data(64, 1)
        with torch.no_grad(), parity_dump.capture(net, out):
            net(x)
        return
    x, labels = data(20000, 2)
    with torch.no_grad():
        scores = torch.sigmoid(net(x)).squeeze(1).double().numpy()
    np.save(os.path.join(out, "scores.npy"), scores)
    np.save(os.path.join(out, "labels.npy"), labels)


if __name__ == "__main__":
    main()
