#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity stress` on the CPU backend: fault drills (kill, hang,
corrupt-checkpoint, disk-full, oom) with the step ledger checked, a planted bit flip that must be
found at its position, the matrix replayed from its seed, `exec` with a script that resumes from
its checkpoint (and one that does not, which the ledger must catch), interrupts, rules, bad input.

Environment (set by CTest): PARITY_BIN.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

BIN = os.environ["PARITY_BIN"]
PY = sys.executable
ENV = {k: v for k, v in os.environ.items() if not k.startswith("PARITY_STRESS")}
ENV.update({"PARITY_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
            "PARITY_ROCM_SMI_LIBRARY": "/nonexistent/librocm_smi64.so.1"})
# Small problems, so that a step takes milliseconds on two cores.
GEMM = ["--workload", "gemm-burn", "--param", "n=96", "--threads", "1"]
TRAIN = ["--workload", "train", "--param", "batch_size=16", "--param", "hidden=32",
         "--threads", "1"]

RESUMING_SCRIPT = textwrap.dedent("""\
    import json, os, sys, time
    # argv: resume-path steps batch_size
    resume, steps, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    state = {"step": 0, "x": 1.0}
    if resume:
        with open(resume) as f:
            state = json.load(f)
    ckdir = os.environ["PARITY_STRESS_CHECKPOINT_DIR"]
    print("a log line the supervisor must ignore", flush=True)
    while state["step"] < steps:
        time.sleep(0.01)
        state["step"] += 1
        state["x"] = state["x"] * 0.999 + 0.001 * batch
        line = {"step": state["step"], "loss": state["x"]}
        if state["step"] % 10 == 0:
            path = os.path.join(ckdir, "ck-%06d.json" % state["step"])
            with open(path + ".tmp", "w") as f:
                json.dump(state, f)
                f.flush()
                os.fsync(f.fileno())
            os.rename(path + ".tmp", path)
            line["checkpoint"] = path
        print(json.dumps(line), flush=True)
    """)


