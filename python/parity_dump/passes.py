# SPDX-License-Identifier: Apache-2.0
"""Which pass an op belongs to: the capture's wrappers around torch.autograd.backward and
grad (ops inside are "backward"), its hooks on optimizers' step() (ops inside are
"optimizer"), and the gradient and optimizer-state records written after a captured step
(save_grads, save_optimizer_state). A mixin of Capture, whose state it uses."""
import torch

from . import aten


class PassHooks:
    """Capture's autograd and optimizer wrappers (see the module docstring)."""

    def _patch_autograd(self):
        for name in ("backward", "grad"):
            orig = getattr(torch.autograd, name)
            self.saved_autograd[name] = orig
            setattr(torch.autograd, name, self._in_backward(orig))

    def _in_backward(self, orig):
        def wrapper(*args, **kwargs):
            self.in_backward += 1
            try:
                return orig(*args, **kwargs)
            finally:
                self.in_backward -= 1
                if not self.in_backward:
                    self.scopes.node_stack.clear()
        wrapper.__wrapped__ = orig
        wrapper.__doc__ = orig.__doc__
        wrapper.__name__ = orig.__name__
        return wrapper

    def _hook_optimizer(self, opt):
        if hasattr(opt, "register_step_pre_hook") and hasattr(opt, "register_step_post_hook"):
            pre = opt.register_step_pre_hook(lambda o, args, kwargs: self._optimizer_enter())
            post = opt.register_step_post_hook(lambda o, args, kwargs: self._optimizer_exit(o))
            self.saved_hooks.append(pre.remove)
            self.saved_hooks.append(post.remove)
            return
        had = "step" in opt.__dict__
        previous = opt.__dict__.get("step")
        inner = opt.step

        def step(*args, **kwargs):
            if not self.active:
                return inner(*args, **kwargs)
            self._optimizer_enter()
            try:
                return inner(*args, **kwargs)
            finally:
                self._optimizer_exit(opt)

        opt.step = step

        def undo():
            if opt.__dict__.get("step") is step:  # else someone wrapped ours: leave theirs
                if had:
                    opt.step = previous
                else:
                    del opt.step
        self.saved_hooks.append(undo)

    def _optimizer_enter(self):
        self.in_optimizer += 1

    def _param_name(self, p, group, index):
        return self.param_names.get(id(p)) or "param%d.%d" % (group, index)

    def _save_optimizer(self, opt):
        for g, group in enumerate(opt.param_groups):
            for i, p in enumerate(group["params"]):
                pname = self._param_name(p, g, i)
                if self.save_grads and p.grad is not None:
                    record = self._head(pname + ".grad", pname, "grad", "", "optimizer", {})
                    record.update(inputs=[], params={}, outputs=[
                        self.writer.entry(p.grad, record["seq"], "out0")])
                    self._emit(record)
                if self.save_optimizer_state:
                    for key, value in opt.state.get(p, {}).items():
                        record = self._head("%s.%s" % (pname, key), pname, "optimizer_state",
                                            "", "optimizer", {"key": str(key)})
                        record.update(inputs=[], params={}, outputs=[])
                        if isinstance(value, torch.Tensor):
                            record["outputs"].append(
                                self.writer.entry(value, record["seq"], "out0"))
                        else:
                            aten.put_attr(record["attrs"], "value", value)
                        self._emit(record)
