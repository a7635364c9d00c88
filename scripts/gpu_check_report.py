#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The table of scripts/gpu-check.sh, from the files it wrote in OUT: cuda.json (parity bench),
peer.json (bench/gpu_peer.cu: cuBLAS's own GEMM rate, the driver's device-to-device copy rate),
compare.json (parity compare of the GPU's float32 GEMM products against the CPU's). Prints the
table and writes it to OUT/gpu-check.md as a section for docs/PERFORMANCE.md. Exit 1 when a
figure is invalid or misses its target (triad >= 90% of the copy ceiling, GEMM >= 90% of
cuBLAS's own figure), or the compare failed; 0 otherwise. Standard library only."""
import argparse
import datetime
import json
import os
import sys

TRIAD_TARGET = 0.90
GEMM_TARGET = 0.90


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"gpu-check: cannot read {path}: {e}", file=sys.stderr)
        return None


def fmt(x, digits=1):
    return "-" if x is None else f"{x:,.{digits}f}"


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--bench-rc", type=int, default=0)
    p.add_argument("--peer-rc", type=int, default=0)
    p.add_argument("--compare-rc", type=int, default=0)
    p.add_argument("--seconds", type=int, default=0)
    p.add_argument("--stress-rc", type=int, default=None,
                   help="exit of the parity stress drill (1 expected: an SDC is planted)")
    a = p.parse_args()
    bench = load(os.path.join(a.out, "cuda.json")) or {"results": [], "platform": {}}
    peer = load(os.path.join(a.out, "peer.json")) or {}
    compare = load(os.path.join(a.out, "compare.json")) or {}
    failures = []
    device = bench.get("platform", {}).get("device", {})
    props = device.get("properties", {})
    lines = [f"## GPU check: {bench.get('device', '?')} ({datetime.date.today().isoformat()})", "",
             "`scripts/gpu-check.sh`: driver {}, CUDA runtime {}, cuBLAS {}; {} s in all.".format(
                 props.get("driver_version", "?"), props.get("runtime_version", "?"),
                 (props.get("blas") or {}).get("version", "?"), a.seconds), ""]

    results = bench.get("results", [])
    ceiling = (peer.get("copy") or {}).get("gbs")
    lines += ["| stream (best of reps) | dtype | GB/s | copy ceiling GB/s | ratio | target | "
              "datasheet GB/s | status |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        if not r["benchmark"].startswith("stream."):
            continue
        best = r.get("best")
        ratio = best / ceiling if best and ceiling else None
        target = ""
        if r["benchmark"] == "stream.triad":
            target = f">= {TRIAD_TARGET:.2f}"
            if ratio is None or ratio < TRIAD_TARGET:
                failures.append(f"{r['benchmark']} {r['dtype']}: {fmt(ratio, 3)} of the ceiling")
        status = r["status"] + (f": {r['reason']}" if r.get("reason") else "")
        if r["status"] == "invalid":
            failures.append(f"{r['benchmark']} {r['dtype']} invalid")
        lines.append(f"| {r['benchmark']} | {r['dtype']} | {fmt(best)} | {fmt(ceiling)} | "
                     f"{fmt(ratio, 3)} | {target} | {fmt(r.get('peak'), 0)} | {status} |")
    lines += ["", "Copy ceiling: " + ((peer.get("copy") or {}).get("method") or
                                        "not measured (the peer did not run)"), ""]

    peer_gemm = {(g["dtype"], g["size"]): g for g in peer.get("gemm", [])}
    lines += ["| gemm | n | parity TFLOP/s | cuBLAS alone | ratio | datasheet | efficiency | "
              "status | implementation |", "|---|---|---|---|---|---|---|---|---|"]
    tera = lambda x: None if x is None else x / 1e3  # noqa: E731 (GFLOP/s to TFLOP/s)
    for r in results:
        if r["benchmark"] != "gemm":
            continue
        n = r["params"]["size"]
        best = r.get("best")
        own = peer_gemm.get((r["dtype"], n), {}).get("gflops")
        ratio = best / own if best and own else None
        if r["status"] == "ok" and (ratio is None or ratio < GEMM_TARGET):
            failures.append(f"gemm {r['dtype']} n={n}: {fmt(ratio, 3)} of cuBLAS's own figure")
        if r["status"] == "invalid":
            failures.append(f"gemm {r['dtype']} n={n} invalid: {r.get('reason')}")
        status = r["status"] + (f": {r['reason']}" if r.get("reason") else "")
        lines.append(f"| {r['dtype']} | {n} | {fmt(tera(best), 2)} | {fmt(tera(own), 2)} | "
                     f"{fmt(ratio, 3)} | {fmt(tera(r.get('peak')), 1)} | "
                     f"{fmt(r.get('efficiency'), 3)} | {status} | "
                     f"{r.get('implementation', '')} |")

    summary = compare.get("summary", {})
    lines += ["", "parity compare, CPU (OpenBLAS) against GPU float32 GEMM products: "
              f"{summary.get('passed', '?')} of {summary.get('tensors', '?')} tensors pass "
              f"(exit {a.compare_rc})."]
    if a.compare_rc != 0:
        failures.append(f"parity compare exit {a.compare_rc}")
    if a.stress_rc is not None:
        stress_path = os.path.join(a.out, "stress.json")
        stress = (load(stress_path) if os.path.exists(stress_path) else None) or {}
        kills = [f for f in stress.get("faults", []) if f.get("kind") == "kill"]
        sdc = [f for f in stress.get("faults", []) if f.get("kind") == "sdc"]
        rec = stress.get("recovery_s", {})
        thr = stress.get("throughput", {})
        lines += ["", "parity stress, gemm-burn on the GPU with kills and a planted bit flip: "
                  f"{stress.get('steps', '?')} steps, {fmt(thr.get('value'))} "
                  f"{thr.get('unit', '')}; {sum(f['recovered'] for f in kills)} of {len(kills)} "
                  f"kills recovered (median {fmt(rec.get('p50'), 3)} s, max "
                  f"{fmt(rec.get('max'), 3)} s); planted flip "
                  f"{'found at its position' if sdc and sdc[0]['recovered'] else 'MISSED'}; "
                  f"lost steps {stress.get('lost_steps', '?')}, done twice "
                  f"{stress.get('duplicated_steps', '?')} (exit {a.stress_rc})."]
        if a.stress_rc != 1 or not sdc or not sdc[0]["recovered"] or \
                stress.get("lost_steps") or stress.get("duplicated_steps") or \
                any(not f["recovered"] for f in kills):
            failures.append(f"parity stress drill (exit {a.stress_rc})")
    if a.bench_rc not in (0, 1):
        failures.append(f"parity bench exit {a.bench_rc}")
    if a.peer_rc != 0:
        failures.append(f"gpu peer exit {a.peer_rc}")
    lines += ["", "Result: " + ("every figure valid and at its target" if not failures
                                  else "; ".join(failures)), ""]
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(a.out, "gpu-check.md"), "w") as f:
        f.write(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
