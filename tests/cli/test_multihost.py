#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`parity fleet collect` and the interconnect suite across two hosts: network namespaces, each
with its own host name (a UTS namespace) and address on a veth pair, made here and removed at
the end. `mpirun --host hostA:3,hostB:1` launches over TCP with no ssh: Open MPI's rsh agent is
a script that runs the command in the named host's namespace. MPI's traffic (its out-of-band
channel and the TCP BTL) is held to the veth subnet. hostB is slowed 30 times, and the fleet
report must flag it; a host that resolves nowhere must end the launch, bounded, with the
reason and nothing left running.

Reference values: the host names given to the namespaces here; the ranks' placement from
mpirun's --host list. Skipped (exit 77, with the reason) where namespaces cannot be made (not
root, no `ip netns`, or the kernel refuses). Environment (set by CTest): PARITY_BIN.
"""
import json
import os
import shutil
import subprocess
import tempfile
import textwrap
import unittest

import processes

BIN = os.path.realpath(os.environ["PARITY_BIN"])
SUBNET = "10.231.{}.0/24"

PLAN = textwrap.dedent("""\
    plan: multihost-test
    backend: cpu
    stages:
      - name: quick
        kind: bench
        suites: [stream]
        dtypes: [float64]
        n: 1048576
        reps: 5
    """)


def ip(*args):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


class Hosts:
    """Named hosts, each a network namespace with an address on one veth pair (two hosts) and
    a hosts file (/etc/netns/NS/hosts, which `ip netns exec` puts over /etc/hosts). `launch`
    runs a command as the first host; `agent` is the rsh agent that runs mpirun's daemons on
    the others. Unknown host names are refused by the agent as ssh refuses a name that does
    not resolve."""

    def __init__(self, root, names=("hostA", "hostB")):
        self.root = root
        tag = os.getpid() % 100000
        self.names = list(names)
        self.ns = {n: f"parity-{tag}-{n}" for n in self.names}
        third = tag % 250 + 1
        self.subnet = SUBNET.format(third)
        self.addr = {n: f"10.231.{third}.{i + 1}" for i, n in enumerate(self.names)}
        self.veth = [f"pv{tag}a", f"pv{tag}b"]
        self.made = []
        self.agent = os.path.join(root, "agent.sh")

    def create(self):
        """None when the hosts are up; else why namespaces cannot be made here."""
        if os.geteuid() != 0:
            return "network namespaces need root"
        if shutil.which("ip") is None or shutil.which("unshare") is None:
            return "ip (iproute2) or unshare (util-linux) is not installed"
        for n in self.names:
            p = ip("netns", "add", self.ns[n])
            if p.returncode != 0:
                return f"ip netns add: {p.stderr.strip()}"
            self.made.append(self.ns[n])
        a, b = self.names
        steps = [["link", "add", self.veth[0], "type", "veth", "peer", "name", self.veth[1]],
                 ["link", "set", self.veth[0], "netns", self.ns[a]],
                 ["link", "set", self.veth[1], "netns", self.ns[b]]]
        for n, dev in zip(self.names, self.veth):
            steps += [["-n", self.ns[n], "addr", "add", self.addr[n] + "/24", "dev", dev],
                      ["-n", self.ns[n], "link", "set", dev, "up"],
                      ["-n", self.ns[n], "link", "set", "lo", "up"]]
        for step in steps:
            p = ip(*step)
            if p.returncode != 0:
                raise RuntimeError(f"ip {' '.join(step)}: {p.stderr.strip()}")
        hosts = "127.0.0.1 localhost\n" + "".join(f"{self.addr[n]} {n}\n" for n in self.names)
        for n in self.names:
            os.makedirs(f"/etc/netns/{self.ns[n]}", exist_ok=True)
            with open(f"/etc/netns/{self.ns[n]}/hosts", "w") as f:
                f.write(hosts)
        cases = "".join(f"  {n}) ns={self.ns[n]} ;;\n" for n in self.names)
        with open(self.agent, "w") as f:
            f.write(textwrap.dedent("""\
                #!/bin/sh
                # mpirun's rsh agent: HOST COMMAND... runs COMMAND in HOST's namespace.
                host=$1; shift
                case "$host" in
                {cases}  *) echo "ssh: Could not resolve hostname $host" >&2; exit 255 ;;
                esac
                exec ip netns exec "$ns" unshare --uts sh -c "hostname $host; $*"
                """).format(cases=cases))
        os.chmod(self.agent, 0o755)
        return None

    def remove(self):
        """Removes the namespaces (their veth ends go with them) and hosts files; what is left."""
        for ns in self.made:
            ip("netns", "del", ns)
            shutil.rmtree(f"/etc/netns/{ns}", ignore_errors=True)
        listed = ip("netns", "list").stdout
        left = [ns for ns in self.made if ns in listed.split()]
        self.made = []
        return left

    def mpirun(self, hosts, args, extra=()):
        """mpirun on the first host with --host `hosts`, MPI's traffic on the veth subnet."""
        first = self.names[0]
        mpi = ["mpirun", "--host", hosts, "--mca", "plm_rsh_agent", self.agent,
               "--mca", "plm_rsh_no_tree_spawn", "1", "--mca", "btl", "self,vader,tcp",
               "--mca", "btl_tcp_if_include", self.subnet,
               "--mca", "oob_tcp_if_include", self.subnet, *extra, *args]
        return ["ip", "netns", "exec", self.ns[first], "unshare", "--uts", "sh", "-c",
                f'hostname {first}; exec "$@"', "sh", *mpi]


ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_btl_base_warn_component_unused="0", OMP_NUM_THREADS="1",
           PARITY_NVML_LIBRARY="/nonexistent/libnvidia-ml.so.1",
           PARITY_ROCM_SMI_LIBRARY="/nonexistent/librocm_smi64.so.1")


