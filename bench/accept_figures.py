#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The figures of issue 12: `parity accept` on two bundles each holding a dump of 10,000 tensors
and a 24-hour telemetry record sampled every second: the time to write the report (median of
--rounds runs), the size of report.html and report.json, and, in headless Chromium
(tests/cli/report_html_check.py), the time to first contentful paint and until every chart is
drawn.

The dumps are a chain of 3,334 small linear ops (input, weight, output: 10,002 tensors) written
in the parity-dump format with numpy; the candidate ran op 1,000 in TF32, so compare fails from
there on and explain replays every op to find the origin. The telemetry is one GPU (temperatures,
power, clocks, memory, ECC counters) and the host, 86,400 samples, with an alert every hour.

For scale, the same run times `parity compare` alone on the two dumps and Python's json module
reading the candidate's telemetry record line by line (the parsing accept must do).

    ./scripts/build release && /usr/bin/python3 bench/accept_figures.py [--rounds 3]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARITY = os.path.join(ROOT, "build", "parity")
CHECK = os.path.join(ROOT, "tests", "cli", "report_html_check.py")
OPS = 3334
SECONDS = 86400


def tf32(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0xFFF + ((u >> 13) & 1)) & 0xFFFFE000
    return u.astype(np.uint32).view(np.float32)


def write_dump(root, planted):
    os.makedirs(os.path.join(root, "tensors"), exist_ok=True)
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump({"format": "parity-dump", "version": 1,
                   "platform": {"device": "cuda:0"},
                   "framework": {"name": "torch", "version": "bench",
                                 "settings": {"allow_tf32_matmul": False}}}, f)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    with open(os.path.join(root, "records.jsonl"), "w") as f:
        for seq in range(OPS):
            w = (rng.standard_normal((16, 16)) / 4).astype(np.float32)
            cast = tf32 if planted and seq == 1000 else (lambda t: t)
            lin = (cast(x).astype(np.float64) @ cast(w).T.astype(np.float64)).astype(np.float32)

            def save(slot, arr):
                rel = "tensors/%06d_%s.npy" % (seq, slot)
                np.save(os.path.join(root, rel), arr)
                return {"file": rel, "dtype": "float32", "shape": list(arr.shape)}
            rec = {"seq": seq, "name": "layers.%d" % seq, "op": "linear", "pass": "forward",
                   "call": 0, "attrs": {}, "inputs": [save("in0", x)],
                   "params": {"weight": save("weight", w)}, "outputs": [save("out0", lin)]}
            f.write(json.dumps(rec) + "\n")
            # tanh runs between the records, unrecorded: it keeps the chain's scale.
            x = np.tanh(lin).astype(np.float32)


