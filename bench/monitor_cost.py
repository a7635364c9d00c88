#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The two figures of issue 9 for `parity monitor`, in one run:

1. CPU cost of sampling every source once a second on a recorded tree of 8 MI300X GPUs plus a
   full host (bench/make_monitor_tree.py), and also 8 NVIDIA GPUs through the fake NVML of the
   tests when it is built: the monitor's user+system CPU time over --seconds (default 60) as a
   share of one core (target: at most 1%).
2. `/metrics` under `wrk -c 50` for --wrk-seconds (default 30) on loopback: requests per second
   and the latency distribution wrk reports (p50, p99); then the same load on Prometheus's
   node_exporter (Debian's prometheus-node-exporter) in the same run, as the peer.

    make build && /usr/bin/python3 bench/monitor_cost.py [--seconds 60] [--wrk-seconds 30]
"""
import argparse
import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fake_nvml_config(path, gpus):
    """Eight H100-like devices for the fake libnvidia-ml of tests/monitor/fake_nvml.cc."""
    devices = []
    for i in range(gpus):
        devices.append({
            "name": "NVIDIA H100 80GB HBM3", "uuid": f"GPU-{i:08x}-0000-0000-0000-000000000000",
            "pci_bus_id": f"00000000:{0x18 + i:02x}:00.0", "temperature_gpu": 50 + i,
            "temperature_thresholds": {"slowdown": 87}, "power_usage_mw": 350000 + i,
            "enforced_power_limit_mw": 700000, "utilization": {"gpu": 90, "memory": 40},
            "memory": {"total": 85520809984, "used": 1 << 34},
            "clocks_mhz": {"sm": 1980, "memory": 2619},
            "ecc_total": {"volatile": {"corrected": 0, "uncorrected": 0},
                          "aggregate": {"corrected": 3, "uncorrected": 0}},
            "ecc_locations": {loc: {"volatile": {"corrected": 0, "uncorrected": 0},
                                    "aggregate": {"corrected": 0, "uncorrected": 0}}
                              for loc in ("l1_cache", "l2_cache", "dram", "register_file")},
            "retired_pages": {"multiple_single_bit_ecc": 0, "double_bit_ecc": 0},
            "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": 0, "failure": 0},
            "pcie_replay": 0, "clocks_event_reasons": 0,
            "pcie_link": {"generation": 5, "width": 16}})
    with open(path, "w") as f:
        json.dump({"devices": devices}, f)


def load(url, seconds):
    """wrk -t 2 -c 50 on `url` for `seconds`: requests per second and latency percentiles."""
    with urllib.request.urlopen(url, timeout=10) as r:
        body = r.read()
    out = subprocess.run(["wrk", "-t", "2", "-c", "50", "-d", f"{seconds}s", "--latency", url],
                         capture_output=True, text=True).stdout
    print(out)

    def latency(pct):
        m = re.search(rf"\s{pct}%\s+([\d.]+)(us|ms|s)", out)
        return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]

    return {"connections": 50, "seconds": seconds, "body_bytes": len(body),
            "requests_per_second": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50_ms": latency(50), "p90_ms": latency(90), "p99_ms": latency(99)}


def report(name, f):
    print(f"{name} ({f['body_bytes']} bytes): {f['requests_per_second']:.0f} requests/s, "
          f"p50 {f['p50_ms']:.2f} ms, p90 {f['p90_ms']:.2f} ms, p99 {f['p99_ms']:.2f} ms")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--bin", default=os.path.join(ROOT, "build", "parity"))
    p.add_argument("--seconds", type=float, default=60.0)
    p.add_argument("--wrk-seconds", type=int, default=30)
    p.add_argument("--gpus", type=int, default=8)
    p.add_argument("--json", help="write the figures here")
    args = p.parse_args()

    tmp = tempfile.mkdtemp(prefix="parity-monitor-bench-")
    figures = {}
    try:
        tree = os.path.join(tmp, "tree")
        subprocess.run([sys.executable, os.path.join(ROOT, "bench", "make_monitor_tree.py"), tree,
                        "--gpus", str(args.gpus)], check=True)
        env = dict(os.environ)
        env["PARITY_ROCM_SMI_LIBRARY"] = "/nonexistent/librocm_smi64.so.1"
        fake = os.path.join(ROOT, "build", "tests", "plugins", "libfake_nvml.so")
        sources = "amdgpu,host"
        if os.path.exists(fake):
            config = os.path.join(tmp, "nvml.json")
            fake_nvml_config(config, args.gpus)
            env.update(PARITY_NVML_LIBRARY=fake, PARITY_FAKE_NVML=config)
            sources = "nvml,amdgpu,host"
        roots = ["--sysfs-root", os.path.join(tree, "sys"), "--procfs-root", os.path.join(tree, "proc")]

        # 1. CPU cost of one sample a second.
        summary = os.path.join(tmp, "summary.json")
        cmd = [args.bin, "monitor", "--interval", "1", "--duration", str(args.seconds),
               "--source", sources, "--json", summary, "-q", *roots]
        start = time.monotonic()
        proc = subprocess.Popen(cmd, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        cpu = usage.ru_utime + usage.ru_stime
        with open(summary) as f:
            doc = json.load(f)
        devices = len(doc["last"]["devices"])
        series = len(doc["series"])
        figures["sampling"] = {
            "sources": sources, "devices": devices, "series": series, "samples": doc["samples"],
            "wall_seconds": wall, "cpu_seconds": cpu, "share_of_one_core": cpu / wall,
            "cpu_ms_per_sample": 1000 * cpu / max(1, doc["samples"])}
        print(f"sampling {sources}: {devices} GPUs, {series} series, {doc['samples']} samples in "
              f"{wall:.1f} s: {cpu * 1000:.1f} ms CPU = {100 * cpu / wall:.3f}% of one core "
              f"({1000 * cpu / max(1, doc['samples']):.2f} ms per sample, including start-up)")

        # 2. /metrics under wrk -c 50.
        if not shutil.which("wrk"):
            print("wrk not installed: scripts/install-deps installs it", file=sys.stderr)
            return 1
        server = subprocess.Popen([args.bin, "monitor", "--serve", "127.0.0.1:0", "--interval", "1",
                                   "--source", sources, *roots], env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = server.stderr.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+)", line).group(1))
        time.sleep(1.5)
        figures["metrics_endpoint"] = load(f"http://127.0.0.1:{port}/metrics", args.wrk_seconds)
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)
        report("parity /metrics", figures["metrics_endpoint"])
        # The peer: Prometheus's node_exporter (Debian's prometheus-node-exporter, default
        # collectors on this machine's /proc and /sys), under the same load in the same run.
        peer = shutil.which("prometheus-node-exporter")
        if peer:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                peer_port = s.getsockname()[1]
            node = subprocess.Popen([peer, f"--web.listen-address=127.0.0.1:{peer_port}"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.5)
            figures["node_exporter"] = load(f"http://127.0.0.1:{peer_port}/metrics",
                                            args.wrk_seconds)
            node.terminate()
            node.wait(timeout=30)
            report("node_exporter /metrics", figures["node_exporter"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
