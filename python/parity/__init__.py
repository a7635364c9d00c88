# SPDX-License-Identifier: Apache-2.0
"""parity from Python: bindings over the C++ libraries the ``parity`` CLI runs (docs/PYTHON.md).

    import parity
    r = parity.compare(a, b, k=4096)          # numpy arrays (read in place), torch tensors,
    r.passed, r.tensors[0].max_abs            # tensor files, directories or dump directories
    parity.explain("dump_a", "dump_b")
    parity.testing.assert_close(actual, expected, k=4096)

Every function returns the document the CLI writes with ``--json`` as a typed object
(``.to_dict()`` is that document) and raises :class:`ParityError` with the message the CLI
prints after ``parity: error:``. The GIL is released while parity computes.
"""

import json as _json
import os as _os

try:
    from . import _parity
except ImportError as _e:  # pragma: no cover - a checkout without a build
    raise ImportError(
        "parity's compiled extension (parity._parity) is missing: build it (./scripts/build "
        "release puts the package in build/python, PYTHONPATH=build/python) or install the "
        f"package with pip (python/README.md): {_e}") from _e

from ._results import (CompareResult, ExplainResult, InspectResult, QualityResult, Record,
                       ReplayResult, TensorComparison)

try:
    from ._version import __version__
except ImportError:  # pragma: no cover
    __version__ = _parity.__version__

ParityError = _parity.ParityError
ParityError.__doc__ = ("Bad input: the message is what the parity CLI prints after "
                       "'parity: error: ' for the same input (file and problem).")

__all__ = ["ParityError", "compare", "inspect", "explain", "replay", "set_threads",
           "thread_count", "quality", "rng", "testing", "Record", "CompareResult",
           "TensorComparison", "InspectResult", "ExplainResult", "ReplayResult",
           "QualityResult", "__version__"]

# numpy and torch dtypes parity reads through another numpy dtype of the same item size.
_BIT_VIEWS = {"bfloat16": ("int16", "uint16"), "float8_e4m3fn": ("uint8", "uint8"),
              "float8_e5m2": ("uint8", "uint8")}


def _as_input(x, dtype=None):
    """(a path or a C-contiguous native numpy array, the parity dtype over its bits or None).

    numpy arrays that already are C-contiguous, aligned and native-endian are passed as they
    are (no copy); torch CPU tensors through their shared memory (bfloat16 and float8 as bits);
    other objects through DLPack or ``numpy.asarray``.
    """
    import numpy as np

    if isinstance(x, (str, _os.PathLike)):
        return _os.fspath(x), dtype
    mod = type(x).__module__
    if mod.startswith("torch") and hasattr(x, "detach"):
        t = x.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        name = str(t.dtype).replace("torch.", "")
        if name in _BIT_VIEWS:
            import torch

            t = t.contiguous().view(getattr(torch, _BIT_VIEWS[name][0]))
            arr = t.numpy().view(_BIT_VIEWS[name][1])
            return arr, dtype or name
        if t.is_conj():
            t = t.resolve_conj()
        x = t.contiguous().numpy()
    elif not isinstance(x, np.ndarray):
        if hasattr(x, "__dlpack__") and hasattr(np, "from_dlpack"):
            try:
                x = np.from_dlpack(x)
            except (TypeError, RuntimeError, BufferError):
                x = np.asarray(x)
        else:
            x = np.asarray(x)
    if not x.dtype.isnative:
        x = x.astype(x.dtype.newbyteorder("="))
    if not (x.flags.c_contiguous and x.flags.aligned):
        x = np.ascontiguousarray(x)
    return x, dtype


_TOLS = ("auto", "torch", "exact")
_COMPUTES = ("float32", "tf32", "bfloat16", "float16", "float64")


