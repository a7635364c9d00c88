# SPDX-License-Identifier: Apache-2.0
"""get(name, size=...): the workloads by name.

names() are the reference workloads (plain torch.nn, run by `parity bench --suite model` by
default, any torch from 1.13); zoo_names() are the model-library workloads (transformers,
timm, TorchRec and a shipped pretrained MiniLM), whose modules import their library only when
a workload is built: on a Python without it, get() raises MissingLibraryError (an ImportError)
naming the package and the torch 2.x environment (scripts/venv).
"""
import importlib

from . import cnn, recsys, transformer

_BUILDERS = {"cnn": cnn.make, "recsys": recsys.make, "transformer": transformer.make}

# name -> (module of this package, function): imported on first use.
_ZOO = {
    "hf-llama": ("hf", "make_llama"),
    "hf-bert": ("hf", "make_bert"),
    "timm-vit": ("timm_models", "make_vit"),
    "timm-resnet": ("timm_models", "make_resnet"),
    "torchrec-dlrm": ("torchrec_dlrm", "make"),
    "minilm": ("minilm", "make"),
}


def names():
    """The reference workload names, sorted."""
    return tuple(sorted(_BUILDERS))


def zoo_names():
    """The model-library workload names, sorted (they need the torch 2.x environment)."""
    return tuple(sorted(_ZOO))


def all_names():
    """Every workload name: names() then zoo_names()."""
    return names() + zoo_names()


def get(name, size="tiny", seed=0, batch_size=None):
    """A new Workload `name` at `size` ("tiny", "small" or "base"); `seed` fixes the initial
    parameters and the synthetic data; `batch_size` overrides the size's default. ValueError
    for an unknown name or size; MissingLibraryError (an ImportError) when a zoo workload's
    library is not installed."""
    builder = _BUILDERS.get(name)
    if builder is None and name in _ZOO:
        module, function = _ZOO[name]
        builder = getattr(importlib.import_module("." + module, __package__), function)
    if builder is None:
        raise ValueError("unknown workload %r (known: %s)"
                         % (name, ", ".join(all_names()))) from None
    return builder(size=size, seed=seed, batch_size=batch_size)
