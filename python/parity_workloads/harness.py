# SPDX-License-Identifier: Apache-2.0
"""The throughput harness: a workload's training steps timed as a user runs them.

    python3 -m parity_workloads.harness --workload transformer [--size small] [--steps 20]
        [--warmup 3] [--device cpu] [--batch-size N] [--num-workers N] [--pin-memory]
        [--prefetch-factor N] [--persistent-workers] [--threads N] [--channels-last]
        [--amp none|bf16|fp16] [--compile off|inductor|max-autotune-no-cudagraphs]
        [--optimizer default|foreach|fused|for-loop] [--sdpa-backend math|flash|efficient|cudnn]
        [--lr-rule held|linear|sqrt] [--seed S] [--json PATH|-]
    python3 -m parity_workloads.harness --workload NAME --knobs [--json PATH|-]

--workload is a reference workload's name (recsys, transformer, cnn), a model-library
workload's (hf-llama, hf-bert, timm-vit, timm-resnet, torchrec-dlrm, minilm: the torch 2.x
environment's Python) or MODULE:FUNCTION, a user's function returning a
parity_workloads.Workload (see Workload). The optimizer is the workload's own
(Workload.make_optimizer: Adam for the reference workloads), in its own implementation or,
with --optimizer, torch's foreach, fused or single-tensor (for-loop) one. --compile runs the
model through torch.compile (torch 2.x): "inductor" in its default mode,
"max-autotune-no-cudagraphs" in that mode; compilation happens in the warm-up steps, which
are left out of the timing (give enough of them). --sdpa-backend limits
scaled_dot_product_attention to one backend (torch.nn.attention.sdpa_kernel, torch >= 2.3).
--lr-rule says how the learning rate follows a --batch-size other than the workload's own:
held, linear or sqrt in the batch size's ratio (knobs.py: the rules' sources). --knobs
writes the settings the workload has ("parity-workload-knobs": knobs, and lacks: the
settings it lacks, each with why) instead of training. Each step is timed from
asking the DataLoader for the batch to the end of the optimizer step with the device
synchronised; the warm-up steps run first and are left out of every figure but the losses.
The report (format "parity-model-run", version 1) holds samples/s (and tokens/s where the
workload has tokens), step-time percentiles, the share of the step spent waiting for data,
peak memory, and the loss of every step (warm-up included, null where it was not finite),
in order, and the optimizer that ran (its class and settings).

Errors (an unknown workload, a model-library workload whose library is missing, a module
that is missing or raises on import, settings that can't apply) print "parity: error: ..."
and exit 2; a step that raises exits 1 with the error.
"""
import argparse
import contextlib
import importlib
import json
import math
import os
import platform
import resource
import sys
import time
import traceback

import torch

from . import knobs as knob_rules
from . import registry
from .common import MissingLibraryError, Workload

FORMAT, VERSION = "parity-model-run", 1
AMP = ("none", "bf16", "fp16")
COMPILE = ("off", "inductor", "max-autotune-no-cudagraphs")
OPTIMIZER = ("default", "foreach", "fused", "for-loop")


class WorkloadError(Exception):
    """A workload that can't be loaded or settings that can't apply: exit 2."""


def load(spec, size="tiny", seed=0, batch_size=None):
    """The Workload named by `spec`: a reference name, or "MODULE:FUNCTION" called as
    FUNCTION(size=size, seed=seed, batch_size=batch_size). WorkloadError says what is wrong."""
    if ":" not in spec:
        if spec not in registry.all_names():
            raise WorkloadError("unknown workload '%s' (the reference workloads: %s; the "
                                "model-library workloads: %s; a user's is MODULE:FUNCTION)"
                                % (spec, ", ".join(registry.names()),
                                   ", ".join(registry.zoo_names())))
        try:
            return registry.get(spec, size=size, seed=seed, batch_size=batch_size)
        except MissingLibraryError as e:  # its message names the workload and the package
            raise WorkloadError(str(e)) from None
        except ValueError as e:
            raise WorkloadError("workload '%s': %s" % (spec, e)) from None
    module_name, _, function = spec.partition(":")
    if not module_name or not function:
        raise WorkloadError("workload '%s' is not NAME or MODULE:FUNCTION" % spec)
    try:
        module = importlib.import_module(module_name)
    except BaseException as e:  # a module that raises on import, whatever it raises
        raise WorkloadError("workload '%s': importing %s failed: %s: %s"
                            % (spec, module_name, type(e).__name__, e)) from None
    make = getattr(module, function, None)
    if not callable(make):
        raise WorkloadError("workload '%s': module %s has no function %s"
                            % (spec, module_name, function))
    try:
        w = make(size=size, seed=seed, batch_size=batch_size)
    except BaseException as e:
        raise WorkloadError("workload '%s': %s(size=%r, seed=%r, batch_size=%r) raised %s: %s"
                            % (spec, function, size, seed, batch_size, type(e).__name__,
                               e)) from None
    if not isinstance(w, Workload):
        raise WorkloadError("workload '%s': %s returned %s, not a parity_workloads.Workload"
                            % (spec, function, type(w).__name__))
    return w


