#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""parity.compare and parity.inspect read numpy arrays (and torch CPU tensors) in place: on a
1 GiB float32 array the process's peak resident memory (VmHWM) grows by far less than a copy.

The interpreter must import parity (PYTHONPATH=build/python) and numpy; torch where present.
"""
import unittest

import numpy as np

import parity

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

GIB = 1 << 30
SLACK = 128 << 20  # parity's own buffers, numpy's and torch's imports: far below a copy


def peak_rss():
    """VmHWM: the process's peak resident set, in bytes."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise unittest.SkipTest("no VmHWM in /proc/self/status")


class ZeroCopy(unittest.TestCase):
    def test_one_gib_array_is_not_copied(self):
        a = np.empty(GIB // 4, np.float32)
        a.fill(1.5)
        a[12345] = 2.0
        # A second array object over the same memory: two inputs, no second GiB.
        b = np.ndarray(a.shape, a.dtype, buffer=a)
        if torch is not None:
            torch.ones(1)  # torch's own allocations before the baseline
        before = peak_rss()
        self.assertGreaterEqual(before, GIB)  # the array is resident
        r = parity.compare(a, b, k=8)
        self.assertTrue(r.passed)
        self.assertEqual(r.tensors[0].count, GIB // 4)
        s = parity.inspect(a)
        self.assertEqual(s.max, 2.0)
        if torch is not None:
            t = torch.from_numpy(a)
            self.assertTrue(parity.compare(t, t, k=8).passed)
        grown = peak_rss() - before
        self.assertLess(grown, SLACK, f"peak RSS grew by {grown >> 20} MiB: a copy?")


if __name__ == "__main__":
    unittest.main()
