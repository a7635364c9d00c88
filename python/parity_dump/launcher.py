# SPDX-License-Identifier: Apache-2.0
"""The capture of `parity capture -o DIR -- COMMAND...`: installed at interpreter start (the
sitecustomize of parity_dump/_boot, which parity puts first on PYTHONPATH), it finds what an
in-code capture is told.

- Steps: the capture starts when the first torch.optim.Optimizer is constructed (step 0
  begins as the last optimizer constructor running returns: each optimizer class's own
  __init__ is wrapped, those defined later too) and a step ends when an optimizer's step() returns
  outside any other optimizer's step() (TorchRec's combined optimizers step their parts
  within theirs), the first optimizer so stepped pacing the steps; with a GradScaler, a step
  ends when its update() returns instead (GradScaler skips optimizer.step() on Inf/NaN
  gradients). Global optimizer step hooks where torch has them (2.0 and later), else a
  wrapper of each optimizer class's step() (torch 1.13).
- The model: the first module called, once the capture has started, that holds a parameter
  of a constructed optimizer (a global forward pre-hook, removed once it is found): the root
  module of the step's forward, whose paths name the records.
- The scaler: the first GradScaler constructed; its scale and skipped steps go into the
  manifest as an in-code capture's scaler= does.

At exit (atexit: a script's own exit code, sys.exit or KeyboardInterrupt all pass through)
the capture stops and completes its manifest; a script that never constructed an optimizer
leaves a dump with no steps and a "note" saying so. What the launcher says goes to
parity-capture.log in the dump's top directory, never to the script's stdout or stderr.

Configured by $PARITY_CAPTURE (JSON, written by parity): out, steps ([start, stop] or null),
every, mode, ops, modules, max_bytes, stack, workers_only (torchrun: only processes with
$RANK capture; the agent does not). The _boot sitecustomize reads it without importing torch
or this package, and builds the Launcher once torch has been imported.
"""
import atexit
import os
import signal
import sys
import threading
import time

from .dumpdir import LOG_NAME

ENV = "PARITY_CAPTURE"


