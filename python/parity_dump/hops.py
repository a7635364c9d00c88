# SPDX-License-Identifier: Apache-2.0
"""Higher-order ops (torch 2.x: torch.cond, flex_attention and its backward, while_loop,
...) recorded as one op each.

torch hands a higher-order op to the capture's mode (modes.DispatchMode supports them) with
the mode popped: the op runs as it would without the capture, and the ops inside it are not
seen. Its record has op = the op's name ("cond", "flex_attention", "flex_attention_backward"),
overload "", inputs the tensors among its arguments (arg: the parameter's name, or "arg<i>"
where the op does not name it; index: the tensor's position among the leaves of a tuple,
list or dict argument), attrs its other arguments (functions and modules by name, tuples,
lists and dicts without tensors as JSON), outputs the tensors it returns, flattened.
"""
import inspect

import torch

from . import aten

try:
    from torch.utils._pytree import tree_leaves
except ImportError:  # torch 1.13 has no higher-order ops to flatten
    tree_leaves = None


_NAMES = {}  # type of a higher-order op -> its positional parameters' names


def _parameter_names(func, count):
    """The names of the first `count` positional parameters of `func`'s __call__, "arg<i>"
    where they cannot be read."""
    names = _NAMES.get(type(func))
    if names is None:
        names = []
        try:
            for p in inspect.signature(func.__call__).parameters.values():
                if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                    break
                names.append(p.name)
        except (TypeError, ValueError):
            pass
        _NAMES[type(func)] = names
    return [names[i] if i < len(names) else "arg%d" % i for i in range(count)]


def _leaves(value):
    if tree_leaves is None or not isinstance(value, (tuple, list, dict)):
        return [value]
    return tree_leaves(value)


def _describe(value):
    """The JSON form of a non-tensor argument: a module or function by its name."""
    if isinstance(value, torch.nn.Module):
        return type(value).__name__
    if callable(value) and not isinstance(value, type):
        return getattr(value, "__qualname__", None) or type(value).__name__
    if isinstance(value, (tuple, list)):
        return [_describe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _describe(v) for k, v in value.items()}
    return aten.jsonable(value)


def bind(func, args, kwargs):
    """(inputs, attrs) of a higher-order op call, as aten.bind's: inputs a list of
    (argument name, index or None, tensor), attrs the other arguments by name."""
    inputs, attrs = [], {}
    named = list(zip(_parameter_names(func, len(args)), args)) + list(kwargs.items())
    for name, value in named:
        if isinstance(value, torch.Tensor):
            inputs.append((name, None, value))
            continue
        leaves = _leaves(value)
        tensors = [(i, v) for i, v in enumerate(leaves) if isinstance(v, torch.Tensor)]
        if tensors:
            inputs.extend((name, i, v) for i, v in tensors)
        elif isinstance(value, float):
            aten.put_attr(attrs, name, value)
        else:
            attrs[name] = _describe(value)
    return inputs, attrs


def record_hop(capture, func, args, kwargs):
    """Runs higher-order op `func` on (args, kwargs) and returns its result, recording it
    as one op (see the module docstring) when the capture records now and selects it. The
    result is the op's own: the capture only reads its inputs and outputs."""
    c = capture
    if not c._recording():
        return func(*args, **kwargs)
    op = func.name()
    pass_, module = c._where()
    if (pass_ == "backward" and not c.backward) or not c._selected(op, module):
        return func(*args, **kwargs)
    with c.busy_scope:
        inputs, attrs = bind(func, args, kwargs)
        name = module + "." + op if module else op
        record = c._head(name, module, op, "", pass_, attrs)
        seq = record["seq"]
        record["inputs"] = c._input_entries(inputs, seq)
        record["params"] = {}
        c._written_outside()  # what it writes inside does not pass through the mode
        result, elapsed = c._run_timed(record, [t for _, _, t in inputs],
                                       lambda: func(*args, **kwargs))
        c.writer.forget()
        outs = [t for t in _leaves(result) if isinstance(t, torch.Tensor)]
        record["outputs"] = [c.writer.entry(t, seq, "out%d" % i) for i, t in enumerate(outs)]
        if c.timing:
            record["time_us"] = elapsed * 1e6
        c._emit(record)
        return result
