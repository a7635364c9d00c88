#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""parity's pytest plugin (parity.pytest_plugin, entry point `parity` in `pytest11`): pytest
run on a small test file, a failing parity.testing.assert_close reported as its readable diff
(reason, tolerance derivation, worst elements, histogram) and the `assert_close` fixture.

Environment: PARITY_PYTEST_ENTRY_POINT=1 when the interpreter has parity installed (the venv):
then the plugin must load through its entry point, without -p.
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

TESTS = textwrap.dedent("""
    import numpy as np
    import parity.testing

    K = 512
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, K)).astype(np.float32)
    w = rng.standard_normal((K, 8)).astype(np.float32)
    expected = (x.astype(np.float64) @ w.astype(np.float64)).astype(np.float32)

    def test_noise_passes():
        parity.testing.assert_close(x @ w, expected, k=K)

    def test_fixture(assert_close):
        assert_close(x @ w, expected, k=K)

    def test_half_precision_fails():
        actual = (x.astype(np.float16) @ w.astype(np.float16)).astype(np.float32)
        parity.testing.assert_close(actual, expected, k=K)
""")
# The failing line: where the report must point.
FAILING_LINE = TESTS.splitlines().index("    parity.testing.assert_close(actual, expected, k=K)") + 1


class Plugin(unittest.TestCase):
    def test_readable_diff(self):
        try:
            import pytest  # noqa: F401
        except ImportError:
            self.skipTest("pytest is not installed (Debian: python3-pytest)")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "test_sample.py")
            with open(path, "w") as f:
                f.write(TESTS)
            args = [sys.executable, "-m", "pytest", "-q", "-rN", "-p", "no:cacheprovider", path]
            if os.environ.get("PARITY_PYTEST_ENTRY_POINT") != "1":
                args[3:3] = ["-p", "parity.pytest_plugin"]
            r = subprocess.run(args, capture_output=True, text=True, cwd=tmp, timeout=300)
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 1, out)  # one test failed
        self.assertIn("1 failed, 2 passed", out)
        self.assertIn(f"test_sample.py:{FAILING_LINE}: parity assert_close failed", out)
        for part in ("Tensor-likes are not close", "K = 512", "Worst elements",
                     "Violations:", "parity compare", "Summary: 1 tensor, 0 passed, 1 failed"):
            self.assertIn(part, out)
        # The readable diff replaces the traceback of parity's own frames.
        self.assertNotIn("raise ParityAssertionError", out)


if __name__ == "__main__":
    unittest.main()
