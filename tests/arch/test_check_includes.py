#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tests of tests/arch/check_includes.py on small fake trees: that it reports a forbidden
include, a cycle, an undescribed folder, a stale exception and an unresolved include, and that
it passes a tree that keeps to its document."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_includes  # noqa: E402


DOC = """# Fake architecture

The parts: `src/core/`, `src/io/`, `src/app/` and `src/main.cc`.

<!-- deps:begin -->
```text
# part path : may include
part core src/core/ :
part io   src/io/   : core{core/a.h}
part app  src/app/  : core io
part main src/main.cc : app
{extra}
```
<!-- deps:end -->
"""


class CheckIncludesTest(unittest.TestCase):
    def make_tree(self, files, extra=""):
        root = tempfile.mkdtemp(prefix="check_includes_")
        self.addCleanup(shutil.rmtree, root, ignore_errors=True)
        files = dict(files)
        files.setdefault("docs/ARCHITECTURE.md", DOC.replace("{extra}", extra))
        for path, text in files.items():
            full = os.path.join(root, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as f:
                f.write(text)
        return root

    def check(self, root):
        with open(os.path.join(root, "docs/ARCHITECTURE.md"), encoding="utf-8") as f:
            problems, _ = check_includes.check(root, f.read())
        return problems

    def clean_files(self):
        return {
            "src/core/a.h": "#pragma once\n",
            "src/core/b.h": '#include "core/a.h"\n',
            "src/core/version.h.in": "#define V \"@V@\"\n",
            "src/io/x.h": '#include "core/a.h"\n#include <vector>\n',
            "src/io/x.cc": '#include "io/x.h"\n#include "x.h"\n',
            "src/app/y.cc": '#include "io/x.h"\n#include "core/b.h"\n#include "core/version.h"\n',
            "src/main.cc": '#include "app/y.h"\n',
            "src/app/y.h": "#pragma once\n",
        }

    def test_clean_tree_passes(self):
        root = self.make_tree(self.clean_files())
        self.assertEqual(self.check(root), [])
        run = subprocess.run([sys.executable, os.path.join(HERE, "check_includes.py"),
                              "--root", root, "--graph"], capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stdout + run.stderr)
        self.assertIn("app -> core (2), io (1)", run.stdout)

    def test_forbidden_edge_and_cycle(self):
        files = self.clean_files()
        files["src/core/c.h"] = '#include "app/y.h"\n'       # core may include nothing
        files["src/io/z.cc"] = '#include "core/b.h"\n'       # io may include only core/a.h
        root = self.make_tree(files)
        problems = self.check(root)
        self.assertIn('src/core/c.h:1: part core may not include app/y.h (part app)', problems)
        self.assertIn('src/io/z.cc:1: part io may not include core/b.h (part core)', problems)
        self.assertIn("include cycle between parts: app <-> core <-> io", problems)
        run = subprocess.run([sys.executable, os.path.join(HERE, "check_includes.py"),
                              "--root", root], capture_output=True, text=True)
        self.assertEqual(run.returncode, 1)
        self.assertIn("part core may not include app/y.h", run.stdout)

    def test_exception_allows_one_include_and_must_stay_true(self):
        files = self.clean_files()
        files["src/io/z.cc"] = '#include "core/b.h"\n'
        extra = ("except src/io/z.cc -> core/b.h : needs b\n"
                 "except src/io/x.cc -> core/b.h : no longer true\n"
                 "except src/app/y.cc -> io/x.h : a rule allows it already\n")
        problems = self.check(self.make_tree(files, extra))
        self.assertEqual(sorted(problems), sorted([
            "known exception src/app/y.cc -> io/x.h: a rule already allows it; remove the exception",
            "known exception src/io/x.cc -> core/b.h: no such include any more; "
            "remove the exception",
        ]))

    def test_undescribed_part_and_unknown_header(self):
        files = self.clean_files()
        files["src/extra/e.cc"] = '#include "core/a.h"\n'
        files["src/app/w.cc"] = '#include "nowhere/n.h"\n'
        problems = self.check(self.make_tree(files))
        self.assertIn("src/extra/: a folder of src/ that the document does not describe", problems)
        self.assertIn("src/extra/e.cc: belongs to no part the document describes", problems)
        self.assertIn('src/app/w.cc:1: "nowhere/n.h" names no file of src/', problems)

    def test_document_problems(self):
        doc = DOC.replace("{extra}", "part tools src/tools/ : core nonsense\n")
        doc = doc.replace("part core src/core/ :", "part core src/core/ : app")
        files = self.clean_files()
        files["docs/ARCHITECTURE.md"] = doc
        files["src/tools/t.cc"] = "\n"
        problems = self.check(self.make_tree(files))
        self.assertTrue(any("names an unknown part nonsense" in p for p in problems), problems)
        files["docs/ARCHITECTURE.md"] = doc.replace(" nonsense", "")
        problems = self.check(self.make_tree(files))
        self.assertIn("part tools: the document never describes src/tools/", problems)
        self.assertIn("the document allows a cycle between parts: app <-> core <-> io", problems)

    def test_missing_block(self):
        problems = self.check(self.make_tree({"docs/ARCHITECTURE.md": "# nothing\n"}))
        self.assertEqual(len(problems), 1)
        self.assertIn("no block between", problems[0])


if __name__ == "__main__":
    unittest.main()
