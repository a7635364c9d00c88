# SPDX-License-Identifier: Apache-2.0
"""parity tune end to end on a fake workload whose speed is a known function of its settings
(the step sleeps): the planted best configuration is found, a faster configuration that
changes the loss is flagged and never recommended, the JSON and plan vars, and bad space
files refused with file, line and knob."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

BIN = os.environ["PARITY_BIN"]

# Per-sample time (ms) by (batch_size, OMP_NUM_THREADS): batch 32 with "2" is the planted best
# (1 ms a sample against 3 ms); OMP_NUM_THREADS=3 is faster still (0.1 ms: at each batch size
# at least ten times faster than the other settings, whose step has the same overhead) but
# multiplies the loss by 10, so it must be flagged. The harness's torch thread count is left
# alone: the variable is only read here. Speeds are compared only between trials of one run,
# never with a fixed figure: a busy machine slows them all.
FAKE = '''
import os
import time
import torch
import parity_workloads

class Slow(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 1)

    def forward(self, x):
        batch = x.shape[0]
        omp = os.environ.get("OMP_NUM_THREADS", "")
        per_sample = 0.1e-3 if omp == "3" else 1e-3 if (batch == 32 and omp == "2") else 3e-3
        time.sleep(batch * per_sample)
        return self.fc(x)

def make(size="tiny", seed=0, batch_size=None):
    if os.environ.get("TUNE_RUNS"):  # one line per harness process: its arguments
        import json, sys
        with open(os.environ["TUNE_RUNS"], "a") as f:
            f.write(json.dumps({"argv": sys.argv[1:],
                                "omp": os.environ.get("OMP_NUM_THREADS")}) + "\\n")
    torch.manual_seed(seed)
    model = Slow()
    batch = batch_size or 8
    scale = 10.0 if os.environ.get("OMP_NUM_THREADS") == "3" else 1.0

    def make_batch(gen):
        x = torch.randn(batch, 4, generator=gen)
        return (x,), x.sum(dim=1, keepdim=True)

    def loss(out, target):
        return torch.nn.functional.mse_loss(out, target) * scale

    return parity_workloads.Workload("fake", size, model, loss, make_batch, batch, seed)
'''

SPACE = """\
knobs:
  batch_size: [default, 16, 32]
env:
  OMP_NUM_THREADS: [default, "2", "3"]
