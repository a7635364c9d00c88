#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs Python test modules as `python -m unittest -v MODULE...` does, for a CTest entry, and
says what was skipped: a skip must not read as a pass.

    run_unittest.py MODULE [MODULE...]      (modules found in the working directory)

Prints unittest's own verbose lines and closing lines ("Ran N tests", "OK (skipped=M)"), then,
when anything was skipped, every skipped test (or class or module) with its reason, then one
summary line with the counts and each skip's name and reason:
  run_unittest: ran 12: 10 passed, 2 skipped (T.test_x: no torch here; T.test_y: no GPU)
Exits
  0   none failed and at least one passed (others may have been skipped: named above)
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
        self.skips.append((_id(test), reason))
        super().addSkip(test, reason)


def _id(test):
    return test.id() if hasattr(test, "id") else str(test)


def _of(started, names):
    """The started tests that names are of: a subtest's name is its test's id followed by the
    subtest's parameters, so it is matched by prefix."""
    return {t for t in started if any(n == t or n.startswith(t + " ") for n in names)}


def _skipped_ids(result):
    """The started tests that were skipped (a test counts when it, or a subtest of it, was)."""
    return _of(result.started, [name for name, _ in result.skips])


def _short(name, strip):
    """A test's id, without its module when strip ("T.test_x", "T.test_x (i=1)"); a class or
    module skipped or failed as a whole keeps unittest's name for it ("setUpClass (mod.T)")."""
    head, sep, tail = name.partition(" ")
    if not strip or head in ("setUpClass", "setUpModule", "tearDownClass", "tearDownModule"):
        return name
    return head.partition(".")[2] + sep + tail


def summary(result, strip):
    """The closing line: "ran N: P passed[, F failed], S skipped (name: reason; ...)", each
    skip named (without its module when strip). A test that failed counts as failed, else one
    skipped (or with a skipped subtest) as skipped; a class or module failed or skipped whole
    (its tests never started) counts as one."""
    started = set(result.started)
    failures = [_id(t) for t, _ in result.failures + result.errors]
    failures += [_id(t) for t in result.unexpectedSuccesses]
    skips = [name for name, _ in result.skips]
    failed = len(_of(started, failures)) + sum(1 for n in failures if not _of(started, [n]))
    skipped_ids = _of(started, skips) - _of(started, failures)
    skipped = len(skipped_ids) + sum(1 for n in skips if not _of(started, [n]))
    passed = len(started - _of(started, failures) - skipped_ids)
    line = f"ran {passed + failed + skipped}: {passed} passed"
    if failed:
        line += f", {failed} failed"
    line += f", {skipped} skipped"
    if result.skips:
        line += f" ({'; '.join(f'{_short(n, strip)}: {why}' for n, why in result.skips)})"
    return line


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
    # Names without their module where every name given is of one module.
    counts = summary(result, len({m.partition(".")[0] for m in modules}) == 1)
    if not result.wasSuccessful():
        out.write(f"run_unittest: FAILED: {counts}\n")
        return 1
    if not result.started and not result.skips:
        out.write(f"run_unittest: FAILED: no test found in {' '.join(modules)}\n")
        return 1
    if not ran:
        out.write(f"run_unittest: SKIPPED: {counts}; every test was skipped (exit {SKIPPED}): "
                  "nothing was checked\n")
        return SKIPPED
    out.write(f"run_unittest: {counts}\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
