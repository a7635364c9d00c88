# SPDX-License-Identifier: Apache-2.0
"""get(name, size=...): the workloads by name."""
from . import cnn, recsys, transformer

_BUILDERS = {"cnn": cnn.make, "recsys": recsys.make, "transformer": transformer.make}


def names():
    """The workload names, sorted."""
    return tuple(sorted(_BUILDERS))


def get(name, size="tiny", seed=0, batch_size=None):
    """A new Workload `name` at `size` ("tiny", "small" or "base"); `seed` fixes the initial
    parameters and the synthetic data; `batch_size` overrides the size's default."""
    try:
        builder = _BUILDERS[name]
    except KeyError:
        raise ValueError("unknown workload %r (known: %s)" % (name, ", ".join(names()))) from None
    return builder(size=size, seed=seed, batch_size=batch_size)