def compare(a, b, tol="auto", k=None, compute=None, golden=None, only=None, *, rtol=None,
            atol=None, lambda_=6.0, ratio=2.0, tiny=None, worst=5, tol_file=None, op=None,
            a_dtype=None, b_dtype=None):
    """`parity compare A B`: every metric of each pair of tensors and a verdict against a
    tolerance, by default (``tol="auto"``) derived from the dtype's unit roundoff, the
    reduction length ``k`` and the magnitude of the summands.

    ``a`` (baseline) and ``b`` (candidate, the reference of relative measures) are numpy arrays,
    torch tensors, or paths of tensor files, directories or dump directories. ``compute``: the
    compute precision for ``auto``; ``golden``: a third run or float64 reference; ``only``:
    globs on tensor names; ``op``: for arrays, the op that produced them ("matmul", "add", ...:
    its class picks the model as in a dump); ``a_dtype``/``b_dtype``: a parity dtype over an
    array's bits ("bfloat16" over uint16). The other keywords are the CLI's options. Returns a
    :class:`CompareResult`; ``.passed`` is the CLI's exit 0.
    """
    if tol not in _TOLS:
        raise ParityError(f"tol: '{tol}' is not one of {', '.join(_TOLS)}")
    if compute is not None and compute not in _COMPUTES:
        raise ParityError(f"compute: '{compute}' is not one of {', '.join(_COMPUTES)}")
    if k is not None and (not isinstance(k, int) or k < 1):
        raise ParityError(f"k: {k!r} is not a positive integer")
    if isinstance(only, str):
        only = [only]
    ia, da = _as_input(a, a_dtype)
    ib, db = _as_input(b, b_dtype)
    ig = None if golden is None else _as_input(golden)[0]
    text, human = _parity.compare(
        ia, ib, ig, da, db, tol, k, compute, list(only or []), rtol, atol, float(lambda_),
        float(ratio), tiny, int(worst), None if tol_file is None else _os.fspath(tol_file),
        op or "")
    result = CompareResult(_json.loads(text))
    object.__setattr__(result, "_text", human)
    return result


def inspect(path_or_array, *, name="tensor", dtype=None):
    """`parity inspect`: for a path (file, directory, dump directory, or a list of them) the
    CLI's document (``files``, and ``coverage`` for dumps); for an array or tensor its one
    entry: name, dtype, shape, numel, min, max, mean, std (None without finite elements), nan,
    inf, zeros."""
    if isinstance(path_or_array, (list, tuple)) and path_or_array and all(
            isinstance(p, (str, _os.PathLike)) for p in path_or_array):
        return InspectResult(_json.loads(_parity.inspect_paths([_os.fspath(p)
                                                                for p in path_or_array])))
    x, dt = _as_input(path_or_array, dtype)
    if isinstance(x, str):
        return InspectResult(_json.loads(_parity.inspect_paths([x])))
    return InspectResult(_json.loads(_parity.inspect_array(x, name, dt)))


def explain(dump_a, dump_b, *, name=None, slowest=10):
    """`parity explain A B`: each matched op call of two dumps attributed to a cause
    (identical, within-rounding, reduced-precision, rng-divergence, nonfinite, inherited,
    algorithmic, structural), origins first. ``name``: a glob on record names."""
    return ExplainResult(_json.loads(_parity.explain(_os.fspath(dump_a), _os.fspath(dump_b),
                                                     name, int(slowest))))


def replay(dump, *, seq=None, name=None):
    """`parity replay DUMP`: each recorded op against its float64 replay on its recorded
    inputs, judged by the ``auto`` tolerance."""
    return ReplayResult(_json.loads(_parity.replay(_os.fspath(dump), seq, name)))


def set_threads(threads):
    """Worker threads of parity's parallel loops (0: one per CPU), as the CLI's --threads."""
    _parity.set_threads(int(threads))


def thread_count():
    """The worker threads parity's parallel loops use."""
    return _parity.thread_count()


from . import quality, rng, testing  # noqa: E402  (they use the functions above)
