# SPDX-License-Identifier: Apache-2.0
"""The Workload object shared by every workload: model, data, loss, optimizer and one step."""
import contextlib
import importlib
import sys

import torch

# The size knob: "tiny" for tests (milliseconds a step on a CPU), "small" for quick looks,
# "base" for throughput measurements.
SIZES = ("tiny", "small", "base")


def autocast_context(autocast, device_type):
    """A context manager for `autocast`: False/None (none), True (bfloat16 on the CPU,
    float16 elsewhere) or a torch dtype (that dtype)."""
    if autocast is None or autocast is False:
        return contextlib.nullcontext()
    if autocast is True:
        dtype = torch.bfloat16 if device_type == "cpu" else torch.float16
    else:
        dtype = autocast
    return torch.autocast(device_type, dtype=dtype)


class Workload:
    """One training workload.

    Attributes:
      name: the workload's name ("recsys", "transformer", "cnn", "hf-llama", ...).
      size: the size it was built at.
      model: the torch.nn.Module, in training mode, on the CPU (move it with `to()`).
      loss_fn: loss_fn(model_output, target) -> scalar tensor.
      batch_size: samples per batch.
      tokens_per_sample: tokens in one sample (sequence models), None where tokens do not
        apply; throughput runs report tokens/s with it.
      lr: the optimizer's learning rate for this workload (make_optimizer's default, the
        harness's).
      optimizer: (name, kwargs): the torch.optim class (by name) make_optimizer builds and the
        keyword arguments it gets besides lr, e.g. ("AdamW", {"fused": True}); default
        ("Adam", {}).
      forward: forward(model, inputs) -> the output loss_fn scores, for models called other
        than model(*inputs) (keyword arguments, an output object, a KeyedJaggedTensor made
        from plain tensors); None: model(*inputs).

    A user's workload is a module with a function `make(size="tiny", seed=0, batch_size=None)`
    (any name) returning a Workload built from the model, the loss, `make_batch(generator) ->
    (inputs tuple, target)` (deterministic for the generator: the loaders seed one per
    batch) and the batch size; `parity bench --suite model --workload MODULE:FUNCTION` and
    `python3 -m parity_workloads.harness` run it (docs/WORKLOADS.md).
    """

    def __init__(self, name, size, model, loss_fn, make_batch, batch_size, seed,
                 tokens_per_sample=None, lr=1e-3, optimizer=None, forward=None):
        self.name = name
        self.size = size
        self.model = model.train()
        self.loss_fn = loss_fn
        self.batch_size = batch_size
        self.seed = seed
        self.tokens_per_sample = tokens_per_sample
        self.lr = lr
        opt_name, opt_kwargs = optimizer if optimizer is not None else ("Adam", {})
        if not isinstance(getattr(torch.optim, opt_name, None), type):
            raise ValueError("optimizer %r is not a torch.optim class" % (opt_name,))
        self.optimizer = (opt_name, dict(opt_kwargs))
        self._forward = forward
        self._make_batch = make_batch

    def to(self, device):
        """Moves the model to `device`; batches are made on the CPU (move them per step)."""
        self.model.to(device)
        return self

    def batches(self, n, seed=None):
        """Yields `n` batches `(inputs, target)`, `inputs` a tuple of tensors for
        `model(*inputs)`. The same (workload, seed) gives bitwise the same batches; the data
        comes from a private generator, so the global random state is left as it was."""
        gen = torch.Generator().manual_seed(self.seed if seed is None else seed)
        for _ in range(n):
            yield self._make_batch(gen)

    def dataloader(self, n, seed=None):
        """A torch.utils.data.DataLoader over `n` batches of `batches(n, seed)` (already
        batched: batch_size=None), for code that expects a DataLoader."""
        data = list(self.batches(n, seed))
        return torch.utils.data.DataLoader(data, batch_size=None, shuffle=False)

    def loader(self, n, settings=None, seed=None):
        """A DataLoader making `n` batches on demand, batch i from a generator seeded by
        (seed, i) (see data.py): the same data for any `settings` (num_workers, pin_memory,
        prefetch_factor, persistent_workers)."""
        from .data import make_loader
        return make_loader(self._make_batch, n, self.seed if seed is None else seed, settings)

    def make_optimizer(self, lr=None, implementation=None):
        """The workload's optimizer (`optimizer`: Adam unless it names another) over the
        model's parameters at `lr` (default: the workload's). implementation=None: the
        workload's own choice (torch's default unless it sets foreach or fused); "foreach",
        "fused" or "for-loop" picks torch's implementation by name instead (fused: the
        optimizer's fused kernel, where torch has one for it and the device). Build it after
        moving the model: fused optimizers hold device state."""
        name, kwargs = self.optimizer
        kwargs = dict(kwargs, lr=self.lr if lr is None else lr)
        if implementation is not None:
            if implementation not in ("foreach", "fused", "for-loop"):
                raise ValueError("implementation must be foreach, fused or for-loop, not %r"
                                 % (implementation,))
            kwargs.pop("fused", None)
            kwargs.pop("foreach", None)
            if implementation == "fused":
                kwargs["fused"] = True
            else:
                kwargs["foreach"] = implementation == "foreach"
        return getattr(torch.optim, name)(self.model.parameters(), **kwargs)

    def captured_step(self, out, seed=7, **capture_kwargs):
        """One training step captured by parity_dump into `out`: the first batch, the global
        generator seeded with `seed`, the workload's optimizer; `capture_kwargs` go to
        parity_dump.capture (mode="tensors" ...)."""
        import parity_dump  # beside this package; only this method needs it
        torch.manual_seed(seed)
        batch = list(self.batches(1))[0]
        opt = self.make_optimizer()
        with parity_dump.capture(self.model, out, optimizer=opt, **capture_kwargs) as cap:
            self.train_step(self.model, batch, opt)
            cap.step()

    def forward(self, model, inputs):
        """The model's output for `inputs` (a batch's inputs tuple): the workload's forward
        hook, else model(*inputs)."""
        if self._forward is None:
            return model(*inputs)
        return self._forward(model, inputs)

    def train_step(self, model, batch, opt, autocast=False):
        """One training step: zero_grad(set_to_none=True), forward (under `autocast`, see
        autocast_context), loss, backward, opt.step(). Returns the loss, detached."""
        inputs, target = batch
        device = next(model.parameters()).device
        inputs = tuple(t.to(device) for t in inputs)
        target = target.to(device)
        opt.zero_grad(set_to_none=True)
        with autocast_context(autocast, device.type):
            out = self.forward(model, inputs)
            loss = self.loss_fn(out, target)
        loss.backward()
        opt.step()
        return loss.detach()


