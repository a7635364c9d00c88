# SPDX-License-Identifier: Apache-2.0
"""`parity quality`: a model's quality on one evaluation set, B against A (docs/DESIGN.md)."""

import json as _json
import os as _os

from . import _parity
from ._results import QualityResult

__all__ = ["auc", "logloss", "accuracy"]


def _values(x):
    import numpy as np

    if isinstance(x, (str, _os.PathLike)):
        return _os.fspath(x)
    if type(x).__module__.startswith("torch"):
        x = x.detach().cpu().double().numpy()
    return np.ascontiguousarray(np.asarray(x, dtype=np.float64).reshape(-1))


def _runs(x):
    # One run, or a list of runs (one per seed); a 1-d array or a path is one run.
    if isinstance(x, (list, tuple)) and x and not isinstance(x[0], (int, float)):
        return [_values(r) for r in x]
    return [_values(x)]


def _run(metric, labels, a, b, margin, relative, bootstrap, seed, threshold, column):
    return QualityResult(_json.loads(_parity.quality(
        metric, _values(labels), _runs(a), _runs(b), float(margin), bool(relative),
        int(bootstrap), int(seed), float(threshold), column)))


def auc(labels, a, b, *, margin=0.0015, relative=True, bootstrap=0, seed=0, column=None):
    """`parity quality auc`: B's ROC AUC against A's on the same labels (0 or 1). ``a`` and ``b``
    are score arrays (or files), or lists of them (one per seed). One run per side: DeLong's
    paired test; several: Welch's t-test; either way TOST within the margin."""
    return _run("auc", labels, a, b, margin, relative, bootstrap, seed, 0.5, column)


def logloss(labels, a, b, *, margin=0.0015, relative=True, bootstrap=0, seed=0, column=None):
    """`parity quality logloss`: B's log loss against A's (probabilities in [0, 1])."""
    return _run("logloss", labels, a, b, margin, relative, bootstrap, seed, 0.5, column)


def accuracy(labels, a, b, *, margin=0.0015, relative=True, bootstrap=0, seed=0,
             threshold=0.5, column=None):
    """`parity quality accuracy`: B's accuracy against A's at ``threshold``."""
    return _run("accuracy", labels, a, b, margin, relative, bootstrap, seed, threshold, column)
