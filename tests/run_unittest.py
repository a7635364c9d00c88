#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs Python test modules as `python -m unittest -v MODULE...` does, for a CTest entry, and
says what was skipped: a skip must not read as a pass.

    run_unittest.py MODULE [MODULE...]      (modules found in the working directory)

Prints unittest's own verbose lines and closing lines ("Ran N tests", "OK (skipped=M)"), then,
when anything was skipped, every skipped test (or class or module) with its reason. Exits
  0   the tests passed, at least one ran (some may have been skipped: listed above the exit)
  1   a test failed or errored, a module did not import, or no test was found
  77  every test was skipped (nothing was checked): CTest's SKIP_RETURN_CODE shows the entry
      as skipped, not passed
Standard library only: it also runs under the virtual environments the tests make.
"""
import os
import sys
import unittest

SKIPPED = 77


class _Result(unittest.TextTestResult):
    """Records which tests were started and which were skipped (a test counts as skipped when
    it, or a subtest of it, was; a class or module skipped in setUpClass/setUpModule is
    recorded by unittest under an error holder and its tests never start)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.started = []
        self.skips = []  # (name, reason)

    def startTest(self, test):
        self.started.append(test.id())
        super().startTest(test)

    def addSkip(self, test, reason):
        self.skips.append((test.id() if hasattr(test, "id") else str(test), reason))
        super().addSkip(test, reason)


def _skipped_ids(result):
    """The started tests that were skipped: a skipped subtest's id is its test's id followed
    by the subtest's parameters, so it is matched by prefix."""
    names = [name for name, _ in result.skips]
    return {t for t in result.started
            if any(n == t or n.startswith(t + " ") for n in names)}


def main(argv):
    if len(argv) < 2 or any(a.startswith("-") for a in argv[1:]):
        sys.stderr.write(__doc__)
        return 2
    modules = argv[1:]
    # As `python -m unittest` does: the working directory first, not this script's directory.
    sys.path[0] = os.getcwd()
    suite = unittest.defaultTestLoader.loadTestsFromNames(modules)
    runner = unittest.TextTestRunner(verbosity=2, resultclass=_Result)
    result = runner.run(suite)
    sys.stderr.flush()
    skipped = _skipped_ids(result)
    ran = [t for t in result.started if t not in skipped]
    out = sys.stdout
    if result.skips:
        rule = "=" * 70
        out.write(f"\n{rule}\nSKIPPED in {' '.join(modules)}: {len(skipped)} of the "
                  f"{len(result.started)} tests started"
                  f"{'' if len(result.skips) == len(skipped) else ' (or parts, classes, modules)'}"
                  ", each with its reason:\n")
        for name, reason in result.skips:
            out.write(f"  SKIP {name}: {reason}\n")
        out.write(f"{rule}\n")
    if not result.wasSuccessful():
        out.write("run_unittest: FAILED\n")
        return 1
    if not result.started and not result.skips:
        out.write(f"run_unittest: FAILED: no test found in {' '.join(modules)}\n")
        return 1
    if not ran:
        out.write(f"run_unittest: SKIPPED: every test was skipped (exit {SKIPPED}); "
                  "nothing was checked\n")
        return SKIPPED
    if result.skips:
        out.write(f"run_unittest: passed, {len(ran)} tests checked; "
                  f"{len(result.skips)} skipped (listed above)\n")
    else:
        out.write(f"run_unittest: passed, {len(ran)} tests checked, none skipped\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
