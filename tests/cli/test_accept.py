#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity accept`: two bundles collected on this CPU with the reference
plan's configurations (reference: each op in float64, one thread; optimised: float32, every
core), judged; report.json's contract, junit.xml read by Python's XML parser, the results
store, --strict, --sign with `parity verify`, bad input (exit 2), and report.html opened in
headless Chromium (report_html_check.py), which fails on any console error or chart not drawn.

Environment (set by CTest): PARITY_BIN.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

from sanitized import EXTERNAL_SKIP  # tests/cli/sanitized.py

BIN = os.environ["PARITY_BIN"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODEL = os.path.join(ROOT, "examples", "plan", "model.py")

PLAN = """plan: accept-test
vars: {config: reference, threads: 1}
stages:
  - kind: env
  - kind: monitor
    interval: 0.5
  - name: bench
    kind: bench
    suites: [stream]
    dtypes: [float64]
    n: 200000
    reps: 5
    threads: "{var.threads}"
  - name: dump
    kind: dump
    command: [%(py)s, %(model)s, dump, "{out}", "--config={var.config}", "--threads={var.threads}"]
  - name: quality
    kind: quality
    command: [%(py)s, %(model)s, score, "{out}", "--config={var.config}", "--threads={var.threads}"]
    labels: labels.npy
    scores: [scores.npy]
  - name: burn
    kind: stress
    level: 3
    workload: gemm-burn
    duration: 60
""" % {"py": json.dumps(sys.executable), "model": json.dumps(MODEL)}


def run(*args, timeout=300):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


class Accept(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        plan = os.path.join(cls.dir, "plan.yaml")
        with open(plan, "w") as f:
            f.write(PLAN)
        # Throughput is measured, so its verdict is not a test's business: any ratio passes,
        # except in the test that raises the bar.
        cls.criteria = os.path.join(cls.dir, "any-speed.yaml")
        with open(cls.criteria, "w") as f:
            f.write("throughput:\n  min_ratio: 0\n")
        cls.base = os.path.join(cls.dir, "base")
        cls.cand = os.path.join(cls.dir, "cand")
        for bundle, args in ((cls.base, []),
                             (cls.cand, ["--var", "config=optimised", "--var", "threads=0"])):
            r = run("collect", plan, "-o", bundle, "--no-store", "-q", *args)
            if r.returncode != 0:
                raise AssertionError("collect %s: exit %d\n%s%s" % (bundle, r.returncode,
                                                                   r.stdout, r.stderr))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def accept(self, out, *args):
        if "--criteria" not in args:
            args = ("--criteria", self.criteria) + args
        return run("accept", self.base, self.cand, "-o", out, "--no-store", *args)

    def out(self, name):
        return os.path.join(self.dir, name)

    def test_the_optimised_candidate_is_accepted(self):
        out = self.out("report")
        r = self.accept(out, "--json", self.out("stdout.json"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("verdict: PASS", r.stdout)
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        with open(self.out("stdout.json")) as f:
            self.assertEqual(json.load(f)["criteria"], report["criteria"])
        self.assertEqual((report["format"], report["version"], report["verdict"]),
                         ("parity-report", 1, "pass"))
        by_id = {c["id"]: c for c in report["criteria"]}
        for c in report["criteria"]:
            self.assertIn(c["status"], ("pass", "fail", "skip", "error"))
            self.assertTrue(c["reason"])
        self.assertEqual(by_id["numerics.dump"]["status"], "pass")
        self.assertEqual(by_id["quality.quality"]["status"], "pass")
        self.assertEqual(by_id["quality.quality"]["evidence"]["metric"], "auc")
        self.assertEqual(by_id["throughput.bench.stream"]["status"], "pass")
        # The stress stage runs from level 3: skipped, with the reason, never a pass.
        self.assertEqual(by_id["stability.burn.sdc"]["status"], "skip")
        self.assertIn("runs from level 3", by_id["stability.burn.sdc"]["reason"])
        counts = {s: sum(c["status"] == s for c in report["criteria"])
                  for s in ("pass", "fail", "skip", "error")}
        self.assertEqual(report["summary"], counts)
        self.assertEqual(report["baseline"]["vars"], {"config": "reference", "threads": "1"})
        diff = {d["key"]: d for d in report["environment_diff"]}
        self.assertTrue(diff["plan.vars.config"]["relevant"])
        self.assertEqual(diff["plan.vars.config"]["candidate"], "optimised")
        # The first rows are the relevant ones.
        flags = [d["relevant"] for d in report["environment_diff"]]
        self.assertEqual(flags, sorted(flags, reverse=True))
        self.assertGreater(report["telemetry"]["candidate"]["samples"], 0)

        suites = ET.parse(os.path.join(out, "junit.xml")).getroot()
        self.assertEqual(suites.tag, "testsuites")
        self.assertEqual(int(suites.get("tests")), len(report["criteria"]))
        self.assertEqual(int(suites.get("skipped")), counts["skip"])
        self.assertEqual(int(suites.get("failures")), 0)
        names = [case.get("name") for case in suites.iter("testcase")]
        self.assertEqual(names, [c["id"] for c in report["criteria"]])

    def test_strict_fails_on_the_skips(self):
        r = self.accept(self.out("strict"), "--strict")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        with open(os.path.join(self.out("strict"), "report.json")) as f:
            report = json.load(f)
        self.assertEqual(report["verdict"], "fail")
        self.assertTrue(report["strict"])

    def test_thresholds_from_a_criteria_file(self):
        criteria = self.out("criteria.yaml")
        with open(criteria, "w") as f:
            f.write("throughput:\n  min_ratio: 1000\n")
        r = self.accept(self.out("strict-throughput"), "--criteria", criteria)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"FAIL +throughput\.bench\.stream .*below 1000")

    def test_a_corrupt_candidate_file_is_an_error_and_the_report_is_written(self):
        cand = self.out("cand-corrupt")
        shutil.copytree(self.cand, cand)
        with open(os.path.join(cand, "stages", "bench", "bench.json"), "w") as f:
            f.write("{not json")
        out = self.out("corrupt")
        r = run("accept", self.base, cand, "-o", out, "--no-store", "--criteria", self.criteria)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        with open(os.path.join(out, "report.json")) as f:
            by_id = {c["id"]: c for c in json.load(f)["criteria"]}
        self.assertEqual(by_id["throughput.bench"]["status"], "error")
        self.assertIn(os.path.join(cand, "stages/bench/bench.json"),
                      by_id["throughput.bench"]["reason"])

    def test_signed_report_verifies_until_a_byte_changes(self):
        key = self.out("key")
        self.assertEqual(run("keygen", "-o", key).returncode, 0)
        out = self.out("signed")
        r = self.accept(out, "--sign", key)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(os.path.exists(os.path.join(out, "report.sig")))
        v = run("verify", out, "--pubkey", key + ".pub")
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
        path = os.path.join(out, "report.json")
        with open(path, "rb") as f:
            data = bytearray(f.read())
        data[len(data) // 2] ^= 0x01
        with open(path, "wb") as f:
            f.write(data)
        v = run("verify", out, "--pubkey", key + ".pub")
        self.assertEqual(v.returncode, 1, v.stdout + v.stderr)
        self.assertIn("CHANGED  report.json", v.stdout)
        # Accepting again into the same directory replaces the report and drops the stale
        # signature, which would not cover the new files.
        r = self.accept(out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "report.sig")))

    def test_the_accept_is_recorded_in_the_store(self):
        db = self.out("parity.db")
        r = run("accept", self.base, self.cand, "-o", self.out("stored"), "--db", db,
                "--criteria", self.criteria)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        h = run("history", "--db", db, "--kind", "accept", "--json", "-", "-q")
        self.assertEqual(h.returncode, 0, h.stderr)
        runs = json.loads(h.stdout)["runs"]
        self.assertEqual(len(runs), 1)
        self.assertEqual((runs[0]["kind"], runs[0]["status"]), ("accept", "passed"))
        self.assertIn("throughput.bench.stream", [s["name"] for s in runs[0]["stages"]])

    def test_bad_input_is_exit_2_naming_the_file(self):
        criteria = self.out("bad-criteria.yaml")
        with open(criteria, "w") as f:
            f.write("quality:\n  margn: 0.01\n")
        r = self.accept(self.out("bad1"), "--criteria", criteria)
        self.assertEqual(r.returncode, 2)
        self.assertIn("parity: error: %s: line 2: unknown key 'margn' in 'quality' (did you "
                      "mean 'margin'?)" % criteria, r.stderr)
        r = run("accept", self.out("nowhere"), self.cand, "-o", self.out("bad2"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("parity: error: %s: no such directory" % self.out("nowhere"), r.stderr)
        occupied = self.out("occupied")
        os.makedirs(occupied)
        with open(os.path.join(occupied, "notes.txt"), "w") as f:
            f.write("mine")
        r = self.accept(occupied)
        self.assertEqual(r.returncode, 2)
        self.assertIn("holds 'notes.txt'", r.stderr)
        r = self.accept(self.out("bad3"), "--sign", self.out("no-key"))
        self.assertEqual(r.returncode, 2)
        self.assertIn(self.out("no-key"), r.stderr)

    @EXTERNAL_SKIP
    def test_report_html_draws_every_chart_in_chromium(self):
        out = self.out("html")
        r = self.accept(out)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        check = subprocess.run(
            [sys.executable, os.path.join(HERE, "report_html_check.py"),
             os.path.join(out, "report.html"), "--timeout", "90"],
            capture_output=True, text=True, timeout=180)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        summary = json.loads(check.stdout)
        self.assertEqual(summary["errors"], [])
        self.assertGreater(summary["charts"], 3)
        self.assertEqual(summary["drawn"], summary["charts"])

    def test_the_html_check_fails_on_a_broken_page(self):
        # The checker itself must be able to fail: a page whose script throws.
        out = self.out("html-broken")
        self.assertEqual(self.accept(out).returncode, 0)
        path = os.path.join(out, "report.html")
        with open(path) as f:
            page = f.read()
        marker = '<script id="parity-report-data" type="application/json">'
        at = page.rindex(marker) + len(marker)
        with open(path, "w") as f:
            f.write(page[:at] + "{" + page[at:])  # the data no longer parses
        check = subprocess.run(
            [sys.executable, os.path.join(HERE, "report_html_check.py"), path, "--timeout", "60"],
            capture_output=True, text=True, timeout=180)
        self.assertEqual(check.returncode, 1, check.stdout + check.stderr)


if __name__ == "__main__":
    unittest.main()
