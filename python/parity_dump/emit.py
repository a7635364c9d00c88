# SPDX-License-Identifier: Apache-2.0
"""How Capture turns a call into a record and writes it: the record's head (seq, step, call
number, source), its input entries, the call timed with the device synchronised around it,
a record taken back when its op raises, and records held until the digests and statistics
they carry are set (the Hasher's thread, short tensors' batches) and then written in order.
A mixin of Capture, whose state it uses."""
import os
import time

import torch

from . import aten, sources
from .tensors import BATCH


class RecordEmitter:
    """Capture's record building and writing (see the module docstring)."""

    def _next_call(self, name, pass_):
        key = (name, pass_)
        call = self.calls.get(key, 0)
        self.calls[key] = call + 1
        return call

    def _head(self, name, module, op, overload, pass_, attrs):
        seq = self.seq
        self.seq += 1
        record = {"seq": seq, "step": self.step_index, "rank": self.rank, "name": name,
                  "module": module, "op": op, "overload": overload, "pass": pass_,
                  "call": self._next_call(name, pass_), "attrs": attrs}
        if self.stack:
            source = (sources.of_backward_node() if pass_ == "backward"
                      else sources.from_stack())
            if source is not None:
                record["source"] = source
        return record

    def _emit(self, record):
        self.step_records += 1
        if self.hasher is None:
            self.records.write(record)
            return
        self.unwritten.append((record, self.hasher.count))
        self._write_records()

    def _write_records(self, wait=False):
        """Writes the records whose digests are all set, in order (all of them with wait)."""
        unwritten = self.unwritten
        if wait and self.hasher is not None:
            self.hasher.wait()
        elif self.writer.batching and len(self.writer.batch) < BATCH:  # wait for a batch
            return
        self.writer.describe()
        if not unwritten:
            return
        is_ready = self.hasher.ready
        if is_ready(unwritten[-1][1]):  # all of them
            ready = [r for r, _ in unwritten]
            unwritten.clear()
        else:
            ready = []
            while unwritten and is_ready(unwritten[0][1]):
                ready.append(unwritten.popleft()[0])
        if len(ready) == 1:
            self.records.write(ready[0])
        elif ready:
            self.records.write_many(ready)

    def _written_outside(self):
        """Tensors were written outside aten dispatch (a collective): no digest may still
        be reading them, no statistics computed before are reused."""
        if self.hasher is not None:
            self.hasher.wait()
        self.writer.forget()

    def _sync(self, tensors):
        if self.timing and torch.cuda.is_available() and any(t.is_cuda for t in tensors):
            torch.cuda.synchronize()

    def _input_entries(self, inputs, seq, scratch_arg=None):
        """The entries of a record's inputs, given as (argument name, index or None, tensor);
        the argument `scratch_arg` is scratch memory, not stored (aten.SCRATCH)."""
        entries = []
        for i, (arg, index, tensor) in enumerate(inputs):
            e = {"arg": arg}
            if index is not None:
                e["index"] = index
            if arg == scratch_arg:
                e.update(self.writer.not_stored(tensor, aten.SCRATCH))
            else:
                e.update(self.writer.entry(tensor, seq, "in%d" % i))
            entries.append(e)
        return entries

    def _run_timed(self, record, tensors, call):
        """call() with the device synchronised around it (`tensors`' devices), as (its result,
        seconds); when it raises, the record is taken back (_unrecord) and the exception goes
        on."""
        self._sync(tensors)
        start = time.perf_counter()
        try:
            result = call()
        except BaseException:
            self._unrecord(record)
            raise
        self._sync(tensors)
        return result, time.perf_counter() - start

    def _unrecord(self, record):
        """Takes back a record whose op raised: its seq and call are reused, its files
        removed; the exception goes on unchanged."""
        self.seq = record["seq"]
        key = (record["name"], record["pass"])
        self.calls[key] = record["call"]
        for e in record["inputs"]:
            if "file" in e:
                try:
                    os.remove(os.path.join(self.dir, e["file"]))
                except OSError:
                    pass
