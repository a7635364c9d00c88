# SPDX-License-Identifier: Apache-2.0
"""aten ops as TorchDispatchMode sees them: their names, whether they are recorded, and how
their arguments bind to the schema.

Recorded beside aten's: fbgemm's (TorchRec's table-batched embedding kernels and its sparse
ops on GPUs), named "fbgemm::<op>" so no aten name is taken. Not recorded (counted per op in
the manifest's "omitted"):
  - ops of other namespaces (profiler markers, c10d internals);
  - alias and metadata-only ops: a return aliasing an input without writing it, per the
    schema's alias annotations (view, t, transpose, expand, detach, lift_fresh, alias,
    _reshape_alias, split, unbind, select, slice, ...); ops tagged inplace_view (t_,
    squeeze_, detach_, ...); and, as an explicit list for ops whose schema does not say so,
    _unsafe_view, unsafe_split(_with_sizes), unsafe_chunk, set_, size/stride queries and
    _local_scalar_dense / is_nonzero (.item() and bool(): they read a value, compute nothing);
  - allocation-only ops, whose contents are uninitialised: empty, empty_like, new_empty,
    empty_strided, new_empty_strided, empty_permuted, resize_, resize_as_.
Everything else that reaches the mode is recorded: clone, copy_, _to_copy (autocast's dtype
conversions) and the fills (zeros, ones_like, fill_, ...) included.
"""
import math

import torch

ALLOCATION_OPS = frozenset({
    "empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided",
    "empty_permuted", "resize_", "resize_as_", "_empty_affine_quantized",
    "_empty_per_channel_affine_quantized"})
METADATA_OPS = frozenset({
    "_unsafe_view", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk", "set_",
    "_local_scalar_dense", "is_nonzero", "sym_size", "sym_stride", "sym_numel",
    "sym_storage_offset", "size", "stride", "numel", "dim", "is_contiguous", "is_same_size",
    "record_stream", "_version", "_nested_tensor_size", "_nested_tensor_strides"})
# In-place fills: they overwrite `self` without reading it, so `self` is no input.
FILL_OPS = frozenset({
    "bernoulli_", "uniform_", "normal_", "random_", "fill_", "zero_", "exponential_",
    "geometric_", "log_normal_", "cauchy_"})

_INPLACE_VIEW = getattr(getattr(torch, "Tag", None), "inplace_view", None)
# The namespaces whose ops are recorded, and the prefix of their records' op names.
RECORDED_NAMESPACES = {"aten": "", "fbgemm": "fbgemm::"}


class OpInfo:
    """What the capture needs to know about one OpOverload, computed once.

    Attributes: name (no namespace or overload), overload ("default", "Tensor", ...),
    omitted (bool), fill (an in-place fill), args (the schema's arguments as (name, is_tensor
    typed, is_out, has_default, default) tuples), positional (names of the arguments that may
    be passed by position), mutated (names of arguments the op writes).
    """

    __slots__ = ("name", "overload", "omitted", "fill", "args", "positional", "mutated",
                 "returns_nothing")

    def __init__(self, func):
        schema = func._schema
        namespace, _, name = schema.name.partition("::")
        if not name:
            namespace, name = "", namespace
        self.name = RECORDED_NAMESPACES.get(namespace, "") + name
        self.overload = getattr(func, "_overloadname", None) or schema.overload_name or "default"
        self.fill = name in FILL_OPS
        self.args = []
        self.positional = []
        self.mutated = set()
        for a in schema.arguments:
            alias = a.alias_info
            writes = bool(alias is not None and alias.is_write)
            is_out = bool(getattr(a, "is_out", a.kwarg_only and writes))
            has_default, default = _default(a)
            self.args.append((a.name, "Tensor" in str(a.type), is_out, has_default, default))
            if not a.kwarg_only:
                self.positional.append(a.name)
            if writes:
                self.mutated.add(a.name)
        self.returns_nothing = len(schema.returns) == 0
        self.omitted = (namespace not in RECORDED_NAMESPACES or name in ALLOCATION_OPS
                        or name in METADATA_OPS)
        if not self.omitted and _INPLACE_VIEW is not None and _INPLACE_VIEW in getattr(
                func, "tags", ()):
            self.omitted = True
        if not self.omitted:
            aliases = [r.alias_info for r in schema.returns]
            if any(al is not None and not al.is_write for al in aliases):
                self.omitted = True


def _default(argument):
    """(whether the schema argument declares a default, the default): `Tensor? w=None`
    declares None; where this torch cannot say, (False, None)."""
    try:
        has = argument.has_default_value()
    except (AttributeError, RuntimeError):
        has = getattr(argument, "default_value", None) is not None
    return bool(has), (getattr(argument, "default_value", None) if has else None)