def build(name, size, seed, make_model):
    """Calls make_model() with the global generator seeded by `seed` and restores the global
    random state afterwards, so building a workload never changes the caller's randomness."""
    if size not in SIZES:
        raise ValueError("size must be one of %s, not %r" % (", ".join(SIZES), size))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return make_model()


class MissingLibraryError(ImportError):
    """A workload needs a Python package this interpreter lacks (the model-library workloads
    run in the torch 2.x environment that scripts/venv makes)."""


def require(workload, *specs):
    """Imports the modules `specs` names (each "module" or ("module", "PyPI package")) for
    `workload` and returns them (the module itself for one spec, else a tuple), or raises one
    MissingLibraryError naming every package that is missing (use the torch 2.x environment,
    scripts/venv) or installed but failing to import (a native library built for another torch:
    the underlying error, an undefined symbol say, is in the message)."""
    modules, missing, broken = [], [], []
    for spec in specs:
        module, package = (spec, spec) if isinstance(spec, str) else spec
        try:
            modules.append(importlib.import_module(module))
        except Exception as e:  # ImportError, OSError of a native library, a library's own
            if isinstance(e, ModuleNotFoundError) and e.name and module.startswith(e.name):
                if package not in missing:
                    missing.append(package)
            else:
                cause = e.__cause__ if e.__cause__ is not None else e.__context__
                detail = "%s: %s" % (type(e).__name__, e)
                if cause is not None and str(cause) not in detail:
                    detail += " (%s: %s)" % (type(cause).__name__, cause)
                broken.append((package, detail))
    if not missing and not broken:
        return modules[0] if len(modules) == 1 else tuple(modules)
    where = "this Python (%s, torch %s)" % (sys.executable, torch.__version__)
    parts = []
    if missing:
        parts.append("the Python package%s %s, which %s does not have: run it with the torch "
                     "2.x environment (its interpreter is what `scripts/venv --check` prints; "
                     "scripts/venv makes it)"
                     % ("s" if len(missing) > 1 else "", _and(["'%s'" % p for p in missing]),
                        where))
    for package, detail in broken:
        parts.append("the Python package '%s'%s, which is installed in %s but fails to import: "
                     "%s; a native library built for another torch fails like this: install "
                     "the '%s' release built for torch %s"
                     % (package, _installed_version(package), where, detail, package,
                        torch.__version__.split("+")[0]))
    raise MissingLibraryError("workload '%s' needs %s" % (workload, "; and ".join(parts)))


def _and(words):
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _installed_version(package):
    try:
        from importlib import metadata
        return " " + metadata.version(package)
    except Exception:
        return ""
