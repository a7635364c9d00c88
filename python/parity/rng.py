# SPDX-License-Identifier: Apache-2.0
"""`parity rng`: cuRAND's Philox4x32-10 stream on the CPU."""

from . import _parity

__all__ = ["philox"]


def philox(seed, count, *, subsequence=0, offset=0, dist="uint32"):
    """`parity rng philox`: ``count`` values of curand_init(seed, subsequence, offset)'s device
    stream: ``dist`` "uint32" (curand), "uniform", "normal" (float32), "uniform_double" or
    "normal_double" (float64), as a numpy array."""
    return _parity.philox(int(seed), int(subsequence), int(offset), int(count), dist)
