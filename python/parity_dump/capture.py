# SPDX-License-Identifier: Apache-2.0
"""Capture: records every op of a training step (forward, backward, optimizer) into a
parity-dump directory, format version 2 (docs/DESIGN.md, "Dump directories").

    with parity_dump.capture(model, "dump", optimizer=opt) as cap:
        for batch in data:
            train_step(model, batch, opt)
            cap.step()

or, where a `with` block does not fit, dbg = parity_dump.Capture(...); dbg.start(); ...;
dbg.step(); ...; dbg.stop().
"""
import collections
import contextlib

import torch

from . import aten, evidence, hops, sources
from .collectives import Collectives
from .compiled import Regions
from .dumpdir import RecordsFile, prepare, write_manifest
from .emit import RecordEmitter
from .interrupts import DEFERRED
from .manifest import manifest
from .modes import DispatchMode, EagerDispatchMode, leave_dispatch_mode
from .passes import PassHooks
from .scopes import Scopes
from .selection import Patterns, listed, rank_and_world, window
from .tensors import MODES, Hasher, TensorWriter, hash_function, storage_address

LEVELS = ("aten", "modules")
_PAUSED = [0]  # paused() depth, for every capture of this process


@contextlib.contextmanager
def paused():
    """Within this block no capture of this process records anything or counts omitted ops
    (the step counter still moves with cap.step())."""
    _PAUSED[0] += 1
    try:
        yield
    finally:
        _PAUSED[0] -= 1


class _BusyScope:
    """`with capture.busy_scope:` marks a block as the capture's own work (saving, hashing,
    records), whose ops are not recorded."""
    __slots__ = ("capture",)

    def __init__(self, capture):
        self.capture = capture

    def __enter__(self):
        self.capture.busy = True

    def __exit__(self, *exc):
        self.capture.busy = False


