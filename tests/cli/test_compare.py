#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity compare` (data: tests/gen/gen_compare.py)."""
import csv
import io
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np

import dump_v2  # tests/cli/dump_v2.py

BIN = os.environ["PARITY_BIN"]
DATA = os.path.join(os.environ["PARITY_TESTDATA"], "compare")
with open(os.path.join(DATA, "expected.json")) as f:
    EXPECTED = json.load(f)

DESIGN_FIELDS = ["count", "max_abs", "mean_abs", "rmse", "max_rel", "mean_rel", "cosine",
                 "max_ulp", "mean_ulp", "ulp_histogram", "frac_rel_le_1e-3", "frac_rel_le_5e-3",
                 "nan_mismatch", "inf_mismatch", "identical", "worst", "tolerance", "verdict",
                 "reason"]


def run(*args, timeout=120):
    return subprocess.run([BIN, "compare", *args], capture_output=True, text=True,
                          timeout=timeout)


def compare_json(*args, expect=None):
    r = run("--json", "-", *args)
    if expect is not None:
        assert r.returncode == expect, (r.returncode, r.stderr)
    return r, json.loads(r.stdout)


def number(tensor, key):
    """A JSON metric: null with a _nonfinite flag stands for NaN/Inf."""
    v = tensor[key]
    if v is None:
        return {"nan": float("nan"), "inf": float("inf"), "-inf": float("-inf")}[
            tensor[key + "_nonfinite"]]
    return v


class Verdicts(unittest.TestCase):
    def test_identical_files_pass_and_differences_fail(self):
        m = os.path.join(DATA, "matmul")
        self.assertEqual(run(os.path.join(m, "k256_exact.npy"),
                             os.path.join(m, "k256_exact.npy")).returncode, 0)
        r = run("--k", "256", os.path.join(m, "k256_exact.npy"), os.path.join(m, "k256_tf32.npy"))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn("FAIL", r.stdout)
        self.assertIn("|a-b| / allowed", r.stdout)  # the histogram of a failing tensor
        self.assertIn("Summary: 1 tensor, 0 passed, 1 failed", r.stdout)

    def test_auto_bound_across_k(self):
        for case in EXPECTED["matmul"]:
            k = str(case["k"])
            p = os.path.join(DATA, "matmul", "k%s_" % k)
            self.assertEqual(run("--k", k, p + "naive.npy", p + "pairwise.npy").returncode, 0, k)
            self.assertEqual(run("--k", k, p + "exact.npy", p + "tf32.npy").returncode, 1, k)
            self.assertEqual(run("--k", k, "--compute", "tf32", p + "exact.npy",
                                 p + "tf32.npy").returncode, 0, k)

    def test_golden_three_way(self):
        p = os.path.join(DATA, "matmul", "k4096_")
        r, doc = compare_json("--golden", p + "exact.npy", p + "naive.npy", p + "pairwise.npy",
                              expect=0)
        t = doc["tensors"][0]
        self.assertIn("golden", t)
        self.assertLessEqual(t["golden"]["err_b"]["rmse"], 2 * t["golden"]["err_a"]["rmse"])
        r, doc = compare_json("--golden", p + "exact.npy", p + "naive.npy", p + "tf32.npy",
                              expect=1)
        self.assertIn("against the golden", doc["tensors"][0]["reason"])
        # A looser ratio lets the worse candidate through.
        r, doc = compare_json("--golden", p + "exact.npy", "--ratio", "1e6", p + "naive.npy",
                              p + "tf32.npy", expect=0)


