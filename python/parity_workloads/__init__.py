# SPDX-License-Identifier: Apache-2.0
"""parity_workloads: small real torch.nn training workloads with deterministic synthetic data.

    import parity_workloads
    w = parity_workloads.get("transformer", size="tiny")
    opt = w.make_optimizer()
    for batch in w.batches(2):
        loss = w.train_step(w.model, batch, opt, autocast=False)

Each workload (see `Workload`) is built the same way for the same (name, size, seed), on any
machine, without touching the global random generators: parity compares its numerics across
platforms, and benchmarks build on it. names() are the plain-torch reference workloads;
zoo_names() build models from transformers, timm, TorchRec and a shipped pretrained MiniLM,
and need the torch 2.x environment (scripts/venv).
"""
from .common import SIZES, MissingLibraryError, Workload
from .registry import all_names, get, names, zoo_names

__all__ = ["get", "names", "zoo_names", "all_names", "Workload", "SIZES", "MissingLibraryError"]
