# SPDX-License-Identifier: Apache-2.0
"""parity bench --suite model end to end: python/parity_workloads' harness run by the binary on
the CPU (tiny sizes), its parity-bench document, the loss curves, a user's workload module, and
bad input."""
import csv
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

BIN = os.environ["PARITY_BIN"]

USER_MODULE = '''
import math
import torch
import parity_workloads

def _make(name, loss_fn, size, seed, batch_size):
    torch.manual_seed(seed)
    model = torch.nn.Linear(4, 1)
    batch = batch_size or 5

    def make_batch(gen):
        x = torch.randn(batch, 4, generator=gen)
        return (x,), x.sum(dim=1, keepdim=True)

    return parity_workloads.Workload(name, size, model, loss_fn, make_batch, batch, seed)

def make(size="tiny", seed=0, batch_size=None):
    return _make("mine", torch.nn.functional.mse_loss, size, seed, batch_size)

def nan_loss(size="tiny", seed=0, batch_size=None):
    return _make("nanny", lambda out, t: (out - t).sum() * float("nan"), size, seed, batch_size)

def raises(size="tiny", seed=0, batch_size=None):
    def loss(out, t):
        raise RuntimeError("out of memory (planted)")
    return _make("raiser", loss, size, seed, batch_size)
'''


def parity(*args, env=None):
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=600,
                          env=env)


