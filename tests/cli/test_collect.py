#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity collect` and `parity history` on the CPU: a plan with every stage
kind, resuming after a kill and after an interrupt, failing stages, bad plans, the results
store (a version-1 store written here with Python's sqlite3 and migrated), history queries.

Reference values: AUCs from scikit-learn, the store's rows read back with Python's sqlite3.
Environment (set by CTest): PARITY_BIN.
"""
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import numpy as np
from sklearn.metrics import roc_auc_score

BIN = os.environ["PARITY_BIN"]
PY = sys.executable
ENV = dict(os.environ)
ENV.update({"PARITY_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
            "PARITY_ROCM_SMI_LIBRARY": "/nonexistent/librocm_smi64.so.1"})

# A command of an exec stage: prints a figure, writes a JSON one, counts its runs in {out}/..
EXEC_SCRIPT = textwrap.dedent("""\
    import json, os, sys
    out = sys.argv[1]
    with open(os.path.join(sys.argv[2], "exec-runs"), "a") as f:
        f.write("run\\n")
    print("warming up")
    print("epoch 1 samples/s: 1200.5")
    print("epoch 2 samples/s: 1234.25")
    with open(os.path.join(out, "metrics.json"), "w") as f:
        json.dump({"eval": {"auc": 0.8125, "runs": [{"loss": 0.25}]}}, f)
    """)

DUMP_SCRIPT = textwrap.dedent("""\
    import json, os, sys
    import numpy as np
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "tensors"), exist_ok=True)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump({"format": "parity-dump", "version": 1, "platform": {}, "framework": {}}, f)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.save(os.path.join(out, "tensors", "000000_in0.npy"), x)
    np.save(os.path.join(out, "tensors", "000000_out0.npy"), np.maximum(x, 0))
    rec = {"seq": 0, "name": "act", "op": "relu", "pass": "forward", "call": 0, "attrs": {},
           "inputs": [{"file": "tensors/000000_in0.npy", "dtype": "float32", "shape": [2, 3]}],
           "params": {},
           "outputs": [{"file": "tensors/000000_out0.npy", "dtype": "float32", "shape": [2, 3]}]}
    with open(os.path.join(out, "records.jsonl"), "w") as f:
        f.write(json.dumps(rec) + "\\n")
    """)

QUALITY_SCRIPT = textwrap.dedent("""\
    import os, sys
    import numpy as np
    out = sys.argv[1]
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 2, 500).astype(np.uint8)
    a = labels * 0.6 + rng.standard_normal(500)
    b = a + 0.05 * rng.standard_normal(500)
    np.save(os.path.join(out, "labels.npy"), labels)
    np.save(os.path.join(out, "a.npy"), a)
    np.savetxt(os.path.join(out, "b.txt"), b)
    """)

# Sleeps while SLOW exists (writing its pid first), then succeeds.
SLEEP_SCRIPT = textwrap.dedent("""\
    import os, sys, time
    flag, pidfile = sys.argv[1], sys.argv[2]
    with open(pidfile, "w") as f:
        f.write(str(os.getpid()))
    while os.path.exists(flag):
        time.sleep(0.05)
    """)


def run(*args, timeout=300, env=None):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout,
                          env=env or ENV)


def manifest(bundle):
    with open(os.path.join(bundle, "manifest.json")) as f:
        return json.load(f)


def stage(doc, name):
    return next(s for s in doc["stages"] if s["name"] == name)


class CollectBase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.db = os.path.join(self.dir, "parity.db")
        for name, text in (("exec.py", EXEC_SCRIPT), ("dump.py", DUMP_SCRIPT),
                           ("quality.py", QUALITY_SCRIPT), ("sleep.py", SLEEP_SCRIPT)):
            with open(os.path.join(self.dir, name), "w") as f:
                f.write(text)

    def tearDown(self):
        self.tmp.cleanup()

    def plan(self, text, name="plan.yaml"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text).replace("PY", PY))
        return path

    def collect(self, plan, bundle, *args, **kw):
        return run("collect", plan, "-o", os.path.join(self.dir, bundle), "--db", self.db,
                   *args, **kw)


EVERY_KIND = """\
    plan: every-kind
    stages:
      - kind: env
      - kind: monitor
        interval: 0.2
        sources: [host]
      - kind: bench
        suites: [stream]
        dtypes: [float64]
        n: 65536
        reps: 3
      - kind: stress
        workload: gemm-burn
        params: {n: 64}
        duration: 4
        inject: ["kill:at=0.8"]
      - kind: exec
        command: PY {plan_dir}/exec.py {out} {plan_dir}
        metrics:
          - {name: throughput, regex: 'samples/s: ([0-9.]+)', unit: samples/s}
          - {name: auc, json: metrics.json, key: eval.auc, better: higher}
          - {name: loss, json: metrics.json, key: /eval/runs/0/loss, better: lower}
      - kind: dump
        command: [PY, "{plan_dir}/dump.py", "{out}"]
      - kind: quality
        command: [PY, "{plan_dir}/quality.py", "{out}"]
        labels: labels.npy
        scores: [a.npy, b.txt]
      - name: later
        kind: exec
        level: 3
        command: PY -c "raise SystemExit(1)"
    """


class EveryStageKind(CollectBase):
    def test_every_kind_on_the_cpu(self):
        plan = self.plan(EVERY_KIND)
        r = self.collect(plan, "b", "--json", os.path.join(self.dir, "out.json"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        bundle = os.path.join(self.dir, "b")
        doc = manifest(bundle)
        self.assertEqual(doc["format"], "parity-bundle")
        self.assertEqual(doc["version"], 1)
        self.assertEqual(doc["level"], 1)
        self.assertEqual(doc["status"], "passed")
        self.assertEqual(doc["tool"]["name"], "parity")
        self.assertIn("cpu", doc["fingerprint"])
        with open(os.path.join(self.dir, "out.json")) as f:
            self.assertEqual(json.load(f)["uid"], doc["uid"])
        statuses = {s["name"]: s["status"] for s in doc["stages"]}
        self.assertEqual(statuses, {"env": "passed", "monitor": "passed", "bench": "passed",
                                    "stress": "passed", "exec": "passed", "dump": "passed",
                                    "quality": "passed", "later": "skipped"})
        self.assertIn("runs from level 3", stage(doc, "later")["reason"])
        with open(os.path.join(bundle, "plan.yaml")) as f, open(plan) as g:
            self.assertEqual(f.read(), g.read())

        def result(name, fmt):
            path = os.path.join(bundle, stage(doc, name)["result"])
            with open(path) as f:
                d = json.load(f)
            self.assertEqual(d["format"], fmt, name)
            return d

        env = result("env", "parity-env")
        self.assertIn("host", env)
        bench = result("bench", "parity-bench")
        self.assertEqual({x["benchmark"] for x in bench["results"]},
                         {"stream.copy", "stream.mul", "stream.add", "stream.triad", "stream.dot",
                          "stream.nstream"})
        self.assertTrue(all(x["params"]["n"] == 65536 for x in bench["results"]))
        self.assertEqual(len(stage(doc, "bench")["metrics"]), 6)
        stress = result("stress", "parity-stress")
        self.assertEqual(stress["verdict"], "pass")
        self.assertEqual(stress["faults_injected"], 1)
        self.assertEqual(stress["faults_recovered"], 1)
        exec_doc = result("exec", "parity-exec")
        values = {m["name"]: m["value"] for m in exec_doc["metrics"]}
        # The last match counts; keys by dotted path and by JSON pointer.
        self.assertEqual(values, {"throughput": 1234.25, "auc": 0.8125, "loss": 0.25})
        self.assertEqual(exec_doc["exit_code"], 0)
        dump_stage = stage(doc, "dump")
        self.assertEqual(dump_stage["summary"]["records"], 1)
        self.assertTrue(os.path.exists(os.path.join(bundle, dump_stage["result"], "records.jsonl")))
        # The dump in the bundle is one parity reads.
        r = run("inspect", os.path.join(bundle, dump_stage["result"]))
        self.assertEqual(r.returncode, 0, r.stderr)
        quality = result("quality", "parity-quality-inputs")
        qdir = os.path.join(bundle, "stages", "quality")
        labels = np.load(os.path.join(qdir, "labels.npy"))
        expected = {"a.npy": roc_auc_score(labels, np.load(os.path.join(qdir, "a.npy"))),
                    "b.txt": roc_auc_score(labels, np.loadtxt(os.path.join(qdir, "b.txt")))}
        self.assertEqual(quality["n"], 500)
        self.assertEqual(quality["positives"], int(labels.sum()))
        for s in quality["scores"]:
            self.assertAlmostEqual(s["auc"], expected[s["file"]], places=12)
        monitor = result("monitor", "parity-monitor")
        self.assertGreaterEqual(monitor["samples"], 5)
        # Telemetry: samples tagged with the stage that ran, every line a JSON object.
        with open(os.path.join(bundle, "telemetry.jsonl")) as f:
            lines = [json.loads(line) for line in f]
        self.assertGreaterEqual(len(lines), 5)
        self.assertIn("stress", {line.get("stage") for line in lines})
        self.assertTrue(all(line["format"] == "parity-monitor" for line in lines))
        for s in doc["stages"]:
            if s["status"] == "passed" and s["kind"] != "monitor":
                self.assertTrue(os.path.exists(os.path.join(bundle, s["log"])), s["name"])

        # The results store holds the run, its stages and its figures.
        con = sqlite3.connect(self.db)
        self.assertEqual(con.execute("PRAGMA user_version").fetchone()[0], 2)
        self.assertEqual(con.execute("PRAGMA journal_mode").fetchone()[0], "wal")
        runs = con.execute("SELECT uid, kind, level, status, plan FROM runs").fetchall()
        self.assertEqual(runs, [(doc["uid"], "collect", 1, "passed", "every-kind")])
        names = {row[0] for row in con.execute("SELECT name FROM metrics")}
        self.assertTrue({"stream.triad", "throughput", "auc", "loss", "quality.auc",
                         "stress.throughput"} <= names, names)
        con.close()

        # Rerunning keeps every finished stage; --redo runs the one named again.
        r = self.collect(plan, "b")
        self.assertEqual(r.returncode, 0, r.stderr)
        again = manifest(bundle)
        self.assertEqual(again["uid"], doc["uid"])
        self.assertTrue(all(s.get("reused") for s in again["stages"]
                            if s["kind"] not in ("monitor",) and s["status"] != "skipped"))
        with open(os.path.join(self.dir, "exec-runs")) as f:
            self.assertEqual(len(f.readlines()), 1)
        r = self.collect(plan, "b", "--redo", "exec")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.dir, "exec-runs")) as f:
            self.assertEqual(len(f.readlines()), 2)
        self.assertEqual(len(manifest(bundle)["collects"]), 3)
        # One bundle is one run in the store, however often it is resumed.
        con = sqlite3.connect(self.db)
        self.assertEqual(con.execute("SELECT count(*) FROM runs").fetchone()[0], 1)
        con.close()

    def test_level_and_changed_keys(self):
        plan = self.plan("""\
            plan: levels
            stages:
              - kind: exec
                command: PY {plan_dir}/exec.py {out} {plan_dir}
              - name: second
                kind: exec
                level: 2
                command: [PY, -c, "print('level {level} on {backend}')"]
            """)
        r = self.collect(plan, "b")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stage(manifest(os.path.join(self.dir, "b")), "second")["status"],
                         "skipped")
        r = self.collect(plan, "b", "--level", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = manifest(os.path.join(self.dir, "b"))
        self.assertEqual(doc["level"], 2)
        self.assertTrue(stage(doc, "exec").get("reused"))
        self.assertEqual(stage(doc, "second")["status"], "passed")
        with open(os.path.join(self.dir, "b", "logs", "second.log")) as f:
            self.assertEqual(f.read(), "level 2 on cpu\n")
        # A lower level would drop the level-2 stage's result: refused.
        r = self.collect(plan, "b", "--level", "1")
        self.assertEqual(r.returncode, 2)
        self.assertIn("was collected at level 2", r.stderr)
        # A stage whose keys changed runs again.
        with open(plan) as f:
            text = f.read()
        with open(plan, "w") as f:
            f.write(text.replace("print('level", "print('now level"))
        r = self.collect(plan, "b", "--level", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = manifest(os.path.join(self.dir, "b"))
        self.assertFalse(stage(doc, "second").get("reused", False))
        self.assertTrue(stage(doc, "exec").get("reused"))


class Resume(CollectBase):
    PLAN = """\
        plan: resume
        stages:
          - kind: exec
            command: PY {plan_dir}/exec.py {out} {plan_dir}
          - name: slow
            kind: exec
            command: PY {plan_dir}/sleep.py {plan_dir}/SLOW {plan_dir}/sleep.pid
          - name: after
            kind: exec
            command: [PY, -c, "print('after')"]
        """

    def start_and_wait_for_slow(self, plan):
        open(os.path.join(self.dir, "SLOW"), "w").close()
        pidfile = os.path.join(self.dir, "sleep.pid")
        proc = subprocess.Popen([BIN, "collect", plan, "-o", os.path.join(self.dir, "b"),
                                 "--db", self.db], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=ENV)
        deadline = time.time() + 60
        while not (os.path.exists(pidfile) and os.path.getsize(pidfile) > 0):
            self.assertLess(time.time(), deadline, "the slow stage never started")
            time.sleep(0.05)
        with open(pidfile) as f:
            child = int(f.read())
        return proc, child

    def alive(self, pid):
        try:
            with open("/proc/%d/stat" % pid) as f:
                return f.read().split(") ")[1][0] != "Z"
        except OSError:
            return False

    def test_resume_after_kill_mid_stage(self):
        plan = self.plan(self.PLAN)
        proc, child = self.start_and_wait_for_slow(plan)
        proc.kill()
        proc.communicate(timeout=30)
        doc = manifest(os.path.join(self.dir, "b"))
        self.assertEqual(stage(doc, "exec")["status"], "passed")
        self.assertEqual(stage(doc, "slow")["status"], "running")
        self.assertEqual(stage(doc, "after")["status"], "pending")
        # The stage's command does not outlive the collect.
        deadline = time.time() + 10
        while self.alive(child) and time.time() < deadline:
            time.sleep(0.05)
        self.assertFalse(self.alive(child))
        os.remove(os.path.join(self.dir, "SLOW"))
        r = self.collect(plan, "b")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = manifest(os.path.join(self.dir, "b"))
        self.assertTrue(stage(doc, "exec").get("reused"))
        self.assertEqual([s["status"] for s in doc["stages"]], ["passed"] * 3)
        with open(os.path.join(self.dir, "exec-runs")) as f:
            self.assertEqual(len(f.readlines()), 1)

    def test_interrupt_stops_the_stage_and_exits_130(self):
        plan = self.plan(self.PLAN)
        proc, child = self.start_and_wait_for_slow(plan)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 130, err)
        self.assertIn("resume", err)
        self.assertFalse(self.alive(child))
        doc = manifest(os.path.join(self.dir, "b"))
        self.assertEqual(doc["status"], "interrupted")
        self.assertEqual(stage(doc, "slow")["status"], "interrupted")
        self.assertEqual(stage(doc, "after")["status"], "pending")
        os.remove(os.path.join(self.dir, "SLOW"))
        r = self.collect(plan, "b")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(manifest(os.path.join(self.dir, "b"))["status"], "passed")

    def test_a_second_collect_on_the_same_bundle_is_refused(self):
        plan = self.plan(self.PLAN)
        proc, _ = self.start_and_wait_for_slow(plan)
        try:
            r = self.collect(plan, "b")
            self.assertEqual(r.returncode, 2)
            self.assertIn("another parity collect", r.stderr)
        finally:
            os.remove(os.path.join(self.dir, "SLOW"))
            proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 0)


class FailingStages(CollectBase):
    def test_failures_are_recorded_and_the_rest_run(self):
        plan = self.plan("""\
            plan: failing
            stages:
              - name: crash
                kind: exec
                command: [PY, -c, "import sys; print('CUDA error: out of memory'); sys.exit(3)"]
              - name: missing-metric
                kind: exec
                command: [PY, -c, "print('no figure here')"]
                metrics:
                  - {name: auc, regex: 'auc=([0-9.]+)'}
              - name: slow
                kind: exec
                timeout: 0.5
                command: [PY, -c, "import time; time.sleep(30)"]
              - name: absent
                kind: exec
                command: [/nonexistent/trainer, --fast]
              - name: bad-labels
                kind: quality
                command: [PY, -c, "import numpy as np; np.save('{out}/l.npy', np.array([0, 2, 1])); np.save('{out}/s.npy', np.zeros(3))"]
                labels: l.npy
                scores: s.npy
              - name: no-dump
                kind: dump
                command: [PY, -c, "pass"]
              - name: fine
                kind: exec
                command: [PY, -c, "print('ok')"]
            """)
        r = self.collect(plan, "b")
        self.assertEqual(r.returncode, 1, r.stderr)
        doc = manifest(os.path.join(self.dir, "b"))
        self.assertEqual(doc["status"], "failed")
        by = {s["name"]: s for s in doc["stages"]}
        self.assertEqual(by["crash"]["status"], "error")
        self.assertEqual(by["crash"]["reason"], "exit 3: CUDA error: out of memory")
        self.assertEqual(by["missing-metric"]["status"], "error")
        self.assertIn("metric 'auc'", by["missing-metric"]["reason"])
        self.assertEqual(by["slow"]["status"], "error")
        self.assertIn("timed out", by["slow"]["reason"])
        # Stopped by its timeout, not by its command's end 60 times later.
        self.assertGreaterEqual(by["slow"]["seconds"], 0.5)
        self.assertLess(by["slow"]["seconds"], 30)
        self.assertEqual(by["absent"]["status"], "error")
        self.assertIn("/nonexistent/trainer", by["absent"]["reason"])
        self.assertEqual(by["bad-labels"]["status"], "error")
        self.assertIn("not 0 or 1", by["bad-labels"]["reason"])
        self.assertEqual(by["no-dump"]["status"], "error")
        self.assertIn("manifest.json", by["no-dump"]["reason"])
        self.assertEqual(by["fine"]["status"], "passed")
        # Stages that errored run again on the next collect; the passed one is kept.
        r = self.collect(plan, "b")
        self.assertEqual(r.returncode, 1)
        doc = manifest(os.path.join(self.dir, "b"))
        self.assertTrue(stage(doc, "fine").get("reused"))
        self.assertFalse(stage(doc, "crash").get("reused", False))

    def test_a_failed_check_is_failed_not_error(self):
        # A stress run with a planted bit flip exits 1: the stage failed, with the reason.
        plan = self.plan("""\
            plan: sdc
            stages:
              - kind: stress
                workload: gemm-burn
                params: {n: 64}
                duration: 3
                inject: ["sdc:at=0.5"]
            """)
        r = self.collect(plan, "b")
        self.assertEqual(r.returncode, 1, r.stderr)
        s = stage(manifest(os.path.join(self.dir, "b")), "stress")
        self.assertEqual(s["status"], "failed")
        self.assertEqual(s["reason"], "1 silent-data-corruption events")
        self.assertEqual(s["result"], "stages/stress/stress.json")

    def test_an_unavailable_backend_is_skipped_with_its_reason(self):
        plan = self.plan("""\
            plan: gpu
            stages:
              - kind: bench
                suites: [stream]
                n: 1024
                reps: 2
            """)
        r = self.collect(plan, "b", "--backend", "cuda",
                         env=dict(ENV, PARITY_BACKEND_PATH="/nonexistent"))
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        s = stage(manifest(os.path.join(self.dir, "b")), "bench")
        self.assertEqual(s["status"], "skipped")
        self.assertTrue(s["reason"])


class BadInput(CollectBase):
    def expect_error(self, text, *needles, args=()):
        plan = self.plan(text)
        r = run("collect", plan, "-o", os.path.join(self.dir, "b"), "--no-store", *args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertTrue(r.stderr.startswith("parity: error: " + plan), r.stderr)
        for needle in needles:
            self.assertIn(needle, r.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "b", "manifest.json")))
        return r.stderr

    def test_unknown_keys_kinds_and_values(self):
        self.expect_error("plan: p\nstages:\n  - kind: bench\n    suite: [stream]\n",
                          "line 4", "stage 'bench'", "unknown key for a bench stage 'suite'",
                          "did you mean 'suites'")
        self.expect_error("plan: p\nstagse: []\n", "line 2", "unknown key 'stagse'",
                          "did you mean 'stages'")
        self.expect_error("plan: p\nstages:\n  - kind: benhc\n", "line 3",
                          "unknown stage kind 'benhc'", "did you mean 'bench'")
        self.expect_error("plan: p\nstages:\n  - kind: bench\n    suites: [strem]\n",
                          "unknown suite 'strem'")
        self.expect_error("plan: p\nstages:\n  - kind: bench\n    n: -5\n", "line 4",
                          "'n' must be a whole number")
        self.expect_error("plan: p\nstages:\n  - kind: env\n  - kind: env\n", "line 4",
                          "used twice")
        self.expect_error("plan: p\nstages:\n  - kind: bench\n    by_level:\n      2: {reps: x}\n",
                          "line 5", "by_level 2", "'reps'")
        self.expect_error("plan: p\nstages:\n  - kind: bench\n    by_level:\n      7: {}\n",
                          "a level is 1 to 4")
        self.expect_error("plan: p\nstages:\n  - kind: exec\n    command: run {outt}\n",
                          "outt")
        self.expect_error("plan: p\nstages:\n  - kind: exec\n", "'command' is missing")
        self.expect_error("plan: p\nstages:\n  - kind: stress\n    workload: gemm-burn\n",
                          "'duration'")
        self.expect_error("plan: p\nstages:\n  - kind: stress\n    workload: gemm-burn\n"
                          "    duration: 5\n    inject: [explode]\n", "inject", "explode")
        self.expect_error("plan: p\nstages:\n  - kind: monitor\n    rules: nope.yaml\n",
                          "nope.yaml")
        self.expect_error("plan: p\nstages:\n  - kind: exec\n    command: x\n    metrics:\n"
                          "      - {name: a, regex: '('}\n", "does not compile")
        self.expect_error("stages:\n  - kind: env\n", "'plan'")
        self.expect_error("plan: p\nstages: [\n", "not valid YAML")
        self.expect_error("plan: p\nstages:\n  - kind: env\n    level: 9\n", "'level' must be 1 to 4")

    def test_bundle_problems(self):
        plan = self.plan("plan: p\nstages:\n  - kind: env\n")
        other = os.path.join(self.dir, "other")
        os.makedirs(other)
        with open(os.path.join(other, "precious.txt"), "w") as f:
            f.write("x")
        r = run("collect", plan, "-o", other, "--no-store")
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a parity bundle", r.stderr)
        self.assertEqual(os.listdir(other), ["precious.txt"])
        os.makedirs(os.path.join(self.dir, "bad"))
        with open(os.path.join(self.dir, "bad", "manifest.json"), "w") as f:
            f.write('{"format": "parity-bench"}')
        r = run("collect", plan, "-o", os.path.join(self.dir, "bad"), "--no-store")
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a parity-bundle manifest", r.stderr)
        r = run("collect", plan, "--no-store")
        self.assertEqual(r.returncode, 2)
        self.assertIn("-o BUNDLE", r.stderr)
        # A bundle from another machine is not resumed here.
        r = run("collect", plan, "-o", os.path.join(self.dir, "mine"), "--no-store")
        self.assertEqual(r.returncode, 0, r.stderr)
        path = os.path.join(self.dir, "mine", "manifest.json")
        with open(path) as f:
            doc = json.load(f)
        doc["node"] = "elsewhere"
        with open(path, "w") as f:
            json.dump(doc, f)
        r = run("collect", plan, "-o", os.path.join(self.dir, "mine"), "--no-store")
        self.assertEqual(r.returncode, 2)
        self.assertIn("was collected on elsewhere", r.stderr)
        r = run("collect", os.path.join(self.dir, "missing.yaml"), "-o", "x")
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.yaml", r.stderr)

    def test_check_and_examples(self):
        root = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
        plans = [os.path.join(root, "plan.yaml")] + sorted(
            os.path.join(root, "plan", f) for f in os.listdir(os.path.join(root, "plan"))
            if f.endswith(".yaml"))
        self.assertGreaterEqual(len(plans), 8)
        kinds = set()
        for plan in plans:
            r = run("collect", plan, "--check")
            self.assertEqual(r.returncode, 0, plan + r.stderr)
            with open(plan) as f:
                kinds |= set(re.findall(r"^\s*-?\s*kind:\s*([a-z]+)", f.read(), re.M))
        self.assertEqual(kinds, {"env", "bench", "model", "monitor", "stress", "exec", "dump",
                                 "quality"})


MODEL_PLAN = """\
    plan: model
    stages:
      - name: train
        kind: model
        workloads: [cnn, "my_step:make"]
        size: tiny
        steps: 3
        warmup: 1
        settings: {batch_size: 6, num_workers: 0, pin_memory: "false"}
        python: PY
    """

MODEL_MODULE = """\
import torch
import parity_workloads

