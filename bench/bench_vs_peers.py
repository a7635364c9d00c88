#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`parity bench` against its peers in one sitting, alternating the programs, best of N rounds:

  stream triad (float64, n = 2^25, 100 repetitions) against BabelStream's OpenMP build
  (omp-stream, built by you outside this repository; pass its path with --babelstream), and
  gemm float32/float64 at n = 2048 and 4096 against numpy's matmul on the BLAS numpy loads
  (OpenBLAS through Debian's libblas.so.3 alternative when libopenblas is installed; the
  reference BLAS, 50x slower, otherwise — the script names the library it found).

Both sides run with the same environment (OMP_*, OPENBLAS_* as set by the caller). Prints a
table and, with --json FILE, writes the figures. Figures go to docs/PERFORMANCE.md.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Timed like parity's gemm suite: warm-up calls for at least 0.25 s, then REPS calls, best kept.
NUMPY_PEER = r"""
import json, sys, time
import numpy as np
sizes = [int(s) for s in sys.argv[1].split(",")]
out = {"blas": sorted({l.split()[-1] for l in open("/proc/self/maps")
                       if "blas" in l.split()[-1] or "openblas" in l.split()[-1]}),
       "numpy": np.__version__, "gflops": {}}
reps = {256: 20, 512: 20, 1024: 10, 2048: 5, 4096: 3}
rng = np.random.default_rng(42)
for dtype in ("float64", "float32"):
    for n in sizes:
        a = rng.uniform(-1, 1, (n, n)).astype(dtype)
        b = rng.uniform(-1, 1, (n, n)).astype(dtype)
        c = np.empty((n, n), dtype)
        warm = 0.0
        while warm < 0.25:
            t = time.perf_counter(); np.matmul(a, b, out=c); warm += time.perf_counter() - t
        best = float("inf")
        for _ in range(reps[n]):
            t = time.perf_counter(); np.matmul(a, b, out=c); best = min(best, time.perf_counter() - t)
        out["gflops"][f"{dtype}/{n}"] = 2 * n ** 3 / best / 1e9
print(json.dumps(out))
"""


def run_parity(parity, args):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bench.json")
        r = subprocess.run([parity, "bench", "--quiet", "--json", path, *args],
                           capture_output=True, text=True)
        if r.returncode not in (0,):
            sys.exit(f"parity bench {' '.join(args)} exited {r.returncode}: {r.stderr}")
        with open(path) as f:
            return json.load(f)


def parity_stream(parity):
    doc = run_parity(parity, ["--suite", "stream", "--dtype", "float64"])
    triad = [r for r in doc["results"] if r["benchmark"] == "stream.triad"][0]
    return triad["best"], doc


def babelstream(binary):
    r = subprocess.run([binary, "--csv"], capture_output=True, text=True, check=True)
    rows = [line.split(",") for line in r.stdout.splitlines()]
    header = rows[0]
    for row in rows[1:]:
        if row[0] == "Triad":
            return float(row[header.index("max_MB_per_sec")]) / 1000.0  # MB/s -> GB/s
    sys.exit("BabelStream printed no Triad row")


def babelstream_version(binary):
    r = subprocess.run([binary], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        if line.startswith("Version"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def parity_gemm(parity, sizes):
    doc = run_parity(parity, ["--suite", "gemm", "--full", "--dtype", "float32,float64"])
    got = {}
    for r in doc["results"]:
        if r["benchmark"] == "gemm" and r["params"]["size"] in sizes and r["status"] == "ok":
            got[f"{r['dtype']}/{r['params']['size']}"] = r["best"]
    return got, doc


def numpy_gemm(sizes):
    r = subprocess.run(["/usr/bin/python3", "-c", NUMPY_PEER, ",".join(map(str, sizes))],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--parity", default=os.path.join(ROOT, "build", "parity"))
    p.add_argument("--babelstream", default=os.environ.get("BABELSTREAM"),
                   help="path of BabelStream's omp-stream (or $BABELSTREAM); without it the "
                        "stream comparison is skipped")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--sizes", default="2048,4096")
    p.add_argument("--skip-gemm", action="store_true")
    p.add_argument("--json")
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    report = {"rounds": args.rounds, "environment": {k: v for k, v in os.environ.items()
                                                      if k.startswith(("OMP_", "OPENBLAS_"))}}

    if args.babelstream:
        ours, peer = [], []
        for i in range(args.rounds):
            best, doc = parity_stream(args.parity)
            ours.append(best)
            peer.append(babelstream(args.babelstream))
            print(f"round {i + 1}: triad float64 parity {ours[-1]:.2f} GB/s, "
                  f"BabelStream {peer[-1]:.2f} GB/s", flush=True)
        report["stream"] = {"parity_triad_gbs": max(ours), "babelstream_triad_gbs": max(peer),
                            "ratio": max(ours) / max(peer), "parity_rounds": ours,
                            "babelstream_rounds": peer,
                            "babelstream_version": babelstream_version(args.babelstream),
                            "device": doc["device"]}
        print(f"stream triad float64 n=2^25, best of {args.rounds}: parity {max(ours):.2f} "
              f"GB/s, BabelStream {max(peer):.2f} GB/s, ratio {max(ours) / max(peer):.3f}")
    else:
        print("stream: skipped (no --babelstream given)")

    if not args.skip_gemm:
        ours, peer = {}, {}
        for i in range(args.rounds):
            got, doc = parity_gemm(args.parity, sizes)
            for k, v in got.items():
                ours[k] = max(ours.get(k, 0.0), v)
            np_out = numpy_gemm(sizes)
            for k, v in np_out["gflops"].items():
                peer[k] = max(peer.get(k, 0.0), v)
            print(f"round {i + 1}: " + ", ".join(
                f"{k} parity {got.get(k, float('nan')):.1f} numpy {np_out['gflops'][k]:.1f}"
                for k in sorted(np_out["gflops"])), flush=True)
        report["gemm"] = {"parity_blas": doc["platform"].get("blas", {}),
                          "numpy_blas": np_out["blas"], "numpy": np_out["numpy"],
                          "figures": {k: {"parity_gflops": ours.get(k), "numpy_gflops": peer[k],
                                          "ratio": ours[k] / peer[k] if k in ours else None}
                                      for k in sorted(peer)}}
        print(f"gemm, best of {args.rounds} (parity BLAS: "
              f"{doc['platform'].get('blas', {}).get('config', '?')}; numpy BLAS: "
              f"{', '.join(np_out['blas']) or 'none found'})")
        for k in sorted(peer):
            print(f"  {k:14s} parity {ours.get(k, float('nan')):8.1f} GFLOP/s  numpy "
                  f"{peer[k]:8.1f} GFLOP/s  ratio {ours.get(k, 0) / peer[k]:.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
