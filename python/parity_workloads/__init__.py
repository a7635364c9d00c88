# SPDX-License-Identifier: Apache-2.0
"""parity_workloads: small real torch.nn training workloads with deterministic synthetic data.

    import parity_workloads
    w = parity_workloads.get("transformer", size="tiny")
    opt = w.make_optimizer()
    for batch in w.batches(2):
        loss = w.train_step(w.model, batch, opt, autocast=False)

Each workload (see `Workload`) is built the same way for the same (name, size, seed), on any
machine, without touching the global random generators: parity compares its numerics across
platforms, and benchmarks build on it.
"""
from .common import SIZES, Workload
from .registry import get, names

__all__ = ["get", "names", "Workload", "SIZES"]
