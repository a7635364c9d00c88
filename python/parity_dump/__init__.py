# SPDX-License-Identifier: Apache-2.0
"""parity_dump: record PyTorch training steps op by op as parity-dump directories.

    import parity_dump
    parity_dump.seed_everything(0)
    with parity_dump.capture(model, "dump_dir", optimizer=opt) as cap:
        for batch in data:
            train_step(model, batch, opt)
            cap.step()

Format version 2 (docs/DESIGN.md, "Dump directories"): every aten op of forward, backward
and the optimizer step by default (level="aten"); level="modules" records version 1's
functional ops named after modules.
"""
from .capture import Capture, capture, paused
from .dumpdir import DumpDirectoryError
from .ops import ALL_OPS
from .seeding import seed_everything

__all__ = ["Capture", "capture", "paused", "DumpDirectoryError", "seed_everything", "ALL_OPS"]
__version__ = "0.2.0"