class Launcher:
    """The one launcher of this process (see the module docstring)."""

    def __init__(self, config):
        self.config = config
        self.out = config["out"]
        self.log_path = os.path.join(self.out, LOG_NAME)
        self.rank = os.environ.get("RANK")
        self.cap = None
        self.optimizers = []   # constructed, in order
        self.param_ids = set()
        self.pacer = None      # the optimizer whose outermost step() ends a step
        self.depth = 0         # optimizer step() nesting
        self.scaler = None
        self.model_hook = None
        self.steps_ended = 0
        self.failed = None     # why the capture stopped recording, if it did
        self.class_hooks = False  # torch without global optimizer step hooks (1.13)
        self.constructing = 0  # optimizer constructors running
        self.built = []        # optimizers constructed while others' constructors ran

    # --- the log ---------------------------------------------------------------------------
    def log(self, text):
        prefix = "rank %s: " % self.rank if self.rank is not None else ""
        line = "%s %s%s\n" % (time.strftime("%Y-%m-%dT%H:%M:%S"), prefix, text)
        try:
            fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o666)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)
        except OSError:
            pass

    # --- installing, once torch is imported -------------------------------------------------
    def install(self):
        """Hooks optimizer construction and steps, GradScaler, and the stop at exit."""
        import importlib
        import torch
        self.torch = torch
        launcher = self
        hooks = importlib.import_module("torch.optim.optimizer")
        optim = torch.optim.Optimizer
        self.class_hooks = not hasattr(hooks, "register_optimizer_step_pre_hook")
        # Every optimizer class's own __init__, and those of classes defined later: an
        # optimizer counts as constructed when no optimizer constructor is running any more
        # (Adagrad fills its state after Optimizer.__init__ returns; a wrapper optimizer
        # constructs its parts within its own constructor).
        todo = [optim]
        while todo:
            cls = todo.pop()
            self._wrap_init(cls)
            todo.extend(cls.__subclasses__())
        subclass_hook = optim.__dict__.get("__init_subclass__")

        def init_subclass(cls, **kwargs):
            if subclass_hook is not None:
                subclass_hook.__func__(cls, **kwargs)
            else:
                super(optim, cls).__init_subclass__(**kwargs)
            launcher._wrap_init(cls)
        optim.__init_subclass__ = classmethod(init_subclass)
        if not self.class_hooks:
            hooks.register_optimizer_step_pre_hook(
                lambda o, a, k: self._guarded(self._step_enter, o))
            hooks.register_optimizer_step_post_hook(
                lambda o, a, k: self._guarded(self._step_exit, o))
        for scaler_class in _scaler_classes(torch):
            self._hook_scaler(scaler_class)
        from . import interrupts
        interrupts.install()  # Ctrl-C waits for the op being recorded: whole records
        atexit.register(self.finish)

    def _guarded(self, event, *args):
        """Runs a launcher event; one that raises stops the capture (the log says why), never
        the script."""
        if self.failed is not None:
            return
        try:
            event(*args)
        except Exception as e:  # noqa: BLE001
            self.failed = "the capture stopped recording: %r" % (e,)
            self.log(self.failed)
            self._stop()

    def _hook_scaler(self, cls):
        init, update = cls.__init__, cls.update
        launcher = self

        def scaler_init(scaler, *args, **kwargs):
            init(scaler, *args, **kwargs)
            if launcher.scaler is None:
                launcher.scaler = scaler
                if launcher.cap is not None:
                    launcher._guarded(launcher._adopt_scaler)

        def scaler_update(scaler, *args, **kwargs):
            try:
                return update(scaler, *args, **kwargs)
            finally:
                if scaler is launcher.scaler:
                    launcher._guarded(launcher._end_step, "GradScaler.update()")
        scaler_init.__wrapped__, scaler_update.__wrapped__ = init, update
        cls.__init__, cls.update = scaler_init, scaler_update

    def _wrap_init(self, cls):
        init = cls.__dict__.get("__init__")
        if init is None or getattr(init, "_parity_launcher", False):
            return
        launcher = self

        def wrapped(opt, *args, **kwargs):
            launcher.constructing += 1
            done = False
            try:
                init(opt, *args, **kwargs)
                done = True
            finally:
                launcher.constructing -= 1
                if done and all(o is not opt for o in launcher.built):
                    launcher.built.append(opt)
                if launcher.constructing == 0:
                    built, launcher.built = launcher.built, []
                    for o in built:
                        launcher._guarded(launcher._constructed, o)
        wrapped.__wrapped__ = init
        wrapped.__doc__ = init.__doc__
        wrapped._parity_launcher = True
        cls.__init__ = wrapped

    def _wrap_step(self, cls):
        """torch 1.13: brackets the step() of optimizer class `cls` (once a class)."""
        step = cls.__dict__.get("step")
        if step is None or getattr(step, "_parity_launcher", False):
            return
        launcher = self

        def wrapped(opt, *args, **kwargs):
            launcher._guarded(launcher._step_enter, opt)
            try:
                return step(opt, *args, **kwargs)
            finally:
                launcher._guarded(launcher._step_exit, opt)
        wrapped.__wrapped__ = step
        wrapped.__doc__ = step.__doc__
        wrapped._parity_launcher = True
        wrapped.hooked = getattr(step, "hooked", False)  # torch 1.13's profiler marker
        cls.step = wrapped

    # --- events ----------------------------------------------------------------------------
    def _constructed(self, opt):
        self.optimizers.append(opt)
        for group in opt.param_groups:
            for p in group["params"]:
                self.param_ids.add(id(p))
        if self.class_hooks:
            for cls in type(opt).__mro__:
                if cls is self.torch.optim.Optimizer:
                    break
                self._wrap_step(cls)
        if self.cap is None:
            self._start(opt)
        elif self.cap.started:
            self.cap.optimizers.append(opt)
        if self.model_hook is None and self.cap is not None and self.cap.model is None:
            self.model_hook = self.torch.nn.modules.module.register_module_forward_pre_hook(
                lambda module, args: self._guarded(self._forward_pre, module, args))

    def _start(self, opt):
        from .capture import Capture
        c = self.config
        steps = range(c["steps"][0], c["steps"][1]) if c.get("steps") else None
        rank, out = None, self.out
        dist = self.torch.distributed
        world = int(os.environ.get("WORLD_SIZE", "1") or 1)
        if world > 1 and not (dist.is_available() and dist.is_initialized()):
            # torch.distributed is not initialised yet: the rank's own directory, as it
            # would have been.
            rank = int(self.rank or 0)
            out = os.path.join(self.out, "rank%d" % rank)
        cap = Capture(None, out, ops=c.get("ops"), modules=c.get("modules"),
                      max_bytes=c.get("max_bytes"), rank=rank, mode=c.get("mode", "stats"),
                      optimizer=[opt], steps=steps, every=c.get("every"),
                      stack=bool(c.get("stack")))
        cap.hook_optimizers = False  # the launcher brackets every optimizer's step itself
        self.cap = cap
        try:
            cap.start()
        except Exception as e:  # noqa: BLE001 - the script goes on; the log says why
            self.failed = "the capture could not start: %s" % e
            self.log(self.failed)
            self.cap = None
            return
        if rank is not None:
            cap.doc["world_size"] = world
        cap.doc["launcher"] = {"started_at": "%s.__init__" % type(opt).__name__}
        self.log("capture started into %s when a %s was constructed: step 0 begins"
                 % (cap.dir, type(opt).__name__))
        if self.scaler is not None:
            self._adopt_scaler()

    def _adopt_scaler(self):
        cap = self.cap
        cap.scaler = self.scaler
        cap.doc["capture"]["scaler"] = True
        if cap.active and cap.scale_at_start is None:
            from . import evidence
            cap.scale_at_start = evidence.scaler_scale(self.scaler)
        self.log("GradScaler found: a step ends when its update() returns")

    def _forward_pre(self, module, args):
        if self.cap is None or self.cap.model is not None:
            return None
        if not any(id(p) in self.param_ids for p in module.parameters()):
            return None
        kwargs = {}  # global pre-hooks get none: the nn.Module call's, from its frame
        frame = sys._getframe(1)  # pylint: disable=protected-access
        try:
            for _ in range(4):
                if frame is None or frame.f_code.co_name == "_call_impl":
                    break
                frame = frame.f_back
            if frame is not None and frame.f_code.co_name == "_call_impl":
                found = frame.f_locals.get("kwargs")
                kwargs = found if isinstance(found, dict) else {}
        finally:
            del frame
        self.cap.adopt_model(module, args, kwargs)
        self.cap.doc["launcher"]["model"] = type(module).__name__
        self.log("model found: the %s called first that holds optimized parameters"
                 % type(module).__name__)
        hook, self.model_hook = self.model_hook, None
        if hook is not None:
            hook.remove()
        return None

    def _step_enter(self, opt):
        self.depth += 1
        if self.cap is not None and self.cap.started and not self.cap.stopped:
            self.cap._optimizer_enter()  # pylint: disable=protected-access

    def _step_exit(self, opt):
        self.depth = max(0, self.depth - 1)
        cap = self.cap
        if cap is None or not cap.started or cap.stopped:
            return
        cap._optimizer_exit(opt)  # pylint: disable=protected-access
        if self.depth == 0:
            if self.pacer is None:
                self.pacer = opt
            if opt is self.pacer and self.scaler is None:
                self._end_step("%s.step()" % type(opt).__name__)

    def _end_step(self, where):
        cap = self.cap
        if cap is None or not cap.started or cap.stopped or self.failed:
            return
        try:
            cap.step()
        except Exception as e:  # noqa: BLE001 - the script goes on; the log says why
            self.failed = "the capture stopped recording at step %d: %s" % (cap.step_index, e)
            self.log(self.failed)
            self._stop()
            return
        self.steps_ended += 1
        if self.steps_ended == 1:
            self.log("step 0 ended when %s returned; every step ends there" % where)

    # --- the end ---------------------------------------------------------------------------
    def finish(self):
        """At exit: stops the capture (a second Ctrl-C does not cut the manifest short), or
        writes a dump with a note when no optimizer was ever constructed."""
        if threading.current_thread() is threading.main_thread():
            try:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            except (ValueError, OSError):
                pass
        if self.cap is None and self.failed is None:
            from .capture import Capture
            self.cap = Capture(None, self.out, mode=self.config.get("mode", "stats"), steps=())
            self.cap.hook_optimizers = False
            try:
                self.cap.start()
            except Exception as e:  # noqa: BLE001
                self.log("no dump written: %s" % e)
                return
            self.cap.doc["note"] = ("no torch.optim optimizer was constructed: there were no "
                                    "training steps to capture")
            self.log(self.cap.doc["note"])
        elif self.cap is not None and self.steps_ended == 0:
            self.cap.doc["note"] = ("no optimizer step completed: step 0 holds what ran after "
                                    "the optimizer was constructed")
            self.log(self.cap.doc["note"])
        self._stop()
        if self.cap is not None:
            self.log("capture stopped: %d steps ended, %d records"
                     % (self.steps_ended, self.cap.seq))

    def _stop(self):
        if self.model_hook is not None:
            self.model_hook.remove()
            self.model_hook = None
        if self.cap is not None and self.cap.started and not self.cap.stopped:
            try:
                self.cap.stop()
            except Exception as e:  # noqa: BLE001
                self.log("the capture's stop failed: %s" % e)


def _scaler_classes(torch):
    """The GradScaler classes that define update(): torch.amp's (2.3 and later; the CUDA one
    derives from it) and torch.cuda.amp's where it has its own."""
    out = []
    for path in ("torch.amp.grad_scaler", "torch.cuda.amp.grad_scaler"):
        try:
            module = __import__(path, fromlist=["GradScaler"])
        except ImportError:
            continue
        cls = getattr(module, "GradScaler", None)
        if cls is not None and "update" in cls.__dict__ and cls not in out:
            out.append(cls)
    return out
