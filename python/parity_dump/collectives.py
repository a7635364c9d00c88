# SPDX-License-Identifier: Apache-2.0
"""torch.distributed collectives as records.

Collectives do not reach TorchDispatchMode on every torch (not on 1.13), so while a capture
is active the torch.distributed functions below are replaced by wrappers that record the
call: op the function's name ("all_reduce"), overload "", inputs the tensors sent (before
the call), outputs the tensors received (after it), attrs the other arguments (op as the
ReduceOp's name, group as null for the default group or "group"). An async_op=True call is
waited on before its record is written. Dispatch-level ops under a collective (c10d::*) are
neither recorded nor counted. The functions are restored when the capture deactivates.
"""
import inspect

import torch

from .aten import jsonable

# function -> (argument names read, argument names written)
COLLECTIVES = {
    "all_reduce": (("tensor",), ("tensor",)),
    "broadcast": (("tensor",), ("tensor",)),
    "reduce": (("tensor",), ("tensor",)),
    "all_gather": (("tensor",), ("tensor_list",)),
    "all_gather_into_tensor": (("input_tensor",), ("output_tensor",)),
    "_all_gather_base": (("input_tensor",), ("output_tensor",)),
    "reduce_scatter": (("input_list",), ("output",)),
    "reduce_scatter_tensor": (("input",), ("output",)),
    "_reduce_scatter_base": (("input",), ("output",)),
    "all_to_all": (("input_tensor_list",), ("output_tensor_list",)),
    "all_to_all_single": (("input",), ("output",)),
    "gather": (("tensor",), ("gather_list",)),
    "scatter": (("scatter_list",), ("tensor",)),
}
_REDUCE_OPS = ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM")


def _tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


def _attr(name, value):
    dist = torch.distributed
    if name == "op":
        for op in _REDUCE_OPS:
            member = getattr(dist.ReduceOp, op, None)
            try:
                if member is not None and value == member:
                    return op
            except (TypeError, RuntimeError):
                pass
        return str(value)
    if name == "group":
        return None if value is None else "group"
    return jsonable(value)


class Collectives:
    """Installs and removes the wrappers for one capture; `record(name, inputs, outputs,
    attrs)` is the capture's callback, `recording()` whether a call should be recorded now,
    `written()` is called before and after every collective, recorded or not (they write
    tensors outside aten dispatch)."""

    def __init__(self, recording, record, written=None):
        self.recording = recording
        self.record = record
        self.written = written or (lambda: None)
        self.saved = {}

    def install(self):
        """Replaces the collectives when torch.distributed is available."""
        dist = getattr(torch, "distributed", None)
        if dist is None or not dist.is_available():
            return
        for name, (reads, writes) in COLLECTIVES.items():
            orig = getattr(dist, name, None)
            if orig is None or name in self.saved:
                continue
            self.saved[name] = orig
            setattr(dist, name, self._wrap(name, orig, reads, writes))

    def remove(self):
        """Puts the original functions back."""
        dist = torch.distributed
        for name, orig in self.saved.items():
            setattr(dist, name, orig)
        self.saved = {}

    def _wrap(self, name, orig, reads, writes):
        try:
            signature = inspect.signature(orig)
        except (TypeError, ValueError):
            signature = None

        def wrapper(*args, **kwargs):
            self.written()  # it writes outside aten dispatch: before and after
            try:
                return call(*args, **kwargs)
            finally:
                self.written()

        def call(*args, **kwargs):
            if signature is None or not self.recording():
                return orig(*args, **kwargs)
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values = bound.arguments
            inputs = [(arg, i, t) for arg in reads for i, t in
                      enumerate(_tensors(values.get(arg)))]
            attrs = {k: _attr(k, v) for k, v in values.items()
                     if k not in reads and k not in writes and not _tensors(v)}
            return self.record(name, inputs, attrs,
                               lambda: orig(*args, **kwargs),
                               lambda: [t for arg in writes for t in _tensors(values.get(arg))],
                               bool(values.get("async_op")))
        wrapper.__wrapped__ = orig
        wrapper.__name__ = name
        return wrapper