def make(size="tiny", seed=0, batch_size=None):
    torch.manual_seed(seed)
    batch = batch_size or 5

    def make_batch(gen):
        x = torch.randn(batch, 4, generator=gen)
        return (x,), x.sum(dim=1, keepdim=True)

    return parity_workloads.Workload("mine", size, torch.nn.Linear(4, 1),
                                     torch.nn.functional.mse_loss, make_batch, batch, seed)
"""


class ModelStage(CollectBase):
    def test_model_stage_and_its_throughput_criterion(self):
        with open(os.path.join(self.dir, "my_step.py"), "w") as f:
            f.write(MODEL_MODULE)  # beside the plan: the stage puts its directory on the path
        plan = self.plan(MODEL_PLAN)
        for name in ("base", "cand"):
            r = self.collect(plan, name)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        bundle = os.path.join(self.dir, "base")
        doc = manifest(bundle)
        train = stage(doc, "train")
        self.assertEqual(train["status"], "passed", train)
        with open(os.path.join(bundle, train["result"])) as f:
            bench = json.load(f)
        results = {x["benchmark"]: x for x in bench["results"]}
        self.assertEqual(sorted(results), ["model.cnn.train", "model.mine.train"])
        self.assertTrue(all(x["params"]["batch_size"] == 6 for x in results.values()))
        self.assertTrue(all(len(x["samples"]) == 3 for x in results.values()))
        self.assertEqual({m["name"] for m in train["metrics"]}, set(results))
        curves = os.path.join(bundle, "stages", "train", "curves")
        self.assertEqual(sorted(os.listdir(curves)), ["cnn.csv", "mine.csv"])
        out = os.path.join(self.dir, "accepted")
        r = run("accept", os.path.join(self.dir, "base"), os.path.join(self.dir, "cand"), "-o",
                out, "--no-store", "--json", "-", timeout=300)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        criteria = {c["id"]: c for c in json.loads(r.stdout)["criteria"]}
        model = criteria["throughput.train.model"]
        self.assertIn(model["status"], ("pass", "fail"), model)
        self.assertEqual(sorted(b["benchmark"] for b in model["evidence"]["benchmarks"]),
                         ["model.cnn.train", "model.mine.train"])

    def test_bad_settings_are_refused_at_check(self):
        plan = self.plan(MODEL_PLAN.replace("batch_size: 6", "batch_size: 0"))
        r = run("collect", plan, "--check")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("batch_size is 0", r.stderr)
        plan = self.plan(MODEL_PLAN.replace("num_workers: 0", "workers: 2"))
        r = run("collect", plan, "--check")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("unknown setting 'workers'", r.stderr)


V1_SCHEMA = """
CREATE TABLE runs(id INTEGER PRIMARY KEY, uid TEXT UNIQUE NOT NULL, kind TEXT NOT NULL,
                  node TEXT, started REAL NOT NULL, level INTEGER, bundle TEXT, status TEXT);
