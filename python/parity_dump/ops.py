# SPDX-License-Identifier: Apache-2.0
"""Which torch functions are recorded, under which op name, and how their arguments bind.

Each op has a signature: the argument names in positional order with their role, "input"
(a tensor the op computes on), "param" (a weight or buffer) or "attr" (a non-tensor argument
replay needs, named as in PyTorch).
"""
import torch
import torch.nn.functional as F

# op name -> [(argument name, role)] in positional order.
SIGNATURES = {
    "linear": [("input", "input"), ("weight", "param"), ("bias", "param")],
    "matmul": [("input", "input"), ("other", "input")],
    "bmm": [("input", "input"), ("mat2", "input")],
    "conv1d": [("input", "input"), ("weight", "param"), ("bias", "param"), ("stride", "attr"),
               ("padding", "attr"), ("dilation", "attr"), ("groups", "attr")],
    "conv2d": [("input", "input"), ("weight", "param"), ("bias", "param"), ("stride", "attr"),
               ("padding", "attr"), ("dilation", "attr"), ("groups", "attr")],
    "softmax": [("input", "input"), ("dim", "attr"), ("_stacklevel", "ignore"),
                ("dtype", "attr")],
    "log_softmax": [("input", "input"), ("dim", "attr"), ("_stacklevel", "ignore"),
                    ("dtype", "attr")],
    "layer_norm": [("input", "input"), ("normalized_shape", "attr"), ("weight", "param"),
                   ("bias", "param"), ("eps", "attr")],
    "rms_norm": [("input", "input"), ("normalized_shape", "attr"), ("weight", "param"),
                 ("eps", "attr")],
    "batch_norm": [("input", "input"), ("running_mean", "param"), ("running_var", "param"),
                   ("weight", "param"), ("bias", "param"), ("training", "attr"),
                   ("momentum", "attr"), ("eps", "attr")],
    "gelu": [("input", "input"), ("approximate", "attr")],
    "silu": [("input", "input"), ("inplace", "ignore")],
    "relu": [("input", "input"), ("inplace", "ignore")],
    "add": [("input", "input"), ("other", "input"), ("alpha", "attr")],
    "mul": [("input", "input"), ("other", "input")],
    "sum": [("input", "input"), ("dim", "attr"), ("keepdim", "attr"), ("dtype", "attr")],
    "mean": [("input", "input"), ("dim", "attr"), ("keepdim", "attr"), ("dtype", "attr")],
    "embedding": [("input", "input"), ("weight", "param"), ("padding_idx", "attr"),
                  ("max_norm", "attr"), ("norm_type", "attr"), ("scale_grad_by_freq", "ignore"),
                  ("sparse", "ignore")],
    "dropout": [("input", "input"), ("p", "attr"), ("training", "attr"), ("inplace", "ignore")],
    "scaled_dot_product_attention": [("query", "input"), ("key", "input"), ("value", "input"),
                                     ("attn_mask", "input"), ("dropout_p", "attr"),
                                     ("is_causal", "attr"), ("scale", "attr")],
}

# Attribute defaults that replay needs even when the caller left them out.
DEFAULTS = {
    "conv1d": {"stride": 1, "padding": 0, "dilation": 1, "groups": 1},
    "conv2d": {"stride": 1, "padding": 0, "dilation": 1, "groups": 1},
    "layer_norm": {"eps": 1e-5},
    "batch_norm": {"training": False, "momentum": 0.1, "eps": 1e-5},
    "gelu": {"approximate": "none"},
    "add": {"alpha": 1},
    "sum": {"keepdim": False},
    "mean": {"keepdim": False},
    "dropout": {"p": 0.5, "training": True},
    "scaled_dot_product_attention": {"dropout_p": 0.0, "is_causal": False},
}

ALL_OPS = tuple(SIGNATURES)

