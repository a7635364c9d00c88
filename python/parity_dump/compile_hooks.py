# SPDX-License-Identifier: Apache-2.0
"""Where the capture meets torch.compile (torch 2.x): which graph runs, when, and its text.
compiled.py turns what these hooks see into records.

Hooks, chosen for being where every backend passes and for changing nothing that runs:
  - OutputGraph.call_user_compiler (torch._dynamo.output_graph; named so since torch 2.0),
    where dynamo hands its FX graph to the backend, whatever the backend (inductor,
    aot_eager, a user's callable). Patched while a capture is started (install() ..
    remove()), it wraps the callable the backend returns: dynamo installs the wrapper (inside
    its own disable()) in the compiled frame's globals, where it stays with dynamo's cache.
    The wrapper hands each call to the recorder while one is set (a capture records), and
    otherwise just calls through. Not chosen: record_function tags ("Torch-Compiled Region:
    0/0", "## Call CompiledFxGraph ##") are only made while the profiler runs; AOTAutograd's
    runtime wrappers are generated code; a backend wrapper would have to replace the
    backend the user's torch.compile() bound before the capture existed.
  - torch's structured trace log (TORCH_TRACE, tlparse's channel; torch's own dynamo
    test_case adds a handler the same way) hands over AOTAutograd's forward (or inference)
    and backward graphs, by compile id.
A graph dynamo compiles for a higher-order op's own call (eager cond, flex_attention) is no
region: the op is one record (hops.py). Graphs compiled before install() (no hook saw them)
are found by adopt(): dynamo names the global of each compiled graph "__compiled_fn_<n>_
<uuid>"; their compile ids and backends are read from dynamo's cache where it can be read.
"""
import logging
import sys

import torch

OutputGraph = trace_log = None  # imported by supported(): torch._dynamo takes a second or two
_AOT = {"aot_forward_graph": "forward", "aot_inference_graph": "forward",
        "aot_backward_graph": "backward"}
_HOP_MODULES = ("torch._higher_order_ops", "torch.nn.attention")
_STATE = {"recorder": None, "installs": 0, "original": None, "texts": {}}


def supported():
    """Whether this torch can run compiled code under a dispatch mode and show its regions
    (torch 2.5 and later: modes may ignore compile internals). Imports torch._dynamo."""
    global OutputGraph, trace_log  # pylint: disable=global-statement
    if OutputGraph is None:
        try:
            from torch._dynamo.output_graph import OutputGraph as graph
            from torch._logging._internal import trace_log as log
            from torch.utils._python_dispatch import TorchDispatchMode
        except Exception:  # pylint: disable=broad-except  # torch 1.13: no dynamo
            return False
        if not (hasattr(graph, "call_user_compiler")
                and hasattr(TorchDispatchMode, "ignore_compile_internals")):
            return False
        OutputGraph, trace_log = graph, log
    return True


def set_recorder(recorder):
    """The object whose run(region, fn, args, kwargs) runs every compiled region from now on
    (None: regions just run)."""
    _STATE["recorder"] = recorder


def recorder():
    return _STATE["recorder"]


class Region:
    """One compiled graph: dynamo's compile id ("0/0"), the backend's name, the graph's
    placeholder names, its texts by kind ("dynamo", "forward", "backward"; filled in as
    torch logs them) and whether it was compiled before the hooks were installed."""

    def __init__(self, ident, backend, names, texts, before_start=False):
        self.ident, self.backend, self.names, self.texts = ident, backend, names, texts
        self.before_start = before_start


def _in_hop_compile():
    try:
        from torch._higher_order_ops.utils import _in_hop_compile as in_hop_compile
    except ImportError:
        return False
    return bool(in_hop_compile())


def _backend_name(fn):
    for _ in range(4):  # through dynamo's WrapBackendDebug to torch.compile's wrapper
        for attr in ("compiler_name", "_compiler_name"):
            name = getattr(fn, attr, None)
            if isinstance(name, str) and name:
                return name
        inner = getattr(fn, "_torchdynamo_orig_backend", None)
        if inner is None or inner is fn:
            break
        fn = inner
    return getattr(fn, "__name__", None) or type(fn).__name__


def _ident(autograd_id, frame_id, compile_id):
    """CompileId's own spelling: "0/0", "!1/0/0" in compiled autograd."""
    ident = "%s/%s" % (frame_id, compile_id)
    return ident if autograd_id is None else "!%s/%s" % (autograd_id, ident)


def _wrap(fn, region):
    def compiled_region(*args, **kwargs):
        rec = _STATE["recorder"]
        if rec is None:
            return fn(*args, **kwargs)
        return rec.run(region, fn, args, kwargs)
    compiled_region.parity_region = region
    return compiled_region


def _region_of(fn):
    for _ in range(4):  # through dynamo's disable() wrappers
        region = getattr(fn, "parity_region", None)
        if region is not None or fn is None:
            return region
        fn = getattr(fn, "_torchdynamo_orig_callable", None)
    return None