class Json(unittest.TestCase):
    def test_every_design_field_and_numpy_values(self):
        for case in EXPECTED["metrics"]:
            a = os.path.join(DATA, "metrics", case["a"])
            b = os.path.join(DATA, "metrics", case["b"])
            r, doc = compare_json(a, b, expect=1)
            self.assertEqual(doc["format"], "parity-compare")
            self.assertEqual(doc["version"], 1)
            self.assertEqual(set(doc["summary"]), {"tensors", "passed", "failed", "structural",
                                                   "not_compared", "first_divergence"})
            self.assertEqual(doc["summary"]["not_compared"], 0)
            (t,) = doc["tensors"]
            for field in DESIGN_FIELDS:
                self.assertIn(field, t, "%s: %s" % (case["dtype"], field))
            e = case["metrics"]
            for key in ("max_abs", "mean_abs", "rmse", "max_rel", "mean_rel", "cosine",
                        "max_ulp", "mean_ulp"):
                want = e[key]
                got = number(t, key)
                if isinstance(want, str):
                    self.assertTrue(np.isnan(got) if want == "nan" else np.isinf(got), key)
                else:
                    self.assertAlmostEqual(got, want, delta=1e-12 * max(1.0, abs(want)),
                                           msg="%s %s" % (case["dtype"], key))
            self.assertEqual(t["ulp_histogram"]["counts"], e["ulp_histogram"])
            self.assertEqual(t["nan_mismatch"], e["nan_mismatch"])
            self.assertEqual(t["inf_mismatch"], e["inf_mismatch"])
            self.assertAlmostEqual(t["identical"], e["identical"], delta=1e-12)
            # The worst elements come first, NaN/Inf mismatches before finite errors.
            self.assertGreater(len(t["worst"]), 0)
            self.assertIsNone(t["worst"][0]["abs_error"])
            self.assertEqual(t["worst"][0]["abs_error_nonfinite"], "inf")
            self.assertEqual(t["tolerance"]["policy"], "torch")

    def test_csv(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.csv")
            a = os.path.join(DATA, "metrics", "float32_a.npy")
            r = run("--quiet", "--csv", out, a, a)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "")
            with open(out) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(len(rows), 1)
            self.assertEqual(rows[0]["verdict"], "pass")
            self.assertEqual(rows[0]["max_abs"], "0")
            self.assertEqual(rows[0]["shape"], "[4000]")


