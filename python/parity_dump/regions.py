# SPDX-License-Identifier: Apache-2.0
"""Compiled regions replayed in float64, PyTorch as its own oracle.

A compiled region's record (compiled.py) holds the tensors dynamo passed the compiled graph and
the tensors it returned, not the ops inside. This module runs the graph dynamo handed the
backend (DUMP/graphs/<region>.dynamo.py, the FX graph's code) in float64 on the recorded
inputs, and writes what `parity replay` and `parity explain` judge the region's outputs
against:

    DUMP/oracle/regions.json  {"format": "parity-region-replays", "version": 1,
                               "torch": VERSION, "regions": {SEQ: ENTRY}}
    DUMP/oracle/regions/<seq>_out<i>.npy   the float64 outputs

ENTRY is {"outputs": [file, ...], "k": K, "ops": N} for a replayed record, or {"reason": WHY}
(compared only). K bounds the region's rounding: the sum, over the N aten ops the graph runs,
of each op's reduction length (a matmul's inner dimension, a convolution's C_in/groups·kh·kw,
a reduction's reduced size, a softmax's or norm's row, attention's E + 2S; 1 for an
elementwise op): the error of any chain of them adds up to at most that many roundings.

Forward records run the dynamo graph; a backward record (its inputs the gradients reaching the
region) runs it again from the matching forward record's inputs (the same region, step and
rank, in call order) and takes autograd's gradients for the inputs the forward recorded as
requiring them (attrs "inputs_requiring_grad"). Its dtypes are float64 throughout: the
graph's own dtype constants (torch.float32, float16, bfloat16) are read as float64.

Compared only, with the reason: a graph file missing or unreadable, a region compiled before
the capture started (no graph), a graph that draws random numbers, one that raises in float64,
outputs that differ in number or shape from the record's, a statistics-only dump.

It runs the graph code the dump holds (DUMP/graphs/*.py, written by the capture): run it on
dumps you trust, as you would the model's own code. A distributed dump (rank<N>/
subdirectories) is replayed rank by rank, each rank's index in its own directory.

Usage: python -m parity_dump.regions DUMP [DUMP ...]
"""
import inspect
import json
import math
import os
import sys

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

OP = "compiled_region"
INDEX = os.path.join("oracle", "regions.json")
RANDOM_OPS = frozenset({"bernoulli", "bernoulli_", "native_dropout", "rand", "rand_like",
                        "randn", "randn_like", "randint", "randperm", "uniform_", "normal_",
                        "exponential_", "multinomial", "philox_rand", "inductor_random"})


class RegionError(Exception):
    """Why a region's record is compared only."""


class DumpError(Exception):
    """A dump that can't be read: exit 2."""


def _records(dump):
    """The records of DUMP/records.jsonl (a last line cut off by a crash dropped)."""
    path = os.path.join(dump, "records.jsonl")
    try:
        with open(path) as f:
            lines = f.read().split("\n")
    except (OSError, UnicodeDecodeError) as e:
        raise DumpError("%s: %s" % (path, getattr(e, "strerror", None) or e))
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or not isinstance(record.get("op"), str):
                raise ValueError("not a record")
        except ValueError as e:
            if number == len(lines):  # no newline after it: cut off mid-record
                break
            raise DumpError("%s: line %d: %s" % (path, number, e))
        records.append(record)
    return records


def _load(dump, entry):
    if "file" not in entry:
        raise RegionError("its tensors were saved as statistics only, or not stored")
    array = np.load(os.path.join(dump, entry["file"]))
    if entry["dtype"] == "bfloat16":
        array = (array.astype(np.uint32) << 16).view(np.float32)
    t = torch.from_numpy(np.ascontiguousarray(array))
    return t.to(torch.float64) if t.is_floating_point() else t


