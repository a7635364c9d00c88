#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The figures of issue 14, each against its peer in the same run, rounds alternating:

1. all_reduce bus bandwidth at 64 MiB over --ranks local ranks: `parity bench --suite
   collective --collective all_reduce` (out-of-place result, float32) against a bare
   MPI_Allreduce timing loop (bench/mpi_allreduce_peer.c, built here with mpicc) with the same
   iterations and samples. Figure: median over rounds of parity's median busbw / the peer's
   median busbw. Target: at least 95%.
2. fleet collect overhead: `mpirun parity fleet collect PLAN` (every rank collects, rank 0
   gathers the bundles) against `mpirun parity collect PLAN` (every rank collects its own
   bundle, nothing gathered) — the per-node collect. Figure: median over rounds of the wall
   time ratio minus one. Target: under 5%. For scale, the same run also times a bare
   MPI_Init/MPI_Finalize program under the same mpirun (bench/mpi_init_peer.c): the start-up
   that any MPI program pays and a per-node collect does not.

Each round runs parity and its peer in alternating order, so a drift of the machine's speed
during the run does not favour either.

The launcher (--launcher) is a local `mpirun` (the default); `srun`, on a one-node Slurm
cluster started for the run and stopped after it (tests/cli/test_slurm.py's SlurmCluster:
munged, slurmctld, slurmd; `srun -N1 -n RANKS --mpi=pmix`); or `hosts`, `mpirun --host
hostA:R/2,hostB:R/2` over TCP between two network namespaces made for the run and removed
after it (tests/cli/test_multihost.py's Hosts). Both need root. --fleet-only leaves out the
all_reduce figure.

    ./scripts/build release && /usr/bin/python3 bench/fleet_figures.py [--rounds 3]
        [--launcher mpirun|srun|hosts] [--fleet-only]
"""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))

PLAN = """\
plan: fleet-overhead
backend: cpu
stages:
  - kind: env
  - name: stream
    kind: bench
    suites: [stream]
    dtypes: [float64]
    n: {n}
    reps: 20
"""


class Launcher:
    """Starts RANKS copies of a command: a local mpirun, srun on a Slurm cluster of its own, or
    mpirun across two namespace hosts. `close` stops what the launcher started."""

    def __init__(self, kind, ranks, env):
        self.kind, self.ranks, self.env = kind, ranks, dict(env)
        self.tmp = tempfile.mkdtemp(prefix=f"fleet-{kind}-")
        self.cluster = self.hosts = None
        if kind == "srun":
            import test_slurm  # noqa: E402 (tests/cli)
            self.cluster = test_slurm.SlurmCluster(self.tmp)
            problem = self.cluster.start()
            if problem:
                self.close()
                raise SystemExit(f"the Slurm cluster did not start: {problem}")
            self.env["SLURM_CONF"] = self.cluster.conf
            self.where = "srun -N1 --mpi=pmix on a one-node Slurm 22.05 cluster (same machine)"
        elif kind == "hosts":
            import test_multihost  # noqa: E402 (tests/cli)
            self.hosts = test_multihost.Hosts(self.tmp)
            problem = self.hosts.create()
            if problem:
                self.close()
                raise SystemExit(f"no hosts: {problem}")
            half = ranks // 2
            self.spec = f"hostA:{ranks - half},hostB:{half}"
            self.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
            self.where = (f"mpirun --host {self.spec} over TCP between two network namespaces "
                          "(veth pair, same machine)")
        else:
            self.where = "local mpirun"

    def command(self, args):
        if self.kind == "srun":
            return ["srun", "-N1", "-n", str(self.ranks), "--mpi=pmix"] + args
        if self.kind == "hosts":
            return self.hosts.mpirun(self.spec, args)
        cmd = ["mpirun", "--oversubscribe", "-np", str(self.ranks)]
        if os.geteuid() == 0:
            cmd.append("--allow-run-as-root")
        return cmd + args

    def run(self, args):
        cmd = self.command(args)
        start = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=self.env)
        seconds = time.perf_counter() - start
        if p.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p, seconds

    def close(self):
        if self.cluster is not None:
            self.cluster.stop()
        if self.hosts is not None:
            self.hosts.remove()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "parity"))
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n", type=int, default=1 << 24, help="the plan's stream size")
    ap.add_argument("--launcher", choices=["mpirun", "srun", "hosts"], default="mpirun")
    ap.add_argument("--fleet-only", action="store_true", help="leave out the all_reduce figure")
    args = ap.parse_args()
    env = dict(os.environ, OMPI_MCA_btl="self,vader,tcp",
               OMPI_MCA_btl_base_warn_component_unused="0", OMP_NUM_THREADS="1",
               PARITY_NVML_LIBRARY="/nonexistent", PARITY_ROCM_SMI_LIBRARY="/nonexistent")
    os.environ.setdefault("PARITY_BIN", args.bin)  # read by the test modules on import
    launcher = Launcher(args.launcher, args.ranks, env)
    try:
        figures(args, launcher)
    finally:
        launcher.close()


def figures(args, launcher):
    mpirun = lambda ranks, argv, env: launcher.run(argv)  # noqa: E731
    env = launcher.env
    tmp = tempfile.mkdtemp(prefix="fleet-figures-")
    peer = os.path.join(tmp, "peer")
    subprocess.run(["mpicc", "-O2", "-o", peer, os.path.join(ROOT, "bench", "mpi_allreduce_peer.c")],
                   check=True)
    size = 64 << 20

    init = os.path.join(tmp, "init")
    subprocess.run(["mpicc", "-O2", "-o", init, os.path.join(ROOT, "bench", "mpi_init_peer.c")],
                   check=True)

    def parity_allreduce(rnd):
        out = os.path.join(tmp, f"coll-{rnd}.json")
        mpirun(args.ranks, [args.bin, "bench", "--suite", "collective", "--collective",
                            "all_reduce", "--min-bytes", str(size), "--max-bytes", str(size),
                            "--iters", str(args.iters), "--reps", str(args.reps), "-q",
                            "--json", out], env)
        with open(out) as f:
            doc = json.load(f)
        r = next(r for r in doc["results"] if not r["params"]["in_place"])
        assert r["wrong"] == 0 and r["params"]["bytes"] == size, r
        return r["busbw"]

    def peer_allreduce(_):
        p, _ = mpirun(args.ranks, [peer, str(size), str(args.iters), str(args.reps)], env)
        return statistics.median(float(x) for x in p.stdout.split())

    def in_turn(rnd, first, second):
        """Both, parity's first in even rounds and the peer's first in odd ones."""
        if rnd % 2 == 0:
            a = first(rnd)
            return a, second(rnd)
        b = second(rnd)
        return first(rnd), b

    ratios, ours, theirs = [], [], []
    for rnd in range(0 if args.fleet_only else args.rounds):
        bw, peer_bw = in_turn(rnd, parity_allreduce, peer_allreduce)
        ours.append(bw)
        theirs.append(peer_bw)
        ratios.append(bw / peer_bw)
        print(f"round {rnd + 1}: all_reduce 64 MiB busbw parity {bw:.4f} GB/s, "
              f"MPI_Allreduce loop {peer_bw:.4f} GB/s, ratio {bw / peer_bw:.3f}",
              flush=True)

    plan = os.path.join(tmp, "plan.yaml")
    with open(plan, "w") as f:
        f.write(PLAN.format(n=args.n))

    own_t = []

    def fleet_collect(rnd):
        fleet_dir = os.path.join(tmp, f"fleet-{rnd}")
        _, seconds = mpirun(args.ranks, [args.bin, "fleet", "collect", plan, "-o", fleet_dir,
                                         "-q"], env)
        with open(os.path.join(fleet_dir, "fleet.json")) as f:
            slowest = json.load(f)["collect_seconds_max"]
        # What the fleet adds around its members' collects, measured inside the same run.
        own_t.append(seconds - slowest)
        shutil.rmtree(fleet_dir, ignore_errors=True)
        return seconds

    def per_node_collect(rnd):
        alone_dir = os.path.join(tmp, f"alone-{rnd}")
        os.mkdir(alone_dir)
        # Each rank its own bundle, as a per-node collect would be run under the same launcher.
        _, seconds = mpirun(args.ranks, ["sh", "-c", f'exec "$0" collect "$1" -o '
                                         f'"$2/b${{OMPI_COMM_WORLD_RANK:-$SLURM_PROCID}}" -q '
                                         f'--no-store',
                                         args.bin, plan, alone_dir], env)
        shutil.rmtree(alone_dir, ignore_errors=True)
        return seconds

    fleet_t, alone_t, over, init_t = [], [], [], []
    for rnd in range(args.rounds):
        t_fleet, t_alone = in_turn(rnd, fleet_collect, per_node_collect)
        _, t_init = mpirun(args.ranks, [init], env)
        fleet_t.append(t_fleet)
        alone_t.append(t_alone)
        init_t.append(t_init)
        over.append(t_fleet / t_alone - 1)
        print(f"round {rnd + 1}: fleet collect {t_fleet:.2f} s, per-node collect {t_alone:.2f} s, "
              f"overhead {100 * over[-1]:+.1f}%; the fleet's own time (wall minus the slowest "
              f"member's collect) {own_t[-1]:.2f} s; bare MPI_Init/MPI_Finalize {t_init:.2f} s",
              flush=True)
    shutil.rmtree(tmp, ignore_errors=True)

    cpu = platform.processor() or platform.machine()
    print(f"\nmachine: {platform.node()}, {os.cpu_count()} CPUs ({cpu}), {args.ranks} ranks, "
          f"{args.rounds} rounds; launcher: {launcher.where}")
    if ratios:
        print(f"all_reduce 64 MiB busbw: parity median {statistics.median(ours):.4f} GB/s, "
              f"MPI_Allreduce loop median {statistics.median(theirs):.4f} GB/s; "
              f"ratio median {statistics.median(ratios):.3f} (min {min(ratios):.3f}, "
              f"max {max(ratios):.3f}); target >= 0.95")
    print(f"fleet collect: median {statistics.median(fleet_t):.2f} s against per-node collect "
          f"{statistics.median(alone_t):.2f} s; overhead median {100 * statistics.median(over):+.1f}% "
          f"(min {100 * min(over):+.1f}%, max {100 * max(over):+.1f}%); target < 5%")
    print(f"the fleet's own time (wall minus the slowest member's collect): median "
          f"{statistics.median(own_t):.2f} s, {100 * statistics.median(own_t) / statistics.median(alone_t):.1f}% "
          f"of the per-node collect; a bare MPI_Init/MPI_Finalize program under the same "
          f"launcher: median {statistics.median(init_t):.2f} s")


if __name__ == "__main__":
    main()