class Capture(PassHooks, RecordEmitter):
    """One capture into one dump directory (per rank).

    Args:
      model: the torch.nn.Module whose submodule paths name the records (None: no module
        scopes; records are named after the op).
      out: the dump directory; it must be missing or empty and writable (else start() raises
        DumpDirectoryError). With torch.distributed initialised and world_size > 1 the dump
        is out/rank<N>/.
      ops: op-name globs to record ("addmm", "_foreach_*"; "!pattern" excludes). Default:
        every op (level "aten"), the replayable ops of ops.ALL_OPS (level "modules", where
        "module" adds container modules' records).
      backward: record the backward pass (default: True at level "aten", False at level
        "modules", where it records leaf modules' gradients).
      max_bytes: tensor bytes to save as files; past it tensors are recorded as statistics
        and the manifest says "truncated_at_seq".
      timing: record each call's wall time as time_us (the device synchronised around it).
      stack: each record carries "source", where in the user's code the op was called (for
        backward ops, the forward op's; none where it can't be read): see sources.py.
      rank: the rank to record (default torch.distributed's, else 0).
      level: "aten" (every aten op, beneath autograd and autocast) or "modules" (version 1's
        functional ops named after leaf modules, through TorchFunctionMode).
      mode: "tensors" (.npy files), "stats" (statistics and digests, no files) or "hashes"
        (each tensor's digest alone: which tensors differ, not by how much).
      optimizer: an optimizer, or a list of them: the ops of its step() are pass "optimizer",
        and save_grads / save_optimizer_state read it.
      scaler: a torch GradScaler (or anything with get_scale()): its scale and skipped steps
        go into the manifest (see evidence.scaler_entry).
      steps: the steps to capture (a range or any container of step numbers; default all).
      every: capture only steps divisible by it. Outside the window the capture is not
        installed at all; a step costs a counter.
      modules: module-path globs to record ("encoder.*", "!encoder.layers.1.*"); ops outside
        any module have path "".
      save_grads: after each captured optimizer step, a record per parameter with a gradient:
        pass "optimizer", op "grad", module the parameter's name, name "<param>.grad", the
        gradient as its only output.
      save_optimizer_state: likewise per optimizer state entry: op "optimizer_state", name
        "<param>.<key>" (e.g. "fc.weight.exp_avg"), attrs {"key": key}, the tensor as output
        (a non-tensor entry as attrs "value", no output).
      compiled: level "aten", torch 2.x: "regions" (torch.compile'd code runs compiled, each
        execution of a compiled region one record, op "compiled_region", its graphs in
        graphs/: see compiled.py) or "eager" (dynamo skips frames under the capture: compiled
        code runs eagerly, every op recorded). The manifest's "compiled" says which.

    Records (version 2): seq (per dump, never restarting), step (from 0, moved by step()),
    rank, name ("<module path>.<op>", or "<op>" outside any module or at the root), module,
    op (aten name without namespace or overload), overload, pass, call (per step, name and
    pass, from 0), attrs (aten.bind), inputs (schema order, "arg" and for tensor lists
    "index"), params ({} at level "aten"), outputs (returned tensors flattened; for ops that
    return nothing, the tensors they wrote). A higher-order op (torch 2.x: torch.cond,
    flex_attention) is one record (hops.py), and so is each execution of a torch.compile'd
    region, forward and backward, its inner ops none (compiled.py); a tensor the dump cannot
    hold (sparse, nested, quantized, or one whose conversion raises) is an entry marked "not
    stored" (storable.py).

    Passes: ops inside backward (torch.autograd.backward / grad, or an autograd node
    executing) are "backward", attributed to the module whose forward made the node (module
    "" when unknown, see scopes.py); ops inside the optimizer's step() are "optimizer"
    (module ""); all others are "forward", zero_grad's fills included (none with
    set_to_none=True).

    Modes "stats" and "hashes" (see tensors.py): at level "aten" the figures (statistics,
    digest) of a tensor met again unchanged, or of a view with the same bytes, are reused
    (every write to a tensor passes through the dispatch mode or a collective, which forget
    what they write); the figures of tensors of 64 KiB and more are computed on a thread of
    the capture's own, the statistics of short tensors 64 at a time; a record is written
    once its figures are set (at the latest at the step's end), and an op that writes to a
    tensor whose figures are still pending computes them first. Writes that bypass torch
    (through .numpy(), a C extension) between two ops of a captured step are not seen.

    Manifest steps: steps[i].generators is the generator state at the start of the step
    (before its first op), taken at start() or step(); the entry of the step running when
    stop() is called (possibly empty: a loop that calls step() after each step leaves one)
    is completed at stop(). records counts the records of the step.
    """

    def __init__(self, model, out, ops=None, backward=None, max_bytes=None, timing=False,
                 rank=None, *, level="aten", mode="tensors", optimizer=None, scaler=None,
                 steps=None, every=None, modules=None, save_grads=False,
                 save_optimizer_state=False, hash="auto", stack=False, compiled="regions"):
        if level not in LEVELS:
            raise ValueError("level must be one of %s, not %r" % (", ".join(LEVELS), level))
        if level == "aten" and DispatchMode is None:
            raise RuntimeError("this torch has no TorchDispatchMode: use level=\"modules\"")
        if mode not in MODES:
            raise ValueError("mode must be one of %s, not %r" % (", ".join(MODES), mode))
        self.hash = hash_function(hash)[0]
        if every is not None and int(every) < 1:
            raise ValueError("every must be a positive number of steps, not %r" % (every,))
        self.model = model
        self.out = out
        self.level = level
        self.mode = mode
        self.backward = (level == "aten") if backward is None else bool(backward)
        self.max_bytes = max_bytes
        self.timing = timing
        self.stack = bool(stack)
        self.tracebacks = None
        self.rank_arg = rank
        if optimizer is None:
            self.optimizers = []
        elif isinstance(optimizer, (list, tuple)):
            self.optimizers = list(optimizer)
        else:
            self.optimizers = [optimizer]
        self.scaler = scaler
        self.window = steps
        self.every = None if every is None else int(every)
        self.ops_spec = ops
        self.select_op = Patterns(ops) if level == "aten" else None
        self.select_module = Patterns(modules)
        self.modules_spec = modules
        self.save_grads = save_grads
        self.save_optimizer_state = save_optimizer_state
        self.regions = Regions(self, compiled) if level == "aten" else None
        # False where the caller brackets optimizers' steps itself (the launcher, with
        # _optimizer_enter and _optimizer_exit).
        self.hook_optimizers = True
        self.started = False
        self.stopped = False
        self.active = False
        self.dir = None
        self.step_index = 0

    # --- public ----------------------------------------------------------------------------
    def start(self):
        """Checks and creates the dump directory (DumpDirectoryError before anything runs),
        writes the manifest and, when step 0 is captured, installs the capture. Returns
        self."""
        if self.started:
            raise RuntimeError("this Capture was already started")
        self.rank, self.world_size = rank_and_world(self.rank_arg)
        self.dir = prepare(self.out, self.rank, self.world_size)
        self.started = True
        self.records = RecordsFile(self.dir)
        file_format = ("r%d_%%06d_%%s" % self.rank) if self.level == "modules" else "%06d_%s"
        # At level "aten" every write to a tensor passes through _on_op (or a collective):
        # statistics of unchanged tensors are reused, and large tensors' digests are
        # computed on a thread of their own (records wait in self.unwritten for theirs).
        aten_level = self.level == "aten"
        self.hasher = None
        if aten_level and (self.mode != "tensors" or self.max_bytes is not None):
            self.hasher = Hasher(hash_function(self.hash)[1])
        self.unwritten = collections.deque()  # (record, the last digest's number)
        self.writer = TensorWriter(self.dir, self.mode, self.max_bytes, file_format,
                                   reuse=aten_level, hasher=self.hasher,
                                   batch=self.hasher is not None, hash=self.hash)
        self.seq = 0
        self.calls = {}
        self.omitted = collections.Counter()
        self.busy = False  # in the capture's own work: ops it runs are not records
        self.busy_scope = _BusyScope(self)
        self.in_backward = 0
        self.in_optimizer = 0
        self.optimizer_steps = 0
        self.step_records = 0
        self.current = None  # this step's manifest entry
        self.scale_at_start = None
        self.selected_cache = {}
        self.param_names = {}
        if self.model is not None:
            for name, p in self.model.named_parameters():
                self.param_names.setdefault(id(p), name)
        self.scopes = Scopes(self.model, self.level == "aten" and self.backward)
        self.collectives = Collectives(self._recording, self._record_collective,
                                       self._written_outside)
        self.saved_hooks = []
        self.saved_autograd = {}
        self.modules_recorder = None
        if self.level == "modules":
            from .modules_level import ModulesRecorder
            self.modules_recorder = ModulesRecorder(self, self.ops_spec)
        device = "cpu"
        if self.model is not None:
            first = next(self.model.parameters(), None)
            if first is not None:
                device = str(first.device)
        self.doc = manifest(device, rank=self.rank)
        self.doc.update({
            "version": 2, "level": self.level, "rank": self.rank,
            "world_size": self.world_size, "mode": self.mode, "hash": self.hash, "omitted": {},
            "steps": [],
            "capture": {"backward": self.backward, "ops": listed(self.ops_spec),
                        "modules": listed(self.modules_spec), "max_bytes": self.max_bytes,
                        "steps": window(self.window), "every": self.every,
                        "optimizer": bool(self.optimizers), "scaler": self.scaler is not None,
                        "save_grads": self.save_grads,
                        "save_optimizer_state": self.save_optimizer_state}})
        if self.regions is not None:
            self.regions.start()
        if self._captured(0):
            self._activate()
            self._begin_step()
        self._write_manifest()
        return self

    def step(self):
        """Marks a step boundary: the records that follow carry the next step number. At a
        captured step's end the manifest is rewritten; outside the window this is a counter
        increment."""
        if not self.started or self.stopped:
            raise RuntimeError("step() needs a started, not stopped Capture")
        with DEFERRED:
            self._step()

    def _step(self):
        was = self.active
        if was:
            self._end_step()
        self.step_index += 1
        if self._captured(self.step_index):
            if not self.active:
                self._activate()
            self._begin_step()
        elif self.active:
            self._deactivate()
        if was or self.active:
            self._write_manifest()

    def stop(self):
        """Completes the running step's manifest entry, removes everything the capture
        installed (modes, hooks, wrappers: the model and optimizer are left as they were),
        and closes the dump. Calling it twice is harmless.

        The capture's dispatch (or function) mode leaves torch's mode stack wherever it lies:
        a mode entered after start() and still active (a user's FlopCounterMode) stays on
        the stack above the modes beneath the capture's, keeps working, and leaves by its
        own __exit__ later (modes.leave_dispatch_mode). Nothing is recorded after stop()."""
        if not self.started or self.stopped:
            return
        with DEFERRED:
            self._stop()

    def _stop(self):
        self.stopped = True
        try:
            if self.active:
                self._end_step()
        finally:
            if self.active:
                self._deactivate()
            self._write_records(wait=True)
            if self.regions is not None:
                self.regions.stop()
            if self.hasher is not None:
                self.hasher.close()
            self._write_manifest()
            self.records.close()

    def adopt_model(self, model, args=(), kwargs=None):
        """Names records after `model`'s module paths from now on, for a capture started
        without one (the launcher finds the model at its first call): called from a global
        forward pre-hook of `model`'s call with its arguments, which counts as the root's own
        pre-hook for that call."""
        self.model = model
        for name, p in model.named_parameters():
            self.param_names.setdefault(id(p), name)
        self.scopes.adopt(model, args, kwargs or {})

    def __enter__(self):
        return self.start()

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False

    # --- window and step entries -----------------------------------------------------------
    def _captured(self, step):
        if self.every is not None and step % self.every:
            return False
        return self.window is None or step in self.window

    def _begin_step(self):
        with self.busy_scope:
            self.calls = {}
            self.writer.forget()
            self.step_records = 0
            self.optimizer_steps = 0
            self.in_optimizer = 0
            self.scopes.reset()
            self.current = {"step": self.step_index, "generators": evidence.generator_digests(),
                            "records": 0}
            self.doc["steps"].append(self.current)
            if self.scaler is not None:
                self.scale_at_start = evidence.scaler_scale(self.scaler)

    def _end_step(self):
        with self.busy_scope:
            self._write_records(wait=True)
            cur = self.current
            cur["records"] = self.step_records
            if self.scaler is not None and (self.step_records or self.optimizer_steps
                                            or not self.stopped):
                cur["scaler"] = evidence.scaler_entry(
                    self.scale_at_start, evidence.scaler_scale(self.scaler),
                    self.optimizer_steps, bool(self.optimizers))

    def _write_manifest(self):
        self.doc["omitted"] = dict(sorted(self.omitted.items()))
        if self.writer.truncated_at_seq is not None:
            self.doc["truncated_at_seq"] = self.writer.truncated_at_seq
        if self.regions is not None and self.regions.manifest() is not None:
            self.doc["compiled"] = self.regions.manifest()
        write_manifest(self.dir, self.doc)

    # --- installing ------------------------------------------------------------------------
    def _activate(self):
        self.active = True
        self.scopes.install()
        if self.modules_recorder is not None:
            self.modules_recorder.install()
        self._patch_autograd()
        if self.hook_optimizers:
            for opt in self.optimizers:
                self._hook_optimizer(opt)
        self.collectives.install()
        if self.stack and self.backward:
            self.tracebacks = sources.ForwardTracebacks().__enter__()
        if self.level == "aten":
            eager = self.regions.mode == "eager"
            self.mode_obj = (EagerDispatchMode if eager else DispatchMode)(self)
            self.mode_obj.__enter__()
            self.regions.activate()

    def _deactivate(self):
        self.active = False
        self._write_records(wait=True)
        self.writer.forget()
        if self.level == "aten":
            self.regions.deactivate()
            leave_dispatch_mode(self.mode_obj)  # wherever it lies: see stop()
            self.mode_obj = None
        if self.tracebacks is not None:
            self.tracebacks.__exit__(None, None, None)
            self.tracebacks = None
        self.collectives.remove()
        for undo in reversed(self.saved_hooks):
            undo()
        self.saved_hooks = []
        for name, orig in self.saved_autograd.items():
            setattr(torch.autograd, name, orig)
        self.saved_autograd = {}
        if self.modules_recorder is not None:
            self.modules_recorder.remove()
        self.scopes.remove()

    def _optimizer_exit(self, opt):
        self.in_optimizer = max(0, self.in_optimizer - 1)
        self.optimizer_steps += 1
        if self.active and not _PAUSED[0] and (self.save_grads or self.save_optimizer_state):
            with self.busy_scope:
                self._save_optimizer(opt)

    # --- where an op runs ------------------------------------------------------------------
    def _where(self):
        """(pass, module path) of the op running now."""
        if self.in_optimizer:
            return "optimizer", ""
        if self.level == "aten":
            module = self.scopes.backward_module()
            if module is not None:
                return "backward", module
        if self.in_backward:
            return "backward", ""
        return "forward", self.scopes.forward_module()

    def _recording(self):
        return self.active and not self.busy and not _PAUSED[0]

    def _selected(self, op, module):
        key = (op, module)
        hit = self.selected_cache.get(key)
        if hit is None:
            hit = self.selected_cache[key] = (
                (self.select_op is None or self.select_op(op)) and self.select_module(module))
        return hit

    # --- aten ops --------------------------------------------------------------------------
    def _on_hop(self, func, args, kwargs):
        """A higher-order op (torch.cond, flex_attention): run, and recorded as one op."""
        return hops.record_hop(self, func, args, kwargs)

    def _on_op(self, func, args, kwargs):
        if self.busy or not self.active:
            return func(*args, **kwargs)
        with DEFERRED:
            return self._on_active_op(func, args, kwargs)

    def _on_active_op(self, func, args, kwargs):
        op = aten.info(func)
        if op.mutated:  # recorded or not, the writer learns which storages it writes
            written = aten.mutated_tensors(op, args, kwargs)
            before = [storage_address(t) for t in written]
            if self.hasher is not None:
                self.hasher.before_write(before)
            try:
                return self._dispatch(op, func, args, kwargs, (written, before))
            finally:
                self.writer.written(written, before)
        return self._dispatch(op, func, args, kwargs, None)

    def _dispatch(self, op, func, args, kwargs, writes):
        if _PAUSED[0]:
            return func(*args, **kwargs)
        if op.omitted:
            self.omitted[op.name] += 1
            return func(*args, **kwargs)
        pass_, module = self._where()
        if (pass_ == "backward" and not self.backward) or not self._selected(op.name, module):
            return func(*args, **kwargs)
        with self.busy_scope:
            return self._record_op(op, func, args, kwargs, pass_, module, writes)

    def _record_op(self, op, func, args, kwargs, pass_, module, writes=None):
        inputs, attrs = aten.bind(op, args, kwargs)
        name = module + "." + op.name if module else op.name
        record = self._head(name, module, op.name, op.overload, pass_, attrs)
        seq = record["seq"]
        record["inputs"] = self._input_entries(inputs, seq, aten.SCRATCH_INPUTS.get(op.name))
        record["params"] = {}
        if writes is not None and self.hasher is not None:  # digests of the inputs it writes
            self.hasher.before_write(writes[1])
        result, elapsed = self._run_timed(record, [t for _, _, t in inputs],
                                          lambda: func(*args, **kwargs))
        if writes is not None:  # before the outputs: an in-place op's output is its input
            self.writer.written(*writes)
        outs = aten.flatten_tensors(result)
        if not outs and op.returns_nothing:
            outs = aten.mutated_tensors(op, args, kwargs)
        scratch = aten.SCRATCH_OUTPUTS.get(op.name)
        record["outputs"] = [self.writer.not_stored(t, aten.SCRATCH) if i == scratch
                             else self.writer.entry(t, seq, "out%d" % i)
                             for i, t in enumerate(outs)]
        if self.timing:
            record["time_us"] = elapsed * 1e6
        self._emit(record)
        return result

    # --- collectives, gradients, optimizer state ------------------------------------------
    def _record_collective(self, fname, inputs, attrs, call, written, async_op):
        pass_, module = self._where()
        if not self._selected(fname, module):
            return call()
        with self.busy_scope:
            name = module + "." + fname if module else fname
            record = self._head(name, module, fname, "", pass_, attrs)
            seq = record["seq"]
            entries = []
            for i, (arg, index, tensor) in enumerate(inputs):
                e = {"arg": arg}
                if len(inputs) > 1 or index:
                    e["index"] = index
                e.update(self.writer.entry(tensor, seq, "in%d" % i))
                entries.append(e)
            record["inputs"] = entries
            record["params"] = {}
            self._written_outside()  # before the call writes them
            try:
                result = call()
            except BaseException:
                self._unrecord(record)
                raise
            if async_op and result is not None and hasattr(result, "wait"):
                result.wait()
            self.writer.forget()  # it wrote outside aten dispatch
            record["outputs"] = [self.writer.entry(t, seq, "out%d" % i)
                                 for i, t in enumerate(written())]
            self._emit(record)
            return result



def capture(model, out_dir, ops=None, backward=None, max_bytes=None, timing=False, rank=None,
            **kwargs):
    """A Capture (see Capture for every argument) to use as `with capture(...) as cap:`;
    entering it checks the directory and starts recording, leaving it stops. Version 1's
    arguments keep their positions; level defaults to "aten" (level="modules" records as
    version 1 did, in format version 2)."""
    return Capture(model, out_dir, ops, backward, max_bytes, timing, rank, **kwargs)
