# SPDX-License-Identifier: Apache-2.0
"""The capture's TorchDispatchMode, and leaving torch's mode stacks without disturbing modes
entered after the capture's.

torch keeps TorchDispatchModes (and TorchFunctionModes) on a stack; a mode's __exit__ pops
whatever is on top. A user's mode entered after start() (FlopCounterMode, a debugging mode)
lies above the capture's when stop() runs: leave_dispatch_mode() and leave_function_mode()
take the capture's mode off from beneath it instead, the way torch's own
_disable_current_modes() moves modes: the modes above are popped, the capture's mode leaves
by its own __exit__, and they are pushed back in their order, unchanged. They go on working
and leave by their own __exit__ later.
"""
import torch

try:
    from torch.utils import _python_dispatch as _dispatch
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError:  # a torch without Python dispatch modes: level="modules" only
    _dispatch = TorchDispatchMode = None

_HOP = getattr(getattr(torch, "_ops", None), "HigherOrderOperator", None)


def _in_hop_compile():
    """Whether torch is compiling a higher-order op's own call now (torch 2.x's eager
    flex_attention runs its op through torch.compile with the eager backend)."""
    try:
        from torch._higher_order_ops.utils import _in_hop_compile as in_hop_compile
    except ImportError:
        return False
    return bool(in_hop_compile())

# torch 2.x's "in a dispatch mode" flags: (the deque a mode saves the flag's previous value in
# on __enter__, the flag in torch.utils._python_dispatch, what a mode adds to it).
_FLAGS = (
    ("old_dispatch_mode_flags", "_is_in_torch_dispatch_mode", lambda mode: True),
    ("old_non_infra_dispatch_mode_flags", "_is_in_non_infra_torch_dispatch_mode",
     lambda mode: not _ask(mode, "is_infra_mode")),
    ("old_without_ignore_compile_internals_dispatch_mode_flags",
     "_is_in_any_mode_without_ignore_compile_internals",
     lambda mode: not _ask(mode, "ignore_compile_internals")),
)


def _ask(mode, method):
    """mode.<method>() where the mode has it (a classmethod of torch 2.x's modes), else
    False."""
    f = getattr(mode, method, None)
    return bool(f()) if callable(f) else False


def is_higher_order_op(func):
    """Whether `func` is a higher-order operator (torch.cond, flex_attention, ...): torch 2.x
    hands those to a mode that supports them instead of an OpOverload."""
    return _HOP is not None and isinstance(func, _HOP)


if TorchDispatchMode is not None:
    class DispatchMode(TorchDispatchMode):
        """Hands every aten call beneath autograd and autocast to the capture's _on_op, and
        every higher-order op to its _on_hop (supports_higher_order_operators: torch 2.x
        then calls __torch_dispatch__ with the op and this mode popped, instead of raising
        for a mode without a rule registered for the op)."""

        supports_higher_order_operators = True

        def __init__(self, capture):
            super().__init__()
            self.capture = capture

        @classmethod
        def ignore_compile_internals(cls):
            """True: torch.compile compiles under the capture's mode as without it (every
            mode popped while it compiles), and the compiled code runs with the mode back.
            compiled.py records each compiled region's execution as one record and keeps
            the ops it dispatches from being records; a higher-order op's own compile (eager
            flex_attention, cond) is no region, and the mode sees the op (hops.py)."""
            return True

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if is_higher_order_op(func):
                return self.capture._on_hop(func, args, kwargs or {})
            return self.capture._on_op(func, args, kwargs or {})

    class EagerDispatchMode(DispatchMode):
        """Capture(compiled="eager"): a user's torch.compile finds the capture's mode and
        runs eagerly, every op seen."""

        @classmethod
        def ignore_compile_internals(cls):
            """True only while torch compiles a higher-order op's own call: torch.compile
            refuses to compile (eager flex_attention then raises) under a mode that does
            not ignore compile internals, and compiles with every mode popped. The compiled
            call runs with the mode back, which sees the op."""
            return _in_hop_compile()
else:
    DispatchMode = EagerDispatchMode = None


def _leave(mode, stack, pop, push, flags):
    """Takes `mode` off a mode stack (see the module docstring). Returns False, changing
    nothing, when `mode` is not on it."""
    modes = stack()
    at = next((i for i in range(len(modes) - 1, -1, -1) if modes[i] is mode), None)
    if at is None:
        return False
    above = [pop() for _ in range(len(modes) - 1 - at)][::-1]  # bottom to top
    try:
        mode.__exit__(None, None, None)
    finally:
        for i, m in enumerate(above):
            if flags:
                _reenter_flags(m, sum(1 for later in above[i + 1:] if later is m))
            push(m)
        if flags:
            _publish_flags()
    return True


def _reenter_flags(mode, later):
    """Sets the flags as `mode` entering now would, and makes the value it saved on
    __enter__ (its `later`-th newest) the flags' value now: when it leaves, the flags become
    what they would be had the capture's mode never been entered."""
    for saved, flag, adds in _FLAGS:
        values = getattr(mode, saved, None)
        if not hasattr(_dispatch, flag) or values is None or len(values) <= later:
            continue
        now = getattr(_dispatch, flag)
        values[len(values) - 1 - later] = now
        setattr(_dispatch, flag, bool(now or adds(mode)))


def _publish_flags():
    """Hands the ignore-compile-internals flag to torch's C++ side, as __enter__ does."""
    setter = getattr(_dispatch, "set_is_in_mode_without_ignore_compile_internals", None)
    flag = getattr(_dispatch, "_is_in_any_mode_without_ignore_compile_internals", None)
    if callable(setter) and flag is not None:
        setter(flag)


def leave_dispatch_mode(mode):
    """Takes a TorchDispatchMode entered with __enter__ off the dispatch mode stack wherever
    it lies. Modes entered after it stay on the stack, in their order, and keep working; the
    "in a dispatch mode" flags of torch 2.x end as if `mode` had never been entered once they
    have left. Returns False, changing nothing, when `mode` is not on the stack (it left
    already)."""
    return _leave(mode, _dispatch._get_current_dispatch_mode_stack, _dispatch._pop_mode,
                  _dispatch._push_mode, True)


def leave_function_mode(mode):
    """leave_dispatch_mode() for a TorchFunctionMode on the function mode stack."""
    from torch import overrides
    return _leave(mode, overrides._get_current_function_mode_stack, overrides._pop_mode,
                  overrides._push_mode, False)
