# SPDX-License-Identifier: Apache-2.0
"""What a capture selects and how its manifest names the selection: the rank it records, op
and module globs, and the capture's arguments as the manifest lists them."""
import fnmatch

import torch


def rank_and_world(rank):
    """(rank, world size): torch.distributed's where it is initialised, else (0, 1); `rank`,
    when given, overrides the rank."""
    dist = getattr(torch, "distributed", None)
    r, w = 0, 1
    if dist is not None and dist.is_available() and dist.is_initialized():
        r, w = dist.get_rank(), dist.get_world_size()
    if rank is not None:
        r = int(rank)
    return r, w


class Patterns:
    """fnmatch globs: a pattern starting with "!" excludes; a name is selected when it matches
    no exclusion and, if there are inclusions, at least one of them."""

    def __init__(self, patterns):
        if isinstance(patterns, str):
            patterns = [patterns]
        patterns = list(patterns or [])
        self.include = [p for p in patterns if not p.startswith("!")]
        self.exclude = [p[1:] for p in patterns if p.startswith("!")]
        self.everything = not patterns

    def __call__(self, name):
        if self.everything:
            return True
        if any(fnmatch.fnmatchcase(name, p) for p in self.exclude):
            return False
        return not self.include or any(fnmatch.fnmatchcase(name, p) for p in self.include)


def listed(spec):
    """A glob argument as the manifest lists it: None, or a list of patterns."""
    if spec is None:
        return None
    return [spec] if isinstance(spec, str) else list(spec)


def window(steps):
    """A steps= argument as the manifest lists it: a range as {start, stop, step}, a container
    as its sorted steps, anything else as its text."""
    if steps is None:
        return None
    if isinstance(steps, range):
        return {"start": steps.start, "stop": steps.stop, "step": steps.step}
    try:
        return sorted(int(s) for s in steps)
    except TypeError:
        return str(steps)
