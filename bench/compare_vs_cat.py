#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times `parity compare A B` against `cat A B > /dev/null` and numpy, in one run (issue 30).

Two float32 .npy files of --mib MiB each (a ~ N(0,1), b = a + 1e-4·N(0,1)), page cache warm.
Whole processes, alternating (one round runs every command once, in turn), --repeats rounds;
medians are reported, with parity's rate as a fraction of cat's (cat's median / parity's), and
the median CPU seconds (user + system) of each, steadier than wall time on a shared machine.
numpy's side is compare_vs_numpy.py's script (docs/PERFORMANCE.md, "parity compare against numpy").

--parity may be given several times (e.g. a build from before a change, `PATH[:LABEL]`) to time
the variants in the same rounds; --threads N adds `--threads N` runs of the first parity.

Usage: compare_vs_cat.py [--parity build/parity[:label]]... [--mib 256] [--repeats 11]
                         [--numpy-repeats 3] [--threads 1] [--dir DIR] [--json OUT]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_vs_numpy import NUMPY_SCRIPT, write_pair  # noqa: E402


def make_files(directory, mib):
    return write_pair(os.path.join(directory, "cat_a_%dmib.npy" % mib),
                      os.path.join(directory, "cat_b_%dmib.npy" % mib), mib * (1 << 20) // 4,
                      1 << 22)


def timed(cmd):
    """Wall seconds, and the CPU seconds (user + system) of the process and its children."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = 0  # reaped by wait4
    return wall, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parity", action="append",
                    help="parity binary, PATH or PATH:LABEL (repeatable; default build/parity)")
    ap.add_argument("--mib", type=int, default=256, help="size of each file")
    ap.add_argument("--dir", default="build/bench-data")
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--numpy-repeats", type=int, default=3, help="numpy runs (0: none)")
    ap.add_argument("--threads", type=int, action="append", default=[],
                    help="also time the first parity with --threads N")
    ap.add_argument("--json")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    a, b = make_files(args.dir, args.mib)
    commands = {"cat": ["sh", "-c", "cat '%s' '%s' > /dev/null" % (a, b)]}
    for spec in args.parity or ["build/parity"]:
        path, _, label = spec.partition(":")
        commands["parity" + (" " + label if label else "")] = [path, "compare", a, b]
    first = next(k for k in commands if k.startswith("parity"))
    for t in args.threads:
        commands["%s --threads %d" % (first, t)] = commands[first][:2] + [
            "--threads", str(t)] + commands[first][2:]
    numpy = ["/usr/bin/python3", "-c", NUMPY_SCRIPT, a, b]
    subprocess.run(commands["cat"], check=True)  # warm the page cache
    for cmd in commands.values():  # and each binary
        timed(cmd)
    times = {k: [] for k in commands}
    times["numpy"] = []
    cpu = {k: [] for k in times}
    for r in range(args.repeats):
        for name, cmd in list(commands.items()) + [("numpy", numpy)]:
            if name == "numpy" and r >= args.numpy_repeats:
                continue
            # exit code 1 (tensors differ beyond tolerance) is a result here, not a failure
            wall, used = timed(cmd)
            times[name].append(wall)
            cpu[name].append(used)
    if not times["numpy"]:
        del times["numpy"], cpu["numpy"]
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    size_gb = (os.path.getsize(a) + os.path.getsize(b)) / 1e9
    result = {
        "benchmark": "compare two %d MiB float32 .npy files, warm page cache, whole process"
                     % args.mib,
        "machine": "%s, %d CPUs, %s" % (platform.processor() or platform.machine(),
                                        os.cpu_count(), platform.platform()),
        "commands": {k: " ".join(v) for k, v in commands.items()},
        "repeats": args.repeats, "seconds": times, "median_s": med,
        "cpu_seconds": cpu, "median_cpu_s": med_cpu,
        "GB_per_s": {k: size_gb / v for k, v in med.items()},
        "fraction_of_cat_rate": {k: med["cat"] / v for k, v in med.items() if k != "cat"},
    }
    for k in times:
        line = "%-24s median %.3f s  (%5.2f GB/s)" % (k, med[k], size_gb / med[k])
        if k != "cat":
            line += "  %5.1f%% of cat's rate" % (100 * med["cat"] / med[k])
        print(line + "  cpu %.3f s  runs %s" % (med_cpu[k], " ".join("%.3f" % t for t in times[k])))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
