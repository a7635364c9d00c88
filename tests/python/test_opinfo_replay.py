#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tests/gen/opinfo_replay.py, the harness of `parity replay` over PyTorch's OpInfo samples:
its counting and threshold decisions on made-up replay documents, and its exit statuses end
to end with a fake `parity` (a script writing the replay document it is told to) on two small
OpInfo entries.

Environment: PYTHONPATH holding the checkout's python/ (parity_dump); torch.
"""
import contextlib
import io
import json
import os
import stat
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gen"))
import opinfo_replay as harness  # noqa: E402


def entry(op, verdict, reason=None):
    """One op entry of a `parity replay --json` document: verdict within, beyond or skip."""
    e = {"seq": 0, "op": op, "name": op, "pass": "forward"}
    if verdict == "skip":
        e.update(replayable=False, reason=reason or "not replayable: op '%s' has no float64 "
                 "replay" % op)
    else:
        e.update(replayable=True, within_bound=verdict == "within",
                 reason=reason or ("" if verdict == "within" else "outside its bound"))
    return e


def doc(*entries):
    return {"format": "parity-replay", "version": 1, "ops": list(entries)}


def tally(*entries):
    t = harness.Tally()
    t.add_replay(doc(*entries))
    return t


class Counting(unittest.TestCase):
    def test_counts_per_op_and_reasons(self):
        t = tally(entry("mm", "within"), entry("mm", "within"), entry("mm", "beyond"),
                  entry("mm", "skip", "not replayable: 0-d"), entry("mm", "skip",
                                                                     "not replayable: 0-d"),
                  entry("add", "skip", "not replayable: x"), entry("clone", "skip"))
        listed, other = t.split()
        self.assertEqual(sorted(listed), ["add", "mm"])
        self.assertEqual(sorted(other), ["clone"])
        mm = listed["mm"]
        self.assertEqual((mm["calls"], mm["within"], mm["beyond"], mm["not_replayable"]),
                         (5, 2, 1, 2))
        self.assertEqual(mm["reasons"]["not replayable: 0-d"], 2)
        self.assertEqual(mm["reasons"]["outside its bound"], 1)
        self.assertEqual(harness.totals(listed), {"calls": 6, "within": 2, "beyond": 1,
                                                  "not_replayable": 3, "replayed": 3})

    def test_listed_forms(self):
        for op in ("add", "add_", "mul_", "div_", "_softmax", "nll_loss2d_forward",
                   "_embedding_bag_forward_only", "native_dropout", "convolution"):
            self.assertTrue(harness.is_listed(op), op)
        for op in ("clone", "copy_", "fill_", "bernoulli_", "zero_", "arange", "rsub",
                   "embedding_renorm_", "_to_copy", "conv2d", "softmax"):
            self.assertFalse(harness.is_listed(op), op)

    def test_several_documents_add_up(self):
        t = harness.Tally()
        t.add_replay(doc(entry("relu", "within")))
        t.add_replay(doc(entry("relu", "beyond"), entry("relu", "within")))
        self.assertEqual(t.ops["relu"]["calls"], 3)
        self.assertEqual(t.ops["relu"]["within"], 2)

    def test_not_a_replay_document(self):
        with self.assertRaises(harness.HarnessError):
            harness.Tally().add_replay({"format": "parity-compare", "ops": []})

    def test_spread(self):
        self.assertEqual(harness._spread(3, 60), [0, 1, 2])
        picked = harness._spread(1440, 60)
        self.assertEqual(len(picked), 60)
        self.assertEqual((picked[0], picked[1], picked[-1]), (0, 24, 1416))


class Thresholds(unittest.TestCase):
    def check(self, *entries, required=()):
        listed, _ = tally(*entries).split()
        return harness.check_thresholds(listed, required)

    def test_all_within(self):
        c = self.check(*[entry("mm", "within")] * 10, entry("clone", "skip"))
        self.assertTrue(c["ok"], c["failures"])
        self.assertEqual(c["failures"], [])

    def test_beyond_at_and_past_one_percent(self):
        ok = self.check(*[entry("mm", "within")] * 99, entry("mm", "beyond"))
        self.assertTrue(ok["ok"], ok["failures"])
        self.assertAlmostEqual(ok["beyond_fraction"], 0.01)
        bad = self.check(*[entry("mm", "within")] * 98, *[entry("mm", "beyond")] * 2)
        self.assertFalse(bad["ok"])
        self.assertEqual(len(bad["failures"]), 1)
        self.assertIn("beyond bound: 2 of 100", bad["failures"][0])

    def test_beyond_counts_replayed_calls_only(self):
        # 1 beyond of 100 replayed, 5 more calls not replayable: 1% of replayed calls.
        c = self.check(*[entry("mm", "within")] * 99, entry("mm", "beyond"),
                       *[entry("mm", "skip")] * 5)
        self.assertTrue(c["ok"], c["failures"])

    def test_not_replayable_at_and_past_five_percent(self):
        ok = self.check(*[entry("add", "within")] * 95, *[entry("add", "skip")] * 5)
        self.assertTrue(ok["ok"], ok["failures"])
        bad = self.check(*[entry("add", "within")] * 94, *[entry("add", "skip")] * 6)
        self.assertFalse(bad["ok"])
        self.assertIn("not replayable: 6 of 100", bad["failures"][0])

    def test_other_ops_excluded(self):
        c = self.check(entry("mm", "within"), *[entry("clone", "skip")] * 50,
                       *[entry("copy_", "beyond")] * 50)
        self.assertTrue(c["ok"], c["failures"])

    def test_every_op_needs_one_within(self):
        c = self.check(*[entry("mm", "within")] * 200, entry("tanh_", "beyond"))
        self.assertFalse(c["ok"])
        self.assertEqual(c["without_within"], ["tanh_"])
        self.assertEqual(c["failures"], ["tanh_: no call replayed within its bound (1 call)"])

    def test_required_op_never_recorded(self):
        c = self.check(entry("mm", "within"), required=["mm", "convolution"])
        self.assertFalse(c["ok"])
        self.assertEqual(c["failures"], ["convolution: no call replayed within its bound "
                                         "(never recorded)"])

    def test_nothing_recorded(self):
        c = self.check(entry("clone", "skip"))
        self.assertFalse(c["ok"])
        self.assertIn("no listed op was recorded", c["failures"])

    def test_markdown_rows(self):
        listed, other = tally(entry("mm", "within"), entry("mm", "skip", "a|b"),
                              entry("clone", "skip")).split()
        table = harness.markdown_table(listed)
        self.assertIn("| `mm` | 2 | 1 | 0 | 1 | a\\|b (1) |", table.splitlines())
        self.assertNotIn("clone", table)


FAKE_PARITY = r'''#!%s
# A stand-in for `parity replay DUMP --json PATH -q`: every record gets the verdict in
# $FAKE_VERDICT (within, beyond, skip; "exit2" exits 2 without a report).
import json, os, sys
mode = os.environ.get("FAKE_VERDICT", "within")
if mode == "exit2":
    sys.stderr.write("parity replay: broken\n")
    sys.exit(2)
dump, out = sys.argv[2], sys.argv[sys.argv.index("--json") + 1]
ops = []
with open(os.path.join(dump, "records.jsonl")) as f:
    for line in f:
        r = json.loads(line)
        e = {"seq": r["seq"], "op": r["op"], "name": r["name"], "pass": r["pass"]}
        if mode == "skip":
            e.update(replayable=False, reason="not replayable: fake")
        else:
            e.update(replayable=True, within_bound=mode == "within", reason="")
        ops.append(e)
with open(out, "w") as f:
    json.dump({"format": "parity-replay", "version": 1, "ops": ops}, f)
sys.exit(1 if mode == "beyond" else 0)
'''


class EndToEnd(unittest.TestCase):
    """main() on `mm` and `add` (one sample each, add_ in place too) with the fake parity."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.parity = os.path.join(cls.tmp.name, "parity")
        with open(cls.parity, "w") as f:
            f.write(FAKE_PARITY % sys.executable)
        os.chmod(cls.parity, os.stat(cls.parity).st_mode | stat.S_IXUSR)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_main(self, verdict, *extra):
        os.environ["FAKE_VERDICT"] = verdict
        out = os.path.join(self.tmp.name, "summary.json")
        md = os.path.join(self.tmp.name, "summary.md")
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            code = harness.main(["--parity", self.parity, "--ops", "mm,add",
                                 "--max-samples", "1", "--json", out, "--markdown", md]
                                + list(extra))
        with open(out) as f:
            summary = json.load(f)
        with open(md) as f:
            markdown = f.read()
        return code, summary, markdown, printed.getvalue()

    def tearDown(self):
        os.environ.pop("FAKE_VERDICT", None)

    def test_all_within(self):
        code, summary, markdown, printed = self.run_main("within")
        self.assertEqual(code, 0, printed)
        self.assertEqual(summary["format"], "parity-opinfo-replay")
        self.assertEqual(sorted(summary["ops"]), ["add", "add_", "mm"])
        self.assertEqual(summary["ops"]["mm"]["calls"], 1)
        self.assertEqual(summary["ops"]["add_"]["within"], 1)
        self.assertEqual([(e["opinfo"], e["samples"]) for e in summary["entries"]],
                         [("mm", 1), ("add", 1)])
        self.assertTrue(summary["thresholds"]["ok"])
        self.assertIn("| `mm` | 1 | 1 | 0 | 0 |  |", markdown)
        self.assertIn("thresholds: all hold", printed)

    def test_beyond_fails_unless_report_only(self):
        code, summary, _, printed = self.run_main("beyond")
        self.assertEqual(code, 1)
        self.assertIn("mm: no call replayed within its bound (1 call)",
                      summary["thresholds"]["failures"])
        self.assertIn("thresholds FAIL", printed)
        code, _, _, _ = self.run_main("beyond", "--report-only")
        self.assertEqual(code, 0)

    def test_not_replayable_fails(self):
        code, summary, markdown, _ = self.run_main("skip")
        self.assertEqual(code, 1)
        self.assertEqual(summary["totals"]["not_replayable"], summary["totals"]["calls"])
        self.assertIn("not replayable: fake (1)", markdown)

    def test_broken_replay_is_a_harness_error(self):
        with self.assertRaises(harness.HarnessError) as ctx:
            self.run_main("exit2", "--report-only")
        self.assertIn("exit 2", str(ctx.exception))

    def test_usage_errors(self):
        with contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(harness.main(["--parity", self.parity, "--ops", "no_such_op"]),
                             harness.EXIT_USAGE)
            with self.assertRaises(SystemExit) as ctx:
                harness.main(["--parity", os.path.join(self.tmp.name, "missing")])
        self.assertEqual(ctx.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
