# SPDX-License-Identifier: Apache-2.0
"""Tensor entries of a record: the tensor saved as .npy, or its statistics.

An entry is {"dtype", "shape"} plus either "file" (a .npy path relative to the dump) or
"stats": min, max, mean and l2 over the finite elements (float64; absent when no element is
finite), the nan, inf and zero counts, and "hash", the sha256 hex digest of the tensor's raw
bytes in C order (bfloat16 as its 16-bit patterns). Integer and bool tensors get the same
statistics, computed in float64.
"""
import hashlib
import math
import os

import numpy as np
import torch

DTYPE_NAMES = {
    torch.bool: "bool", torch.int8: "int8", torch.int16: "int16", torch.int32: "int32",
    torch.int64: "int64", torch.uint8: "uint8", torch.float16: "float16",
    torch.bfloat16: "bfloat16", torch.float32: "float32", torch.float64: "float64",
}
for _name in ("float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64"):
    if hasattr(torch, _name):
        DTYPE_NAMES[getattr(torch, _name)] = _name

MODES = ("tensors", "stats")


def dtype_name(dtype):
    """parity's name of a torch dtype ("float32", "bfloat16", ...), or None for a dtype parity
    does not read (complex, quantized)."""
    return DTYPE_NAMES.get(dtype)


def to_numpy(tensor):
    """The tensor's data as a C-contiguous numpy array on the CPU, bit for bit: bfloat16 as
    uint16 and float8 as uint8 bit patterns. Copies to the CPU synchronously when needed."""
    t = tensor.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16)
    if DTYPE_NAMES.get(t.dtype, "").startswith("float8"):
        return t.view(torch.uint8).numpy()
    return t.numpy()


def _as_float(array, name):
    """The values of `array` (to_numpy's bits) as a numpy float array."""
    if name == "bfloat16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    if name.startswith("float8"):
        raise ValueError("float8")
    return array


def stats(array, name):
    """Statistics of a to_numpy() array of dtype `name` (see the module docstring)."""
    raw = np.ascontiguousarray(array)
    out = {"nan": 0, "inf": 0, "zero": 0,
           "hash": hashlib.sha256(memoryview(raw).cast("B")).hexdigest()}
    if raw.size == 0:
        return out
    try:
        values = _as_float(raw, name).reshape(-1)
    except ValueError:  # float8: widen through torch
        values = torch.from_numpy(raw).view(getattr(torch, name)).float().numpy().reshape(-1)
    out["zero"] = int(values.size - np.count_nonzero(values))
    if values.dtype.kind == "f":
        finite = np.isfinite(values)
        if not finite.all():
            nan = int(np.isnan(values).sum())
            out["nan"] = nan
            out["inf"] = int(values.size - int(finite.sum()) - nan)
            values = values[finite]
            if values.size == 0:
                return out
    wide = values.astype(np.float64)
    out["min"] = float(wide.min())
    out["max"] = float(wide.max())
    out["mean"] = float(wide.mean())
    l2 = float(np.sqrt(np.dot(wide, wide)))
    out["l2"] = l2 if math.isfinite(l2) else float(np.linalg.norm(wide))
    return out


def _complex_stats(tensor):
    """Statistics of a tensor parity has no dtype for: its real part in float64."""
    real = tensor.detach().cpu()
    real = real.real if real.is_complex() else real
    array = real.to(torch.float64).contiguous().numpy()
    return stats(array, "float64")


class TensorWriter:
    """Turns tensors into entries: files under `dump_dir`/tensors in mode "tensors" until
    `max_bytes` would be exceeded (then statistics, and `truncated_at_seq` is the first record
    whose tensor was not saved), statistics only in mode "stats"."""

    def __init__(self, dump_dir, mode="tensors", max_bytes=None, file_format="%06d_%s"):
        if mode not in MODES:
            raise ValueError("mode must be one of %s, not %r" % (", ".join(MODES), mode))
        self.dump_dir = dump_dir
        self.mode = mode
        self.max_bytes = max_bytes
        self.file_format = file_format
        self.saved_bytes = 0
        self.truncated_at_seq = None

    def entry(self, tensor, seq, slot):
        """The entry of `tensor` for record `seq` (slot "in0", "out1", ...), its data written
        now (the tensor may change after this returns)."""
        shape = list(tensor.shape)
        name = dtype_name(tensor.dtype)
        if name is None:
            return {"dtype": "float64", "shape": shape, "stats": _complex_stats(tensor)}
        if tensor.device.type == "meta":
            return {"dtype": name, "shape": shape, "stats": {"nan": 0, "inf": 0, "zero": 0}}
        array = to_numpy(tensor)
        entry = {"dtype": name, "shape": shape}
        if self.mode == "tensors":
            if self.max_bytes is None or self.saved_bytes + array.nbytes <= self.max_bytes:
                rel = "tensors/" + (self.file_format % (seq, slot)) + ".npy"
                np.save(os.path.join(self.dump_dir, rel), array)
                self.saved_bytes += array.nbytes
                entry["file"] = rel
                return entry
            if self.truncated_at_seq is None:
                self.truncated_at_seq = seq
        entry["stats"] = stats(array, name)
        return entry
