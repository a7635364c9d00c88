# SPDX-License-Identifier: Apache-2.0
"""Where in the user's code an op was called (Capture(stack=True)), as PyTorch's DebugMode
does with record_stack_trace.

A record's "source" is {"file", "line", "function", "code"}: the innermost frame outside
torch and parity's own packages (parity_dump, parity) — the model's forward in the user's
file, or in transformers', timm's or TorchRec's modeling code. Forward and optimizer ops take
it from the Python stack when they run. A backward op takes the source of the forward op that
made the autograd node being executed: torch's anomaly mode (entered without NaN checks,
which changes no result) stores each node's forward traceback in node.metadata["traceback_"],
read through torch._C._current_autograd_node() (torch 2.x; torch 1.13 has no such call, and
its backward records carry no source). A frame that cannot be read gives no source, never an
exception.
"""
import linecache
import os
import re
import sys

import torch

_CURRENT_NODE = getattr(torch._C, "_current_autograd_node", None)
_getframe = sys._getframe  # pylint: disable=protected-access
_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_PARITY_DIRS = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), name) + os.sep
    for name in ("parity_dump", "parity"))
# One frame of traceback.format_stack(): '  File "path", line N, in function\n    code\n'.
_FRAME = re.compile(r'\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>[^\n]*)'
                    r'(?:\n\s*(?P<code>[^\n]*))?')


def _internal(filename):
    path = os.path.abspath(filename)
    return (path.startswith(_TORCH_DIR) or path.startswith(_PARITY_DIRS)
            or filename.startswith("<"))  # <frozen ...>, <string>


def _source(file, line, function, code):
    return {"file": file, "line": int(line), "function": function, "code": (code or "").strip()}


def from_stack(depth=2):
    """The user's frame calling now (see the module docstring), or None."""
    try:
        frame = _getframe(depth)
    except (ValueError, AttributeError):
        return None
    try:
        while frame is not None:
            code = frame.f_code
            if not _internal(code.co_filename):
                return _source(code.co_filename, frame.f_lineno, code.co_name,
                               linecache.getline(code.co_filename, frame.f_lineno))
            frame = frame.f_back
        return None
    except Exception:  # noqa: BLE001 - a frame that can't be read gives no source
        return None
    finally:
        del frame


def from_traceback(lines):
    """The user's innermost frame in a formatted traceback (a list of format_stack()
    strings, outermost first), or None."""
    try:
        found = None
        for text in lines:
            m = _FRAME.match(text)
            if m and not _internal(m.group("file")):
                found = m
        if found is None:
            return None
        return _source(found.group("file"), found.group("line"), found.group("function"),
                       found.group("code"))
    except Exception:  # noqa: BLE001 - see from_stack
        return None


def of_backward_node():
    """The forward source of the autograd node executing now, or None."""
    if _CURRENT_NODE is None:
        return None
    try:
        node = _CURRENT_NODE()
        if node is None:
            return None
        tb = node.metadata.get("traceback_")
        return from_traceback(tb) if tb else None
    except Exception:  # noqa: BLE001 - see from_stack
        return None


class ForwardTracebacks:
    """While entered, autograd nodes keep their forward traceback (anomaly mode without NaN
    checks); a no-op where torch cannot leave NaN checks out or names no executing node
    (1.13: the tracebacks could not be read back)."""

    def __init__(self):
        self.mode = None

    def __enter__(self):
        if _CURRENT_NODE is None:
            return self
        try:
            self.mode = torch.autograd.set_detect_anomaly(True, check_nan=False)
        except TypeError:  # a torch whose anomaly mode always checks for NaN: none
            self.mode = None
        return self

    def __exit__(self, *exc):
        if self.mode is not None:
            self.mode.__exit__(*exc)
            self.mode = None
