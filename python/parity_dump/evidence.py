# SPDX-License-Identifier: Apache-2.0
"""Evidence for the seed and precision questions at step boundaries: digests of the random
generators' states and the GradScaler's scale and skipped steps. Read-only: states are read
with get_state()/get_rng_state(), never set, and nothing draws a random number."""
import hashlib

import torch


def _digest(state):
    return hashlib.sha256(state.cpu().contiguous().numpy().tobytes()).hexdigest()


def generator_digests():
    """{"cpu": sha256 hex of the default CPU generator's state bytes, "cuda:<i>": the same for
    each CUDA (or ROCm) device's default generator once CUDA is initialised (reading it never
    initialises CUDA), "mps": where torch has one}."""
    out = {"cpu": _digest(torch.get_rng_state())}
    cuda = getattr(torch, "cuda", None)
    if cuda is not None and cuda.is_available() and cuda.is_initialized():
        for i in range(cuda.device_count()):
            out["cuda:%d" % i] = _digest(cuda.get_rng_state(i))
    mps = getattr(torch, "mps", None)
    if mps is not None and hasattr(mps, "get_rng_state"):
        backend = getattr(torch.backends, "mps", None)
        if backend is not None and backend.is_available():
            try:
                out["mps"] = _digest(mps.get_rng_state())
            except RuntimeError:
                pass
    return out


def scaler_scale(scaler):
    """The scale a GradScaler (or anything with its interface) multiplies losses by now, as a
    float: get_scale() (1.0 for a disabled scaler, as GradScaler says)."""
    return float(scaler.get_scale())


def scaler_entry(scale_at_start, scale_at_end, optimizer_steps, has_optimizer):
    """The manifest's "scaler" of a step.

    scale: the scale in effect when the step began (read at its boundary), which is the
        scale scaler.scale(loss) multiplied this step's loss by when scaler.update() runs
        once per step, before cap.step();
    skipped: the optimizer step of this step did not run: the scale went down during the
        step (GradScaler backs off exactly when it found Inf/NaN gradients), or, when the
        capture knows the optimizer, its step() was not called during the step (GradScaler
        skips optimizer.step() on Inf/NaN gradients).
    """
    skipped = scale_at_end < scale_at_start or (has_optimizer and optimizer_steps == 0)
    return {"scale": scale_at_start, "skipped": bool(skipped)}