def children(pid):
    """The processes whose parent is pid (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(") ", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except (OSError, IndexError, ValueError):
                pass  # gone meanwhile
    return found


def wait_for_worker_writes(test, proc, writes, deadline=60.0):
    """Polls until a worker of the supervisor proc has made `writes` write calls (its protocol
    lines: "ready", then one per step; /proc/PID/io's syscw), failing when the supervisor exits first or the generous deadline passes.
    Returns (worker pid, its write count)."""
    end = time.monotonic() + deadline
    while True:
        for child in children(proc.pid):
            try:
                with open(f"/proc/{child}/io") as f:
                    io = dict(line.split(": ") for line in f.read().splitlines())
            except OSError:
                continue
            count = int(io.get("syscw", 0))
            if count >= writes:
                return child, count
        if proc.poll() is not None:
            _, err = proc.communicate()
            test.fail(f"parity stress exited ({proc.returncode}) before its worker stepped: {err}")
        test.assertLess(time.monotonic(), end, f"no worker stepped within {deadline} s")
        time.sleep(0.02)


def parity(*args, timeout=120, env=None):
    return subprocess.run([BIN, "stress", *args], capture_output=True, text=True,
                          timeout=timeout, env={**ENV, **(env or {})})


def run_json(*args, timeout=120, env=None):
    """Runs parity stress with --json to a file; returns (process, document)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.json")
        p = parity(*args, "--json", out, "--quiet", timeout=timeout, env=env)
        doc = None
        if os.path.exists(out):
            with open(out) as f:
                doc = json.load(f)
        return p, doc


class StressTest(unittest.TestCase):
    def assertLedgerClean(self, doc):
        self.assertEqual(doc["lost_steps"], 0, doc["worker_results"])
        self.assertEqual(doc["duplicated_steps"], 0, doc["worker_results"])
        for w in doc["worker_results"]:
            self.assertEqual(w["lost_steps"], 0)
            self.assertEqual(w["duplicated_steps"], 0)

    def assertAllRecovered(self, doc, kind):
        faults = [f for f in doc["faults"] if f["kind"] == kind]
        self.assertTrue(faults, doc["faults"])
        for f in faults:
            self.assertTrue(f["injected"])
            self.assertTrue(f["recovered"], f)
        return faults

    # The documented format.
    def test_result_document_has_the_contract_fields(self):
        p, doc = run_json(*GEMM, "--steps", "30")
        self.assertEqual(p.returncode, 0, p.stderr)
        for key in ["format", "version", "duration_s", "steps", "faults_injected",
                    "faults_recovered", "recovery_s", "lost_steps", "duplicated_steps",
                    "sdc_events", "alerts", "verdict"]:
            self.assertIn(key, doc)
        self.assertEqual(doc["format"], "parity-stress")
        self.assertEqual(doc["version"], 1)
        self.assertEqual(doc["steps"], 30)
        self.assertEqual(doc["verdict"], "pass")
        self.assertEqual(doc["sdc_events"], [])
        self.assertEqual(doc["throughput"]["unit"], "GFLOP/s")
        self.assertGreater(doc["throughput"]["value"], 0)
        self.assertGreaterEqual(doc["telemetry"]["samples"], 1)

    # Drills.
    def test_kill_drill_on_train_loses_nothing_and_redoes_identically(self):
        p, doc = run_json(*TRAIN, "--duration", "4", "--checkpoint-every", "25",
                          "--inject", "kill:every=1")
        self.assertEqual(p.returncode, 0, p.stderr + json.dumps(doc and doc["reasons"]))
        faults = self.assertAllRecovered(doc, "kill")
        self.assertGreaterEqual(len(faults), 3)
        self.assertEqual(doc["faults_injected"], doc["faults_recovered"])
        self.assertLedgerClean(doc)
        # Steps after the last checkpoint were done again, with the very same loss.
        self.assertGreater(doc["redone_steps"], 0)
        self.assertEqual(doc["redo_loss_mismatches"], 0)
        self.assertEqual(doc["restarts"], len(faults))
        # Each recovery runs from its kill to a step of the restarted worker: it spans that
        # worker's start and ends before the next kill (which waits for a step) and the run's
        # end; the summary is over exactly these.
        faults.sort(key=lambda f: f["time_s"])
        starts = [e["time_s"] for e in doc["events"] if e["kind"] == "worker-start"]
        ends = [f["time_s"] for f in faults[1:]] + [doc["duration_s"]]
        for f, end in zip(faults, ends):
            self.assertGreater(f["recovery_s"], 0, f)
            recovered_at = f["time_s"] + f["recovery_s"]
            self.assertTrue(any(f["time_s"] < s <= recovered_at for s in starts), (f, starts))
            self.assertLessEqual(recovered_at, end, (f, end))
        times = sorted(f["recovery_s"] for f in faults)
        self.assertEqual(doc["recovery_s"]["samples"], times)
        self.assertEqual(doc["recovery_s"]["count"], len(faults))
        self.assertEqual(doc["recovery_s"]["max"], times[-1])

    def test_corrupt_checkpoint_is_detected_and_the_previous_one_used(self):
        with tempfile.TemporaryDirectory() as ck:
            p, doc = run_json(*TRAIN, "--duration", "3", "--checkpoint-every", "10",
                              "--checkpoint-dir", ck, "--inject", "corrupt-checkpoint:at=1")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertAllRecovered(doc, "corrupt-checkpoint")
            self.assertEqual(doc["corrupt_checkpoints_detected"], 1)
            rejected = [e for e in doc["events"] if e["kind"] == "checkpoint-rejected"]
            self.assertEqual(len(rejected), 1)
            self.assertIn("using step", rejected[0]["message"])
            starts = [e for e in doc["events"] if e["kind"] == "worker-start"]
            self.assertEqual(len(starts), 2)
            self.assertIn("checkpoint of step", starts[1]["message"])
            self.assertLedgerClean(doc)
            self.assertGreaterEqual(doc["redone_steps"], 10)
            self.assertTrue(os.listdir(os.path.join(ck, "worker-0")))

    def test_planted_bit_flip_is_reported_at_its_position(self):
        p, doc = run_json(*GEMM, "--duration", "2", "--inject", "sdc:at=0.5")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(doc["verdict"], "fail")
        fault = self.assertAllRecovered(doc, "sdc")[0]
        planted = fault["planted"]
        self.assertEqual(planted["array"], "C")
        self.assertEqual(len(planted["position"]), 2)
        self.assertEqual(doc["sdc_event_count"], len(doc["sdc_events"]))
        found = [e for e in doc["sdc_events"]
                 if e["position"] == planted["position"] and e["step"] == planted["step"]]
        self.assertTrue(found, (planted, doc["sdc_events"]))
        self.assertNotEqual(found[0]["got"], found[0]["expected"])
        self.assertTrue(any("silent-data-corruption" in r for r in doc["reasons"]))

    def test_planted_bit_flip_in_stream_burn(self):
        p, doc = run_json("--workload", "stream-burn", "--param", "n=4096", "--threads", "1",
                          "--duration", "1.5", "--inject", "sdc:at=0.3")
        self.assertEqual(p.returncode, 1, p.stderr)
        planted = self.assertAllRecovered(doc, "sdc")[0]["planted"]
        self.assertTrue(any(e["position"] == planted["position"] and
                            e["array"] == planted["array"] for e in doc["sdc_events"]))

    def test_no_sdc_without_a_plant(self):
        p, doc = run_json(*GEMM, "--duration", "1.5")
        self.assertEqual(p.returncode, 0)
        self.assertEqual(doc["sdc_event_count"], 0)

    def test_hang_is_caught_by_the_watchdog(self):
        p, doc = run_json(*GEMM, "--duration", "3", "--hang-timeout", "0.8",
                          "--inject", "hang:at=0.5")
        self.assertEqual(p.returncode, 0, p.stderr)
        fault = self.assertAllRecovered(doc, "hang")[0]
        self.assertGreaterEqual(fault["recovery_s"], 0.8)
        self.assertTrue(any(e["kind"] == "watchdog" for e in doc["events"]))
        self.assertLedgerClean(doc)

    def test_disk_full_fails_a_checkpoint_and_the_run_goes_on(self):
        p, doc = run_json(*GEMM, "--duration", "2.5", "--checkpoint-every", "5",
                          "--inject", "disk-full:at=0.5")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertAllRecovered(doc, "disk-full")
        self.assertGreaterEqual(doc["checkpoint_failures"], 1)
        failed = [e for e in doc["events"] if e["kind"] == "checkpoint-failed"]
        self.assertTrue(failed)
        self.assertIn("File too large", failed[0]["message"])
        self.assertEqual(doc["restarts"], 0)

    def test_oom_drill_restarts_the_worker(self):
        # Under AddressSanitizer an allocation past the limit must come back null, as malloc's
        # does, rather than end the process with ASan's own report.
        asan = ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"),
                                      "allocator_may_return_null=1"]))
        p, doc = run_json(*GEMM, "--duration", "2.5", "--inject", "oom:at=0.5",
                          env={"ASAN_OPTIONS": asan})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertAllRecovered(doc, "oom")
        self.assertTrue(any(e["kind"] == "oom" and "ran out of memory" in e["message"]
                            for e in doc["events"]), doc["events"])
        exits = [e for e in doc["events"] if e["kind"] == "worker-exit"]
        self.assertIn("exit 4", exits[0]["message"])
        self.assertLedgerClean(doc)

    def test_two_workers_faults_follow_the_seed(self):
        args = (*GEMM, "--workers", "2", "--duration", "2.5", "--inject", "kill:every=0.7",
                "--seed", "5")
        p1, d1 = run_json(*args)
        p2, d2 = run_json(*args)
        self.assertEqual(p1.returncode, 0, p1.stderr)
        self.assertEqual(p2.returncode, 0, p2.stderr)
        self.assertEqual([f["worker"] for f in d1["faults"]][:3],
                         [f["worker"] for f in d2["faults"]][:3])
        self.assertEqual(len(d1["worker_results"]), 2)
        self.assertLedgerClean(d1)

    # The matrix.
    def write(self, directory, name, text):
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_matrix_changes_replay_from_the_seed(self):
        with tempfile.TemporaryDirectory() as tmp:
            m = self.write(tmp, "m.yaml", textwrap.dedent("""\
                seed: 3
                parameters:
                  batch_size: {choice: [8, 16, 32, 64], every_steps: 15}
                  lr: {range: [1.0e-4, 1.0e-2], scale: log, every_steps: 15}
                """))
            runs = []
            for seed in ("3", "3", "4"):
                p, doc = run_json(*TRAIN, "--steps", "75", "--matrix", m, "--seed", seed)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertLedgerClean(doc)
                runs.append([(c["step"], c["values"]) for c in doc["parameter_changes"]])
            self.assertGreaterEqual(len(runs[0]), 3)
            for step, values in runs[0]:
                self.assertEqual(step % 15, 0)
                self.assertIn(values["batch_size"], [8, 16, 32, 64])
                self.assertTrue(1e-4 <= values["lr"] <= 1e-2)
            self.assertEqual(runs[0], runs[1])
            self.assertNotEqual(runs[0], runs[2])

    def test_the_seed_matrix_in_deploy_runs(self):
        m = os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "stress",
                         "seed-matrix.yaml")
        p, doc = run_json(*TRAIN, "--steps", "450", "--matrix", m)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([c["step"] for c in doc["parameter_changes"]], [200, 400])
        self.assertEqual(doc["matrix"]["seed"], 1)
        self.assertLedgerClean(doc)

    def test_matrix_errors_are_exit_2_naming_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            m = self.write(tmp, "bad.yaml", "parameters:\n  lr: {range: [0, 1], scale: log}\n")
            p = parity(*TRAIN, "--steps", "5", "--matrix", m)
            self.assertEqual(p.returncode, 2)
            self.assertIn("parity: error:", p.stderr)
            self.assertIn("bad.yaml", p.stderr)
            self.assertIn("lr", p.stderr)

    # exec.
    def test_exec_resumes_from_its_checkpoint(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = self.write(tmp, "train.py", RESUMING_SCRIPT)
            cmd = f"{PY} {script} {{checkpoint}} 150 {{batch_size}}"
            p, doc = run_json("--workload", "exec", "--cmd", cmd, "--param", "batch_size=4",
                              "--steps", "150", "--inject", "kill:at=0.7",
                              "--inject", "kill:at=1.4")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(self.assertAllRecovered(doc, "kill")), 2)
            self.assertLedgerClean(doc)
            self.assertEqual(doc["steps"], 150)
            self.assertEqual(doc["redo_loss_mismatches"], 0)
            starts = [e for e in doc["events"] if e["kind"] == "worker-start"]
            self.assertIn("checkpoint of step", starts[-1]["message"])
            self.assertIsNone(doc["backend"])

    def test_exec_that_ignores_its_checkpoint_duplicates_steps(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = self.write(tmp, "train.py", RESUMING_SCRIPT)
            cmd = f"{PY} {script} '' 120 4"  # never resumes
            p, doc = run_json("--workload", "exec", "--cmd", cmd, "--steps", "120",
                              "--inject", "kill:at=0.8")
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertGreater(doc["duplicated_steps"], 0)
            self.assertTrue(any("done twice" in r for r in doc["reasons"]))

    def test_exec_crash_nobody_injected_is_a_fault_that_recovers(self):
        with tempfile.TemporaryDirectory() as tmp:
            script = self.write(tmp, "crash.py", textwrap.dedent("""\
                import json, os, sys
                start = int(sys.argv[1])
                for step in range(start + 1, 41):
                    if step == 25 and start == 0:
                        os._exit(9)
                    line = {"step": step}
                    if step == 20:
                        path = os.path.join(os.environ["PARITY_STRESS_CHECKPOINT_DIR"], "c")
                        open(path, "w").write("20")
                        line["checkpoint"] = path
                    print(json.dumps(line), flush=True)
                """))
            p, doc = run_json("--workload", "exec", "--cmd", f"{PY} {script} {{step}}",
                              "--steps", "40")
            self.assertEqual(p.returncode, 0, p.stderr)
            crash = [f for f in doc["faults"] if f["kind"] == "worker-crash"]
            self.assertEqual(len(crash), 1)
            self.assertFalse(crash[0]["injected"])
            self.assertTrue(crash[0]["recovered"])
            self.assertIn("exit 9", crash[0]["detail"])
            self.assertEqual(doc["faults_injected"], 0)
            self.assertEqual(doc["redone_steps"], 4)
            self.assertLedgerClean(doc)

    def test_exec_that_always_fails_is_given_up(self):
        p, doc = run_json("--workload", "exec", "--cmd", f"{PY} -c 'import sys; sys.exit(5)'",
                          "--steps", "10", "--max-restarts", "2")
        self.assertEqual(p.returncode, 1)
        self.assertEqual(doc["worker_results"][0]["state"], "failed")
        self.assertIn("given up", doc["worker_results"][0]["failure"])

    # Rules, interrupts.
    def test_fatal_rule_alert_fails_the_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            rules = self.write(tmp, "r.yaml", textwrap.dedent("""\
                - name: always
                  metric: host_memory_total_bytes
                  op: ">"
                  value: 0
                  severity: fatal
                """))
            p, doc = run_json(*GEMM, "--steps", "20", "--rules", rules, "--source", "host")
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertEqual(doc["alerts"][0]["rule"], "always")
            self.assertTrue(any("fatal rule" in r for r in doc["reasons"]))

    def test_sigint_stops_with_a_final_checkpoint_and_a_result(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            ck = os.path.join(tmp, "ck")
            proc = subprocess.Popen([BIN, "stress", *TRAIN, "--duration", "60",
                                     "--checkpoint-every", "1000000", "--checkpoint-dir", ck,
                                     "--json", out, "--quiet"], env=ENV,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            # Interrupted once the worker is stepping (not at a fixed time, which a loaded
            # machine can outrun: before the first step there is nothing to checkpoint). It
            # writes one line per step, of well under a millisecond here, and only a few lines
            # before its first (more when sanitized: three or four were once not enough), so
            # 200 writes are steps whatever came before.
            wait_for_worker_writes(self, proc, 200)
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
            self.assertEqual(proc.returncode, 130, err)
            with open(out) as f:
                doc = json.load(f)
            self.assertTrue(doc["interrupted"])
            self.assertEqual(doc["worker_results"][0]["state"], "stopped")
            files = os.listdir(os.path.join(ck, "worker-0"))
            # The only checkpoint is the final one, of the last step done.
            self.assertEqual(files, ["step-%012d.ckpt" % doc["steps"]])

    def test_inline_runs_the_bare_workload(self):
        p, doc = run_json(*GEMM, "--inline", "--steps", "20")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(doc["supervised"])
        self.assertEqual(doc["steps"], 20)
        self.assertGreater(doc["throughput"]["value"], 0)

    # Bad input.
    def test_bad_input_is_exit_2_with_the_problem(self):
        cases = [
            (["--workload", "gemm-brun", "--steps", "1"], "did you mean 'gemm-burn'"),
            (["--steps", "1"], "--workload"),
            ([*GEMM, "--steps", "1", "--inject", "kil"], "did you mean 'kill'"),
            ([*GEMM, "--steps", "1", "--inject", "kill:every=0"], "every"),
            ([*GEMM, "--inject", "kill"], "needs --duration or --steps"),
            ([*TRAIN, "--steps", "1", "--inject", "sdc"], "burn workload"),
            ([*GEMM, "--steps", "1", "--cmd", "x"], "only the exec workload"),
            (["--workload", "exec", "--steps", "1"], "needs --cmd"),
            (["--workload", "exec", "--steps", "1", "--cmd", "echo {nope}"], "nope"),
            (["--workload", "exec", "--steps", "1", "--cmd", "echo 'open"], "unterminated"),
            ([*GEMM, "--steps", "1", "--param", "lr=0.1"], "lr"),
            ([*GEMM, "--steps", "1", "--param", "n=-5"], "n"),
            ([*GEMM, "--steps", "1", "--param", "oops"], "NAME=VALUE"),
            ([*GEMM, "--steps", "0"], "at least 1"),
            ([*GEMM, "--duration", "-1"], "more than 0"),
            ([*GEMM, "--steps", "1", "--rules", "/nonexistent/r.yaml"], "/nonexistent/r.yaml"),
            ([*GEMM, "--steps", "1", "--matrix", "/nonexistent/m.yaml"], "/nonexistent/m.yaml"),
        ]
        for args, needle in cases:
            p = parity(*args)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn("parity: error:", p.stderr, args)
            self.assertIn(needle, p.stderr, args)

    def test_unavailable_backend_is_exit_3(self):
        p = parity("--workload", "gemm-burn", "--backend", "hip", "--steps", "1", "--quiet")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("parity: error:", p.stderr)

    def test_help_and_list(self):
        p = parity("--help")
        self.assertEqual(p.returncode, 0)
        for word in ["--inject", "--matrix", "--cmd", "gemm-burn", "stream-burn", "train", "exec"]:
            self.assertIn(word, p.stdout)
        self.assertNotIn("--params", p.stdout)  # the worker side stays hidden
        p = parity("--list-workloads")
        self.assertEqual(p.returncode, 0)
        self.assertIn("batch_size", p.stdout)


if __name__ == "__main__":
    unittest.main()
