# SPDX-License-Identifier: Apache-2.0
"""torch.compile'd code under the capture (torch 2.x, level "aten"): recorded as what ran.

The capture's dispatch mode ignores compile internals (modes.DispatchMode): dynamo compiles
as it does without the capture (every mode popped while it compiles) and the compiled code
runs with the mode back. Each execution of a compiled region (one graph dynamo handed its
backend: a frame, or one side of a graph break) is one record:

    op "compiled_region", overload "", name "<module>.compiled_region", pass "forward" (or
    "optimizer", as for any op), module the innermost module path where known ("" when the
    region holds the whole model), attrs {"region": "0/0" (dynamo's compile id), "backend":
    "inductor", "graph": "graphs/0_0.forward.py", "dynamo_graph": "graphs/0_0.dynamo.py",
    "inputs_requiring_grad": the names of the inputs its backward gives gradients for, where
    gradients were enabled} and the region's non-tensor arguments (SymInts) by name, inputs the tensors dynamo
    passes the compiled graph (arg: the graph's placeholder; parameters and buffers are
    among them), outputs the tensors it returns.

The backward of an AOTAutograd region (inductor, aot_eager, ...) is its own record, pass
"backward", attrs "graph" the backward graph, inputs the gradients reaching the region
("grad_output", index i), outputs the gradients it computes (for the region's inputs that
need them, in order, None left out). It is found through public autograd hooks on the
region's CompiledFunctionBackward node (a pre-hook and a post-hook returning None: the
gradients are unchanged). A backend that is not AOTAutograd's (backend="eager", a plain
callable) has no compiled backward: its backward ops run eagerly and are recorded as usual.
The capture's own module hooks do nothing while dynamo traces them (scopes.py): the graphs
compiled under the capture are those compiled without it.

The ops a region dispatches (its extern kernels, aot_eager's aten ops, AOTAutograd's
input-mutation copies) are not records; ops outside compiled regions (a graph break's eager
code, the loss, an optimizer that is not compiled) are recorded as before. The manifest's
"compiled" says so: {"mode": "regions", "inner_ops": STATEMENT, "regions": [{"region",
"backend", "calls": {pass: n}, "graphs": {kind: file}, "inner_ops": "not recorded"}]}, for
the regions that ran in captured steps ("region" gets "#<n>" where torch._dynamo.reset()
made a compile id come back within one dump). Graph files, DUMP/graphs/<region>.<kind>.py:
"dynamo" the FX graph dynamo handed the backend (gm.print_readable), "forward" and
"backward" AOTAutograd's partitioned graphs ("forward" is the inference graph where no
gradient was needed). A region compiled before start() has "compiled_before_start": true,
no graph files, and its inputs named "arg<i>" (compile_hooks.adopt()).

Capture(compiled="eager") keeps the former behaviour: dynamo skips frames under the
capture's mode, compiled code runs eagerly and every op is recorded; the manifest says so
({"mode": "eager", "inner_ops": EAGER}). So does a torch 2.x that cannot do otherwise
(before 2.5). torch 1.13 has no torch.compile and no "compiled" in the manifest.
"""
import os
import re
import time

import torch

from . import compile_hooks as hooks
from .scopes import KEY

MODES = ("regions", "eager")
OP = "compiled_region"
STATEMENT = ("each execution of a compiled region is one record (op compiled_region, one per "
             "pass): the ops inside it ran as compiled code and are not recorded")
EAGER = ("torch.compile'd code ran eagerly under the capture (dynamo skips frames under it): "
         "every op is recorded, none as compiled code")


