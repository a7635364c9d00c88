#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity explain` on the planted-cause corpus of tests/gen/gen_explain.py."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import dump_v2  # tests/cli/dump_v2.py

BIN = os.environ["PARITY_BIN"]
DATA = os.environ["PARITY_TESTDATA"]
CORPUS = os.path.join(DATA, "explain")
with open(os.path.join(CORPUS, "expected.json")) as f:
    EXPECTED = json.load(f)

OP_FIELDS = {"seq", "rank", "step", "name", "op", "pass", "call", "cause", "reason", "replayed",
             "local_err_a", "local_err_b", "input_diff", "output_diff", "effective_precision",
             "time_us_a", "time_us_b"}
ORIGIN_FIELDS = {"seq", "rank", "step", "name", "op", "pass", "call", "cause", "effective_precision",
                 "reason"}
CAUSES = {"identical", "within-rounding", "reduced-precision", "rng-divergence", "nonfinite",
          "inherited", "algorithmic", "structural"}


def explain(*args):
    return subprocess.run([BIN, "explain", *args], capture_output=True, text=True, timeout=300)


def case_dirs(case):
    return os.path.join(CORPUS, case, "a"), os.path.join(CORPUS, case, "b")


class PlantedCauses(unittest.TestCase):
    """Every planted cause is found at its op, and nothing else is called an origin."""

    def check(self, case):
        want = EXPECTED[case]
        r = explain(*case_dirs(case), "--json", "-")
        self.assertEqual(r.returncode, want["exit"], r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual((doc["format"], doc["version"]), ("parity-explain", 1))
        self.assertEqual(doc["input_difference"], want["input_difference"])
        found = [[o["name"], o["cause"], o["effective_precision"]] for o in doc["origins"]]
        self.assertEqual(found, want["origins"])
        for o in doc["origins"]:
            self.assertEqual(set(o), ORIGIN_FIELDS)
            self.assertTrue(o["reason"])
        labels = {o["name"]: o["cause"] for o in doc["ops"]}
        self.assertEqual(labels, want["labels"])
        for op in doc["ops"]:
            self.assertEqual(set(op) - {k + "_nonfinite" for k in OP_FIELDS}, OP_FIELDS, op)
            self.assertIn(op["cause"], CAUSES)
            if op["cause"] != "structural":
                self.assertTrue(op["replayed"], op)
                self.assertIsNotNone(op["local_err_a"], op)
        return doc

    def test_identical(self):
        doc = self.check("identical")
        # B's fc1 took 3x as long: the slowest op relative to A.
        slow = doc["slowest_on_b"]
        self.assertEqual(slow[0]["name"], "fc1")
        self.assertAlmostEqual(slow[0]["ratio"], 3.0)
        self.assertEqual(len(slow), 1)

    def test_tf32_matmul(self):
        doc = self.check("tf32-matmul")
        reason = doc["origins"][0]["reason"]
        # To nearest even, in fp16's range, tf32 and fp16 replay alike: the replay is named
        # by its 10 fraction bits, the precision by the manifest (docs/EXPLAIN.md).
        self.assertIn("inputs rounded to 10 fraction bits (ties to even) matches B", reason)
        self.assertNotIn("did not reach", reason)
        self.assertIn("u = 2^-11", reason)
        fc1 = next(o for o in doc["ops"] if o["name"] == "fc1")
        self.assertGreater(fc1["local_err_b"], 1e-4)
        self.assertLess(fc1["local_err_a"], 1e-6)

    def test_tf32_rna_is_found_with_its_rounding(self):
        # Half of fc1's weights are ties: to nearest even they round otherwise at every output.
        reason = self.check("tf32-rna")["origins"][0]["reason"]
        self.assertIn("a replay with tf32-rounded inputs (ties away from zero) matches B", reason)
        self.assertIn("linear ran in tf32 (ties away from zero)", reason)
        self.assertNotIn("ties to even", reason)

    def test_tf32_trunc_is_found_with_its_rounding(self):
        reason = self.check("tf32-trunc")["origins"][0]["reason"]
        self.assertIn("a replay with tf32-truncated inputs (toward zero) matches B", reason)
        self.assertIn("linear ran in tf32 (toward zero)", reason)

    def test_tf32_all_matmuls_even_with_differing_inputs(self):
        doc = self.check("tf32-all")
        for o in doc["origins"][1:]:
            self.assertIn("its inputs also differ", o["reason"])

    def test_dropout_rate_is_not_rng(self):
        self.assertIn("is not p = 0.1", self.check("dropout-rate")["origins"][0]["reason"])

    def test_bf16_compute(self):
        reason = self.check("bf16-compute")["origins"][0]["reason"]
        self.assertIn("bf16-rounded inputs and output", reason)
        self.assertIn("u = 2^-8", reason)

    def test_fp16_softmax(self):
        self.assertIn("fp16-rounded inputs and output",
                      self.check("fp16-softmax")["origins"][0]["reason"])

    def test_dropout_seed(self):
        self.assertIn("agree with p = 0.1", self.check("dropout-seed")["origins"][0]["reason"])

    def test_summation_order_is_within_rounding(self):
        self.check("summation-order")

    def test_nan(self):
        self.assertIn("first appears here on B", self.check("nan")["origins"][0]["reason"])

    def test_early_error_is_inherited_downstream(self):
        self.assertIn("no tf32, bf16 or fp16 replay reproduces it",
                      self.check("early-error")["origins"][0]["reason"])

    def test_gelu_tanh(self):
        self.check("gelu-tanh")

    def test_conv_algorithm_is_within_rounding(self):
        self.check("conv-algorithm")

    def test_input_data(self):
        doc = self.check("input-data")
        self.assertIn("seq 0 'conv'", doc["input_difference_detail"])

    def test_missing_record(self):
        self.check("missing-record")

    def test_shape_mismatch(self):
        self.check("shape")

    def test_every_case_is_tested(self):
        tested = {name[len("test_"):].replace("_", "-") for name in dir(self)
                  if name.startswith("test_")}
        for case in EXPECTED:
            self.assertTrue(any(t.startswith(case) for t in tested), case)


class Manifests(unittest.TestCase):
    """The reason says what the candidate's manifest set. gen_compare's fc1 ran on operands
    rounded to tf32 to nearest even, all inside fp16's normal range, on a manifest of compute
    capability 8.0 without autocast: fp16 and tf32 replay alike there and the device has TF32,
    so both are named, and the setting is reported as a fact, never blamed ("did not reach the
    library" is said only where tf32 is established)."""

    def dumps(self, name):
        with open(os.path.join(DATA, "compare", "expected.json")) as f:
            return next((d["a"], d["b"]) for d in json.load(f)["dumps"] if d["b"].endswith(name))

    def origin(self, name):
        r = explain(*self.dumps(name), "--json", "-")
        self.assertEqual(r.returncode, 1, r.stderr)
        origins = json.loads(r.stdout)["origins"]
        self.assertEqual(origins[0]["effective_precision"], "fp16|tf32", origins[0]["reason"])
        reason = origins[0]["reason"]
        self.assertIn("ran in fp16 or tf32: 10 fraction bits", reason)
        self.assertNotIn("did not reach", reason)
        return reason

    def test_tf32_unannounced(self):
        self.assertIn("B's manifest has allow_tf32_matmul = false", self.origin("tf32_unannounced"))

    def test_tf32_allowed(self):
        self.assertIn("B's manifest has allow_tf32_matmul = true", self.origin("tf32_allowed"))


class Output(unittest.TestCase):
    def test_text_report_lists_origins_first(self):
        r = explain(*case_dirs("bf16-compute"))
        self.assertEqual(r.returncode, 1, r.stderr)
        out = r.stdout
        self.assertLess(out.index("Origins (1)"), out.index("Per op:"))
        self.assertIn("seq 5 fc2 (linear): reduced-precision [bf16]", out)
        self.assertIn("1 origin", out)

    def test_no_origin_text(self):
        r = explain(*case_dirs("summation-order"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("No origin", r.stdout)

    def test_name_filter(self):
        r = explain(*case_dirs("tf32-matmul"), "--name", "fc*", "--json", "-")
        self.assertEqual(r.returncode, 1, r.stderr)
        names = [o["name"] for o in json.loads(r.stdout)["ops"]]
        self.assertEqual(names, ["fc1", "fc2"])

    def test_json_file_and_quiet(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "e.json")
            r = explain(*case_dirs("nan"), "--json", out, "--quiet")
            self.assertEqual((r.returncode, r.stdout), (1, ""))
            with open(out) as f:
                self.assertEqual(json.load(f)["origins"][0]["cause"], "nonfinite")


class BadInput(unittest.TestCase):
    def assert_error(self, r, *words):
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertTrue(r.stderr.startswith("parity: error:"), r.stderr)
        for w in words:
            self.assertIn(w, r.stderr)

    def test_missing_dump(self):
        a, _ = case_dirs("identical")
        self.assert_error(explain(a, "/nonexistent/dump"), "/nonexistent/dump")

    def test_usage(self):
        self.assert_error(explain(case_dirs("identical")[0]))
        self.assert_error(explain(*case_dirs("identical"), "--slowest", "-1"))

    def test_malformed_record(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = os.path.join(tmp, "b")
            shutil.copytree(case_dirs("identical")[1], b)
            with open(os.path.join(b, "records.jsonl"), "a") as f:
                f.write('{"seq": 99, "name": 5}\n{"seq": 100}\n')
            self.assert_error(explain(case_dirs("identical")[0], b), "records.jsonl")

    def test_truncated_tensor(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = os.path.join(tmp, "b")
            shutil.copytree(case_dirs("identical")[1], b)
            victim = os.path.join(b, "tensors", "0002_weight.npy")
            with open(victim, "r+b") as f:
                f.truncate(200)
            self.assert_error(explain(case_dirs("identical")[0], b), "0002_weight.npy")

    def test_no_matching_name(self):
        self.assert_error(explain(*case_dirs("identical"), "--name", "nothing*"), "--name")


def inspect(*args):
    return subprocess.run([BIN, "inspect", *args], capture_output=True, text=True, timeout=60)


GENERATORS = [{"cpu": "aa", "cuda:0": "c0"}, {"cpu": "bb", "cuda:0": "c1"}]
SCALER = [{"scale": 65536.0, "skipped": False}, {"scale": 65536.0, "skipped": False}]


class Version2(unittest.TestCase):
    """Dumps of format version 2 written here with numpy: two steps of the same calls."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.a = dump_v2.write_dump(os.path.join(cls.tmp.name, "a"), generators=GENERATORS,
                                   scaler=SCALER, omitted={"view": 3, "t": 1})
        # B: step 1's relu sees other inputs, its cpu generator and its scaler differ there,
        # and its records of step 1 come first.
        cls.b = dump_v2.write_dump(
            os.path.join(cls.tmp.name, "b"), step1_x=dump_v2.X * 1.5, reverse=True,
            generators=[GENERATORS[0], dict(GENERATORS[1], cpu="XX")],
            scaler=[SCALER[0], {"scale": 32768.0, "skipped": True}])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_format_versions_are_compared_with_a_warning(self):
        # A version 1 dump (the planted corpus) against the same records in a version 2
        # manifest at the modules level: matched field by field, every op identical, warned.
        a, _ = case_dirs("identical")
        v2 = os.path.join(self.tmp.name, "identical_v2")
        shutil.copytree(a, v2)
        with open(os.path.join(v2, "manifest.json")) as f:
            manifest = json.load(f)
        manifest.update(version=2, level="modules")
        with open(os.path.join(v2, "manifest.json"), "w") as f:
            json.dump(manifest, f)
        r = explain(a, v2, "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual({o["cause"] for o in doc["ops"]}, {"identical"})
        self.assertTrue(any("format version 1 (modules level), B version 2" in w
                            for w in doc["warnings"]), doc["warnings"])

    def test_random_fills_are_judged_by_their_distribution(self):
        """aten's bernoulli_ (dropout's mask): draws with p = 0.9 from two seeds are
        rng-divergence; a draw with p = 0.5 against one with 0.9 is algorithmic."""
        def dump(name, p, seed):
            root = os.path.join(self.tmp.name, name)
            os.makedirs(os.path.join(root, "tensors"))
            mask = (np.random.default_rng(seed).random(4096) < p).astype(np.float32)
            np.save(os.path.join(root, "tensors", "mask.npy"), mask)
            record = {"step": 0, "rank": 0, "name": "enc.drop.bernoulli_", "module": "enc.drop",
                      "op": "bernoulli_", "overload": "float", "pass": "forward", "call": 0,
                      "attrs": {"p": 0.9}, "inputs": [], "params": {},
                      "outputs": [{"file": "tensors/mask.npy", "dtype": "float32",
                                   "shape": [4096]}]}
            return dump_v2.write_dump(root, extra_records=[record])

        a, b, wrong = dump("rng_a", 0.9, 1), dump("rng_b", 0.9, 2), dump("rng_wrong", 0.5, 3)
        for other, cause in ((b, "rng-divergence"), (wrong, "algorithmic")):
            r = explain(a, other, "--json", "-")
            self.assertIn(r.returncode, (0, 1), r.stderr)
            op = next(o for o in json.loads(r.stdout)["ops"] if o["op"] == "bernoulli_")
            self.assertEqual(op["cause"], cause, op["reason"])

    def test_statistics_digests(self):
        """Statistics-only records: equal statistics with different digests are not
        identical when both manifests name the same hash algorithm; digests of dumps that
        do not say their algorithm, or name different ones, are not compared."""
        def cause(name, hash_a, hash_b):
            a = dump_v2.write_dump(os.path.join(self.tmp.name, name + "_a"),
                                   hash_algorithm=hash_a)
            b = dump_v2.write_dump(os.path.join(self.tmp.name, name + "_b"),
                                   hash_algorithm=hash_b, addmm_out_hash="cd")
            r = explain(a, b, "--json", "-")
            self.assertIn(r.returncode, (0, 1), r.stderr)
            op = next(o for o in json.loads(r.stdout)["ops"] if o["op"] == "addmm")
            return op["cause"], op["reason"]

        got, reason = cause("same", "xxh3_128", "xxh3_128")
        self.assertEqual(got, "within-rounding", reason)
        self.assertIn("digests differ", reason)
        self.assertEqual(cause("unnamed", None, None)[0], "identical")
        self.assertEqual(cause("mixed", "xxh3_128", "sha256")[0], "identical")

    def test_manifest_hash_of_the_wrong_type(self):
        bad = dump_v2.write_dump(os.path.join(self.tmp.name, "bad_hash"), hash_algorithm=5)
        r = explain(self.a, bad)
        self.assertEqual(r.returncode, 2)
        self.assertIn("parity: error:", r.stderr)
        self.assertIn("manifest.json", r.stderr)
        self.assertIn("'hash'", r.stderr)

    def test_ops_are_matched_by_step(self):
        r = explain(self.a, self.b, "--json", "-")
        # Step 1's relu sees another input while every op before it was bitwise equal: data no
        # recorded op computed (a batch) differ.
        self.assertEqual(r.returncode, 1, r.stderr)
        doc = json.loads(r.stdout)
        causes = {(o["step"], o["name"]): o["cause"] for o in doc["ops"]}
        self.assertEqual(len(doc["ops"]), 4)
        self.assertEqual(causes[(0, "enc.relu")], "identical")
        self.assertEqual(causes[(1, "enc.relu")], "inherited")
        self.assertTrue(doc["input_difference"])
        self.assertEqual(doc["origins"], [])
        relu1 = next(o for o in doc["ops"] if (o["step"], o["name"]) == (1, "enc.relu"))
        self.assertGreater(relu1["input_diff"], 0.1)
        self.assertIn("input data differ", relu1["reason"])

    def test_evidence_and_coverage(self):
        doc = json.loads(explain(self.a, self.b, "--json", "-").stdout)
        ev = doc["evidence"]
        self.assertEqual(ev["generators_first_differ"],
                         {"step": 1, "generators": ["cpu"], "ranks": [0]})
        self.assertEqual(ev["scaler"]["a"], [65536.0, 65536.0])
        self.assertEqual(ev["scaler"]["b"], [65536.0, 32768.0])
        self.assertEqual((ev["scaler"]["skipped_a"], ev["scaler"]["skipped_b"]), ([], [1]))
        self.assertTrue(ev["scaler"]["differ"])
        self.assertEqual(ev["scaler"]["first_differ_step"], 1)
        cov = doc["coverage"]["a"]
        self.assertEqual((cov["replayable"], cov["compared_only"]), (2, 2))
        self.assertEqual(cov["omitted"], {"t": 1, "view": 3})
        self.assertEqual(doc["coverage"]["b"]["omitted"], {})
        # Against itself: nothing differs.
        ev = json.loads(explain(self.a, self.a, "--json", "-").stdout)["evidence"]
        self.assertIsNone(ev["generators_first_differ"])
        self.assertEqual(ev["generator_steps_compared"], 2)
        self.assertFalse(ev["scaler"]["differ"])

    def test_text_header(self):
        r = explain(self.a, self.b)
        self.assertEqual(r.returncode, 1, r.stderr)  # step 1's input data differ
        self.assertIn("generators: first differ at step 1 (cpu)", r.stdout)
        self.assertIn("scaler: first differs at step 1", r.stdout)
        self.assertIn("skipped steps A none, B 1", r.stdout)
        self.assertIn("A: 4 records of 2 ops (2 replayable, 2 compared only), steps 0-1", r.stdout)
        self.assertIn("4 omitted (t 1, view 3)", r.stdout)
        self.assertRegex(r.stdout, r"step +seq +name")

    def test_inspect_coverage(self):
        r = inspect(self.a, "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(len(doc["files"]), 4)  # the tensor files, listed as before
        self.assertEqual(doc["files"][0]["format"], "npy")
        cov = doc["coverage"]
        self.assertEqual(cov, doc["dumps"][0]["coverage"])
        self.assertEqual(cov["ops"]["relu"],
                         {"records": 2, "replayable": True, "passes": {"forward": 2}})
        # addmm has a replay, but its records hold statistics only: compared only.
        self.assertEqual(cov["ops"]["addmm"]["replayable"], True)
        self.assertEqual((cov["records"], cov["replayable"], cov["compared_only"]), (4, 2, 2))
        self.assertEqual(cov["omitted"], {"t": 1, "view": 3})
        self.assertEqual((cov["steps"], cov["ranks"]), ([0, 1], [0]))
        self.assertEqual((cov["version"], cov["level"]), (2, "aten"))
        r = inspect(self.a)
        self.assertIn("coverage (version 2, level aten, mode tensors)", r.stdout)

    def test_rank_directories(self):
        with tempfile.TemporaryDirectory() as tmp:
            for rank in (0, 1):
                dump_v2.write_dump(os.path.join(tmp, "rank%d" % rank), rank=rank,
                                   omitted={"view": 1})
            cov = json.loads(inspect(tmp, "--json", "-").stdout)["coverage"]
            self.assertEqual((cov["ranks"], cov["records"]), ([0, 1], 8))
            self.assertEqual(cov["omitted"], {"view": 2})
            r = explain(tmp, tmp, "--json", "-")
            self.assertEqual(r.returncode, 0, r.stderr)
            ranks = sorted({o["rank"] for o in json.loads(r.stdout)["ops"]})
            self.assertEqual(ranks, [0, 1])

    def test_bad_input_is_exit_2_naming_file_and_line(self):
        ok = {"seq": 0, "name": "x", "op": "addmm", "pass": "forward", "call": 0, "inputs": [],
              "outputs": [{"dtype": "float32", "shape": [1], "stats": {"mean": 0.0}}]}
        v1 = {"format": "parity-dump", "version": 1}
        v2 = {"format": "parity-dump", "version": 2}
        cases = [
            ("version3", dict(v2, version=3), [ok],
             "manifest.json: format version 3 is newer than this parity reads (1 and 2)"),
            ("version_string", dict(v2, version="2"), [ok],
             "manifest.json: 'version' is \"2\", not an integer"),
            ("optimizer_v1", v1, [ok, dict(ok, seq=1, name="o", **{"pass": "optimizer"})],
             "records.jsonl:2: 'pass' is 'optimizer', which needs format version 2"),
            ("unknown_pass", v2, [dict(ok, **{"pass": "sideways"})],
             "records.jsonl:1: 'pass' is 'sideways'"),
            ("negative_step", v2, [dict(ok, step=-1)], "records.jsonl:1: 'step' is -1"),
            ("string_step", v2, [dict(ok, step="1")], "records.jsonl:1: 'step' is not an integer"),
            ("duplicate", v2, [ok, dict(ok, seq=1, name="y"), dict(ok, seq=2)],
             "records.jsonl:3: duplicate record (rank 0, step 0, name x, pass forward, call 0), "
             "first at line 1"),
            ("rank_dir/rank1", dict(v2, rank=1), [dict(ok, rank=0)],
             "records.jsonl:1: 'rank' is 0, but the record lies in rank1/"),
        ]
        with tempfile.TemporaryDirectory() as tmp:
            for name, manifest, records, error in cases:
                root = os.path.join(tmp, name)
                os.makedirs(root)
                with open(os.path.join(root, "manifest.json"), "w") as f:
                    json.dump(manifest, f)
                with open(os.path.join(root, "records.jsonl"), "w") as f:
                    f.writelines(json.dumps(r) + "\n" for r in records)
                dump = os.path.dirname(root) if name.startswith("rank_dir/") else root
                for r in (explain(self.a, dump), inspect(dump)):
                    self.assertEqual(r.returncode, 2, name + r.stdout + r.stderr)
                    self.assertTrue(r.stderr.startswith("parity: error: "), r.stderr)
                    # The file's path: DUMP/manifest.json, or DUMP/rank1/records.jsonl.
                    self.assertIn(os.path.join(root, error), r.stderr)


if __name__ == "__main__":
    unittest.main()
