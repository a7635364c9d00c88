#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`parity fleet collect` under a real Slurm: a one-node cluster of Debian's munged, slurmctld
and slurmd, configured in a temporary directory, started here and stopped at the end (nothing
left running). Four tasks by `srun -n4 --mpi=pmix` and by `sbatch --wait`, then `parity fleet
report`; bad input: srun without PMIx, and more tasks per node than --per-device has devices.

Reference values: the host name from Python's socket.gethostname(), Slurm's own task count.
Skipped (exit 77, with the reason) where the Slurm or munge binaries are missing, without
root (SlurmUser=root), or when a daemon cannot start here (its log is printed).
Environment (set by CTest): PARITY_BIN.
"""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import textwrap
import time
import unittest

import processes

BIN = os.path.realpath(os.environ["PARITY_BIN"])
DAEMONS = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld",
           "slurmd": "/usr/sbin/slurmd"}
CLIENTS = ["srun", "sbatch", "sinfo", "squeue"]
HOST = socket.gethostname()
START_SECONDS = 30  # each daemon's start-up, polled

PLAN = textwrap.dedent("""\
    plan: slurm-test
    backend: cpu
    stages:
      - name: quick
        kind: bench
        suites: [stream]
        dtypes: [float64]
        n: 65536
        reps: 5
    """)


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return ""


class SlurmCluster:
    """munged, slurmctld and slurmd in the foreground, each in a process group of its own, with
    every path under `root`."""

    def __init__(self, root):
        self.root = root
        self.procs = {}
        self.conf = os.path.join(root, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        ctld_port, d_port = free_ports(2)
        for d in ("state", "spool"):
            os.mkdir(os.path.join(root, d))
        key = os.path.join(root, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
        p = lambda name: os.path.join(root, name)  # noqa: E731
        with open(self.conf, "w") as f:
            f.write(textwrap.dedent(f"""\
                ClusterName=paritytest
                SlurmctldHost={HOST}(127.0.0.1)
                SlurmUser=root
                SlurmdUser=root
                SlurmctldPort={ctld_port}
                SlurmdPort={d_port}
                AuthType=auth/munge
                AuthInfo=socket={p('munge.socket')}
                CredType=cred/munge
                StateSaveLocation={p('state')}
                SlurmdSpoolDir={p('spool')}
                SlurmctldPidFile={p('slurmctld.pid')}
                SlurmdPidFile={p('slurmd.pid')}
                SlurmctldLogFile={p('slurmctld.log')}
                SlurmdLogFile={p('slurmd.log')}
                ProctrackType=proctrack/linuxproc
                TaskPlugin=task/none
                JobAcctGatherType=jobacct_gather/none
                AccountingStorageType=accounting_storage/none
                JobCompType=jobcomp/none
                SchedulerType=sched/builtin
                SelectType=select/cons_tres
                SelectTypeParameters=CR_CPU
                SlurmdParameters=config_overrides
                MpiDefault=none
                ReturnToService=2
                NodeName={HOST} NodeAddr=127.0.0.1 CPUs=4 State=UNKNOWN
                PartitionName=test Nodes=ALL Default=YES State=UP OverSubscribe=FORCE
                """))
        # Empty: Slurm's defaults (cgroups are not used: proctrack/linuxproc, task/none).
        open(os.path.join(root, "cgroup.conf"), "w").close()
        self.munge = [DAEMONS["munged"], "-F", "--force", f"--socket={p('munge.socket')}",
                      f"--key-file={key}", f"--pid-file={p('munged.pid')}",
                      f"--log-file={p('munged.log')}", f"--seed-file={p('munged.seed')}"]
        self.logs = {"munged": p("munged.log"), "slurmctld": p("slurmctld.log"),
                     "slurmd": p("slurmd.log")}

    def _start(self, name, argv, ready):
        self.procs[name] = processes.start_group(argv, os.path.join(self.root, name + ".out"),
                                                 env=self.env)
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if self.procs[name].poll() is not None:
                return (f"{name} exited ({self.procs[name].returncode}) while starting:\n"
                        + tail(os.path.join(self.root, name + ".out")) + tail(self.logs[name]))
            if ready():
                return None
            time.sleep(0.1)
        return f"{name} not ready within {START_SECONDS} s:\n" + tail(self.logs[name])

    def start(self):
        """None when the node is idle; else why a daemon did not start."""
        socket_path = os.path.join(self.root, "munge.socket")
        return (self._start("munged", self.munge, lambda: os.path.exists(socket_path))
                or self._start("slurmctld", [DAEMONS["slurmctld"], "-D", "-i"], self._answers)
                or self._start("slurmd", [DAEMONS["slurmd"], "-D"], self._idle))

    def _sinfo(self):
        p = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                           env=self.env, timeout=10)
        return p.stdout.strip() if p.returncode == 0 else None

    def _answers(self):
        return self._sinfo() is not None

    def _idle(self):
        return self._sinfo() == "idle"

    def stop(self):
        """Stops every daemon, slurmd first; the process groups still alive after (none)."""
        left = []
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self.procs.pop(name, None)
            if proc is not None:
                processes.stop_group(proc)
                if processes.group_alive(proc.pid):
                    left.append(name)
        return left


class SlurmFleet(unittest.TestCase):
    cluster = None

    @classmethod
    def setUpClass(cls):
        missing = [d for d in DAEMONS.values() if not os.access(d, os.X_OK)]
        missing += [c for c in CLIENTS if shutil.which(c) is None]
        if missing:
            raise unittest.SkipTest("Slurm is not installed here (missing: "
                                    + ", ".join(missing) + "; scripts/install-deps)")
        if os.geteuid() != 0:
            raise unittest.SkipTest("the test cluster runs its daemons as root (SlurmUser=root)")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.cluster = SlurmCluster(cls.tmp.name)
        problem = cls.cluster.start()
        if problem:
            cls.cluster.stop()
            cls.tmp.cleanup()
            print(problem)
            raise unittest.SkipTest("this machine cannot run the Slurm daemons: "
                                    + problem.splitlines()[0])
        cls.env = dict(cls.cluster.env)
        cls.env.update({"PARITY_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
                        "PARITY_ROCM_SMI_LIBRARY": "/nonexistent/librocm_smi64.so.1",
                        "OMPI_MCA_btl": "self,vader,tcp",
                        "OMPI_MCA_btl_base_warn_component_unused": "0",
                        "OMP_NUM_THREADS": "1"})
        cls.plan = os.path.join(cls.tmp.name, "plan.yaml")
        with open(cls.plan, "w") as f:
            f.write(PLAN)

    @classmethod
    def tearDownClass(cls):
        if cls.cluster is None:
            return
        left = cls.cluster.stop()
        cls.tmp.cleanup()
        if left:
            raise AssertionError(f"still running after the cluster stopped: {left}")

    def setUp(self):
        self.dir = tempfile.mkdtemp(dir=self.tmp.name)
        self.work = os.path.join(self.dir, "work")
        os.mkdir(self.work)

    def tearDown(self):
        # Nothing of the job is left: no parity, no job in the queue.
        self.assertEqual(processes.wait_until_gone(BIN, 10), [])
        # A job whose tasks have ended is COMPLETING for a moment, then leaves the queue.
        deadline = time.monotonic() + 15
        while True:
            q = subprocess.run(["squeue", "-h"], capture_output=True, text=True, env=self.env,
                               timeout=10)
            if q.stdout.strip() == "" or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        self.assertEqual(q.stdout.strip(), "")

    def srun(self, *args, env=None, timeout=120):
        return subprocess.run(["srun", "-N1", "-n4", *args], capture_output=True, text=True,
                              env=env or self.env, timeout=timeout)

    def check_fleet(self, fleet):
        with open(os.path.join(fleet, "fleet.json")) as f:
            manifest = json.load(f)
        self.assertEqual(manifest["ranks"], 4)
        self.assertIn("Open MPI", manifest["mpi"])
        members = manifest["members"]
        self.assertEqual([m["rank"] for m in members], [0, 1, 2, 3])
        self.assertEqual({m["host"] for m in members}, {HOST})
        self.assertEqual([m["name"] for m in members], [f"{HOST}.r{r}" for r in range(4)])
        for m in members:
            self.assertEqual(m["status"], "ok", m)
            self.assertTrue(os.path.isfile(os.path.join(fleet, m["bundle"], "manifest.json")))
        self.assertEqual(os.listdir(self.work), [])
        return manifest

    def test_srun_four_tasks_then_report(self):
        fleet = os.path.join(self.dir, "fleet")
        p = self.srun("--mpi=pmix", BIN, "fleet", "collect", self.plan, "-o", fleet,
                      "--work-dir", self.work, "--timeout", "60")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        manifest = self.check_fleet(fleet)
        out = os.path.join(self.dir, "report.json")
        r = subprocess.run([BIN, "fleet", "report", fleet, "--json", out], capture_output=True,
                           text=True, env=self.env, timeout=60)
        self.assertIn(r.returncode, (0, 1), r.stdout + r.stderr)  # 1: an outlier on 2 cores
        with open(out) as f:
            report = json.load(f)
        self.assertEqual(report["format"], "parity-fleet-report")
        names = {m["name"] for m in manifest["members"]}
        self.assertTrue(report["benchmarks"])
        for b in report["benchmarks"]:
            self.assertEqual(set(b["values"]), names)

    def test_sbatch_wait(self):
        fleet = os.path.join(self.dir, "fleet")
        script = os.path.join(self.dir, "job.sh")
        with open(script, "w") as f:
            f.write(textwrap.dedent(f"""\
                #!/bin/sh
                #SBATCH --nodes=1 --ntasks=4 --time=5
                #SBATCH --output={self.dir}/job.out
                exec srun --mpi=pmix {BIN} fleet collect {self.plan} -o {fleet} \\
                  --work-dir {self.work} --timeout 60
                """))
        p = subprocess.run(["sbatch", "--wait", script], capture_output=True, text=True,
                           env=self.env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr + tail(f"{self.dir}/job.out"))
        self.assertIn("Submitted batch job", p.stdout)
        self.check_fleet(fleet)

    def test_srun_without_pmix_is_bad_input_on_every_task(self):
        fleet = os.path.join(self.dir, "fleet")
        p = self.srun("--mpi=none", BIN, "fleet", "collect", self.plan, "-o", fleet,
                      "--work-dir", self.work)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        # Said once (by task 0), not by four singletons; no fleet directory.
        self.assertEqual(p.stderr.count("srun started 4 tasks without PMIx"), 1, p.stderr)
        self.assertIn("--mpi=pmix", p.stderr)
        self.assertFalse(os.path.exists(fleet))
        self.assertEqual(os.listdir(self.work), [])

    def test_more_tasks_than_devices_is_bad_input_on_every_task(self):
        fleet = os.path.join(self.dir, "fleet")
        env = dict(self.env, CUDA_VISIBLE_DEVICES="0,1")
        p = self.srun("--mpi=pmix", BIN, "fleet", "collect", self.plan, "-o", fleet,
                      "--work-dir", self.work, "--per-device", env=env)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        message = f"--per-device: {HOST} runs 4 ranks but CUDA_VISIBLE_DEVICES=0,1 names 2"
        self.assertEqual(p.stderr.count(message), 1, p.stderr)
        self.assertFalse(os.path.exists(fleet))
        self.assertEqual(os.listdir(self.work), [])


if __name__ == "__main__":
    unittest.main()