def write_telemetry(path, start):
    metrics_per = [("gpu_temperature_celsius", {"sensor": "edge"}, 45.0, 10.0),
                   ("gpu_temperature_celsius", {"sensor": "junction"}, 60.0, 15.0),
                   ("gpu_temperature_celsius", {"sensor": "memory"}, 55.0, 8.0),
                   ("gpu_power_watts", {}, 450.0, 200.0),
                   ("gpu_utilization_ratio", {}, 0.8, 0.2),
                   ("gpu_memory_used_bytes", {}, 6e10, 2e10),
                   ("gpu_memory_total_bytes", {}, 1.4e11, 0.0),
                   ("gpu_clock_hertz", {"domain": "sm"}, 1.98e9, 1e8),
                   ("gpu_clock_hertz", {"domain": "memory"}, 2.6e9, 0.0)]
    with open(path, "w") as f:
        for i in range(SECONDS):
            phase = np.sin(i / 3600.0)
            gpu = [{"name": n, "labels": lab, "value": round(base + amp * phase, 3)}
                   for n, lab, base, amp in metrics_per]
            gpu.append({"name": "gpu_ecc_errors_total",
                        "labels": {"severity": "correctable", "block": "dram",
                                   "scope": "volatile"}, "value": i // 7200})
            gpu.append({"name": "gpu_ecc_errors_total",
                        "labels": {"severity": "uncorrectable", "block": "dram",
                                   "scope": "volatile"}, "value": 0})
            sample = {"format": "parity-monitor", "version": 1, "kind": "sample",
                      "time": start + i, "stage": "soak",
                      "sources": [{"name": "nvml", "up": True}, {"name": "host", "up": True}],
                      "devices": [{"device": 0, "source": "nvml", "vendor": "NVIDIA",
                                   "model": "NVIDIA H200", "uuid": "GPU-0000",
                                   "metrics": gpu}],
                      "host": {"metrics": [
                          {"name": "host_cpu_utilization_ratio", "labels": {},
                           "value": round(0.5 + 0.3 * phase, 3)},
                          {"name": "host_memory_used_bytes", "labels": {}, "value": 3e10},
                          {"name": "host_memory_total_bytes", "labels": {}, "value": 5e11}]}}
            f.write(json.dumps(sample, separators=(",", ":")) + "\n")
            if i % 3600 == 1800:
                f.write(json.dumps({"kind": "alert", "rule": "warm", "severity": "warning",
                                    "metric": "gpu_temperature_celsius", "labels": {},
                                    "value": 74.0, "threshold": 70.0, "time": start + i,
                                    "resolved": False, "message": "junction above 70"}) + "\n")


def bench_doc(scale):
    results = []
    for name, unit, median in (("stream.copy", "GB/s", 3000.0), ("stream.triad", "GB/s", 3100.0),
                               ("gemm", "GFLOP/s", 50000.0)):
        samples = [median * scale * (1 + 0.01 * k) for k in (-2, -1, 0, 1, 2)]
        results.append({"benchmark": name, "dtype": "float32", "params": {"n": 1 << 26},
                        "unit": unit, "better": "higher", "median": median * scale,
                        "min": min(samples), "max": max(samples), "cv": 0.015,
                        "samples": samples, "valid": True, "status": "ok",
                        "peak": None, "efficiency": None})
    return {"format": "parity-bench", "version": 1, "backend": "cuda", "device": "gpu0",
            "platform": {}, "repeat": 1, "results": results}


def write_bundle(root, candidate, start):
    os.makedirs(os.path.join(root, "stages", "bench"), exist_ok=True)
    write_dump(os.path.join(root, "stages", "dump"), candidate)
    write_telemetry(os.path.join(root, "telemetry.jsonl"), start)
    with open(os.path.join(root, "stages", "bench", "bench.json"), "w") as f:
        json.dump(bench_doc(1.1 if candidate else 1.0), f)
    stages = [{"name": "monitor", "kind": "monitor", "level": 1, "status": "passed",
               "result": None},
              {"name": "bench", "kind": "bench", "level": 1, "status": "passed",
               "result": "stages/bench/bench.json"},
              {"name": "dump", "kind": "dump", "level": 1, "status": "passed",
               "result": "stages/dump"}]
    manifest = {"format": "parity-bundle", "version": 1, "uid": root, "status": "passed",
                "level": 4, "backend": "cuda", "plan": {"name": "figures"},
                "fingerprint": {"hostname": "node-%s" % ("b" if candidate else "a")},
                "stages": stages}
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump(manifest, f)


def timed(cmd):
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    return time.perf_counter() - t, r


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    keep = os.environ.get("ACCEPT_FIGURES_DIR")
    with tempfile.TemporaryDirectory() as scratch:
        tmp = keep or scratch
        t0 = time.perf_counter()
        a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
        write_bundle(a, False, 1.79e9)
        write_bundle(b, True, 1.79e9)
        made = time.perf_counter() - t0
        telemetry_mb = os.path.getsize(os.path.join(b, "telemetry.jsonl")) / 1e6
        print("bundles written in %.0f s (telemetry.jsonl %.0f MB each)" % (made, telemetry_mb))
        out = os.path.join(tmp, "report")
        times = []
        for _ in range(args.rounds):
            s, r = timed([PARITY, "accept", a, b, "-o", out, "--no-store", "-q"])
            if r.returncode not in (0, 1):
                sys.exit("parity accept failed: %s" % r.stderr)
            times.append(s)
        compare_s, _ = timed([PARITY, "compare", os.path.join(a, "stages", "dump"),
                              os.path.join(b, "stages", "dump"), "-q"])
        t = time.perf_counter()
        with open(os.path.join(b, "telemetry.jsonl")) as f:
            for line in f:
                json.loads(line)
        json_s = time.perf_counter() - t
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        numerics = [c for c in report["criteria"] if c["id"] == "numerics.dump"][0]
        check = subprocess.run([sys.executable, CHECK, os.path.join(out, "report.html"),
                                "--timeout", "120"], capture_output=True, text=True)
        paint = json.loads(check.stdout) if check.stdout.strip() else {}
        rows = {
            "machine": "%s, %d CPUs" % (platform.processor() or platform.machine(),
                                         os.cpu_count()),
            "tensors compared": numerics["evidence"]["tensors_total"],
            "numerics verdict": "%s, %d failed, first origin %s (%s, %s)" % (
                numerics["status"], numerics["evidence"]["failed"],
                numerics["evidence"]["origins"][0]["name"],
                numerics["evidence"]["origins"][0]["cause"],
                numerics["evidence"]["origins"][0]["precision"]),
            "telemetry samples (each bundle)": report["telemetry"]["candidate"]["samples"],
            "parity accept, median of %d (s)" % args.rounds: round(statistics.median(times), 2),
            "parity accept, runs (s)": [round(x, 2) for x in times],
            "peer: parity compare alone (s)": round(compare_s, 2),
            "peer: Python json.loads over telemetry.jsonl (s)": round(json_s, 2),
            "report.html (MB)": round(os.path.getsize(os.path.join(out, "report.html")) / 1e6, 2),
            "report.json (MB)": round(os.path.getsize(os.path.join(out, "report.json")) / 1e6, 2),
            "chromium: first contentful paint (ms)": paint.get("first_contentful_paint_ms"),
            "chromium: every chart drawn, ready (ms)": paint.get("ready_ms"),
            "chromium: charts drawn / expected": "%s / %s" % (paint.get("drawn"),
                                                             paint.get("expected")),
            "chromium: console errors": len(paint.get("errors", [])) if paint else None,
        }
        for k, v in rows.items():
            print("%-52s %s" % (k, v))
        if check.returncode != 0:
            sys.exit("report_html_check failed: %s" % check.stderr)


if __name__ == "__main__":
    main()
