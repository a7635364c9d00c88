# SPDX-License-Identifier: Apache-2.0
"""Real torch.utils.data DataLoaders over a workload's synthetic batches.

Batch i of a loader is made from a generator seeded by (seed, i) alone, so the data is the
same bit for bit whatever the loader settings (workers, pinning, prefetching) and whichever
worker makes it: settings change speed, never the data.
"""
import torch

# The loader settings make_loader takes, with their defaults (DataLoader's own).
LOADER_DEFAULTS = {"num_workers": 0, "pin_memory": False, "prefetch_factor": None,
                   "persistent_workers": False}


def batch_seed(seed, index):
    """The seed of batch `index` of a loader seeded with `seed`."""
    return (int(seed) * 1000003 + int(index)) % (1 << 63)


class BatchDataset(torch.utils.data.Dataset):
    """A map-style dataset of `length` synthetic batches of a workload (already batched)."""

    def __init__(self, make_batch, length, seed):
        self.make_batch = make_batch
        self.length = int(length)
        self.seed = seed

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        if not 0 <= index < self.length:
            raise IndexError(index)
        gen = torch.Generator().manual_seed(batch_seed(self.seed, index))
        return self.make_batch(gen)


def make_loader(make_batch, length, seed, settings=None):
    """A DataLoader over BatchDataset(make_batch, length, seed) with `settings` (keys of
    LOADER_DEFAULTS; prefetch_factor and persistent_workers need num_workers > 0, as
    DataLoader says). ValueError for an unknown key or a value of the wrong type."""
    opts = dict(LOADER_DEFAULTS)
    for key, value in (settings or {}).items():
        if key not in LOADER_DEFAULTS:
            raise ValueError("unknown loader setting %r (known: %s)"
                             % (key, ", ".join(sorted(LOADER_DEFAULTS))))
        opts[key] = value
    workers = int(opts["num_workers"])
    if workers < 0:
        raise ValueError("num_workers must be >= 0, not %r" % (opts["num_workers"],))
    kwargs = {"batch_size": None, "shuffle": False, "num_workers": workers,
              "pin_memory": bool(opts["pin_memory"]) and torch.cuda.is_available()}
    if workers > 0:
        kwargs["persistent_workers"] = bool(opts["persistent_workers"])
        if opts["prefetch_factor"] is not None:
            kwargs["prefetch_factor"] = int(opts["prefetch_factor"])
    elif opts["prefetch_factor"] is not None or opts["persistent_workers"]:
        raise ValueError("prefetch_factor and persistent_workers need num_workers > 0")
    return torch.utils.data.DataLoader(BatchDataset(make_batch, length, seed), **kwargs)
