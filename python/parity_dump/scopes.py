# SPDX-License-Identifier: Apache-2.0
"""Where an op runs: the innermost module in forward, the module whose forward made the
autograd node in backward.

Forward: every module of the model gets a forward pre-hook and hook that push and pop its
path. When a module's forward returns, the autograd nodes its outputs reach that no inner
module claimed (and that its inputs did not bring in) are marked with the module's path in
the node's `metadata` dict, which lives and dies with the node. Its inputs are the positional
and the keyword arguments of the call (`self.block(hidden_states=h)`): from the pre-hook's
kwargs where torch has forward pre-hooks with_kwargs (2.0 and later), else (torch 1.13) from
the `kwargs` of the nn.Module call running the hook.

Backward: the node being executed is torch._C._current_autograd_node() where torch has it;
otherwise (torch 1.13) each marked node gets a pre-hook and a post-hook (both return None:
gradients are unchanged) that bracket its execution. An op in backward outside any marked
node (the loss's nodes when the loss is not a submodule, gradient accumulation between nodes)
has module "".

Under torch.compile the hooks do nothing (torch.compiler.is_compiling() is true while dynamo
traces them): dynamo traces a hooked module as it does one without hooks, and the compiled
region's own record takes the place of the module's (compiled.py).
"""
import inspect
import sys

import torch

KEY = "parity_dump.module"
_CURRENT_NODE = getattr(torch._C, "_current_autograd_node", None)
# torch 2.0 and later hand a forward pre-hook the call's keyword arguments.
_PRE_HOOK_KWARGS = "with_kwargs" in inspect.signature(
    torch.nn.Module.register_forward_pre_hook).parameters
# Where torch does not, the hook's caller is Module._call_impl(self, *input, **kwargs).
_CALL_IMPL = getattr(getattr(torch.nn.Module, "_call_impl", None), "__code__", None)
# dynamo folds a call of it to True while it traces (torch 2.x; torch 1.13 has none).
_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or (lambda: False)


def _caller_kwargs():
    """The keyword arguments of the nn.Module call whose forward pre-hook is running (the
    hook's caller, two frames up from here), {} where that frame is not Module._call_impl."""
    try:
        frame = sys._getframe(2)  # pylint: disable=protected-access
    except ValueError:
        return {}
    try:
        if frame.f_code is not _CALL_IMPL:
            return {}
        kwargs = frame.f_locals.get("kwargs")
        return kwargs if isinstance(kwargs, dict) else {}
    finally:
        del frame


def _grad_fns(value, out, depth=0):
    """Adds the grad_fn of every tensor in `value` (nested tuples, lists, dicts) to `out`."""
    if isinstance(value, torch.Tensor):
        fn = value.grad_fn
        if fn is not None:
            out.append(fn)
    elif depth < 4 and isinstance(value, (tuple, list)):
        for v in value:
            _grad_fns(v, out, depth + 1)
    elif depth < 4 and isinstance(value, dict):
        for v in value.values():
            _grad_fns(v, out, depth + 1)
    return out


class Scopes:
    """The module stack of forward and the node stack of backward for one capture."""

    def __init__(self, model, track_backward):
        self.model = model
        self.track_backward = track_backward
        self.stack = []          # (path, module, the inputs' grad_fns)
        self.node_stack = []     # module paths of the nodes executing (torch without
                                 # _current_autograd_node)
        self.handles = []
        self.live = False

    # --- forward ---------------------------------------------------------------------------
    def install(self):
        """Registers the module hooks."""
        self.live = True
        if self.model is None:
            return
        for path, module in self.model.named_modules():
            if _PRE_HOOK_KWARGS:
                handle = module.register_forward_pre_hook(self._pre(path), with_kwargs=True)
            else:
                handle = module.register_forward_pre_hook(self._pre(path))
            self.handles.append(handle)
            self.handles.append(module.register_forward_hook(self._post(path)))

    def adopt(self, model, args, kwargs):
        """Takes `model` as the model from now on, while its forward is being called with
        `args` and `kwargs`: installs the hooks if live, and runs the root's pre-hook for this
        call (the call's hooks were gathered before these existed)."""
        self.model = model
        if not self.live:
            return
        self.install()
        self._pre("")(model, args, kwargs)

    def remove(self):
        """Removes the module hooks and forgets the stacks; node hooks left on live graphs do
        nothing from now on."""
        self.live = False
        for h in self.handles:
            h.remove()
        self.handles = []
        self.stack = []
        self.node_stack = []

    def reset(self):
        """Forgets the stacks (a step boundary: a forward that raised leaves its scopes)."""
        self.stack = []
        self.node_stack = []

    def _pre(self, path):
        """The forward pre-hook of module `path`: pushes it with the grad_fns of its
        positional and keyword arguments (the boundary of what its forward makes). Returns
        None: the arguments are unchanged."""
        def pre(module, args, kwargs=None):
            if _compiling():
                return None
            # The nodes themselves are held until the module returns: their ids stay theirs.
            boundary = []
            if self.track_backward:
                _grad_fns(args, boundary)
                _grad_fns(kwargs if _PRE_HOOK_KWARGS or kwargs is not None else _caller_kwargs(),
                          boundary)
            self.stack.append((path, module, boundary))
        return pre

    def _post(self, path):
        def post(module, args, output):
            if _compiling():
                return None
            while self.stack:
                top = self.stack.pop()
                if top[1] is module:
                    if self.track_backward and torch.is_grad_enabled():
                        self._claim(path, output, top[2])
                    break
        return post

    def forward_module(self):
        """The path of the innermost module running ("" for none or the root)."""
        return self.stack[-1][0] if self.stack else ""

    # --- backward --------------------------------------------------------------------------
    def _claim(self, path, output, boundary):
        """Marks the unmarked nodes reachable from `output`, short of `boundary` (the nodes of
        the module's inputs), as made by `path`, and on torch without _current_autograd_node
        hooks them. Nodes inner modules marked are walked through, not re-marked: an inner
        module's inputs may come from nodes of this module (an F.relu between two
        submodules)."""
        todo = _grad_fns(output, [])
        stop = {id(fn) for fn in boundary}
        seen = {}  # id -> node, held so that ids stay unique during the walk
        hook = _CURRENT_NODE is None
        while todo:
            node = todo.pop()
            key = id(node)
            if key in stop or key in seen:
                continue
            seen[key] = node
            meta = node.metadata
            if KEY not in meta:
                meta[KEY] = path
                if hook:
                    try:
                        node.register_prehook(self._enter(path))
                        node.register_hook(self._leave)
                    except (RuntimeError, AttributeError):
                        pass
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    todo.append(nxt)

    def _enter(self, path):
        def enter(grad_outputs):
            if self.live:
                self.node_stack.append(path)
        return enter

    def _leave(self, grad_inputs, grad_outputs):
        if self.live and self.node_stack:
            self.node_stack.pop()

    def backward_module(self):
        """The module path of the node executing now, "" when unknown; None when no node is
        known to be executing (the caller then decides the pass by other means)."""
        if _CURRENT_NODE is not None:
            node = _CURRENT_NODE()
            if node is None:
                return None
            try:
                return node.metadata.get(KEY, "")
            except (AttributeError, RuntimeError):
                return ""
        return self.node_stack[-1] if self.node_stack else None