CREATE TABLE results(run_id INTEGER NOT NULL REFERENCES runs(id), benchmark TEXT NOT NULL,
                     dtype TEXT, params TEXT, unit TEXT, median REAL);
PRAGMA user_version = 1;
"""


class Store(CollectBase):
    def v1_store(self, node):
        con = sqlite3.connect(self.db)
        con.executescript(V1_SCHEMA)
        month_ago = time.time() - 31 * 86400
        con.execute("INSERT INTO runs VALUES (1, 'old-run', 'collect', ?, ?, 1, '/old', 'passed')",
                    (node, month_ago))
        # Far above what two cores reach: the new run's triad must read as a regression.
        con.execute("INSERT INTO results VALUES (1, 'stream.triad', 'float64', ?, 'GB/s', 1.0e6)",
                    (json.dumps({"n": 65536, "reps": 3}, separators=(",", ":")),))
        con.commit()
        con.close()

    def test_migration_from_v1_and_history(self):
        plan = self.plan("""\
            plan: store
            stages:
              - kind: env
              - kind: bench
                suites: [stream]
                dtypes: [float64]
                n: 65536
                reps: 3
            """)
        r = self.collect(plan, "b")
        self.assertEqual(r.returncode, 0, r.stderr)
        node = manifest(os.path.join(self.dir, "b"))["node"]
        os.remove(self.db)
        for suffix in ("-wal", "-shm"):
            if os.path.exists(self.db + suffix):
                os.remove(self.db + suffix)
        self.v1_store(node)
        # history on a version-1 store: migrated, the old run listed.
        r = run("history", "--db", self.db, "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["format"], "parity-history")
        self.assertEqual([x["uid"] for x in doc["runs"]], ["old-run"])
        con = sqlite3.connect(self.db)
        self.assertEqual(con.execute("PRAGMA user_version").fetchone()[0], 2)
        self.assertEqual(con.execute("SELECT name, stage, value, better FROM metrics").fetchall(),
                         [("stream.triad", "bench", 1.0e6, "higher")])
        con.close()
        # A collect into the migrated store; history lists both, newest first.
        r = self.collect(plan, "b2")
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run("history", "--db", self.db, "--json", "-")
        runs = json.loads(r.stdout)["runs"]
        self.assertEqual(len(runs), 2)
        self.assertEqual(runs[1]["uid"], "old-run")
        self.assertEqual(runs[0]["plan"], "store")
        self.assertEqual({s["name"]: s["status"] for s in runs[0]["stages"]},
                         {"env": "passed", "bench": "passed"})
        # The trend: triad fell from the old run's figure.
        r = run("history", "--db", self.db, "--benchmark", "stream.triad", "--json", "-",
                "--fail-on-regression")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        trends = json.loads(r.stdout)["trends"]
        self.assertEqual(len(trends), 1)
        self.assertEqual(trends[0]["points"], 2)
        self.assertEqual(trends[0]["first"], 1.0e6)
        self.assertEqual(trends[0]["verdict"], "regressed")
        self.assertLess(trends[0]["change"], -0.9)
        r = run("history", "--db", self.db, "--benchmark", "stream.triad")
        self.assertEqual(r.returncode, 0)
        self.assertIn("regressed", r.stdout)
        # Filters: another node has nothing; --since leaves the month-old run out.
        r = run("history", "--db", self.db, "--node", "no-such-node", "--json", "-")
        self.assertEqual(json.loads(r.stdout)["runs"], [])
        r = run("history", "--db", self.db, "--since", "7d", "--json", "-")
        self.assertEqual([x["plan"] for x in json.loads(r.stdout)["runs"]], ["store"])
        r = run("history", "--db", self.db, "--since", "7d", "--benchmark", "stream.triad",
                "--json", "-")
        self.assertEqual(json.loads(r.stdout)["trends"][0]["verdict"], "single")

    def test_store_problems(self):
        with open(self.db, "w") as f:
            f.write("this is not a database\n" * 200)
        r = run("history", "--db", self.db)
        self.assertEqual(r.returncode, 2)
        self.assertIn("parity: error: " + self.db, r.stderr)
        # collect still collects, and says the run is not recorded.
        plan = self.plan("plan: p\nstages:\n  - kind: env\n")
        r = self.collect(plan, "b")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("not recorded", r.stderr)
        r = run("history", "--db", os.path.join(self.dir, "none.db"))
        self.assertEqual(r.returncode, 0)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "none.db")))
        r = run("history", "--db", self.db, "--since", "yesterday")
        self.assertEqual(r.returncode, 2)

    def test_default_store_follows_xdg(self):
        plan = self.plan("plan: p\nstages:\n  - kind: env\n")
        env = dict(ENV, XDG_DATA_HOME=os.path.join(self.dir, "xdg"))
        r = run("collect", plan, "-o", os.path.join(self.dir, "b"), env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(os.path.join(self.dir, "xdg", "parity", "parity.db")))
        r = run("history", "--json", "-", env=env)
        self.assertEqual(len(json.loads(r.stdout)["runs"]), 1)


if __name__ == "__main__":
    unittest.main()
