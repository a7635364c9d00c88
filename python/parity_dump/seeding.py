# SPDX-License-Identifier: Apache-2.0
"""seed_everything(): one seed for every generator a PyTorch run draws from."""
import os
import random
import warnings

import numpy as np
import torch

PYTHONHASHSEED_NOTE = (
    "PYTHONHASHSEED is read when the interpreter starts: set it in the environment before "
    "launching Python (e.g. PYTHONHASHSEED=0 python train.py); setting it from inside the "
    "program has no effect on this process's str hashing.")


def seed_everything(seed):
    """Seeds Python's random, numpy's global generator, and torch on the CPU and every CUDA
    (or ROCm) device. Returns a note about PYTHONHASHSEED when it is not set (and warns)."""
    random.seed(seed)
    np.random.seed(seed % (1 << 32))
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    if "PYTHONHASHSEED" not in os.environ:
        warnings.warn(PYTHONHASHSEED_NOTE, stacklevel=2)
        return PYTHONHASHSEED_NOTE
    return None