# The op a leaf module of each class performs: its calls are named after the module.
MODULE_OPS = {
    torch.nn.Linear: "linear",
    torch.nn.Conv1d: "conv1d",
    torch.nn.Conv2d: "conv2d",
    torch.nn.LayerNorm: "layer_norm",
    torch.nn.BatchNorm1d: "batch_norm",
    torch.nn.BatchNorm2d: "batch_norm",
    torch.nn.Embedding: "embedding",
    torch.nn.Dropout: "dropout",
    torch.nn.GELU: "gelu",
    torch.nn.ReLU: "relu",
    torch.nn.SiLU: "silu",
    torch.nn.Softmax: "softmax",
    torch.nn.LogSoftmax: "log_softmax",
}
if hasattr(torch.nn, "RMSNorm"):
    MODULE_OPS[torch.nn.RMSNorm] = "rms_norm"


def _functions():
    """(callable, op name) for every entry point of each op that exists in this torch."""
    T = torch.Tensor
    table = [
        (F.linear, "linear"),
        (torch.matmul, "matmul"), (T.matmul, "matmul"), (T.__matmul__, "matmul"),
        (torch.bmm, "bmm"), (T.bmm, "bmm"),
        (F.conv1d, "conv1d"), (torch.conv1d, "conv1d"),
        (F.conv2d, "conv2d"), (torch.conv2d, "conv2d"),
        (F.softmax, "softmax"), (torch.softmax, "softmax"), (T.softmax, "softmax"),
        (F.log_softmax, "log_softmax"), (torch.log_softmax, "log_softmax"),
        (T.log_softmax, "log_softmax"),
        (F.layer_norm, "layer_norm"),
        (F.batch_norm, "batch_norm"),
        (F.gelu, "gelu"),
        (F.silu, "silu"),
        (F.relu, "relu"), (torch.relu, "relu"), (T.relu, "relu"),
        (torch.add, "add"), (T.add, "add"), (T.__add__, "add"), (T.__radd__, "add"),
        (torch.mul, "mul"), (T.mul, "mul"), (T.__mul__, "mul"), (T.__rmul__, "mul"),
        (torch.sum, "sum"), (T.sum, "sum"),
        (torch.mean, "mean"), (T.mean, "mean"),
        (F.embedding, "embedding"),
        (F.dropout, "dropout"),
    ]
    if hasattr(F, "rms_norm"):
        table.append((F.rms_norm, "rms_norm"))
    if hasattr(F, "scaled_dot_product_attention"):
        table.append((F.scaled_dot_product_attention, "scaled_dot_product_attention"))
    return table


FUNCTIONS = _functions()


def op_of(func):
    """The op name of a torch function, or None when it is not one parity records."""
    for f, name in FUNCTIONS:
        if func is f:
            return name
    return None


def bind(op, args, kwargs):
    """Splits a call's arguments into inputs (list), params (dict) and attrs (dict)."""
    values = {}
    signature = SIGNATURES[op]
    for (name, _), value in zip(signature, args):
        values[name] = value
    values.update(kwargs or {})
    inputs, params, attrs = [], {}, dict(DEFAULTS.get(op, {}))
    for name, role in signature:
        if name not in values:
            continue
        value = values[name]
        if role == "ignore":
            continue
        if isinstance(value, torch.Tensor):
            if role == "param":
                params[name] = value
            else:
                inputs.append(value)
        elif role == "input" and value is not None:
            attrs[name] = jsonable(value)  # a scalar operand, as in x + 1.0
        elif role in ("attr", "param") and value is not None:
            attrs[name] = jsonable(value)
        elif role == "attr":
            attrs[name] = None
    if op in ("softmax", "log_softmax") and attrs.get("dim") is None:
        attrs["dim"] = -1
    return inputs, params, attrs


def jsonable(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, torch.dtype):
        return str(value).replace("torch.", "")
    if isinstance(value, (list, tuple, torch.Size)):
        return [jsonable(v) for v in value]
    return str(value)