class Dumps(unittest.TestCase):
    def test_first_divergence_and_structural(self):
        for case in EXPECTED["dumps"]:
            r, doc = compare_json(case["a"], case["b"])
            self.assertIn(r.returncode, (0, 1), r.stderr)
            self.assertEqual(doc["kind"], "dumps")
            if "first_divergence" in case:
                self.assertEqual(doc["summary"]["first_divergence"], case["first_divergence"])
            names = {t["name"]: t for t in doc["tensors"]}
            for name in case.get("structural", []):
                self.assertTrue(names[name]["structural"], name)
            self.assertEqual(r.returncode, 0 if doc["summary"]["failed"] == 0 else 1)

    def test_human_report_names_the_first_divergence(self):
        case = EXPECTED["dumps"][1]
        r = run(case["a"], case["b"])
        self.assertEqual(r.returncode, 1)
        self.assertIn("First divergence in execution order: fc1.forward.0.output.0", r.stdout)

    def test_only_and_tol_file(self):
        case = EXPECTED["dumps"][1]  # fc1 ran in tf32 without saying so
        r, doc = compare_json("--only", "fc1.*", case["a"], case["b"], expect=1)
        self.assertTrue(all(t["name"].startswith("fc1.") for t in doc["tensors"]))
        # --only first on the line, and repeated: one glob each, A and B still positional.
        r = subprocess.run([BIN, "compare", "--only", "fc1.*", "--only", "act.*", case["a"],
                            case["b"], "--json", "-"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stderr)
        prefixes = {t["name"].split(".")[0] for t in json.loads(r.stdout)["tensors"]}
        self.assertEqual(prefixes, {"fc1", "act"})
        with tempfile.TemporaryDirectory() as tmp:
            rules = os.path.join(tmp, "rules.yaml")
            with open(rules, "w") as f:
                f.write("- match: 'fc1.*.output.*'\n  rtol: 0.01\n  atol: 0.01\n")
            r, doc = compare_json("--only", "fc1.*", "--tol-file", rules, case["a"], case["b"],
                                  expect=0)
            out = [t for t in doc["tensors"] if t["name"] == "fc1.forward.0.output.0"][0]
            self.assertEqual(out["tolerance"]["policy"], "file")
            with open(rules, "w") as f:
                f.write("- match: x\n  rtol: 0.01\n  wobble: 3\n")
            r = run("--tol-file", rules, case["a"], case["b"])
            self.assertEqual(r.returncode, 2)
            self.assertIn("rules.yaml: line 3: unknown key 'wobble'", r.stderr)
        r = run("--only", "nothing*", case["a"], case["b"])
        self.assertEqual(r.returncode, 2)
        self.assertIn("--only matched no tensor", r.stderr)

    def test_broken_dumps_are_exit_2_with_file_and_line(self):
        for case in EXPECTED["bad_dumps"]:
            r = run(case["dir"], case["dir"])
            self.assertEqual(r.returncode, 2, case["dir"] + r.stderr)
            self.assertTrue(r.stderr.startswith("parity: error: "), r.stderr)
            self.assertIn(case["dir"], r.stderr)
            self.assertIn(case["error"], r.stderr)


class Directories(unittest.TestCase):
    def test_missing_tensor_is_structural_and_kinds_must_match(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
            os.makedirs(os.path.join(a, "sub"))
            os.makedirs(os.path.join(b, "sub"))
            x = np.arange(12, dtype=np.float32).reshape(3, 4)
            for d in (a, b):
                np.save(os.path.join(d, "sub", "x.npy"), x)
                np.savez(os.path.join(d, "pack.npz"), w=x * 2, v=x[0])
            np.save(os.path.join(a, "only_a.npy"), x)
            np.save(os.path.join(b, "sub", "int.npy"), x.astype(np.int32))
            r, doc = compare_json(a, b, expect=1)
            names = {t["name"]: t for t in doc["tensors"]}
            self.assertEqual(set(names), {"sub/x", "pack.npz:w", "pack.npz:v", "only_a",
                                          "sub/int"})
            self.assertTrue(names["only_a"]["structural"])
            self.assertIn("present in A only", names["only_a"]["reason"])
            self.assertIn("present in B only", names["sub/int"]["reason"])
            self.assertEqual(doc["summary"]["structural"], 2)
            self.assertEqual(names["pack.npz:w"]["verdict"], "pass")
            r = run(a, os.path.join(a, "sub", "x.npy"))
            self.assertEqual(r.returncode, 2)
            self.assertIn("compare like with like", r.stderr)

    def test_dtype_mismatch_is_structural_not_an_error(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a.npy"), os.path.join(tmp, "b.npy")
            np.save(a, np.zeros(4, np.float32))
            np.save(b, np.zeros(4, np.float64))
            r, doc = compare_json(a, b, expect=1)
            self.assertTrue(doc["tensors"][0]["structural"])
            self.assertIn("dtype differs: float32 vs float64", doc["tensors"][0]["reason"])

    def test_unreadable_inputs_are_exit_2(self):
        r = run("/no/such/a.npy", "/no/such/b.npy")
        self.assertEqual(r.returncode, 2)
        self.assertIn("/no/such/a.npy", r.stderr)


class Version2Dumps(unittest.TestCase):
    def test_records_are_matched_across_steps(self):
        with tempfile.TemporaryDirectory() as tmp:
            a = dump_v2.write_dump(os.path.join(tmp, "a"))
            # B differs at step 1 only, and wrote step 1's records first.
            b = dump_v2.write_dump(os.path.join(tmp, "b"), step1_x=dump_v2.X * 1.5,
                                   reverse=True)
            r, doc = compare_json(a, b, expect=1)
            verdicts = {t["name"]: t["verdict"] for t in doc["tensors"]}
            self.assertEqual(len(verdicts), 10)
            self.assertEqual(verdicts["enc.relu.forward.0.input.0"], "pass")
            self.assertEqual(verdicts["step1.enc.relu.forward.0.input.0"], "fail")
            self.assertEqual(verdicts["step1.enc.relu.forward.0.output.0"], "fail")
            self.assertEqual(doc["summary"]["structural"], 0)
            self.assertEqual(doc["summary"]["first_divergence"],
                             "step1.enc.relu.forward.0.input.0")
            self.assertEqual(r.stderr, "")  # no record fell back to seq matching


if __name__ == "__main__":
    unittest.main()