class MultiHost(unittest.TestCase):
    hosts = None

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.hosts = Hosts(cls.tmp.name)
        try:
            problem = cls.hosts.create()
        except BaseException:
            cls.hosts.remove()
            cls.tmp.cleanup()
            raise
        if problem:
            cls.hosts.remove()
            cls.tmp.cleanup()
            cls.hosts = None
            raise unittest.SkipTest("this machine cannot make network namespaces: " + problem)
        cls.plan = os.path.join(cls.tmp.name, "plan.yaml")
        with open(cls.plan, "w") as f:
            f.write(PLAN)

    @classmethod
    def tearDownClass(cls):
        if cls.hosts is None:
            return
        left = cls.hosts.remove()
        cls.tmp.cleanup()
        if left:
            raise AssertionError(f"namespaces left: {left}")

    def setUp(self):
        self.dir = tempfile.mkdtemp(dir=self.tmp.name)

    def tearDown(self):
        self.assertEqual(processes.wait_until_gone(BIN, 10), [])
        self.assertEqual(processes.wait_until_gone("/usr/bin/orted", 10), [])

    def run_mpi(self, hosts, args, timeout=120):
        return subprocess.run(self.hosts.mpirun(hosts, args), capture_output=True, text=True,
                              env=ENV, timeout=timeout)

    def test_fleet_across_hosts_flags_the_slowed_host(self):
        fleet = os.path.join(self.dir, "fleet")
        # hostB's one rank (rank 3) 30 times slower; members one at a time on 2 shared cores,
        # one thread each, on arrays of 8 MiB: a kernel longer than the scheduler's time slice
        # is slowed by a busy machine at most by its load (a few times), while a kernel of
        # microseconds can come out hundreds of times slower when the core is taken from it.
        # Three members on hostA keep the median on them when one of them is disturbed.
        p = self.run_mpi("hostA:3,hostB:1",
                         [BIN, "fleet", "collect", self.plan, "-o", fleet, "--sequential",
                          "--timeout", "60", "--inject", "slow:rank=3,factor=30"])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(os.path.join(fleet, "fleet.json")) as f:
            manifest = json.load(f)
        members = manifest["members"]
        self.assertEqual([(m["rank"], m["host"], m["name"]) for m in members],
                         [(0, "hostA", "hostA.r0"), (1, "hostA", "hostA.r1"),
                          (2, "hostA", "hostA.r2"), (3, "hostB", "hostB")])
        for m in members:
            self.assertEqual(m["status"], "ok", m)
            with open(os.path.join(fleet, m["bundle"], "manifest.json")) as f:
                bundle = json.load(f)
            # The collect's own fingerprint (gethostname in hostB's UTS namespace).
            self.assertEqual(bundle["node"], m["host"])
            self.assertEqual(bundle["fingerprint"]["hostname"], m["host"])
        out = os.path.join(self.dir, "report.json")
        r = subprocess.run([BIN, "fleet", "report", fleet, "--k", "1.5", "--json", out],
                           capture_output=True, text=True, env=ENV, timeout=60)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("OUTLIER hostB", r.stdout)
        with open(out) as f:
            report = json.load(f)
        self.assertTrue(report["benchmarks"])
        for b in report["benchmarks"]:
            # Higher is better (GB/s): the slowed host is the lowest by far on every kernel.
            values = b["values"]
            self.assertEqual(min(values, key=values.get), "hostB", b)
            self.assertLess(values["hostB"], b["median"] / 5, b)

    def test_interconnect_between_hosts(self):
        # One sample of each: between namespaces on this machine an Open MPI TCP message takes
        # about 16 ms one way (a Python socket's round trip takes 0.1 ms), and the latency
        # figure is 100 round trips per sample.
        out = os.path.join(self.dir, "link.json")
        p = self.run_mpi("hostA:1,hostB:1",
                         [BIN, "bench", "--suite", "interconnect", "--max-bytes", "8K",
                          "--iters", "1", "--reps", "1", "-q", "--json", out])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(out) as f:
            doc = json.load(f)
        pairs = set()
        for r in doc["results"]:
            self.assertEqual(r["status"], "ok", r)
            self.assertGreater(r["median"], 0, r)
            pairs.add((r["params"]["src"], r["params"]["dst"]))
        self.assertEqual(pairs, {(0, 1), (1, 0)})
        # The ranks' hosts, as MPI names them: one rank on each.
        self.assertEqual(doc["platform"]["ranks"], ["hostA", "hostB"])
        self.assertEqual(doc["device"], "2 ranks on 2 hosts")

    def test_unreachable_host_ends_the_launch(self):
        fleet = os.path.join(self.dir, "fleet")
        p = self.run_mpi("hostA:1,hostC:1",
                         [BIN, "fleet", "collect", self.plan, "-o", fleet, "--timeout", "30"],
                         timeout=90)
        self.assertNotEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("Could not resolve hostname hostC", p.stdout + p.stderr)
        self.assertFalse(os.path.exists(os.path.join(fleet, "fleet.json")))


if __name__ == "__main__":
    unittest.main()