def _call_user_compiler(self, gm, *args, **kwargs):
    """OutputGraph.call_user_compiler while installed: the backend's callable, wrapped (as
    it is where anything here fails: the hook never breaks a compile)."""
    original, ident = _STATE["original"], None
    try:
        cid = torch._guards.CompileContext.current_compile_id()
        if cid is not None and not _in_hop_compile() and not getattr(self, "export", False):
            ident = _ident(getattr(cid, "compiled_autograd_id", None), cid.frame_id,
                           cid.frame_compile_id)
            texts = _STATE["texts"][ident] = {}  # AOTAutograd's graphs come by the trace log
    except Exception:  # pylint: disable=broad-except
        ident = None
    fn = original(self, gm, *args, **kwargs)
    if ident is None:
        return fn
    try:
        from torch.fx._lazy_graph_module import _LazyGraphModule
        lazy = fn if isinstance(fn, _LazyGraphModule) else getattr(fn, "__self__", None)
        if isinstance(lazy, _LazyGraphModule):  # as dynamo does with one it sees
            _LazyGraphModule.force_recompile(lazy)
        texts["dynamo"] = gm.print_readable(print_output=False)
        names = [str(n.target) for n in gm.graph.nodes if n.op == "placeholder"]
        return _wrap(fn, Region(ident, _backend_name(self.compiler_fn), names, texts))
    except Exception:  # pylint: disable=broad-except
        return fn


class _TraceHandler(logging.Handler):
    """Takes AOTAutograd's graphs off torch's structured trace log, by compile id."""

    def emit(self, record):
        meta = getattr(record, "metadata", None)
        kind = next((k for k in _AOT if isinstance(meta, dict) and k in meta), None)
        if kind is not None and isinstance(getattr(record, "payload", None), str):
            texts = _STATE["texts"].get(_ident(meta.get("compiled_autograd_id"),
                                               meta.get("frame_id"),
                                               meta.get("frame_compile_id")))
            if texts is not None:
                texts[_AOT[kind]] = record.payload

    def handleError(self, record):  # never a traceback on stderr for a graph not taken
        pass


_HANDLER = _TraceHandler()


def install():
    """Hooks dynamo (see the module docstring); calls nest. supported() must be True."""
    if _STATE["installs"] == 0:
        _STATE["original"] = OutputGraph.call_user_compiler
        OutputGraph.call_user_compiler = _call_user_compiler
        trace_log.addHandler(_HANDLER)
    _STATE["installs"] += 1


def remove():
    """Undoes one install(); the last one puts dynamo back as it was. Regions compiled
    meanwhile keep their wrapper (it calls through while no recorder is set)."""
    _STATE["installs"] -= 1
    if _STATE["installs"] == 0:
        OutputGraph.call_user_compiler = _STATE["original"]
        trace_log.removeHandler(_HANDLER)
        _STATE["texts"] = {}  # regions keep their own


def _cache_ids():
    """{dynamo global name: (compile id, backend)} read from dynamo's cache; {} where it
    cannot be read."""
    out = {}
    try:
        from torch._dynamo import convert_frame, eval_frame
        for code in list(convert_frame.input_codes.seen):
            code = code if hasattr(code, "co_names") else code()
            for entry in (eval_frame._debug_get_cache_entry_list(code) if code else ()):
                for name in entry.code.co_names:
                    if name.startswith("__compiled_fn_"):
                        out[name] = (str(entry.compile_id), _backend_name(entry.backend))
    except Exception:  # pylint: disable=broad-except
        pass
    return out


def adopt():
    """Wraps the graphs dynamo compiled before install() (their globals, in any module but
    higher-order ops' own). Returns [(globals, name, original, wrapper)] for restore()."""
    adopted, ids = [], None
    try:
        for modname, module in list(sys.modules.items()):
            scope = getattr(module, "__dict__", None)
            if not isinstance(scope, dict) or str(modname).startswith(_HOP_MODULES):
                continue
            for name in [k for k in scope
                         if isinstance(k, str) and k.startswith("__compiled_fn_")]:
                original = scope[name]
                if _region_of(original) is not None or not callable(original):
                    continue
                ids = _cache_ids() if ids is None else ids
                ident, backend = ids.get(name, (name.rsplit("_", 5)[0].strip("_"), "unknown"))
                region = Region(ident, backend, [], {}, before_start=True)
                wrapper = torch._dynamo.disable(_wrap(original, region))  # not to be traced
                scope[name] = wrapper
                adopted.append((scope, name, original, wrapper))
    except Exception:  # pylint: disable=broad-except  # a module that can't be read: as found
        pass
    return adopted


def restore(adopted):
    """Puts back the globals adopt() wrapped (where nothing replaced them since)."""
    for scope, name, original, wrapper in adopted:
        if scope.get(name) is wrapper:
            scope[name] = original
