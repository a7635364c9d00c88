#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the MPI parts under a real mpirun (Open MPI): the collective suite
(every collective checked on every rank, bus bandwidth by nccl-tests' factors), a planted
corruption caught, the interconnect matrix, `parity fleet collect` with a slowed and a killed
rank, `parity fleet report`, and bad input.

Reference values: nccl-tests' bus-bandwidth factors (doc/PERFORMANCE.md), the R's
mad(constant = 1) definition recomputed here with numpy.
Environment (set by CTest): PARITY_BIN, PARITY_MPIEXEC.
"""
import json
import os
import subprocess
import tempfile
import textwrap
import unittest

import numpy as np

BIN = os.environ["PARITY_BIN"]
MPIEXEC = os.environ.get("PARITY_MPIEXEC", "mpirun")
ENV = dict(os.environ)
ENV.update({"PARITY_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
            "PARITY_ROCM_SMI_LIBRARY": "/nonexistent/librocm_smi64.so.1",
            # Open MPI on a CI machine: no InfiniBand, no warnings about it.
            "OMPI_MCA_btl": "self,vader,tcp", "OMPI_MCA_btl_base_warn_component_unused": "0",
            # One thread per rank: ranks that share two cores with each other (and with the
            # other tests) then measure the same machine.
            "OMP_NUM_THREADS": "1"})
from sanitized import SANITIZED  # tests/cli/sanitized.py
if SANITIZED:
    # Open MPI's components keep allocations until exit and are unloaded by then, so
    # LeakSanitizer sees stacks it cannot attribute (no suppression can name them). The ranks run
    # with ASan's memory checks and UBSan; parity's own leaks are checked by the unit tests.
    ENV["ASAN_OPTIONS"] = "detect_leaks=0"

PLAN = textwrap.dedent("""\
    plan: fleet-test
    backend: cpu
    stages:
      - name: quick
        kind: bench
        suites: [stream]
        dtypes: [float64]
        n: 1048576
        reps: 10
    """)

# nccl-tests doc/PERFORMANCE.md: busBw = algBw × factor, n ranks.
FACTORS = {"all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
           "reduce_scatter": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
           "broadcast": lambda n: 1.0, "sendrecv": lambda n: 1.0}


def mpirun(ranks, *args, timeout=300, env=None):
    cmd = [MPIEXEC, "--oversubscribe", "-np", str(ranks)]
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return subprocess.run(cmd + [BIN] + list(args), capture_output=True, text=True,
                          env=env or ENV, timeout=timeout)


def load(path):
    with open(path) as f:
        return json.load(f)


def parity(*args, timeout=120, env=None):
    return subprocess.run([BIN] + list(args), capture_output=True, text=True, env=env or ENV,
                          timeout=timeout)


class CollectiveSuite(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    ENV = ENV
    # MPI_Bcast has one buffer: broadcast runs in place only.
    IN_PLACE_ONLY = {"broadcast"}
    OUT_OF_PLACE_ONLY = set()
    TRANSPORT = "mpi"
    EXTRA = []

    def run_suite(self, ranks, *extra, max_bytes="64K"):
        out = os.path.join(self.tmp.name, "coll.json")
        p = mpirun(ranks, "bench", "--suite", "collective", "--max-bytes", max_bytes, "--json",
                   out, *self.EXTRA, *extra, env=self.ENV)
        doc = load(out) if os.path.exists(out) else None
        return p, doc

    def check_all_correct(self, ranks):
        p, doc = self.run_suite(ranks)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(doc["format"], "parity-bench")
        results = doc["results"]
        seen = {}
        for r in results:
            name = r["benchmark"].split(".", 1)[1]
            seen.setdefault(name, set()).add(r["params"]["in_place"])
            self.assertEqual(r["status"], "ok", r)
            self.assertEqual(r["wrong"], 0, r)
            self.assertEqual(r["params"]["ranks"], ranks)
            self.assertEqual(r["params"]["transport"], self.TRANSPORT)
            self.assertGreater(r["validation"]["checked"], 0)
            factor = FACTORS[name](ranks)
            self.assertAlmostEqual(r["validation"]["busbw_factor"], factor, places=12)
            self.assertAlmostEqual(r["busbw"], r["algbw"] * factor,
                                   delta=1e-9 * max(1.0, r["busbw"]))
            # algBw = bytes / time (GB/s = 10^9 B/s), time in microseconds.
            self.assertAlmostEqual(r["algbw"], r["params"]["bytes"] / (r["time_us"] * 1e3),
                                   delta=1e-6 * r["algbw"] + 1e-12)
        self.assertEqual(set(seen), set(FACTORS))
        for name, places in seen.items():
            want = ({True} if name in self.IN_PLACE_ONLY else
                    {False} if name in self.OUT_OF_PLACE_ONLY else {False, True})
            self.assertEqual(places, want, name)
        sizes = sorted({r["params"]["bytes"] for r in results if r["benchmark"].endswith("all_reduce")})
        self.assertEqual(sizes[0], 8)
        self.assertEqual(sizes[-1], 65536)
        # Doubling from --min-bytes to --max-bytes.
        self.assertTrue(all(b == 2 * a for a, b in zip(sizes, sizes[1:])), sizes)

    def test_four_ranks_every_collective_checked(self):
        self.check_all_correct(4)

    def test_three_ranks_uneven_parts(self):
        self.check_all_correct(3)

    def test_corrupted_output_on_one_rank_is_caught(self):
        p, doc = self.run_suite(4, "--inject", "corrupt:rank=2", "--collective",
                                "all_reduce,broadcast")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertEqual(doc["settings"]["inject"], "corrupt:rank=2")
        self.assertTrue(doc["results"])
        for r in doc["results"]:
            self.assertEqual(r["status"], "invalid", r)
            self.assertGreaterEqual(r["wrong"], 1, r)
            self.assertIn("output elements wrong", r["reason"])
        self.assertEqual({r["benchmark"] for r in doc["results"]},
                         {"collective.all_reduce", "collective.broadcast"})

    def test_interconnect_matrix_has_every_ordered_pair(self):
        out = os.path.join(self.tmp.name, "link.json")
        p = mpirun(3, "bench", "--suite", "interconnect", "--max-bytes", "64K", "--json", out,
                   *self.EXTRA, env=self.ENV)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("one-way bandwidth", p.stdout)
        results = load(out)["results"]
        uni = {(r["params"]["src"], r["params"]["dst"]) for r in results
               if r["benchmark"] == "interconnect.bandwidth" and r["params"]["direction"] == "uni"}
        pairs = {(a, b) for a in range(3) for b in range(3) if a != b}
        self.assertEqual(uni, pairs)
        lat = [r for r in results if r["benchmark"] == "interconnect.latency"]
        self.assertTrue(lat)
        for r in results:
            self.assertEqual(r["status"], "ok", r)
            self.assertEqual(r["params"]["transport"], self.TRANSPORT)
            self.assertGreater(r["median"], 0)

    def test_one_rank_is_skipped_with_a_reason(self):
        # Without mpirun: a singleton, one rank, on this class's transport.
        out = os.path.join(self.tmp.name, "one.json")
        p = parity("bench", "--suite", "collective", "--json", out, *self.EXTRA, env=self.ENV)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("every benchmark was skipped", p.stderr)
        doc = load(out)
        self.assertEqual(len(doc["results"]), 6)
        self.assertEqual({r["benchmark"].split(".", 1)[1] for r in doc["results"]}, set(FACTORS))
        for r in doc["results"]:
            self.assertEqual(r["status"], "skipped")
            self.assertIn("one rank", r["reason"])

    def test_bad_input(self):
        cases = [
            (["--inject", "corrupt:rank=9"], "rank 9 is not one of the 2 ranks"),
            (["--inject", "corrupt:rank=x"], "is not corrupt:rank=R"),
            (["--collective", "all_reduce,allreduce"], "allreduce"),
            (["--min-bytes", "1M", "--max-bytes", "1K"], "is above --max-bytes"),
            (["--max-bytes", "8Q"], "unit 'Q'"),
            (["--max-bytes", "5G"], "between 1 byte and 4 GiB"),
        ]
        for extra, message in cases:
            with self.subTest(extra=extra):
                p = mpirun(2, "bench", "--suite", "collective", *extra)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn("parity: error:", p.stderr)
                self.assertIn(message, p.stderr)
        p = parity("bench", "--suite", "stream,collective")
        self.assertEqual(p.returncode, 2)
        self.assertIn("run them apart from the host suites", p.stderr)


PLUGINS = os.environ.get("PARITY_TEST_PLUGINS", "")
NCCL_ENV = dict(ENV, PARITY_BACKEND_PATH=PLUGINS,
                PARITY_NCCL_LIBRARY=os.path.join(PLUGINS, "libfake_nccl.so"))


class NcclTransport(CollectiveSuite):
    """The same suite on the NCCL transport: the fake backend's device buffers and a fake of
    NCCL's C ABI (tests/fleet/fake_nccl.c) that refuses what the real library refuses."""
    ENV = NCCL_ENV
    # ncclBroadcast has both forms; NCCL's alltoall and sendrecv are grouped sends and receives,
    # which cannot share one buffer.
    IN_PLACE_ONLY = set()
    OUT_OF_PLACE_ONLY = {"alltoall", "sendrecv"}
    TRANSPORT = "nccl"
    EXTRA = ["--backend", "fake"]

    def test_one_rank_opens_the_nccl_library(self):
        # The one-rank run above goes through the NCCL transport: a communicator that cannot
        # be made fails it (exit 3), where the MPI transport would have skipped.
        out = os.path.join(self.tmp.name, "one.json")
        p = parity("bench", "--suite", "collective", "--json", out, *self.EXTRA,
                   env=dict(self.ENV, FAKE_NCCL_FAIL="init"))
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("ncclCommInitRank returned 2 (unhandled system error (fake))", p.stderr)
        self.assertNotIn("every benchmark was skipped", p.stderr)

    def test_bad_input(self):
        cases = [
            (NCCL_ENV, ["--backend", "cpu", "--transport", "nccl"], 2, "needs a GPU backend"),
            (NCCL_ENV, ["--backend", "fake", "--transport", "mpi"], 2, "moves host buffers"),
            (NCCL_ENV, ["--backend", "fake", "--transport", "gloo"], 2, "is not mpi, nccl or rccl"),
            (dict(NCCL_ENV, FAKE_NCCL_FAIL="init"), ["--backend", "fake"], 3,
             "ncclCommInitRank returned 2 (unhandled system error (fake))"),
            (dict(NCCL_ENV, PARITY_NCCL_LIBRARY="/nonexistent/libnccl.so.2"), ["--backend", "fake"],
             3, "/nonexistent/libnccl.so.2"),
            (NCCL_ENV, ["--backend", "nosuch"], 3, "nosuch"),
        ]
        for env, extra, code, message in cases:
            with self.subTest(extra=extra, message=message):
                p = mpirun(2, "bench", "--suite", "collective", "--max-bytes", "1K", *extra,
                           env=env)
                self.assertEqual(p.returncode, code, p.stdout + p.stderr)
                self.assertIn("parity: error:", p.stderr)
                self.assertIn(message, p.stderr)

    def test_implementation_is_the_library_version(self):
        p, doc = self.run_suite(2, "--collective", "all_reduce", max_bytes="64")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # The fake's ncclGetVersion says 22105: NCCL 2.21.5.
        self.assertEqual({r["implementation"] for r in doc["results"]}, {"NCCL 2.21.5"})


class FleetCollect(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.plan = os.path.join(self.tmp.name, "plan.yaml")
        with open(self.plan, "w") as f:
            f.write(PLAN)
        self.work = os.path.join(self.tmp.name, "work")
        os.mkdir(self.work)

    def tearDown(self):
        self.tmp.cleanup()

    def collect(self, ranks, fleet, *extra, env=None):
        return mpirun(ranks, "fleet", "collect", self.plan, "-o", fleet, "--work-dir", self.work,
                      *extra, timeout=600, env=env)

    # How much slower the planted member runs: under the sanitizers a member's quick stage
    # already takes seconds, and the slowed one took 100 times that (150 s of CI, alone).
    SLOW = 30 if SANITIZED else 100

    def test_slowed_rank_is_the_outlier(self):
        fleet = os.path.join(self.tmp.name, "fleet")
        # One OpenMP thread per member: with two, each kernel waits at its barrier for the thread
        # whose core the machine lends elsewhere (CI builds beside the tests), and a member can
        # come out 35 times slower. A factor of 100 (30 under the sanitizers, alone on the
        # machine) stays apart from that.
        p = self.collect(4, fleet, "--sequential", "--inject",
                         "slow:rank=2,factor=%d" % self.SLOW,
                         env=dict(ENV, OMP_NUM_THREADS="1"))
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        manifest = load(os.path.join(fleet, "fleet.json"))
        self.assertEqual(manifest["format"], "parity-fleet")
        self.assertTrue(manifest["sequential"])
        self.assertEqual([m["rank"] for m in manifest["members"]], [0, 1, 2, 3])
        for m in manifest["members"]:
            self.assertEqual(m["status"], "ok", m)
            bundle = os.path.join(fleet, m["bundle"])
            self.assertTrue(os.path.isfile(os.path.join(bundle, "manifest.json")))
            self.assertTrue(os.path.isfile(os.path.join(bundle, "stages", "quick", "bench.json")))
        # The work directories are removed once the bundles are gathered.
        self.assertEqual(os.listdir(self.work), [])

        out = os.path.join(self.tmp.name, "report.json")
        # k = 1.5: a member SLOW times slower is about median / MAD deviations away, and on 2
        # shared cores under the sanitizers the other members spread to a MAD of a third of the
        # median (CI: median 1.2 GB/s, MAD 0.4), below the default k = 3.
        r = parity("fleet", "report", fleet, "--k", "1.5", "--json", out)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        report = load(out)
        self.assertEqual(report["format"], "parity-fleet-report")
        slow = manifest["members"][2]["name"]
        self.assertIn("OUTLIER " + slow, r.stdout)
        flagged = lowest = 0
        for b in report["benchmarks"]:
            values = np.array(list(b["values"].values()))
            median = np.median(values)
            self.assertAlmostEqual(b["median"], median, delta=1e-9 * median)
            self.assertAlmostEqual(b["mad"], np.median(np.abs(values - median)),
                                   delta=1e-9 * median)
            members = {o["member"] for o in b["outliers"]}
            flagged += slow in members
            for o in b["outliers"]:
                self.assertLess(o["value"], b["median"])  # the slow side only
                self.assertGreater(o["deviations"], report["k"])
            # A hundred times slower: far below the median on every stream kernel, and the lowest
            # figure of most (on 2 shared cores a member the machine disturbs, e.g. while the
            # sanitizer build runs beside the release tests, can fall as low on one kernel).
            lowest += min(b["values"], key=b["values"].get) == slow
            self.assertLess(b["values"][slow], median / 10, b)
        self.assertEqual(report["k"], 1.5)
        # Whether 1.5 MADs are passed on each kernel depends on how far apart the other members'
        # figures fall; on 2 shared cores they can spread by half from one member to the next.
        # At least one kernel flags the slowed member.
        self.assertGreaterEqual(flagged, 1, r.stdout)
        self.assertEqual(len(report["benchmarks"]), 6)
        self.assertGreaterEqual(lowest, 4, report["benchmarks"])

        # With k = 1000 a factor of 100 is inside the spread (at most 1 / min_relative_mad =
        # 100 deviations): nothing is flagged, exit 0.
        out2 = os.path.join(self.tmp.name, "report2.json")
        r = parity("fleet", "report", fleet, "--k", "1000", "--json", out2)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(load(out2)["outliers"], 0)

        # parity accept with the fleet as CAND judges every member against one baseline.
        base = os.path.join(fleet, manifest["members"][0]["bundle"])
        for min_ratio, expect in [(3.0 / self.SLOW, {slow: "fail"}), (1e-6, {})]:
            with self.subTest(min_ratio=min_ratio):
                criteria = os.path.join(self.tmp.name, "criteria.yaml")
                with open(criteria, "w") as f:
                    f.write(f"throughput:\n  min_ratio: {min_ratio}\n")
                acc = os.path.join(self.tmp.name, "accept")
                a = parity("accept", base, fleet, "-o", acc, "--criteria", criteria, "--no-store")
                self.assertEqual(a.returncode, 1 if expect else 0, a.stdout + a.stderr)
                summary = load(os.path.join(acc, "fleet-accept.json"))
                self.assertEqual(summary["format"], "parity-fleet-accept")
                self.assertEqual(summary["verdict"], "fail" if expect else "pass")
                self.assertEqual([n["name"] for n in summary["nodes"]],
                                 [m["name"] for m in manifest["members"]])
                for node in summary["nodes"]:
                    self.assertEqual(node["verdict"], expect.get(node["name"], "pass"), node)
                    one = load(os.path.join(acc, node["report"]))
                    self.assertEqual(one["verdict"], node["verdict"])
        with open(os.path.join(acc, "stray.txt"), "w") as f:
            f.write("x")
        a = parity("accept", base, fleet, "-o", acc, "--no-store")
        self.assertEqual(a.returncode, 2, a.stdout + a.stderr)
        self.assertIn("holds 'stray.txt'", a.stderr)

    def test_members_collect_while_mpi_starts(self):
        # Neither --sequential, --per-device nor --inject: each collect starts before MPI_Init.
        fleet = os.path.join(self.tmp.name, "fleet")
        db = os.path.join(self.tmp.name, "parity.db")
        p = self.collect(2, fleet, "--db", db)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        # Rank 0 recorded the fleet as one run, a stage per member.
        run, = self.fleet_runs(db)
        self.assertEqual(run["status"], "passed")
        self.assertEqual(run["plan"], "fleet-test")
        self.assertEqual(run["bundle"], os.path.abspath(fleet))
        self.assertEqual(sorted(s["status"] for s in run["stages"]), ["passed", "passed"])
        manifest = load(os.path.join(fleet, "fleet.json"))
        self.assertEqual([m["rank"] for m in manifest["members"]], [0, 1])
        for m in manifest["members"]:
            self.assertEqual(m["status"], "ok", m)
            self.assertEqual(m["exit"], 0)
            self.assertEqual(m["local_rank"], m["rank"])  # both on this host
            self.assertTrue(m["host"])
            bundle = os.path.join(fleet, m["bundle"])
            self.assertTrue(os.path.isfile(os.path.join(bundle, "manifest.json")), bundle)
        self.assertEqual(os.listdir(self.work), [])

    def fleet_runs(self, db):
        h = parity("history", "--db", db, "--json", "-", "-q")
        self.assertEqual(h.returncode, 0, h.stderr)
        return [r for r in json.loads(h.stdout)["runs"] if r["kind"] == "fleet"]

    def test_killed_rank_is_recorded_failed_and_the_others_finish(self):
        fleet = os.path.join(self.tmp.name, "fleet")
        db = os.path.join(self.tmp.name, "parity.db")
        p = self.collect(3, fleet, "--inject", "kill:rank=1,after=0.1", "--db", db)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        run, = self.fleet_runs(db)
        self.assertEqual(run["status"], "failed")
        failed = [s for s in run["stages"] if s["status"] == "failed"]
        self.assertEqual(len(failed), 1)
        self.assertIn("signal 9", failed[0]["reason"])
        self.assertIn("FAILED", p.stdout)
        manifest = load(os.path.join(fleet, "fleet.json"))
        status = {m["rank"]: m for m in manifest["members"]}
        self.assertEqual(status[1]["status"], "failed")
        self.assertIn("signal 9", status[1]["reason"])
        for rank in (0, 2):
            self.assertEqual(status[rank]["status"], "ok")
            self.assertTrue(os.path.isdir(os.path.join(fleet, status[rank]["bundle"])))
        r = parity("fleet", "report", fleet, "--json", os.path.join(self.tmp.name, "r.json"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        report = load(os.path.join(self.tmp.name, "r.json"))
        self.assertEqual([f["rank"] for f in report["failed"]], [1])
        self.assertEqual(len(report["members"]), 2)
        self.assertTrue(any("at least 3" in n for n in report["notes"]))
        # Accepting the fleet: the killed member has no bundle to judge, so the fleet fails.
        acc = os.path.join(self.tmp.name, "accept")
        a = parity("accept", os.path.join(fleet, status[0]["bundle"]), fleet, "-o", acc,
                   "--no-store")
        self.assertEqual(a.returncode, 1, a.stdout + a.stderr)
        nodes = {n["rank"]: n for n in load(os.path.join(acc, "fleet-accept.json"))["nodes"]}
        self.assertEqual(nodes[1]["verdict"], "error")
        self.assertIn("signal 9", nodes[1]["reason"])

    def test_bad_input(self):
        full = os.path.join(self.tmp.name, "full")
        os.mkdir(full)
        open(os.path.join(full, "x"), "w").close()
        p = self.collect(2, full)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("exists and is not empty", p.stderr)
        # The members' collects, started while MPI started, were stopped and cleaned away.
        self.assertEqual(os.listdir(self.work), [])
        for inject, message in [("slow:rank=x", "is not slow:rank=R"),
                                ("slow:rank=1,factor=0.5", "is not slow:rank=R"),
                                ("kill:rank=5", "rank 5 is not one of the 2 ranks"),
                                ("explode:rank=1", "is not slow:rank=R")]:
            with self.subTest(inject=inject):
                p = self.collect(2, os.path.join(self.tmp.name, "f-" + inject), "--inject", inject)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn("parity: error:", p.stderr)
                self.assertIn(message, p.stderr)
        p = parity("fleet", "collect", os.path.join(self.tmp.name, "missing.yaml"), "-o",
                   os.path.join(self.tmp.name, "f"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("missing.yaml", p.stderr)

        # fleet report: no fleet.json, a malformed one, a member bundle outside the fleet.
        p = parity("fleet", "report", self.tmp.name)
        self.assertEqual(p.returncode, 2)
        self.assertIn("fleet.json", p.stderr)
        bad = os.path.join(self.tmp.name, "bad")
        os.mkdir(bad)
        for text, message in [("{", "not a JSON object"),
                              ('{"format":"parity-fleet","version":1,"members":[{"name":"a",'
                               '"status":"ok","bundle":"../../etc"}]}', "not a path inside"),
                              ('{"format":"parity-fleet","version":1,"members":[{"name":"a",'
                               '"status":"ok","bundle":"nodes/a"}]}', "nodes/a")]:
            with self.subTest(text=text):
                with open(os.path.join(bad, "fleet.json"), "w") as f:
                    f.write(text)
                p = parity("fleet", "report", bad)
                self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
                self.assertIn("parity: error:", p.stderr)
                self.assertIn(message, p.stderr)
        p = parity("fleet", "report", bad, "--k", "-1")
        self.assertEqual(p.returncode, 2)


if __name__ == "__main__":
    unittest.main()
