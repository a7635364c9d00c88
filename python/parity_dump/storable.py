# SPDX-License-Identifier: Apache-2.0
"""Which tensors a dump can hold, and the entries of those it cannot.

A dump holds a tensor's data (as .npy, or as statistics of it) when the tensor is a plain
dense (strided, not nested, not quantized) tensor of a dtype the dump names
(tensors.DTYPE_NAMES: parity's real dtypes, complex64 and complex128; the dtype named is
never another one, a complex tensor is never written as its real part). Anything else, and
any tensor whose conversion raises, is recorded by its metadata alone:

    {"dtype": "float32", "shape": [1000, 16], "layout": "sparse_coo",
     "not stored": "sparse_coo layout"}

"dtype" is parity's name where it has one, else torch's ("quint8", "complex32"); "shape" is
present when every dimension is a plain integer (a nested tensor's ragged dimensions are
not); "layout" names torch's layout ("strided", "sparse_coo", "sparse_csr", "jagged", ...)
when it can be read; "not stored" says why, in words.
"""
import torch


def _name(value):
    """torch's name of a dtype or layout without the "torch." prefix."""
    return str(value).replace("torch.", "")


def unstorable_reason(tensor, dtype_names):
    """Why `tensor` cannot be stored (a short phrase), or None when it can be: nested,
    quantized, non-strided (sparse, mkldnn) tensors, and dtypes not in `dtype_names` (torch
    dtype -> the dump's name). Never raises: a tensor whose properties cannot be read is
    unstorable for that reason."""
    try:
        if getattr(tensor, "is_nested", False):
            return "nested tensor"
        if tensor.is_quantized:
            return "quantized tensor (%s)" % _name(tensor.qscheme())
        if tensor.layout != torch.strided:
            return "%s layout" % _name(tensor.layout)
        dtype = tensor.dtype
        if dtype not in dtype_names:
            return "dtype %s has no numpy equivalent" % _name(dtype)
    except Exception as e:  # pylint: disable=broad-except
        return describe_error(e)
    return None


def describe_error(error):
    """"cannot be stored: <exception type>: <first line of its message>"."""
    message = str(error).strip().split("\n", 1)[0]
    return "cannot be stored: %s%s" % (type(error).__name__, ": " + message if message else "")


def _shape(tensor):
    """The shape as a list of ints, or None when a dimension is not a plain int (a nested
    tensor's ragged dimension) or the shape cannot be read."""
    try:
        shape = tensor.shape
    except Exception:  # pylint: disable=broad-except
        return None
    out = []
    for dim in shape:
        if type(dim) is not int:  # a SymInt: a nested tensor's ragged dimension
            return None
        out.append(dim)
    return out


def not_stored_entry(tensor, reason, dtype_names):
    """The entry of a tensor whose data the dump does not hold (see the module docstring):
    JSON-encodable whatever the tensor is, and never raises."""
    entry = {}
    try:
        dtype = tensor.dtype
        entry["dtype"] = dtype_names.get(dtype) or _name(dtype)
    except Exception:  # pylint: disable=broad-except
        entry["dtype"] = "unknown"
    shape = _shape(tensor)
    if shape is not None:
        entry["shape"] = shape
    try:
        entry["layout"] = _name(tensor.layout)
    except Exception:  # pylint: disable=broad-except
        pass
    entry["not stored"] = str(reason)
    return entry
