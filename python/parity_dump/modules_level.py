# SPDX-License-Identifier: Apache-2.0
"""level="modules": version 1's records (functional ops seen through TorchFunctionMode, named
after the leaf module that performs them), with version 2's step and manifest.

Records keep version 1's fields (seq, rank, name, op, pass, call, attrs, inputs, params,
outputs, time_us) and add step; call counts per (step, name, pass). Tensor files are named
tensors/r<rank>_<seq>_<slot>.npy as in version 1.
"""
import fnmatch
import time

import torch
from torch.overrides import TorchFunctionMode

from . import ops as op_table
from .modes import leave_function_mode


class _FunctionMode(TorchFunctionMode):
    def __init__(self, recorder):
        super().__init__()
        self.recorder = recorder

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        r = self.recorder
        op = op_table.op_of(func)
        if op is None or not r.capture._recording() or not r.selected(op):
            return func(*args, **kwargs)
        pass_, _ = r.capture._where()
        if pass_ == "backward" and not r.capture.backward:
            return func(*args, **kwargs)
        with r.capture.busy_scope:
            return r.record_call(op, func, args, kwargs, pass_)


class ModulesRecorder:
    """Module hooks and the TorchFunctionMode of one Capture at level "modules"."""

    def __init__(self, capture, ops):
        self.capture = capture
        patterns = list(op_table.ALL_OPS) if ops is None else (
            [ops] if isinstance(ops, str) else list(ops))
        self.include = [p for p in patterns if not p.startswith("!")]
        self.exclude = [p[1:] for p in patterns if p.startswith("!")]
        self.module_stack = []  # (qualified name, module)
        self.handles = []
        self.mode = None

    def selected(self, op):
        """Whether op (or "module") matches the ops= globs."""
        if any(fnmatch.fnmatchcase(op, p) for p in self.exclude):
            return False
        return any(fnmatch.fnmatchcase(op, p) for p in self.include)

    def install(self):
        """Registers the module hooks and enters the function mode."""
        c = self.capture
        model = c.model
        if model is not None:
            for name, module in model.named_modules():
                self.handles.append(module.register_forward_pre_hook(self._pre(name)))
                self.handles.append(module.register_forward_hook(self._post(name)))
                if c.backward and next(module.children(), None) is None:
                    self.handles.append(module.register_full_backward_hook(self._back(name)))
        self.mode = _FunctionMode(self)
        self.mode.__enter__()

    def remove(self):
        """Leaves the function mode (from beneath modes entered after it, which stay: see
        modes.leave_function_mode) and removes the hooks."""
        if self.mode is not None:
            leave_function_mode(self.mode)
            self.mode = None
        for h in self.handles:
            h.remove()
        self.handles = []
        self.module_stack = []

    def _pre(self, name):
        def pre(mod, args):
            self.module_stack.append((name, mod))
        return pre

    def _post(self, name):
        def post(mod, args, output):
            while self.module_stack:
                if self.module_stack.pop()[1] is mod:
                    break
            leaf = next(mod.children(), None) is None
            c = self.capture
            if not leaf and self.selected("module") and c._recording() and c.select_module(
                    name):
                with c.busy_scope:
                    self.record_module(name, mod, args, output, "forward")
        return post

    def _back(self, name):
        def back(mod, grad_input, grad_output):
            c = self.capture
            if c._recording() and c.select_module(name):
                with c.busy_scope:
                    self.record_module(name, mod, grad_output, grad_input, "backward")
        return back

    def name_for(self, op):
        """The record name of `op` in the current module: the module's path when it is a leaf
        performing its own op, else "<path>.<op>"."""
        if not self.module_stack:
            return op
        path, module = self.module_stack[-1]
        leaf = next(module.children(), None) is None
        if leaf and op_table.MODULE_OPS.get(type(module)) == op and path:
            return path
        return "%s.%s" % (path, op) if path else op

    def _record(self, seq, name, op, pass_, attrs):
        c = self.capture
        return {"seq": seq, "step": c.step_index, "rank": c.rank, "name": name, "op": op,
                "pass": pass_, "call": c._next_call(name, pass_), "attrs": attrs}

    def record_call(self, op, func, args, kwargs, pass_):
        c = self.capture
        inputs, params, attrs = op_table.bind(op, args, kwargs)
        path = self.module_stack[-1][0] if self.module_stack else ""
        if not c.select_module(path):
            return func(*args, **kwargs)
        seq = c.seq
        c.seq += 1
        record = self._record(seq, self.name_for(op), op, pass_, attrs)
        w = c.writer
        # Inputs are saved before the call: an in-place op would change them.
        record["inputs"] = [w.entry(t, seq, "in%d" % i) for i, t in enumerate(inputs)]
        record["params"] = {k: w.entry(v, seq, k) for k, v in params.items()}
        c._sync(inputs)
        start = time.perf_counter()
        result = func(*args, **(kwargs or {}))
        c._sync(inputs)
        elapsed = time.perf_counter() - start
        outputs = result if isinstance(result, (tuple, list)) else [result]
        record["outputs"] = [w.entry(t, seq, "out%d" % i) for i, t in
                             enumerate(o for o in outputs if isinstance(o, torch.Tensor))]
        if c.timing:
            record["time_us"] = elapsed * 1e6
        c._emit(record)
        return result

    def record_module(self, name, module, inputs, outputs, pass_):
        c = self.capture
        seq = c.seq
        c.seq += 1
        ins = [t for t in inputs if isinstance(t, torch.Tensor)]
        outs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
        outs = [t for t in outs if isinstance(t, torch.Tensor)]
        op = "module" if pass_ == "forward" else "%s_backward" % op_table.MODULE_OPS.get(
            type(module), "module")
        record = self._record(seq, name or "model", op, pass_, {})
        w = c.writer
        record["inputs"] = [w.entry(t, seq, "in%d" % i) for i, t in enumerate(ins)]
        record["params"] = {}
        record["outputs"] = [w.entry(t, seq, "out%d" % i) for i, t in enumerate(outs)]
        c._emit(record)
