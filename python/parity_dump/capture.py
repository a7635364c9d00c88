# SPDX-License-Identifier: Apache-2.0
"""capture(): records op calls into a parity-dump directory, one flushed line per call."""
import contextlib
import fcntl
import json
import os
import time

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

from . import ops as op_table
from .manifest import manifest

_DTYPE_NAMES = {
    torch.bool: "bool", torch.int8: "int8", torch.int16: "int16", torch.int32: "int32",
    torch.int64: "int64", torch.uint8: "uint8", torch.float16: "float16",
    torch.bfloat16: "bfloat16", torch.float32: "float32", torch.float64: "float64",
}
for _name in ("float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64"):
    if hasattr(torch, _name):
        _DTYPE_NAMES[getattr(torch, _name)] = _name


def _stats(t):
    """min, max, mean, l2 over the finite elements, with NaN and Inf counts."""
    x = t.detach().to(torch.float64).flatten()
    finite = torch.isfinite(x)
    f = x[finite]
    out = {"nan": int(torch.isnan(x).sum()), "inf": int(torch.isinf(x).sum())}
    if f.numel():
        out.update(min=float(f.min()), max=float(f.max()), mean=float(f.mean()),
                   l2=float(torch.linalg.vector_norm(f)))
    return out


class _Recorder:
    def __init__(self, out_dir, ops, backward, max_bytes, timing, rank):
        self.out_dir = out_dir
        self.ops = set(ops if ops is not None else op_table.ALL_OPS)
        self.backward = backward
        self.max_bytes = max_bytes
        self.timing = timing
        self.rank = rank
        self.saved_bytes = 0
        self.seq = 0
        self.calls = {}
        self.module_stack = []  # (qualified name, module)
        self.busy = False       # inside a recorded call: nested calls are its own business
        os.makedirs(os.path.join(out_dir, "tensors"), exist_ok=True)
        self.records = open(os.path.join(out_dir, "records.jsonl"), "a")

    def close(self):
        self.records.close()

    # --- naming ------------------------------------------------------------------------------
    def name_for(self, op):
        if not self.module_stack:
            return op
        path, module = self.module_stack[-1]
        leaf = next(module.children(), None) is None
        if leaf and op_table.MODULE_OPS.get(type(module)) == op and path:
            return path
        return "%s.%s" % (path, op) if path else op

    def next_call(self, name, pass_):
        key = (name, pass_)
        call = self.calls.get(key, 0)
        self.calls[key] = call + 1
        return call

    # --- tensors -----------------------------------------------------------------------------
    def save(self, tensor, seq, slot):
        t = tensor.detach()
        dtype = _DTYPE_NAMES.get(t.dtype)
        if dtype is None:  # complex and other dtypes parity does not read: statistics only
            return {"dtype": "float64", "shape": list(t.shape), "stats": _stats(t.real)}
        entry = {"dtype": dtype, "shape": list(t.shape)}
        nbytes = t.numel() * t.element_size()
        if self.max_bytes is not None and self.saved_bytes + nbytes > self.max_bytes:
            entry["stats"] = _stats(t) if t.numel() else {"nan": 0, "inf": 0}
            return entry
        t = t.cpu().contiguous()
        if t.dtype == torch.bfloat16:
            array = t.view(torch.int16).numpy().view(np.uint16)  # bits, as docs/DESIGN.md says
        elif dtype.startswith("float8"):
            array = t.view(torch.uint8).numpy()
        else:
            array = t.numpy()
        rel = "tensors/r%d_%06d_%s.npy" % (self.rank, seq, slot)
        np.save(os.path.join(self.out_dir, rel), array)
        self.saved_bytes += nbytes
        entry["file"] = rel
        return entry

    def write(self, record):
        line = json.dumps(record, allow_nan=False) + "\n"
        # Ranks of one run may share the directory: one whole line at a time.
        fcntl.flock(self.records, fcntl.LOCK_EX)
        try:
            self.records.write(line)
            self.records.flush()
        finally:
            fcntl.flock(self.records, fcntl.LOCK_UN)

    # --- calls -------------------------------------------------------------------------------
    def _sync(self, tensors):
        if self.timing and torch.cuda.is_available() and any(t.is_cuda for t in tensors):
            torch.cuda.synchronize()

    def record_call(self, op, func, args, kwargs, pass_="forward"):
        inputs, params, attrs = op_table.bind(op, args, kwargs)
        name = self.name_for(op)
        seq = self.seq
        self.seq += 1
        record = {"seq": seq, "rank": self.rank, "name": name, "op": op, "pass": pass_,
                  "call": self.next_call(name, pass_), "attrs": attrs}
        # Inputs are saved before the call: an in-place op would change them.
        record["inputs"] = [self.save(t, seq, "in%d" % i) for i, t in enumerate(inputs)]
        record["params"] = {k: self.save(v, seq, k) for k, v in params.items()}
        self._sync(inputs)
        start = time.perf_counter()
        result = func(*args, **(kwargs or {}))
        self._sync(inputs)
        elapsed = time.perf_counter() - start
        outputs = result if isinstance(result, (tuple, list)) else [result]
        record["outputs"] = [self.save(t, seq, "out%d" % i) for i, t in
                             enumerate(o for o in outputs if isinstance(o, torch.Tensor))]
        if self.timing:
            record["time_us"] = elapsed * 1e6
        self.write(record)
        return result

    def record_module(self, name, module, inputs, outputs, pass_):
        seq = self.seq
        self.seq += 1
        ins = [t for t in inputs if isinstance(t, torch.Tensor)]
        outs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
        outs = [t for t in outs if isinstance(t, torch.Tensor)]
        op = "module" if pass_ == "forward" else "%s_backward" % op_table.MODULE_OPS.get(
            type(module), "module")
        record = {"seq": seq, "rank": self.rank, "name": name or "model", "op": op,
                  "pass": pass_, "call": self.next_call(name or "model", pass_), "attrs": {},
                  "inputs": [self.save(t, seq, "in%d" % i) for i, t in enumerate(ins)],
                  "params": {},
                  "outputs": [self.save(t, seq, "out%d" % i) for i, t in enumerate(outs)]}
        self.write(record)