def _graph_module(dump, rel):
    """The region's dynamo graph (print_readable's code) as a module computing in float64."""
    if not rel:
        raise RegionError("the record names no graph file (a region compiled before the "
                          "capture started)")
    path = os.path.join(dump, rel)
    try:
        with open(path) as f:
            source = f.read()
    except OSError as e:
        raise RegionError("graph file %s unreadable: %s" % (rel, e.strerror or e))
    for narrow in ("torch.float32", "torch.float16", "torch.bfloat16"):
        source = source.replace(narrow, "torch.float64")
    scope = {"torch": torch, "inf": math.inf, "nan": math.nan, "device": torch.device}
    try:
        exec(compile(source, path, "exec"), scope)  # noqa: S102 - the dump's own graph
        return scope["GraphModule"]()
    except Exception as e:  # noqa: BLE001 - any failure: compared only, saying why
        raise RegionError("graph file %s does not load: %s: %s" % (
            rel, type(e).__name__, str(e).split("\n", 1)[0]))


def reduction_length(func, args, kwargs, out):
    """One aten op's reduction length (module docstring); 1 for an elementwise op."""
    name = func._schema.name.split("::")[-1]
    tensors = [a for a in args if isinstance(a, torch.Tensor)]
    try:
        if name in ("mm", "bmm", "matmul"):
            return int(args[0].shape[-1])
        if name in ("addmm", "baddbmm", "addbmm", "addmv"):
            return int(args[1].shape[-1])
        if name == "convolution":
            return int(args[1][0].numel()) if args[1].shape[0] else 1
        if name in ("_softmax", "_log_softmax", "_safe_softmax", "cumsum", "logsumexp"):
            return int(args[0].shape[args[1] if len(args) > 1 else -1])
        if name in ("native_layer_norm", "_fused_rms_norm"):
            return int(math.prod(args[1]))
        if name.startswith("_scaled_dot_product") and len(tensors) >= 2:
            return int(args[0].shape[-1] + 2 * args[1].shape[-2])
        if name in ("sum", "mean", "var", "var_mean", "std", "std_mean", "norm",
                    "linalg_vector_norm", "amax", "amin", "native_batch_norm"):
            x = args[0]
            out_numel = sum(o.numel() for o in (out if isinstance(out, (tuple, list)) else [out])
                            if isinstance(o, torch.Tensor)) or 1
            return max(1, x.numel() // max(1, out_numel))
    except (IndexError, TypeError, AttributeError):
        pass
    return 1


class _Ops(TorchDispatchMode):
    """Counts the aten ops a graph runs and sums their reduction lengths."""

    def __init__(self):
        super().__init__()
        self.ops, self.k, self.random = 0, 0, []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func._schema.name.split("::")[-1]
        if name in RANDOM_OPS:
            self.random.append(name)
        self.ops += 1
        self.k += reduction_length(func, args, kwargs, out)
        return out


def _forward(dump, record, grads_for=()):
    """(the float64 outputs, ops, K, the inputs named in grads_for) of a forward record."""
    gm = _graph_module(dump, record["attrs"].get("dynamo_graph"))
    params = list(inspect.signature(gm.forward).parameters)
    by_name = {}
    for e in record["inputs"]:
        by_name[e.get("arg")] = _load(dump, e)
    for name, value in record["attrs"].items():
        if name in params and name not in by_name:
            by_name[name] = value  # a SymInt argument
    missing = [p for p in params if p not in by_name]
    if missing:
        raise RegionError("the record lacks the graph's inputs %s" % ", ".join(missing[:4]))
    leaves = []
    for name in grads_for:
        t = by_name.get(name)
        if not isinstance(t, torch.Tensor) or not t.is_floating_point():
            raise RegionError("input %s needs a gradient but is not a recorded float tensor"
                              % name)
        by_name[name] = t.clone().requires_grad_(True)
        leaves.append(by_name[name])
    counter = _Ops()
    try:
        with torch.enable_grad() if leaves else torch.no_grad(), counter:
            result = gm(*[by_name[p] for p in params])
    except Exception as e:  # noqa: BLE001
        raise RegionError("the graph raises in float64: %s: %s" % (
            type(e).__name__, str(e).split("\n", 1)[0]))
    if counter.random:
        raise RegionError("the region draws random numbers (%s): compared only"
                          % ", ".join(sorted(set(counter.random))))
    outs = [t for t in (result if isinstance(result, (list, tuple)) else [result])
            if isinstance(t, torch.Tensor)]
    return outs, counter.ops, counter.k, leaves


def _replay(dump, record, forwards):
    """(float64 outputs, ops, K) of one compiled_region record."""
    if record["pass"] != "backward":
        outs, ops, k, _ = _forward(dump, record)
        return [o.detach() for o in outs], ops, k
    forward = forwards.get((record.get("rank", 0), record["attrs"].get("region"),
                            record.get("step", 0)), [])
    if not forward:
        raise RegionError("no forward record of region %s in step %s to replay its backward "
                          "from" % (record["attrs"].get("region"), record.get("step", 0)))
    fwd = forward.pop(0)
    wanted = fwd["attrs"].get("inputs_requiring_grad")
    if wanted is None:
        raise RegionError("its forward record does not say which inputs needed gradients")
    outs, ops, k, leaves = _forward(dump, fwd, wanted)
    pairs = []
    for i, e in enumerate(record["inputs"]):  # grad_output, index: the output it reaches
        at = e.get("index", i)
        if not isinstance(at, int) or not 0 <= at < len(outs) or not outs[at].requires_grad:
            raise RegionError("its gradient %d does not fit the forward's %d outputs"
                              % (i, len(outs)))
        pairs.append((outs[at], _load(dump, e)))
    if not pairs:
        raise RegionError("no gradient reaches the region")
    counter = _Ops()
    with counter:
        got = torch.autograd.grad([o for o, _ in pairs], leaves, [g for _, g in pairs],
                                  allow_unused=True)
    return [g for g in got if g is not None], ops + counter.ops, k + counter.k


def replay_dump(dump):
    """Writes DUMP/oracle/regions.json (and the outputs): returns the index written."""
    records = _records(dump)
    forwards = {}
    for r in records:
        if r["op"] == OP and r.get("pass") != "backward" and isinstance(r.get("attrs"), dict):
            key = (r.get("rank", 0), r["attrs"].get("region"), r.get("step", 0))
            forwards.setdefault(key, []).append(r)
    os.makedirs(os.path.join(dump, "oracle", "regions"), exist_ok=True)
    regions = {}
    for r in records:
        if r["op"] != OP:
            continue
        try:
            outs, ops, k = _replay(dump, r, forwards)
            if len(outs) != len(r["outputs"]):
                raise RegionError("the replay gives %d outputs, the record has %d"
                                  % (len(outs), len(r["outputs"])))
            files = []
            for i, (o, e) in enumerate(zip(outs, r["outputs"])):
                if list(o.shape) != e.get("shape"):
                    raise RegionError("output %d: the replay's shape %s, the record's %s"
                                      % (i, list(o.shape), e.get("shape")))
                rel = os.path.join("oracle", "regions", "%d_out%d.npy" % (r["seq"], i))
                np.save(os.path.join(dump, rel), o.detach().contiguous().numpy())
                files.append(rel)
            regions[str(r["seq"])] = {"outputs": files, "k": max(k, 1), "ops": ops}
        except RegionError as e:
            regions[str(r.get("seq"))] = {"reason": str(e)}
        except (KeyError, TypeError, AttributeError, IndexError, ValueError) as e:
            regions[str(r.get("seq"))] = {"reason": "the record is malformed (%s: %s)" % (
                type(e).__name__, e)}
    index = {"format": "parity-region-replays", "version": 1, "torch": torch.__version__,
             "regions": regions}
    with open(os.path.join(dump, INDEX), "w") as f:
        json.dump(index, f, indent=1)
    return index


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    for dump in argv:
        parts = []
        if os.path.isfile(os.path.join(dump, "records.jsonl")):
            parts = [dump]
        elif os.path.isdir(dump):
            parts = sorted(os.path.join(dump, d) for d in os.listdir(dump)
                           if d.startswith("rank") and d[4:].isdigit()
                           and os.path.isfile(os.path.join(dump, d, "records.jsonl")))
        if not parts:
            print("parity: error: %s: not a parity dump (no records.jsonl, no rank<N>/)" % dump,
                  file=sys.stderr)
            return 2
        for part in parts:
            try:
                index = replay_dump(part)
            except DumpError as e:
                print("parity: error: %s" % e, file=sys.stderr)
                return 2
            done = sum(1 for e in index["regions"].values() if "outputs" in e)
            print("%s: %d compiled region record(s), %d replayed in float64" % (
                part, len(index["regions"]), done))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
