# SPDX-License-Identifier: Apache-2.0
"""Whether the parity under test is the sanitizer build (PARITY_SANITIZED, set by ctest), and the
skip for tests of external tools, which the sanitizer pass leaves to the release pass."""
import os
import unittest

SANITIZED = os.environ.get("PARITY_SANITIZED", "0") not in ("0", "", "FALSE", "OFF")
EXTERNAL_SKIP = unittest.skipIf(SANITIZED, "an external tool's test: run by the release pass")