class _Mode(TorchFunctionMode):
    def __init__(self, recorder):
        super().__init__()
        self.recorder = recorder

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        r = self.recorder
        op = op_table.op_of(func)
        if r.busy or op is None or op not in r.ops:
            return func(*args, **kwargs)
        r.busy = True
        try:
            return r.record_call(op, func, args, kwargs)
        finally:
            r.busy = False


def _rank(rank):
    if rank is not None:
        return int(rank)
    dist = getattr(torch, "distributed", None)
    if dist is not None and dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    return 0


@contextlib.contextmanager
def capture(model, out_dir, ops=None, backward=False, max_bytes=None, timing=False, rank=None):
    """Records the op calls made inside the `with` block into `out_dir`.

    model: the torch.nn.Module whose submodule names name the records (or None: records are
        named after the op); ops: op names to record (default: all of ops.ALL_OPS; add
        "module" for container modules' inputs and outputs); backward: also record leaf
        modules' gradients; max_bytes: tensor bytes to save before records carry statistics
        only; timing: record time_us with the device synchronised; rank: process rank
        (default: torch.distributed's, else 0).
    """
    recorder = _Recorder(out_dir, ops, backward, max_bytes, timing, _rank(rank))
    device = "cpu"
    if model is not None:
        first = next(model.parameters(), None)
        if first is not None:
            device = str(first.device)
    info = manifest(device, rank=recorder.rank)
    with open(os.path.join(out_dir, "manifest.json"), "w") as f:
        json.dump(info, f, indent=1, allow_nan=False)
    handles = []
    if model is not None:
        for name, module in model.named_modules():
            def pre(mod, args, _name=name):
                recorder.module_stack.append((_name, mod))

            def post(mod, args, output, _name=name):
                if recorder.module_stack and recorder.module_stack[-1][1] is mod:
                    recorder.module_stack.pop()
                leaf = next(mod.children(), None) is None
                if "module" in recorder.ops and not leaf and not recorder.busy:
                    recorder.record_module(_name, mod, args, output, "forward")

            handles.append(module.register_forward_pre_hook(pre))
            handles.append(module.register_forward_hook(post))
            if backward and next(module.children(), None) is None:
                def back(mod, grad_input, grad_output, _name=name):
                    recorder.record_module(_name, mod, grad_output, grad_input, "backward")
                handles.append(module.register_full_backward_hook(back))
    mode = _Mode(recorder)
    try:
        with mode:
            yield recorder
    finally:
        for h in handles:
            h.remove()
        recorder.close()
