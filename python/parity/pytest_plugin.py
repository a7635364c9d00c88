# SPDX-License-Identifier: Apache-2.0
"""pytest plugin (entry point ``parity`` in group ``pytest11``): a failing
``parity.testing.assert_close`` is reported as its readable diff (the reason, the tolerance's
derivation, the worst elements and the violation histogram) instead of a long traceback, with
the human-readable ``parity compare`` report as a section of its own; and the fixture
``assert_close``."""

import pytest

from .testing import ParityAssertionError
from .testing import assert_close as _assert_close


@pytest.fixture
def assert_close():
    """parity.testing.assert_close."""
    return _assert_close


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None or not isinstance(call.excinfo.value, ParityAssertionError):
        return
    err = call.excinfo.value
    tb = call.excinfo.traceback
    where = ""
    for entry in reversed(tb):  # the test's own line, not parity's
        if "parity" not in str(entry.path).replace("\\", "/").split("/")[-2:-1]:
            where = f"{entry.path}:{entry.lineno + 1}"
            break
    report.longrepr = f"{where}: parity assert_close failed\n{err}"
    report.sections.append(("parity compare", err.result.text))
