# SPDX-License-Identifier: Apache-2.0
"""parity_workloads' throughput harness: the reference workloads train, runs are deterministic,
the figures are counted right under a clock the test controls, and a user's workload module
is loaded (or refused with its error)."""
import json
import math
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import parity_workloads
from parity_workloads import harness

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(parity_workloads.__file__)))


class FakeClock:
    """Advances by `fetch` seconds on the read after the batch is asked for and by `step`
    seconds on the read after the optimizer step: three reads a step, in that order."""

    def __init__(self, fetch, step):
        self.now, self.reads, self.fetch, self.step = 0.0, 0, fetch, step

    def __call__(self):
        phase = self.reads % 3
        self.reads += 1
        if phase == 1:
            self.now += self.fetch
        elif phase == 2:
            self.now += self.step
        return self.now


def run_cli(*args, env_extra=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [PYTHON_DIR] + ([env_extra] if env_extra else []) +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return subprocess.run([sys.executable, "-m", "parity_workloads.harness"] + list(args),
                          capture_output=True, text=True, env=env, timeout=300)


class ReferenceWorkloads(unittest.TestCase):
    def test_loss_falls_over_20_steps(self):
        for name in parity_workloads.names():
            with self.subTest(workload=name):
                w = parity_workloads.get(name, size="small")
                r = harness.run(w, steps=20, warmup=0)
                losses = r["losses"]
                self.assertEqual(len(losses), 20)
                self.assertTrue(all(math.isfinite(x) for x in losses))
                self.assertLess(sum(losses[-5:]) / 5, sum(losses[:5]) / 5 - 0.02, losses)

    def test_deterministic_for_a_seed_whatever_the_loader(self):
        """The same seed gives bitwise the same losses; DataLoader workers and prefetching
        change the speed, never the data."""
        for name in parity_workloads.names():
            with self.subTest(workload=name):
                runs = [harness.run(parity_workloads.get(name, size="tiny", seed=3), steps=4,
                                    warmup=1, seed=3, settings=s)
                        for s in ({}, {}, {"num_workers": 2, "prefetch_factor": 3})]
                self.assertEqual(runs[0]["losses"], runs[1]["losses"])
                self.assertEqual(runs[0]["losses"], runs[2]["losses"])
                other = harness.run(parity_workloads.get(name, size="tiny", seed=4), steps=4,
                                    warmup=1, seed=4)
                self.assertNotEqual(runs[0]["losses"], other["losses"])

    def test_figures_under_a_fixed_clock(self):
        w = parity_workloads.get("transformer", size="tiny", batch_size=6)
        r = harness.run(w, steps=5, warmup=2, clock=FakeClock(fetch=0.025, step=0.075))
        self.assertEqual((r["format"], r["version"]), ("parity-model-run", 1))
        self.assertEqual(len(r["losses"]), 7)  # warm-up steps' losses included
        self.assertEqual(len(r["step_s"]), 5)  # but not their times
        self.assertAlmostEqual(r["samples_per_s"], 6 / 0.1, places=9)
        self.assertAlmostEqual(r["tokens_per_s"], 6 / 0.1 * 8, places=9)  # tiny: seq 8
        self.assertAlmostEqual(r["data_wait_share"], 0.25, places=9)
        for q in ("p50", "p90", "p99", "min", "max"):
            self.assertAlmostEqual(r["step_ms"][q], 100.0, places=6)
        self.assertGreater(r["peak_rss_bytes"], 1 << 20)
        self.assertNotIn("tokens_per_s", harness.run(parity_workloads.get("cnn"), steps=1,
                                                     warmup=0))

    def test_percentiles_as_numpy(self):
        values = sorted([0.3, 0.1, 0.2, 0.5, 0.4, 0.9, 0.7])
        # numpy.percentile(values, [50, 90, 99]) (linear interpolation): 0.4, 0.78, 0.888
        self.assertAlmostEqual(harness._percentile(values, 50), 0.4)
        self.assertAlmostEqual(harness._percentile(values, 90), 0.78)
        self.assertAlmostEqual(harness._percentile(values, 99), 0.888)

    def test_bad_settings(self):
        w = parity_workloads.get("cnn")
        for settings, words in (({"amp": "fp8"}, "amp must be"),
                                ({"amp": "fp16"}, "CUDA"),
                                ({"num_workers": 0, "prefetch_factor": 2}, "num_workers > 0"),
                                ({"compile": "turbo"}, "compile must be one of"),
                                ({"optimizer": "lamb"}, "optimizer must be one of"),
                                ({"colour": 1}, "unknown setting")):
            with self.subTest(settings=settings):
                with self.assertRaises(harness.WorkloadError) as cm:
                    harness.run(w, steps=1, warmup=0, settings=settings)
                self.assertIn(words, str(cm.exception))


    def test_optimizer_implementations_and_compile(self):
        """--optimizer picks torch's implementation by name, as the report says; foreach and
        the single-tensor loop compute the same first step. --compile runs the model through
        torch.compile under torch 2.x, the same losses to float32 rounding; under 1.13 it is
        refused naming the torch."""
        reports = {}
        for impl in ("for-loop", "foreach"):
            w = parity_workloads.get("recsys")
            reports[impl] = harness.run(w, steps=2, warmup=0, settings={"optimizer": impl})
            self.assertEqual(reports[impl]["settings"]["optimizer"], impl)
            self.assertEqual(reports[impl]["optimizer"]["foreach"], impl == "foreach")
        # The second step's loss is after one update by each implementation.
        self.assertTrue(math.isclose(reports["for-loop"]["losses"][1],
                                     reports["foreach"]["losses"][1], rel_tol=1e-5))
        w = parity_workloads.get("recsys")
        if not hasattr(harness.torch, "compile"):
            with self.assertRaises(harness.WorkloadError) as cm:
                harness.run(w, steps=1, warmup=0, settings={"compile": "inductor"})
            self.assertIn("needs torch.compile", str(cm.exception))
            return
        compiled = harness.run(w, steps=2, warmup=1, settings={"compile": "inductor"})
        self.assertEqual(compiled["settings"]["compile"], "inductor")
        eager = harness.run(parity_workloads.get("recsys"), steps=2, warmup=1)
        for a, b in zip(compiled["losses"], eager["losses"]):
            self.assertTrue(math.isclose(a, b, rel_tol=1e-4), (a, b))

    def test_the_knobs_a_workload_has(self):
        """--knobs watches one forward pass: the cnn runs 2-d convolutions (channels_last),
        the transformer none; scaled_dot_product_attention is what the transformer's
        attention calls under torch 2.x, none under 1.13."""
        r = run_cli("--workload", "cnn", "--knobs")
        self.assertEqual(r.returncode, 0, r.stderr)
        cnn = json.loads(r.stdout)
        self.assertEqual(cnn["format"], "parity-workload-knobs")
        self.assertIn("channels_last", cnn["knobs"])
        self.assertIn("sdpa_backend", cnn["lacks"])
        transformer = json.loads(run_cli("--workload", "transformer", "--knobs").stdout)
        self.assertEqual(transformer["lacks"]["channels_last"],
                         "its step runs no 2-d convolution")
        has_sdpa = hasattr(harness.torch.nn.functional, "scaled_dot_product_attention")
        self.assertEqual("sdpa_backend" in transformer["knobs"], has_sdpa)
        for w in (cnn, transformer):
            self.assertFalse(set(w["knobs"]) & set(w["lacks"]))
            self.assertLessEqual({"batch_size", "lr_rule", "num_workers", "amp", "optimizer"},
                                 set(w["knobs"]))

    def test_learning_rate_rules(self):
        """At 4x the workload's batch size: the same rate (held), 4x (linear, Goyal et al.)
        or 2x (sqrt, Krizhevsky), as the optimizer the harness ran says."""
        base = parity_workloads.get("cnn")
        for rule, factor in (("held", 1.0), ("linear", 4.0), ("sqrt", 2.0)):
            with self.subTest(rule=rule):
                r = run_cli("--workload", "cnn", "--steps", "1", "--warmup", "0",
                            "--batch-size", str(4 * base.batch_size), "--lr-rule", rule)
                self.assertEqual(r.returncode, 0, r.stderr)
                doc = json.loads(r.stdout)
                self.assertEqual(doc["settings"]["lr_rule"], rule)
                self.assertTrue(math.isclose(doc["optimizer"]["lr"], base.lr * factor),
                                (doc["optimizer"]["lr"], base.lr, factor))
        with self.assertRaises(harness.WorkloadError) as cm:
            harness.run(base, steps=1, warmup=0, settings={"lr_rule": "cubic"})
        self.assertIn("lr_rule must be one of held, linear, sqrt", str(cm.exception))

    def test_sdpa_backend(self):
        """Under torch >= 2.3 the step runs inside sdpa_kernel: math and the CPU's flash
        kernel train hf-llama (no attention dropout) to the same losses within float32
        rounding, and a backend that can't run the attention fails the step, so the limit is
        in force: the CPU has no efficient kernel, and its flash kernel takes no dropout (the
        transformer's). Under 1.13 it is refused naming the torch."""
        try:
            harness.knob_rules.sdpa_kernel("math")
        except ValueError:
            with self.assertRaises(harness.WorkloadError) as cm:
                harness.run(parity_workloads.get("transformer"), steps=1, warmup=0,
                            settings={"sdpa_backend": "math"})
            self.assertIn("needs torch.nn.attention.sdpa_kernel", str(cm.exception))
            return
        losses = {}
        for backend in ("math", "flash"):
            r = harness.run(parity_workloads.get("hf-llama"), steps=2, warmup=0,
                            settings={"sdpa_backend": backend})
            self.assertEqual(r["settings"]["sdpa_backend"], backend)
            losses[backend] = r["losses"]
        for a, b in zip(losses["math"], losses["flash"]):
            self.assertTrue(math.isclose(a, b, rel_tol=1e-4), (a, b))
        for name, backend in (("hf-llama", "efficient"), ("transformer", "flash")):
            with self.subTest(workload=name, backend=backend):
                with self.assertRaisesRegex(RuntimeError, "No (available kernel|viable backend)"):
                    harness.run(parity_workloads.get(name), steps=1, warmup=0,
                                settings={"sdpa_backend": backend})


USER_MODULE = '''
import torch
import parity_workloads

def make(size="tiny", seed=0, batch_size=None):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    batch = batch_size or 16

    def make_batch(gen):
        x = torch.randn(batch, 4, generator=gen)
        return (x,), x.sum(dim=1, keepdim=True)

    return parity_workloads.Workload("mine", size, model, torch.nn.functional.mse_loss,
                                     make_batch, batch, seed)

def not_a_workload(size="tiny", seed=0, batch_size=None):
    return 42
'''


class UserWorkloads(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        with open(os.path.join(self.tmp.name, "my_step.py"), "w") as f:
            f.write(textwrap.dedent(USER_MODULE))
        with open(os.path.join(self.tmp.name, "broken_step.py"), "w") as f:
            f.write("raise RuntimeError('no GPU here')\n")

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_user_module_runs(self):
        r = run_cli("--workload", "my_step:make", "--steps", "6", "--warmup", "1",
                    "--batch-size", "8", env_extra=self.tmp.name)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual((doc["workload"], doc["batch_size"], doc["steps"]), ("mine", 8, 6))
        self.assertEqual(len(doc["losses"]), 7)
        self.assertGreater(doc["samples_per_s"], 0)

    def test_refused_workloads(self):
        for spec, words in (("my_step:nothing", "has no function nothing"),
                            ("my_step:not_a_workload", "returned int"),
                            ("broken_step:make", "RuntimeError: no GPU here"),
                            ("missing_module:make", "No module named 'missing_module'"),
                            ("resnet", "unknown workload 'resnet'")):
            with self.subTest(spec=spec):
                r = run_cli("--workload", spec, "--steps", "1", env_extra=self.tmp.name)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("parity: error: ", r.stderr)
                self.assertIn(words, r.stderr)


if __name__ == "__main__":
    unittest.main()
