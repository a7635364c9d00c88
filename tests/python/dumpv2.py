# SPDX-License-Identifier: Apache-2.0
"""Reading parity-dump version 2 directories back with json and numpy, for the dump_v2 tests
(the parity binary is not used: these tests check what python/parity_dump writes)."""
import hashlib
import json
import os
import tempfile

import numpy as np
import torch
import xxhash

import parity_dump
import parity_workloads


def tempdir():
    """A TemporaryDirectory in memory (/dev/shm) where there is one: a dump writes a file per
    tensor, and on a disk-backed /tmp file creation dominates the tests' time."""
    shm = "/dev/shm"
    base = shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None
    return tempfile.TemporaryDirectory(prefix="parity_dump_v2_", dir=base)


def records(dump):
    """The records of `dump`, in file order (every line must be complete)."""
    with open(os.path.join(dump, "records.jsonl")) as f:
        return [json.loads(line) for line in f]


def manifest(dump):
    with open(os.path.join(dump, "manifest.json")) as f:
        return json.load(f)


def digest(raw, algorithm):
    """The hex digest of a numpy array's bytes by a dump's hash algorithm, from hashlib or
    python-xxhash (independent of parity_dump)."""
    data = np.ascontiguousarray(raw).tobytes()
    if algorithm == "sha256":
        return hashlib.sha256(data).hexdigest()
    if algorithm == "xxh3_128":
        return xxhash.xxh3_128_hexdigest(data)
    raise AssertionError("unknown hash algorithm %r" % algorithm)


def load(dump, entry):
    """The tensor of a record entry as a float64 or integer numpy array (bfloat16 widened)."""
    array = np.load(os.path.join(dump, entry["file"]))
    if entry["dtype"] == "bfloat16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    return array


def bits(tensor):
    """A tensor's raw bits (for bitwise comparisons that also hold for NaN)."""
    t = tensor.detach().contiguous()
    if t.dtype in (torch.float32,):
        return t.view(torch.int32)
    if t.dtype in (torch.bfloat16, torch.float16):
        return t.view(torch.int16)
    if t.dtype == torch.float64:
        return t.view(torch.int64)
    return t


def bitwise_equal(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(bits(a), bits(b))


def train(name, steps=2, autocast=False, out=None, seed=7, foreach=None, size="tiny",
          **capture_kwargs):
    """Runs `steps` Adam steps of workload `name` from the same start (model seed 0, global
    seed `seed`), captured into `out` when given (cap.step() after each step). Returns a dict:
    losses, outputs (the model's output of each step), params (the parameters after each
    step), model, optimizer."""
    w = parity_workloads.get(name, size=size)
    opt = w.make_optimizer(implementation=None if foreach is None
                           else "foreach" if foreach else "for-loop")
    torch.manual_seed(seed)
    batches = list(w.batches(steps))
    losses, outputs, params = [], [], []
    loss_fn = w.loss_fn

    def keep_output(out, target):
        with parity_dump.paused():  # the copy is the test's, not the workload's
            outputs.append(out.detach().clone())
        return loss_fn(out, target)

    w.loss_fn = keep_output
    cap = None
    if out is not None:
        cap = parity_dump.capture(w.model, out, optimizer=opt, **capture_kwargs).start()
    try:
        for batch in batches:
            losses.append(w.train_step(w.model, batch, opt, autocast=autocast))
            with parity_dump.paused():
                params.append([p.detach().clone() for p in w.model.parameters()])
            if cap is not None:
                cap.step()
    finally:
        if cap is not None:
            cap.stop()
    return {"losses": losses, "outputs": outputs, "params": params, "model": w.model,
            "optimizer": opt}


def dispatch_modes():
    """How many TorchDispatchModes are pushed now (None where torch cannot say)."""
    from torch.utils import _python_dispatch as pd
    if hasattr(pd, "_len_torch_dispatch_stack"):
        return pd._len_torch_dispatch_stack()
    if hasattr(pd, "_get_current_dispatch_mode"):
        return 0 if pd._get_current_dispatch_mode() is None else 1
    return None
