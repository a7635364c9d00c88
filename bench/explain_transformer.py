#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times `parity explain` on two dumps of a 12-layer transformer stack, with its peak memory.

The stack (d=512, 8 heads, ff=2048; batch 2 x 256 tokens) is written with the functional ops
parity replays (linear, matmul, softmax, dropout, gelu, layer_norm, add) and captured twice with
python/parity_dump on the CPU: A with dropout seed 1, B with seed 2, so every dropout is an
rng-divergence origin and the ops after it inherit. Each dump holds about 1 GiB of tensors.
`parity explain A B` runs under /usr/bin/time -v: wall time and maximum resident set size,
against the dump's size and the largest single op call's tensors (both sides, as stored).

Usage: explain_transformer.py [--parity build/parity] [--dir DIR] [--repeats 3] [--json OUT]
"""
import argparse
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import parity_dump  # noqa: E402

LAYERS, D, HEADS, FF, BATCH, SEQ = 12, 512, 8, 2048, 2, 256


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.proj = (torch.nn.Linear(D, D) for _ in range(4))
        self.norm1, self.norm2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)
        self.fc1, self.fc2 = torch.nn.Linear(D, FF), torch.nn.Linear(FF, D)

    def forward(self, x):
        h = self.norm1(x)
        split = lambda t: t.view(BATCH, SEQ, HEADS, D // HEADS).transpose(1, 2)
        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(D // HEADS))
        attn = F.dropout(torch.softmax(scores, dim=-1), p=0.1, training=True)
        ctx = torch.matmul(attn, v).transpose(1, 2).reshape(BATCH, SEQ, D)
        x = torch.add(x, self.proj(ctx))
        h = F.gelu(self.fc1(self.norm2(x)))
        return torch.add(x, F.dropout(self.fc2(h), p=0.1, training=True))


def capture(out, seed):
    torch.manual_seed(0)
    model = torch.nn.Sequential(*(Block() for _ in range(LAYERS)))
    x = torch.randn(BATCH, SEQ, D)
    torch.manual_seed(seed)
    with torch.no_grad(), parity_dump.capture(model, out):
        model(x)


def tensor_bytes(dump):
    """Total bytes of the dump's tensors, and the largest op call's (inputs, params, outputs)."""
    total, largest = 0, 0
    with open(os.path.join(dump, "records.jsonl")) as f:
        for line in f:
            rec = json.loads(line)
            refs = rec["inputs"] + list(rec["params"].values()) + rec["outputs"]
            size = sum(os.path.getsize(os.path.join(dump, r["file"])) for r in refs if "file" in r)
            total += size
            largest = max(largest, size)
    return total, largest


def run_explain(parity, a, b):
    cmd = ["/usr/bin/time", "-v", parity, "explain", a, b, "--json", os.devnull, "--quiet"]
    start = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if r.returncode not in (0, 1):
        sys.exit("parity explain failed: " + r.stderr)
    rss_kib = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1))
    return wall, rss_kib * 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parity", default="build/parity")
    ap.add_argument("--dir", default="build/bench-data/explain")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    a, b = os.path.join(args.dir, "a"), os.path.join(args.dir, "b")
    for path, seed in ((a, 1), (b, 2)):
        if not os.path.exists(os.path.join(path, "records.jsonl")):
            os.makedirs(path, exist_ok=True)
            capture(path, seed)
    total, largest = tensor_bytes(a)
    _, largest_b = tensor_bytes(b)
    runs = [run_explain(args.parity, a, b) for _ in range(args.repeats)]
    walls = [w for w, _ in runs]
    peak = max(m for _, m in runs)
    result = {
        "machine": {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count()},
        "layers": LAYERS, "records": sum(1 for _ in open(os.path.join(a, "records.jsonl"))),
        "dump_bytes": total, "largest_op_bytes_a_plus_b": largest + largest_b,
        "explain_seconds_median": statistics.median(walls), "explain_seconds": walls,
        "peak_rss_bytes": peak, "peak_over_largest_op": peak / (largest + largest_b),
        "peak_over_dump": peak / total,
    }
    print(f"dump: {result['records']} op calls, {total / 2**30:.2f} GiB of tensors per side; "
          f"largest op call {largest / 2**20:.1f} MiB per side")
    print(f"parity explain: median {result['explain_seconds_median']:.1f} s over "
          f"{len(walls)} runs ({', '.join(f'{w:.1f}' for w in walls)})")
    print(f"peak RSS {peak / 2**20:.0f} MiB = {result['peak_over_largest_op']:.1f}x the largest op "
          f"call (A+B), {100 * result['peak_over_dump']:.1f}% of one dump")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