class ModelSuite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.json = os.path.join(cls.tmp.name, "model.json")
        cls.curves = os.path.join(cls.tmp.name, "curves")
        cls.ran = parity("bench", "--suite", "model", "--size", "tiny", "--steps", "4",
                         "--warmup", "1", "--json", cls.json, "--curves", cls.curves,
                         "--python", sys.executable)
        cls.user = os.path.join(cls.tmp.name, "user")
        os.makedirs(cls.user)
        with open(os.path.join(cls.user, "my_step.py"), "w") as f:
            f.write(textwrap.dedent(USER_MODULE))
        cls.env = dict(os.environ, PYTHONPATH=cls.user)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_reference_workloads(self):
        self.assertEqual(self.ran.returncode, 0, self.ran.stderr)
        with open(self.json) as f:
            doc = json.load(f)
        self.assertEqual((doc["format"], doc["version"], doc["suites"]),
                         ("parity-bench", 1, ["model"]))
        results = {r["benchmark"]: r for r in doc["results"]}
        self.assertEqual(sorted(results), ["model.cnn.train", "model.recsys.train",
                                           "model.transformer.train"])
        # The tiny sizes' batches (python/parity_workloads).
        batch = {"model.cnn.train": 4, "model.recsys.train": 8, "model.transformer.train": 4}
        for name, r in results.items():
            with self.subTest(benchmark=name):
                self.assertTrue(r["valid"], r)
                self.assertEqual((r["unit"], r["dtype"]), ("samples/s", "float32"))
                self.assertEqual(r["params"]["batch_size"], batch[name])
                self.assertEqual(r["params"]["workload_size"], "tiny")
                self.assertEqual(len(r["samples"]), 4)  # the warm-up step is not a sample
                self.assertEqual(len(r["losses"]), 5)   # but its loss is kept
                self.assertEqual(r["best"], max(r["samples"]))
                self.assertGreater(r["step_ms"]["p99"], 0)
                self.assertGreaterEqual(r["data_wait_share"], 0)
                self.assertLess(r["data_wait_share"], 1)
                self.assertGreater(r["peak_rss_bytes"], 1 << 20)
                # samples/s per step = batch / step time: the percentiles agree with them.
                step_ms = sorted(batch[name] / s * 1e3 for s in r["samples"])
                self.assertAlmostEqual(r["step_ms"]["min"], step_ms[0], places=6)
                self.assertAlmostEqual(r["step_ms"]["max"], step_ms[-1], places=6)
        # tokens/s is samples/s over the timed steps (their harmonic mean: batch·steps over
        # the steps' time) times the workload's 8 tokens a sample, whatever the machine's load.
        transformer = results["model.transformer.train"]
        harmonic = len(transformer["samples"]) / sum(1 / x for x in transformer["samples"])
        self.assertAlmostEqual(transformer["tokens_per_s"] / harmonic, 8, places=6)

    def test_curves_for_quality_curve(self):
        with open(self.json) as f:
            doc = json.load(f)
        for r in doc["results"]:
            name = r["benchmark"].split(".")[1]
            with open(os.path.join(self.curves, name + ".csv")) as f:
                rows = list(csv.DictReader(f))
            self.assertEqual([int(row["step"]) for row in rows], list(range(5)))
            self.assertEqual([float(row["value"]) for row in rows],
                             [float("%.9g" % x) for x in r["losses"]])
        # The same curves on both sides: inside the envelope, a pass.
        a = os.path.join(self.curves, "cnn.csv")
        q = parity("quality", "curve", "--a", a, "--b", a, "--json", "-")
        self.assertIn(q.returncode, (0, 1), q.stderr)
        self.assertIn("verdict", json.loads(q.stdout))

    def test_bench_compare_reads_it(self):
        r = parity("bench", "compare", self.json, self.json, "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        rows = json.loads(r.stdout)["comparisons"]
        self.assertEqual(len(rows), 3)
        self.assertTrue(all(abs(c["ratio"] - 1) < 1e-12 for c in rows))

    def test_a_user_workload_and_settings(self):
        out = os.path.join(self.tmp.name, "user.json")
        r = parity("bench", "--suite", "model", "--workload", "my_step:make", "--steps", "3",
                   "--warmup", "0", "--set", "batch_size=7", "--set", "num_workers=1",
                   "--set", "amp=bf16", "--json", out, "--quiet", env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            (result,) = json.load(f)["results"]
        self.assertEqual((result["benchmark"], result["dtype"]), ("model.mine.train", "bfloat16"))
        self.assertEqual(result["params"]["batch_size"], 7)
        self.assertEqual(result["params"]["settings"]["num_workers"], 1)

    def test_a_non_finite_loss_is_invalid(self):
        r = parity("bench", "--suite", "model", "--workload", "my_step:nan_loss", "--steps", "2",
                   "--json", "-", "--quiet", env=self.env)
        self.assertEqual(r.returncode, 1, r.stderr)
        (result,) = json.loads(r.stdout)["results"]
        self.assertFalse(result["valid"])
        self.assertIn("not finite at 5 of 5 steps, first at step 0", result["reason"])

    def test_a_workload_that_raises_is_a_failed_result(self):
        r = parity("bench", "--suite", "model", "--workload", "my_step:raises,my_step:make",
                   "--steps", "2", "--json", "-", "--quiet", env=self.env)
        self.assertEqual(r.returncode, 1, r.stderr)
        results = json.loads(r.stdout)["results"]
        self.assertEqual([x["valid"] for x in results], [False, True])
        self.assertIn("out of memory (planted)", results[0]["reason"])

    def test_bad_input(self):
        cases = [
            (["--workload", "no_such_module:make"], "No module named 'no_such_module'"),
            (["--workload", "resnet"], "unknown workload 'resnet'"),
            (["--set", "colour=red"], "unknown setting 'colour'"),
            (["--set", "num_workers=-1"], "num_workers is -1"),
            (["--set", "amp=fp8"], "amp is \"fp8\""),
            (["--set", "batch_size"], "expected KEY=VALUE"),
            (["--python", "/nonexistent/python3"], "not an executable file"),
        ]
        for extra, words in cases:
            with self.subTest(args=extra):
                r = parity("bench", "--suite", "model", "--size", "tiny", "--steps", "1",
                           "--quiet", *extra, env=self.env)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("parity: error: ", r.stderr)
                self.assertIn(words, r.stderr)
        for args, words in ((["--suite", "model,stream"], "apart from the other suites"),
                            (["--suite", "stream", "--workload", "cnn"], "for --suite model"),
                            (["--suite", "model", "--n", "5"], "not for --suite model")):
            with self.subTest(args=args):
                r = parity("bench", *args)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(words, r.stderr)


if __name__ == "__main__":
    unittest.main()


class ZooWorkloads(unittest.TestCase):
    """The model-library workloads through the binary as users run them: `bench --suite model`
    and `tune` with --python naming this test's interpreter. Under the torch 2.x environment
    they train; under an interpreter without the library (Debian's torch 1.13) each is exit 2
    naming the package it lacks and the environment that has it."""

    @classmethod
    def setUpClass(cls):
        try:
            import transformers  # noqa: F401
            cls.has_libraries = True
        except ImportError:
            cls.has_libraries = False
        cls.env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")

    def test_bench_runs_a_hugging_face_and_a_torchrec_workload(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "zoo.json")
            r = parity("bench", "--suite", "model", "--workload", "hf-llama,torchrec-dlrm",
                       "--size", "tiny", "--steps", "3", "--warmup", "1", "--json", out,
                       "--quiet", "--python", sys.executable, env=self.env)
            if not self.has_libraries:
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("parity: error: ", r.stderr)
                self.assertIn("'transformers'", r.stderr)
                self.assertIn("scripts/venv", r.stderr)
                return
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                doc = json.load(f)
            results = {res["benchmark"]: res for res in doc["results"]}
            self.assertEqual(sorted(results),
                             ["model.hf-llama.train", "model.torchrec-dlrm.train"])
            for name, res in results.items():
                self.assertTrue(res["valid"], (name, res))

    def test_tune_searches_a_zoo_workload(self):
        with tempfile.TemporaryDirectory() as tmp:
            space = os.path.join(tmp, "space.yaml")
            with open(space, "w") as f:
                f.write("knobs:\n  batch_size: [default, 2]\n")
            r = subprocess.run(
                [BIN, "tune", "hf-bert", "--space", space, "--budget", "60m", "--warmup", "1",
                 "--min-steps", "2", "--max-steps", "4", "--python", sys.executable,
                 "--json", os.path.join(tmp, "tune.json")],
                capture_output=True, text=True, timeout=900, env=self.env)
            if not self.has_libraries:
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("'transformers'", r.stderr)
                return
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(os.path.join(tmp, "tune.json")) as f:
                doc = json.load(f)
            self.assertGreaterEqual(len(doc["trials"]), 2, doc)
