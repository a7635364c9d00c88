# SPDX-License-Identifier: Apache-2.0
"""Which of the harness's settings a workload has, and the settings that need the workload.

Most settings act on any training step (the DataLoader's, threads, autocast, compile, the
optimizer's implementation, the batch size). Two act only on some models: channels_last on 2-d
convolutions, and the SDPA backend on torch.nn.functional.scaled_dot_product_attention. probe()
runs one forward pass of the workload on its first batch, without gradients, and watches
which of those functions it calls: a workload has the setting when its step calls the function
the setting acts on.

Learning-rate rules for a changed batch size (LR_RULES), from their primary sources:
  held    the workload's learning rate whatever the batch size;
  linear  "When the minibatch size is multiplied by k, multiply the learning rate by k"
          (Goyal et al., Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour,
          arXiv:1706.02677, section 2.1);
  sqrt    "theory suggests that when multiplying the batch size by k, one should multiply the
          learning rate by sqrt(k)" (Krizhevsky, One weird trick for parallelizing
          convolutional neural networks, arXiv:1404.5997).
"""
import math

import torch
import torch.nn.functional as F

LR_RULES = ("held", "linear", "sqrt")
# torch.nn.attention.SDPBackend's members by the names the harness takes (torch >= 2.3).
SDPA_BACKENDS = {"math": "MATH", "flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
                 "cudnn": "CUDNN_ATTENTION"}
# The settings every workload has.
GENERAL = ("batch_size", "lr_rule", "num_workers", "pin_memory", "prefetch_factor",
           "persistent_workers", "threads", "amp", "compile", "optimizer")


def lr_for(rule, lr, batch_size, default_batch_size):
    """The learning rate for `batch_size` under `rule` from the workload's `lr` at its own
    `default_batch_size`."""
    if rule not in LR_RULES:
        raise ValueError("lr_rule must be one of %s, not %r" % (", ".join(LR_RULES), rule))
    k = batch_size / default_batch_size
    return lr * {"held": 1.0, "linear": k, "sqrt": math.sqrt(k)}[rule]


def sdpa_kernel(backend):
    """The context manager that limits SDPA to `backend` (a key of SDPA_BACKENDS), or raises
    ValueError saying why this torch can't."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel as limit
    except ImportError:
        raise ValueError("sdpa_backend needs torch.nn.attention.sdpa_kernel (torch >= 2.3; "
                         "this is torch %s)" % torch.__version__) from None
    if backend not in SDPA_BACKENDS:
        raise ValueError("sdpa_backend must be one of %s, not %r"
                         % (", ".join(SDPA_BACKENDS), backend))
    member = getattr(SDPBackend, SDPA_BACKENDS[backend], None)
    if member is None:
        raise ValueError("this torch (%s) has no SDPA backend %s" % (torch.__version__,
                                                                     backend))
    return limit(member)


class _Watch:
    """Replaces torch.nn.functional's `name` by a counting wrapper while in use (modules look
    it up on every call, so the calls inside torch's own modules are seen too)."""

    def __init__(self, name, accept=lambda *a, **k: True):
        self.name, self.accept, self.calls = name, accept, 0

    def __enter__(self):
        self.original = getattr(F, self.name, None)
        if self.original is not None:
            original = self.original

            def wrapper(*args, **kwargs):
                if self.accept(*args, **kwargs):
                    self.calls += 1
                return original(*args, **kwargs)
            setattr(F, self.name, wrapper)
        return self

    def __exit__(self, *exc):
        if self.original is not None:
            setattr(F, self.name, self.original)


def probe(workload, device="cpu"):
    """(knobs, lacks): the names of the settings `workload` has, and for each it lacks why.
    The forward pass runs on `device`, where the training would."""
    dev = torch.device(device)
    model = workload.model.to(dev)
    inputs = tuple(t.to(dev) for t in list(workload.batches(1))[0][0])
    with _Watch("conv2d") as conv, _Watch("scaled_dot_product_attention") as sdpa, \
            torch.no_grad():
        workload.forward(model, inputs)
    knobs, lacks = list(GENERAL), {}
    if conv.calls or any(isinstance(m, torch.nn.Conv2d) for m in model.modules()):
        knobs.append("channels_last")
    else:
        lacks["channels_last"] = "its step runs no 2-d convolution"
    if sdpa.original is None:
        lacks["sdpa_backend"] = "torch %s has no scaled_dot_product_attention" % (
            torch.__version__)
    elif not sdpa.calls:
        lacks["sdpa_backend"] = "its step calls no scaled_dot_product_attention"
    else:
        knobs.append("sdpa_backend")
    return knobs, lacks
