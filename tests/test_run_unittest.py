#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/run_unittest.py, the runner of the Python CTest entries, on small modules written
here: every test skipped exits 77 (CTest's SKIP_RETURN_CODE), some skipped passes and lists
them, a failure, an import error or no test at all fails; unittest's closing lines stay, and
the runner's summary line counts the tests and names each skip with its reason."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

RUNNER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run_unittest.py")

MODULES = {
    "all_skipped": """
        import unittest
        class T(unittest.TestCase):
            def test_a(self):
                self.skipTest("no chromium here")
            @unittest.skip("no prometheus here")
            def test_b(self):
                self.fail("not run")
        """,
    "class_skipped": """
        import unittest
        class T(unittest.TestCase):
            @classmethod
            def setUpClass(cls):
                raise unittest.SkipTest("no mpirun here")
            def test_a(self):
                self.fail("not run")
        """,
    "some_skipped": """
        import unittest
        class T(unittest.TestCase):
            def test_checked(self):
                self.assertEqual(1 + 1, 2)
            def test_skipped(self):
                self.skipTest("no torch here")
        """,
    "subtest_skipped": """
        import unittest
        class T(unittest.TestCase):
            def test_sub(self):
                for i in range(2):
                    with self.subTest(i=i):
                        self.skipTest(f"case {i} needs a GPU")
        """,
    "passes": """
        import unittest
        class T(unittest.TestCase):
            def test_checked(self):
                self.assertTrue(True)
        """,
    "fails": """
        import unittest
        class T(unittest.TestCase):
            def test_wrong(self):
                self.assertEqual(1, 2)
            def test_skipped(self):
                self.skipTest("no torch here")
        """,
    "broken": """
        import no_such_module_anywhere
        """,
    "empty": """
        import unittest
        """,
}


class RunUnittest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        for name, text in MODULES.items():
            with open(os.path.join(cls.tmp.name, name + ".py"), "w") as f:
                f.write(textwrap.dedent(text))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_modules(self, *modules):
        # From the modules' directory, as CTest's WORKING_DIRECTORY does.
        return subprocess.run([sys.executable, RUNNER, *modules], capture_output=True,
                              text=True, cwd=self.tmp.name, timeout=60)

    def test_all_skipped_exits_77_with_the_reasons(self):
        p = self.run_modules("all_skipped")
        self.assertEqual(p.returncode, 77, p.stdout + p.stderr)
        self.assertIn("OK (skipped=2)", p.stderr)
        self.assertIn("Ran 2 tests", p.stderr)
        self.assertIn("no chromium here", p.stdout)
        self.assertIn("no prometheus here", p.stdout)
        self.assertIn("every test was skipped", p.stdout)
        self.assertIn("run_unittest: SKIPPED: ran 2: 0 passed, 2 skipped (T.test_a: no chromium "
                      "here; T.test_b: no prometheus here)", p.stdout)

    def test_class_skipped_in_set_up_class_exits_77(self):
        p = self.run_modules("class_skipped")
        self.assertEqual(p.returncode, 77, p.stdout + p.stderr)
        self.assertIn("ran 1: 0 passed, 1 skipped (setUpClass (class_skipped.T): no mpirun "
                      "here)", p.stdout)

    def test_every_subtest_skipped_exits_77(self):
        p = self.run_modules("subtest_skipped")
        self.assertEqual(p.returncode, 77, p.stdout + p.stderr)
        self.assertIn("ran 1: 0 passed, 1 skipped (T.test_sub (i=0): case 0 needs a GPU; "
                      "T.test_sub (i=1): case 1 needs a GPU)", p.stdout)

    def test_some_skipped_passes_and_lists_them(self):
        p = self.run_modules("some_skipped")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("OK (skipped=1)", p.stderr)
        self.assertIn("SKIP some_skipped.T.test_skipped: no torch here", p.stdout)
        self.assertEqual(p.stdout.splitlines()[-1],
                         "run_unittest: ran 2: 1 passed, 1 skipped (T.test_skipped: no torch here)")

    def test_one_module_all_skipped_beside_one_that_passes(self):
        p = self.run_modules("passes", "all_skipped")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # Modules named where there are several.
        self.assertIn("ran 3: 1 passed, 2 skipped (all_skipped.T.test_a: no chromium here; "
                      "all_skipped.T.test_b: no prometheus here)", p.stdout)

    def test_no_skip_passes(self):
        p = self.run_modules("passes")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(p.stdout.splitlines()[-1], "run_unittest: ran 1: 1 passed, 0 skipped")
        self.assertNotIn("SKIP", p.stdout)

    def test_failure_fails_even_with_skips(self):
        p = self.run_modules("fails")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("FAILED (failures=1, skipped=1)", p.stderr)
        self.assertIn("run_unittest: FAILED: ran 2: 0 passed, 1 failed, 1 skipped (T.test_skipped: "
                      "no torch here)", p.stdout)

    def test_import_error_fails(self):
        p = self.run_modules("broken")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("no_such_module_anywhere", p.stderr)

    def test_no_test_found_fails(self):
        p = self.run_modules("empty")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("no test found", p.stdout)

    def test_no_module_is_a_usage_error(self):
        p = self.run_modules()
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main()
