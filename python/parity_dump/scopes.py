# SPDX-License-Identifier: Apache-2.0
"""Where an op runs: the innermost module in forward, the module whose forward made the
autograd node in backward.

Forward: every module of the model gets a forward pre-hook and hook that push and pop its
path. When a module's forward returns, the autograd nodes its outputs reach that no inner
module claimed (and that its inputs did not bring in) are marked with the module's path in
the node's `metadata` dict, which lives and dies with the node.

Backward: the node being executed is torch._C._current_autograd_node() where torch has it;
otherwise (torch 1.13) each marked node gets a pre-hook and a post-hook (both return None:
gradients are unchanged) that bracket its execution. An op in backward outside any marked
node (the loss's nodes when the loss is not a submodule, gradient accumulation between nodes)
has module "".
"""
import torch

KEY = "parity_dump.module"
_CURRENT_NODE = getattr(torch._C, "_current_autograd_node", None)


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
            self.handles.append(module.register_forward_pre_hook(self._pre(path)))
            self.handles.append(module.register_forward_hook(self._post(path)))

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
        def pre(module, args):
            # The nodes themselves are held until the module returns: their ids stay theirs.
            boundary = _grad_fns(args, []) if self.track_backward else []
            self.stack.append((path, module, boundary))
        return pre

    def _post(self, path):
        def post(module, args, output):
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