"""


def parity(*args, env=None):
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=900,
                          env=env)


class Tune(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        with open(os.path.join(cls.tmp.name, "fake_speed.py"), "w") as f:
            f.write(textwrap.dedent(FAKE))
        cls.space = os.path.join(cls.tmp.name, "space.yaml")
        with open(cls.space, "w") as f:
            f.write(SPACE)
        cls.env = dict(os.environ, PYTHONPATH=cls.tmp.name)
        cls.json = os.path.join(cls.tmp.name, "tune.json")
        cls.vars = os.path.join(cls.tmp.name, "vars.yaml")
        cls.journal = os.path.join(cls.tmp.name, "journal.jsonl")
        # The budget is far above what the run takes (about 90 s): the tuner samples the space
        # down to what the budget holds at the default's first trial's speed, and on a loaded
        # machine (CI's sanitizer build beside it) a 5 minute budget kept only some of the nine.
        cls.args = ["tune", "fake_speed:make", "--space", cls.space, "--budget", "60m",
                    "--warmup", "1", "--min-steps", "3", "--max-steps", "9",
                    "--python", sys.executable]
        cls.ran = parity(*cls.args, "--json", cls.json, "--vars", cls.vars,
                         "--journal", cls.journal, env=cls.env)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_finds_the_planted_best(self):
        self.assertEqual(self.ran.returncode, 0, self.ran.stderr)
        with open(self.json) as f:
            doc = json.load(f)
        self.assertEqual((doc["format"], doc["version"]), ("parity-tune", 1))
        self.assertEqual(doc["space_size"], 9)
        self.assertEqual(doc["configs_tried"], 9, "the space was sampled down")
        self.assertEqual(doc["rung_steps"], [3, 9])
        self.assertEqual(doc["final_rung"], 1)
        best = doc["best"]
        self.assertEqual((best["knobs"], best["env"]),
                         ({"batch_size": 32}, {"OMP_NUM_THREADS": "2"}), doc)
        # The best's speed over the default's, both measured in this run (3 ms against 1 ms a
        # sample, planted; by how much it shows depends on the machine's load): the final
        # rung's steps and two interleaved re-runs of each.
        self.assertEqual((doc["speedup"]["interleaved_pairs"], doc["speedup"]["runs_each"]),
                         (2, 3))
        confirming = [t for t in doc["trials"] if t["confirmation"]]
        self.assertEqual([t["label"] for t in confirming],
                         ["default", best["label"], "default", best["label"]])
        self.assertTrue(all(t["rung"] == 2 and t["steps"] == 9 for t in confirming))
        self.assertGreater(doc["speedup"]["ratio"], 1.0)
        self.assertLessEqual(doc["speedup"]["low"], doc["speedup"]["ratio"])
        self.assertGreaterEqual(doc["speedup"]["high"], doc["speedup"]["ratio"])
        self.assertEqual(doc["default"]["label"], "default")
        self.assertIn("best: batch_size=32 OMP_NUM_THREADS=2", self.ran.stdout)

    def test_a_configuration_that_changes_the_loss_is_flagged(self):
        with open(self.json) as f:
            doc = json.load(f)
        flagged = [t for t in doc["trials"] if t["config"]["env"].get("OMP_NUM_THREADS") == "3"]
        self.assertEqual(len(flagged), 3)  # tried at the first rung, all three batch sizes
        for t in flagged:
            self.assertEqual(t["rung"], 0)  # never promoted
            self.assertFalse(t["loss_check"]["inside_envelope"], t)
            # ... although faster than the other settings of its batch size on that rung.
            others = [o for o in doc["trials"] if o["rung"] == 0 and not o["envelope"]
                      and o["config"]["knobs"] == t["config"]["knobs"] and o is not t]
            self.assertEqual(len(others), 2, t)
            for o in others:
                self.assertGreater(t["samples_per_s"], o["samples_per_s"], (t, o))
        envelope = [t for t in doc["trials"] if t["envelope"]]
        self.assertEqual(sorted((t["rung"], t["seed"]) for t in envelope),
                         [(0, 1), (0, 2), (1, 1), (1, 2)])

    def test_the_envelope_and_a_flagged_configurations_losses_are_in_the_report(self):
        with open(self.json) as f:
            doc = json.load(f)
        self.assertFalse(doc["allow_result_changes"])
        self.assertFalse(doc["best"]["changes_results"])
        self.assertEqual([(e["rung"], e["steps"], sorted(e["seeds"])) for e in doc["envelopes"]],
                         [(0, 3, [0, 1, 2]), (1, 9, [0, 1, 2])])
        first = doc["envelopes"][0]
        runs = [t for t in doc["trials"] if t["label"] == "default" and t["rung"] == 0]
        self.assertEqual(len(runs), 3)
        for step, (low, high) in enumerate(zip(first["loss_low"], first["loss_high"])):
            values = [t["losses"][step] for t in runs]
            self.assertEqual((low, high), (min(values), max(values)))
        # OMP_NUM_THREADS=3 multiplies the loss by 10: above the envelope at every step.
        flagged = next(t for t in doc["trials"]
                       if t["config"]["env"].get("OMP_NUM_THREADS") == "3")
        self.assertEqual(len(flagged["losses"]), 1 + 3)  # warm-up and timed steps
        self.assertTrue(all(x > h for x, h in zip(flagged["losses"], first["loss_high"])))

    def test_allow_result_changes_recommends_what_changes_results_and_says_so(self):
        space = os.path.join(self.tmp.name, "omp3.yaml")
        with open(space, "w") as f:
            f.write('env:\n  OMP_NUM_THREADS: [default, "3"]\n')
        out = os.path.join(self.tmp.name, "allowed.json")
        r = parity("tune", "fake_speed:make", "--space", space, "--budget", "60m", "--warmup",
                   "1", "--min-steps", "3", "--max-steps", "3", "--confirm", "0",
                   "--python", sys.executable, "--allow-result-changes", "--json", out,
                   env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            doc = json.load(f)
        self.assertTrue(doc["allow_result_changes"])
        self.assertEqual(doc["best"]["label"], "OMP_NUM_THREADS=3")
        self.assertTrue(doc["best"]["changes_results"])
        self.assertFalse(doc["best"]["loss_inside_envelope"])
        self.assertIn("changes results: its losses leave the default's seed envelope", r.stdout)

    def test_plan_vars(self):
        with open(self.vars) as f:
            text = f.read()
        self.assertIn("vars:\n", text)
        self.assertIn('  batch_size: "32"\n', text)
        self.assertIn('  env_OMP_NUM_THREADS: "2"\n', text)


    def journal_trials(self, path):
        with open(path) as f:
            lines = f.read().splitlines()
        header = json.loads(lines[0])
        self.assertEqual((header["format"], header["version"]), ("parity-tune-journal", 1))
        return lines[0], [json.loads(line) for line in lines[1:]]

    @staticmethod
    def trial_key(batch_size, omp, steps, seed):
        return (str(batch_size) if batch_size is not None else "default", omp or "default",
                int(steps), int(seed))

    def runs(self, counter):
        """The (batch_size, OMP_NUM_THREADS, steps, seed) of each trial's harness process
        (the probe of the workload's knobs, --knobs, is not a trial)."""
        if not os.path.exists(counter):
            return []
        out = []
        with open(counter) as f:
            for line in f:
                r = json.loads(line)
                argv = r["argv"]
                if "--knobs" in argv:
                    continue
                value = lambda flag, default=None: (argv[argv.index(flag) + 1]
                                                    if flag in argv else default)
                out.append(self.trial_key(value("--batch-size"), r["omp"], value("--steps"),
                                          value("--seed", "0")))
        return out

    def resume(self, journal, tag):
        counter = os.path.join(self.tmp.name, tag + ".runs")
        out = os.path.join(self.tmp.name, tag + ".json")
        r = parity(*self.args, "--json", out, "--journal", journal,
                   env=dict(self.env, TUNE_RUNS=counter))
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as f:
            return json.load(f), self.runs(counter), r

    def test_a_finished_run_started_again_runs_nothing(self):
        self.assertEqual(self.ran.returncode, 0, self.ran.stderr)
        _, trials = self.journal_trials(self.journal)
        copy = os.path.join(self.tmp.name, "finished.jsonl")
        with open(self.journal) as f, open(copy, "w") as g:
            g.write(f.read())
        doc, runs, _ = self.resume(copy, "finished")
        self.assertEqual(runs, [])
        self.assertEqual(doc["resumed_trials"], len(trials))
        self.assertEqual(doc["best"]["label"], "batch_size=32 OMP_NUM_THREADS=2")

    def test_a_killed_run_resumes_without_running_a_finished_trial_again(self):
        self.assertEqual(self.ran.returncode, 0, self.ran.stderr)
        header, trials = self.journal_trials(self.journal)
        kept = len(trials) // 2
        # As a kill leaves it: the first half of the trials, then one cut off mid-line.
        killed = os.path.join(self.tmp.name, "killed.jsonl")
        with open(self.journal) as f:
            lines = f.read().splitlines()
        with open(killed, "w") as f:
            f.write("\n".join(lines[:1 + kept]) + "\n" + lines[1 + kept][:40])
        doc, runs, r = self.resume(killed, "killed")
        self.assertIn("a last, partial line cut off", r.stderr)
        self.assertEqual(doc["resumed_trials"], kept)
        done = {self.trial_key(t["config"]["knobs"].get("batch_size"),
                               t["config"]["env"].get("OMP_NUM_THREADS"), t["steps"], t["seed"])
                for t in trials[:kept]}
        self.assertTrue(runs, "the rest was run")
        self.assertFalse(set(runs) & done, "a finished trial ran again")
        self.assertEqual(len(runs), len(set(runs)), "a trial ran twice")
        self.assertEqual(doc["best"]["label"], "batch_size=32 OMP_NUM_THREADS=2")
        # The journal reads back whole: the cut line gone, the new trials after the kept ones.
        _, after = self.journal_trials(killed)
        self.assertEqual(len(after), kept + len(runs))

    def test_the_journal_of_another_run_is_refused(self):
        other = os.path.join(self.tmp.name, "other.yaml")
        with open(other, "w") as f:
            f.write(SPACE.replace("16, 32", "16, 64"))
        copy = os.path.join(self.tmp.name, "other.jsonl")
        with open(self.journal) as f, open(copy, "w") as g:
            g.write(f.read())
        r = parity(*[other if a == self.space else a for a in self.args], "--journal", copy,
                   env=self.env)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("parity: error:", r.stderr)
        self.assertIn("line 1: the journal of another tune run: its 'space' differs", r.stderr)


class BadSpaces(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, text, *words, args=(), workload="cnn"):
        path = os.path.join(self.tmp.name, "space.yaml")
        with open(path, "w") as f:
            f.write(text)
        r = parity("tune", workload, "--space", path, "--size", "tiny", *args)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("parity: error: " + path, r.stderr)
        for w in words:
            self.assertIn(w, r.stderr)
        return r.stderr

    def test_knobs(self):
        self.refused("knobs:\n  batch_size: [8]\n  colour: [1, 2]\n", "line 3", "unknown knob 'colour'")
        self.refused("knobs:\n  num_workers: []\n", "line 2", "empty list")
        self.refused("knobs:\n  batch_size: [8, large]\n", "line 2", "batch_size",
                     "not a whole number")
        self.refused("knobs:\n  amp: [bf16, fp8]\n", "line 2", "amp is \"fp8\"")
        self.refused("knobs:\n  compile: [default, turbo]\n", "line 2",
                     "compile is \"turbo\", not one of off, inductor, max-autotune-no-cudagraphs")
        self.refused("knobs:\n  optimizer: [fused, lamb]\n", "line 2", "optimizer is \"lamb\"")
        self.refused("knobs:\n  pin_memory: [true, maybe]\n", "line 2", "pin_memory")
        self.refused("knobs:\n  batch_size: [8, 8]\n", "line 2", "lists 8 twice")
        self.refused("knob:\n  batch_size: [8]\n", "line 1", "knob")
        self.refused("knobs:\n", "no knob and no environment variable")

    def test_environment_variables_checked_against_the_knowledge_base(self):
        # Wrong format: HSA_OVERRIDE_GFX_VERSION takes major.minor.stepping, not a gfx name.
        err = self.refused('env:\n  HSA_OVERRIDE_GFX_VERSION: ["gfx90a"]\n', "line 2",
                           "HSA_OVERRIDE_GFX_VERSION=gfx90a is refused",
                           "ROCT-Thunk-Interface")
        self.assertIn("9.0.10", err)
        # Another vendor's: HCCL is Gaudi's.
        self.refused('env:\n  HCCL_OVER_OFI: ["1"]\n', "line 2", "other-vendor",
                     "docs.habana.ai")
        # Not in the knowledge base at all.
        self.refused('env:\n  ROCM_TURBO_MODE: ["1"]\n', "line 2",
                     "not in parity's knowledge base")
        # A value outside the entry's pattern (OMP_NUM_THREADS takes counts).
        self.refused('env:\n  OMP_NUM_THREADS: [default, "2",\n    "lots"]\n', "line 3",
                     "OMP_NUM_THREADS=lots is refused", "invalid value")

    def test_a_knob_the_workload_lacks(self):
        # The transformer runs no 2-d convolution: channels_last would change nothing.
        err = self.refused("knobs:\n  batch_size: [default, 8]\n"
                           "  channels_last: [default, true]\n",
                           "workload 'transformer' has no knob 'channels_last'",
                           "its step runs no 2-d convolution", "(its knobs: batch_size,",
                           workload="transformer")
        self.assertNotIn("channels_last, ", err.split("its knobs:")[1])
        # The cnn has one: no refusal for that reason (it stops at the budget instead).
        path = os.path.join(self.tmp.name, "cl.yaml")
        with open(path, "w") as f:
            f.write("knobs:\n  channels_last: [default, true]\n")
        r = parity("tune", "cnn", "--space", path, "--budget", "1s", "--quiet")
        self.assertNotIn("has no knob", r.stderr)

    def test_a_budget_too_small_for_one_trial_of_each(self):
        path = os.path.join(self.tmp.name, "nine.yaml")
        with open(path, "w") as f:
            f.write("knobs:\n  batch_size: [default, 2, 8]\n  num_workers: [default, 1, 2]\n")
        r = parity("tune", "cnn", "--space", path, "--budget", "1s", "--quiet")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("parity: error: " + path, r.stderr)
        self.assertRegex(r.stderr, r"a budget of 1 s is too small for one trial of each of the "
                         r"9 configurations: at least \d+ s \(the default's first trial took")

    def test_bad_budget(self):
        path = os.path.join(self.tmp.name, "ok.yaml")
        with open(path, "w") as f:
            f.write("knobs:\n  batch_size: [4, 8]\n")
        for budget in ("soon", "-5", "0", "10d"):
            with self.subTest(budget=budget):
                r = parity("tune", "cnn", "--space", path, "--budget", budget)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("is not a duration", r.stderr)

    def test_a_default_that_fails_ends_the_search(self):
        with open(os.path.join(self.tmp.name, "broken_step.py"), "w") as f:
            f.write(textwrap.dedent('''
                import torch
                import parity_workloads

                def make(size="tiny", seed=0, batch_size=None):
                    def make_batch(gen):
                        return (torch.randn(4, 2, generator=gen),), torch.zeros(4, 1)

                    def loss(out, target):
                        raise RuntimeError("planted failure")

                    return parity_workloads.Workload("broken", size, torch.nn.Linear(2, 1),
                                                     loss, make_batch, 4, seed)
                '''))
        path = os.path.join(self.tmp.name, "ok.yaml")
        with open(path, "w") as f:
            f.write("knobs:\n  batch_size: [4, 8]\n")
        r = parity("tune", "broken_step:make", "--space", path, "--json", "-", "--quiet",
                   "--python", sys.executable,
                   env=dict(os.environ, PYTHONPATH=self.tmp.name))
        self.assertEqual(r.returncode, 1, r.stderr)
        doc = json.loads(r.stdout)
        self.assertIsNone(doc["best"])
        self.assertEqual(len(doc["trials"]), 1)  # the rest of the space was not tried
        self.assertEqual(doc["trials"][0]["status"], "failed")
        self.assertIn("planted failure", doc["note"])

    def test_missing_workload_module(self):
        path = os.path.join(self.tmp.name, "ok.yaml")
        with open(path, "w") as f:
            f.write("knobs:\n  batch_size: [4, 8]\n")
        r = parity("tune", "no_such_module:make", "--space", path, "--python", sys.executable)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("No module named 'no_such_module'", r.stderr)


if __name__ == "__main__":
    unittest.main()