_CACHE = {}


def info(func):
    """The OpInfo of an OpOverload (cached)."""
    i = _CACHE.get(func)
    if i is None:
        i = _CACHE[func] = OpInfo(func)
    return i


def jsonable(value):
    """A JSON-representable form of a non-tensor argument: numbers, bools, strings, lists as
    they are; dtypes, layouts and memory formats by name ("float32"); devices as "cpu",
    "cuda:0"; None as None; a Generator as "generator". Non-finite floats become None (see
    put_attr, which adds the "<name>_nonfinite" marker at the top level)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (torch.dtype, torch.layout, torch.memory_format)):
        return str(value).replace("torch.", "")
    if isinstance(value, torch.device):
        return str(value)
    if isinstance(value, (list, tuple, torch.Size)):
        return [jsonable(v) for v in value]
    if isinstance(value, torch.Generator):
        return "generator"
    for kind, cast in ((getattr(torch, "SymInt", None), int),
                       (getattr(torch, "SymFloat", None), float),
                       (getattr(torch, "SymBool", None), bool)):
        if kind is not None and isinstance(value, kind):
            return jsonable(cast(value))
    if isinstance(value, complex):
        return str(value)
    return str(value)


def put_attr(attrs, name, value):
    """attrs[name] = jsonable(value); a non-finite float is null with
    attrs[name + "_nonfinite"] = "inf", "-inf" or "nan"."""
    if isinstance(value, float) and not math.isfinite(value):
        attrs[name] = None
        attrs[name + "_nonfinite"] = "nan" if math.isnan(value) else (
            "inf" if value > 0 else "-inf")
    else:
        attrs[name] = jsonable(value)


def bind(op, args, kwargs):
    """Splits a call of `op` (an OpInfo) into inputs and attrs.

    Returns (inputs, attrs): inputs a list of (argument name, index or None, tensor) in
    schema order, a tensor list giving one per tensor element with its index; out= arguments
    are not inputs, nor is `self` of an in-place fill. attrs maps every other argument, by
    its schema name, to its JSON form, including those the caller left to their schema
    default (so that the same call spelled two ways records the same attrs); a tensor
    argument passed as None is attrs null.
    """
    values = dict(zip(op.positional, args))
    if kwargs:
        values.update(kwargs)
    inputs, attrs = [], {}
    for name, tensor_typed, is_out, has_default, default in op.args:
        if name in values:
            value = values[name]
        elif has_default:
            value = default
        else:
            continue
        if is_out or (op.fill and name == "self"):
            continue
        if isinstance(value, torch.Tensor):
            inputs.append((name, None, value))
        elif isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
            for i, v in enumerate(value):
                if isinstance(v, torch.Tensor):
                    inputs.append((name, i, v))
        elif value is None and tensor_typed:
            attrs[name] = None
        else:
            put_attr(attrs, name, value)
    return inputs, attrs


def mutated_tensors(op, args, kwargs):
    """The tensors an op writes (its out= and in-place arguments), flattened in schema order:
    the outputs of an op that returns nothing (the _foreach_*_ ops)."""
    if not op.mutated:
        return []
    values = dict(zip(op.positional, args))
    if kwargs:
        values.update(kwargs)
    out = []
    for name, *_ in op.args:
        if name in op.mutated and name in values:
            v = values[name]
            if isinstance(v, torch.Tensor):
                out.append(v)
            elif isinstance(v, (list, tuple)):
                out.extend(t for t in v if isinstance(t, torch.Tensor))
    return out


# Tensors some recurrent kernels hand from forward to backward that hold scratch memory, not
# values: oneDNN's LSTM/GRU workspace (torch 2.x on the CPU), cuDNN's and MIOpen's reserve
# space. Their bytes differ between two runs of the same step, so the capture records them as
# not stored, with SCRATCH as the reason: compare and explain skip them saying so, instead of
# reporting a divergence. By op: the output index, and the backward's input argument.
SCRATCH = ("scratch memory the kernel keeps for its backward (oneDNN's workspace, cuDNN's or "
           "MIOpen's reserve space), not a value: its bytes differ between two runs of one step")
SCRATCH_OUTPUTS = {"mkldnn_rnn_layer": 3, "_cudnn_rnn": 3, "miopen_rnn": 3}
SCRATCH_INPUTS = {"mkldnn_rnn_layer_backward": "workspace", "_cudnn_rnn_backward": "reserve",
                  "miopen_rnn_backward": "reserve"}


def flatten_tensors(result):
    """The tensors of an op's result, tuples and lists flattened in order."""
    if isinstance(result, torch.Tensor):
        return [result]
    if isinstance(result, (list, tuple)):
        out = []
        for r in result:
            out.extend(flatten_tensors(r))
        return out
    return []
