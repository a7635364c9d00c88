#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The float64 oracle on the model zoo (issue 46): per workload of python/parity_workloads,
one training step (forward, backward and the workload's own optimizer) captured in tensors
mode, then `parity replay` on it: the op calls recorded, how many the oracle replays, how many
of those lie within their bound, and the ops it does not replay, with the reason.

    PYTHONPATH=python $(scripts/venv) bench/zoo_replay.py [--parity build/parity]
        [--baseline OTHER/parity] [--workloads hf-llama,...] [--size tiny] [--dir DIR]
        [--markdown FILE]

--baseline replays the same dumps with another build (before a change), in the same run.
"Computing" leaves out the calls that compute nothing the oracle could judge: random ops
(bernoulli_, as "not judged" dropout is) are listed apart.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

import torch

import parity_workloads

DEFAULT = ("hf-llama", "hf-bert", "timm-vit", "timm-resnet", "torchrec-dlrm", "minilm")
RANDOM = {"bernoulli_", "bernoulli", "uniform_", "normal_", "randperm"}


def capture(name, size, out):
    parity_workloads.get(name, size=size, seed=0).captured_step(out, mode="tensors")


def replay(parity, dump):
    r = subprocess.run([parity, "replay", dump, "--json", "-", "-q", "--threads", "1"],
                       capture_output=True, text=True, timeout=1800)
    if r.returncode not in (0, 1):
        sys.exit("parity replay %s: exit %d: %s" % (dump, r.returncode, r.stderr))
    ops = json.loads(r.stdout)["ops"]
    computing = [o for o in ops if o["op"] not in RANDOM]
    replayed = [o for o in computing if o.get("replayable")]
    within = [o for o in replayed if o.get("within_bound") or not o.get("judged", True)]
    skipped = collections.Counter(
        "%s (%s)" % (o["op"], o.get("reason", "")) for o in computing if not o.get("replayable"))
    return {"calls": len(ops), "computing": len(computing), "replayed": len(replayed),
            "within": len(within), "random": len(ops) - len(computing),
            "not_replayed": dict(skipped)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parity", default="build/parity")
    ap.add_argument("--baseline")
    ap.add_argument("--workloads", default=",".join(DEFAULT))
    ap.add_argument("--size", default="tiny")
    ap.add_argument("--dir")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        for name in args.workloads.split(","):
            dump = os.path.join(tmp, name)
            capture(name, args.size, dump)
            row = {"workload": name, "after": replay(args.parity, dump)}
            if args.baseline:
                row["before"] = replay(args.baseline, dump)
            rows.append(row)
            print(json.dumps(row), flush=True)
    lines = ["| workload | op calls | random | computing | replayed, before → after | "
             "within bound (of replayed) | not replayed (after) |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        a, b = row["after"], row.get("before")
        pct = lambda x: "%d (%.1f%%)" % (x["replayed"], 100.0 * x["replayed"] / x["computing"])
        lines.append("| %s | %d | %d | %d | %s%s | %d of %d | %s |" % (
            row["workload"], a["calls"], a["random"], a["computing"],
            (pct(b) + " → ") if b else "", pct(a), a["within"], a["replayed"],
            ", ".join("%s ×%d" % kv for kv in sorted(a["not_replayed"].items())) or "none"))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
