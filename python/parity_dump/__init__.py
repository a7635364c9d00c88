# SPDX-License-Identifier: Apache-2.0
"""parity_dump: record PyTorch op calls as parity-dump directories.

    import parity_dump
    parity_dump.seed_everything(0)
    with parity_dump.capture(model, "dump_dir"):
        model(x)
"""
from .capture import capture
from .ops import ALL_OPS
from .seeding import seed_everything

__all__ = ["capture", "seed_everything", "ALL_OPS"]
__version__ = "0.1.0"