def _synchronize(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _percentile(sorted_values, q):
    """The q-th percentile (0..100) by linear interpolation between closest ranks (numpy's
    default)."""
    if not sorted_values:
        return None
    pos = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def _peak_rss_bytes():
    """This process's peak resident set (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def optimizer_description(opt):
    """{"class": the optimizer's class name, then its defaults (lr, foreach, fused, momentum,
    ...) that JSON can hold}: what the harness ran, for the report."""
    out = {"class": type(opt).__name__}
    for key in sorted(opt.defaults):
        value = opt.defaults[key]
        if isinstance(value, (tuple, list)) and all(isinstance(v, (int, float)) for v in value):
            value = list(value)
        elif not (value is None or isinstance(value, (bool, int, float, str))):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            continue
        out[key] = value
    return out


def run(workload, steps=20, warmup=3, device="cpu", settings=None, seed=0, clock=None,
        progress=None, default_batch_size=None):
    """Trains `workload` (a Workload) for warmup + steps steps with its optimizer
    (workload.make_optimizer(), at workload.lr) and returns the report (see the module
    docstring). `settings`: num_workers, pin_memory, prefetch_factor, persistent_workers (the
    DataLoader's), threads (torch's intra-op threads), channels_last, amp ("none", "bf16",
    "fp16"), compile (COMPILE), optimizer (OPTIMIZER: the implementation), sdpa_backend
    (knobs.SDPA_BACKENDS), lr_rule (knobs.LR_RULES: the learning rate at workload.batch_size
    from the workload's own at `default_batch_size`; held when that is None). `clock`
    (default time.perf_counter) is read three times a step: before asking for the batch,
    once it came, and after the synchronised optimizer step."""
    settings = dict(settings or {})
    clock = clock or time.perf_counter
    if steps < 1 or warmup < 0:
        raise WorkloadError("steps must be >= 1 and warmup >= 0 (got %r, %r)" % (steps, warmup))
    amp = settings.pop("amp", "none") or "none"
    if amp not in AMP:
        raise WorkloadError("amp must be one of %s, not %r" % (", ".join(AMP), amp))
    threads = settings.pop("threads", None)
    channels_last = bool(settings.pop("channels_last", False))
    compile_mode = settings.pop("compile", "off") or "off"
    if compile_mode not in COMPILE:
        raise WorkloadError("compile must be one of %s, not %r" % (", ".join(COMPILE),
                                                                   compile_mode))
    if compile_mode != "off" and not hasattr(torch, "compile"):
        raise WorkloadError("compile %s needs torch.compile (torch 2.x; this is torch %s)"
                            % (compile_mode, torch.__version__))
    implementation = settings.pop("optimizer", "default") or "default"
    if implementation not in OPTIMIZER:
        raise WorkloadError("optimizer must be one of %s, not %r" % (", ".join(OPTIMIZER),
                                                                     implementation))
    sdpa_backend = settings.pop("sdpa_backend", None)
    lr_rule = settings.pop("lr_rule", "held") or "held"
    try:
        lr = knob_rules.lr_for(lr_rule, workload.lr, workload.batch_size,
                               default_batch_size or workload.batch_size)
        sdpa_limit = None if sdpa_backend is None else knob_rules.sdpa_kernel(sdpa_backend)
    except ValueError as e:
        raise WorkloadError(str(e)) from None
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise WorkloadError("device %s: this torch sees no CUDA or ROCm device" % device)
    if amp == "fp16" and dev.type != "cuda":
        raise WorkloadError("amp fp16 needs a CUDA or ROCm device (autocast on the CPU runs "
                            "bfloat16 here)")
    if threads is not None:
        if int(threads) < 1:
            raise WorkloadError("threads must be >= 1, not %r" % (threads,))
        torch.set_num_threads(int(threads))
    loader_settings = {k: settings.pop(k) for k in list(settings)
                       if k in ("num_workers", "pin_memory", "prefetch_factor",
                                "persistent_workers")}
    if settings:
        raise WorkloadError("unknown setting(s): %s" % ", ".join(sorted(settings)))

    torch.manual_seed(seed)
    model = workload.model.to(dev)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    # after the move: a fused optimizer's state is on `dev`
    try:
        opt = workload.make_optimizer(lr=lr, implementation=None if implementation == "default"
                                      else implementation)
    except (RuntimeError, ValueError, TypeError) as e:
        if implementation == "default":
            raise
        raise WorkloadError("optimizer %s can't apply to %s here: %s" % (
            implementation, workload.optimizer[0], str(e).split("\n", 1)[0])) from None
    step_model = model
    if compile_mode != "off":
        step_model = torch.compile(model, mode=None if compile_mode == "inductor"
                                   else compile_mode)
    scaler = None
    if amp == "fp16":
        # torch.amp.GradScaler(device) from torch 2.3; torch.cuda.amp's is deprecated there.
        amp_mod = getattr(torch, "amp", None)
        if amp_mod is not None and hasattr(amp_mod, "GradScaler"):
            scaler = amp_mod.GradScaler(dev.type)
        else:
            scaler = torch.cuda.amp.GradScaler()
    amp_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(amp)
    total = warmup + steps
    try:
        loader = workload.loader(total, loader_settings)
    except ValueError as e:
        raise WorkloadError(str(e)) from None
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)

    def move(t):
        t = t.to(dev, non_blocking=True)
        if channels_last and t.dim() == 4:
            t = t.contiguous(memory_format=torch.channels_last)
        return t

    losses, step_s, wait_s = [], [], []
    with sdpa_limit or contextlib.nullcontext():
        it = iter(loader)
        for i in range(total):
            t0 = clock()
            inputs, target = next(it)
            t1 = clock()
            inputs = tuple(move(t) for t in inputs)
            target = target.to(dev, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            if amp_dtype is None:
                out = workload.forward(step_model, inputs)
                loss = workload.loss_fn(out, target)
            else:
                with torch.autocast(dev.type, dtype=amp_dtype):
                    out = workload.forward(step_model, inputs)
                    loss = workload.loss_fn(out, target)
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
            else:
                loss.backward()
                opt.step()
            _synchronize(dev)
            t2 = clock()
            value = float(loss.detach())
            losses.append(value if math.isfinite(value) else None)  # None: not finite
            # Nothing of this step outlives it (a plain loop keeps no reference either): the next
            # step's allocations find its memory free.
            del inputs, target, out, loss
            if i >= warmup:
                step_s.append(t2 - t0)
                wait_s.append(t1 - t0)
            if progress is not None:
                progress(i + 1, total)
    del it

    timed = sum(step_s)
    ordered = sorted(step_s)
    report = {
        "format": FORMAT, "version": VERSION, "workload": workload.name, "size": workload.size,
        "device": str(dev), "device_name": (torch.cuda.get_device_name(dev) if dev.type == "cuda"
                                            else platform.processor() or platform.machine()),
        "torch": torch.__version__, "seed": seed, "batch_size": workload.batch_size,
        "steps": steps, "warmup": warmup,
        "settings": dict(loader_settings, amp=amp, channels_last=channels_last,
                         compile=compile_mode, optimizer=implementation, lr_rule=lr_rule,
                         **({} if threads is None else {"threads": int(threads)}),
                         **({} if sdpa_backend is None else {"sdpa_backend": sdpa_backend})),
        "torch_threads": torch.get_num_threads(),
        "samples_per_s": workload.batch_size * steps / timed if timed > 0 else None,
        "step_s": step_s,
        "step_ms": {"p50": _percentile(ordered, 50) * 1e3, "p90": _percentile(ordered, 90) * 1e3,
                    "p99": _percentile(ordered, 99) * 1e3, "min": ordered[0] * 1e3,
                    "max": ordered[-1] * 1e3},
        "data_wait_share": sum(wait_s) / timed if timed > 0 else None,
        "peak_rss_bytes": _peak_rss_bytes(),
        "losses": losses,
        "optimizer": optimizer_description(opt),
    }
    if workload.tokens_per_sample and timed > 0:
        report["tokens_per_s"] = report["samples_per_s"] * workload.tokens_per_sample
    if dev.type == "cuda":
        report["peak_device_memory_bytes"] = torch.cuda.max_memory_allocated(dev)
    if scaler is not None:
        report["final_scale"] = float(scaler.get_scale())
    return report


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m parity_workloads.harness",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--workload", required=True, help="NAME or MODULE:FUNCTION")
    ap.add_argument("--size", default="tiny", help="tiny, small or base (default tiny)")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--num-workers", type=int, default=None)
    ap.add_argument("--pin-memory", action="store_true")
    ap.add_argument("--prefetch-factor", type=int, default=None)
    ap.add_argument("--persistent-workers", action="store_true")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--channels-last", action="store_true")
    ap.add_argument("--amp", default="none", choices=AMP)
    ap.add_argument("--compile", default="off", choices=COMPILE)
    ap.add_argument("--optimizer", default="default", choices=OPTIMIZER)
    ap.add_argument("--sdpa-backend", default=None, choices=tuple(knob_rules.SDPA_BACKENDS))
    ap.add_argument("--lr-rule", default="held", choices=knob_rules.LR_RULES)
    ap.add_argument("--knobs", action="store_true",
                    help="write the settings the workload has instead of training")
    ap.add_argument("--json", default="-", help="where the report goes (default -: stdout)")
    ap.add_argument("--progress", action="store_true", help="a line per step on stderr")
    args = ap.parse_args(argv)
    settings = {"amp": args.amp, "channels_last": args.channels_last,
                "compile": args.compile, "optimizer": args.optimizer, "lr_rule": args.lr_rule}
    if args.sdpa_backend is not None:
        settings["sdpa_backend"] = args.sdpa_backend
    for key in ("num_workers", "prefetch_factor", "threads"):
        if getattr(args, key) is not None:
            settings[key] = getattr(args, key)
    if args.pin_memory:
        settings["pin_memory"] = True
    if args.persistent_workers:
        settings["persistent_workers"] = True
    if args.batch_size is not None and args.batch_size < 1:
        print("parity: error: --batch-size must be >= 1", file=sys.stderr)
        return 2
    progress = None
    if args.progress:
        def progress(done, total):
            print("step %d/%d" % (done, total), file=sys.stderr, flush=True)
    try:
        w = load(args.workload, args.size, args.seed, args.batch_size)
        if args.knobs:
            if args.device.startswith("cuda") and not torch.cuda.is_available():
                raise WorkloadError("device %s: this torch sees no CUDA or ROCm device"
                                    % args.device)
            has, lacks = knob_rules.probe(w, args.device)
            report = {"format": "parity-workload-knobs", "version": 1, "workload": w.name,
                      "torch": torch.__version__, "knobs": has, "lacks": lacks}
        else:
            default_batch_size = None
            if args.lr_rule != "held" and args.batch_size is not None:
                # the workload's own batch size: what its learning rate was chosen for
                default_batch_size = load(args.workload, args.size, args.seed).batch_size
            report = run(w, args.steps, args.warmup, args.device, settings, args.seed,
                         progress=progress, default_batch_size=default_batch_size)
    except WorkloadError as e:
        print("parity: error: %s" % e, file=sys.stderr)
        return 2
    except Exception as e:  # the user's step raised: a failed run, not bad input
        traceback.print_exc()
        print("parity: error: workload '%s' raised during training: %s: %s"
              % (args.workload, type(e).__name__, e), file=sys.stderr)
        return 1
    text = json.dumps(report, indent=1, allow_nan=False)
    if args.json == "-":
        print(text)
    else:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