class Regions:
    """The compiled regions of one capture: hooks (start/stop), records, manifest entry."""

    def __init__(self, capture, mode):
        if mode not in MODES:
            raise ValueError("compiled must be one of %s, not %r" % (", ".join(MODES), mode))
        self.c = capture
        self.mode = mode
        self.entries = {}   # Region -> manifest entry
        self.adopted = []   # see compile_hooks.adopt

    def start(self):
        if self.mode == "regions" and not hooks.supported():
            self.mode = "eager"  # torch 2.0-2.4: dynamo skips frames under any dispatch mode
        if self.mode == "regions":
            hooks.install()
            self.adopted = hooks.adopt()

    def stop(self):
        self.deactivate()
        if self.mode == "regions":
            hooks.remove()
        hooks.restore(self.adopted)
        self.adopted = []

    def activate(self):
        if self.mode == "regions":
            hooks.set_recorder(self)

    def deactivate(self):
        if hooks.recorder() is self:
            hooks.set_recorder(None)

    def manifest(self):
        """The manifest's "compiled" (None on a torch without torch.compile)."""
        if not hasattr(torch, "compile"):
            return None
        if self.mode == "eager":
            return {"mode": "eager", "inner_ops": EAGER}
        return {"mode": "regions", "inner_ops": STATEMENT, "regions": list(self.entries.values())}

    # --- records ---------------------------------------------------------------------------
    def _entry(self, region, pass_):
        """The region's manifest entry (its graph files written on first sight), its calls of
        `pass_` counted."""
        e = self.entries.get(region)
        if e is None:  # "#<n>" where torch._dynamo.reset() made a compile id come back
            n = 1 + sum(1 for r in self.entries if r.ident == region.ident)
            key = region.ident if n == 1 else "%s#%d" % (region.ident, n)
            e = self.entries[region] = {"region": key, "backend": region.backend,
                                        "calls": {}, "graphs": {}, "inner_ops": "not recorded"}
            if region.before_start:
                e["compiled_before_start"] = True
        for kind, text in list(region.texts.items()):
            if kind not in e["graphs"]:
                rel = "graphs/%s.%s.py" % (re.sub(r"[^0-9A-Za-z]+", "_", e["region"]), kind)
                os.makedirs(os.path.join(self.c.dir, "graphs"), exist_ok=True)
                with open(os.path.join(self.c.dir, rel), "w") as f:
                    f.write(text)
                e["graphs"][kind] = rel
        e["calls"][pass_] = e["calls"].get(pass_, 0) + 1
        return e

    def _begin(self, region, pass_, module, entries, attrs):
        """The record of a region's execution, its inputs' entries written; None when not
        recorded (not selected)."""
        c = self.c
        entry = self._entry(region, pass_)
        graphs = entry["graphs"]
        if (pass_ == "backward" and not c.backward) or not c._selected(OP, module):
            return None
        graph = graphs.get("backward" if pass_ == "backward" else "forward")
        attrs = dict({"region": entry["region"], "backend": region.backend}, **attrs)
        if graph or graphs.get("dynamo"):
            attrs["graph"] = graph or graphs["dynamo"]
        if pass_ != "backward" and graphs.get("dynamo"):
            attrs["dynamo_graph"] = graphs["dynamo"]
        record = c._head(module + "." + OP if module else OP, module, OP, "", pass_, attrs)
        record["inputs"] = []
        for i, (arg, index, t) in enumerate(entries):
            e = {"arg": arg}
            if index is not None:
                e["index"] = index
            e.update(c.writer.entry(t, record["seq"], "in%d" % i))
            record["inputs"].append(e)
        record["params"] = {}
        return record

    def _end(self, record, start, outputs):
        c = self.c
        c.writer.forget()  # the region wrote outside the mode's sight
        if record is None:
            return
        elapsed = time.perf_counter() - start
        outs = [t for t in outputs if isinstance(t, torch.Tensor)]
        record["outputs"] = [c.writer.entry(t, record["seq"], "out%d" % i)
                             for i, t in enumerate(outs)]
        if c.timing:
            record["time_us"] = elapsed * 1e6
        c._emit(record)

    def run(self, region, fn, args, kwargs):
        """A forward execution of `region` (`fn` its compiled callable) under the capture."""
        c = self.c
        if not c._recording():
            return fn(*args, **kwargs)
        pass_, module = c._where()
        with c.busy_scope:
            attrs, tensors = {}, []
            for i, a in enumerate(args):
                name = region.names[i] if i < len(region.names) else "arg%d" % i
                if isinstance(a, torch.Tensor):
                    tensors.append((name, None, a))
                elif isinstance(a, (int, float, bool)):
                    attrs[name] = a
            if torch.is_grad_enabled():  # what its backward computes gradients for
                attrs["inputs_requiring_grad"] = [n for n, _, t in tensors if t.requires_grad]
            record = self._begin(region, pass_, module, tensors, attrs)
            c._written_outside()  # a region may write its inputs (running statistics)
            c._sync([t for _, _, t in tensors])
        c.busy = True  # its ops are not records
        start = time.perf_counter()
        try:
            result = fn(*args, **kwargs)
        except BaseException:
            if record is not None:
                c._unrecord(record)
            raise
        finally:
            c.busy = False
        with c.busy_scope:
            outs = result if isinstance(result, (list, tuple)) else [result]
            c._sync([t for t in outs if isinstance(t, torch.Tensor)])
            self._end(record, start, outs)
            self._hook_backward(region, outs, args)
        return result

    def _hook_backward(self, region, outs, args):
        """Brackets the region's backward node (CompiledFunctionBackward: the one its outputs
        reach short of its inputs' nodes) with hooks. None with a backend that is not
        AOTAutograd's: the region's backward then runs eagerly, op by op, and is recorded."""
        stop = {id(a.grad_fn) for a in args if isinstance(a, torch.Tensor) and a.grad_fn}
        todo = [t.grad_fn for t in outs if isinstance(t, torch.Tensor) and t.grad_fn]
        for _ in range(3):  # through the views AOTAutograd regenerates outputs with
            todo = [n for n in todo if id(n) not in stop]
            node = next((n for n in todo if n.name() == "CompiledFunctionBackward"), None)
            if node is not None:
                break
            todo = [n for t in todo for n, _ in t.next_functions if n is not None]
        else:
            return
        state = []

        def pre(grad_outputs):
            c = self.c
            if hooks.recorder() is not self or not c._recording():
                return None
            with c.busy_scope:
                grads = [("grad_output", i, g) for i, g in enumerate(grad_outputs)
                         if isinstance(g, torch.Tensor)]
                module = node.metadata.get(KEY, "")
                record = self._begin(region, "backward", module, grads, {})
                c._written_outside()
            c.busy = True
            state.append((record, time.perf_counter()))
            return None

        def post(grad_inputs, grad_outputs):
            c = self.c
            if not state:
                return None
            c.busy = False
            with c.busy_scope:
                self._end(*state.pop(), list(grad_inputs))
            return None
        node.register_prehook(pre)
        node.register_hook(post)
