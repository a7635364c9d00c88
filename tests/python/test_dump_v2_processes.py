#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""parity_dump format version 2 across processes: a capture killed mid-step leaves a
readable prefix, and two torch.distributed (gloo) ranks write one dump each, with their
collectives as records."""
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import unittest

import numpy as np

from dumpv2 import load, manifest, records, tempdir

HERE = os.path.dirname(os.path.abspath(__file__))

# At most 300 steps and 20 MB of tensor files (then statistics): bounded if never killed.
KILLED = textwrap.dedent("""
    import sys, parity_dump, parity_workloads
    w = parity_workloads.get("transformer")
    opt = w.make_optimizer()
    with parity_dump.capture(w.model, sys.argv[1], optimizer=opt, max_bytes=20 << 20) as cap:
        for batch in w.batches(300):
            w.train_step(w.model, batch, opt)
            cap.step()
""")

RANK = textwrap.dedent("""
    import sys, torch, torch.distributed as dist, parity_dump
    rank, init, out = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=2)
    torch.manual_seed(0)  # the same model on both ranks
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(100 + rank)  # different data per rank
    with parity_dump.capture(model, out, optimizer=opt) as cap:
        for _ in range(2):
            x, y = torch.randn(3, 4, generator=gen), torch.randn(3, 1, generator=gen)
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad.div_(2)
            gathered = [torch.zeros(()) for _ in range(2)]
            dist.all_gather(gathered, loss.detach())
            opt.step()
            cap.step()
    dist.destroy_process_group()
""")


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(p for p in (e.get("PYTHONPATH"), HERE) if p)
    e.setdefault("OMP_NUM_THREADS", "1")
    return e


class Processes(unittest.TestCase):
    def setUp(self):
        self.tmp = tempdir()

    def tearDown(self):
        self.tmp.cleanup()

    def test_killed_mid_step_leaves_a_readable_prefix(self):
        out = os.path.join(self.tmp.name, "d")
        log = open(os.path.join(self.tmp.name, "child.log"), "w+")
        child = subprocess.Popen([sys.executable, "-c", KILLED, out], env=env(), stdout=log,
                                 stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 120
            path = os.path.join(out, "records.jsonl")
            # Wait until the child is well inside its third step, then kill it.
            while time.monotonic() < deadline and child.poll() is None:
                try:
                    with open(os.path.join(out, "manifest.json")) as f:
                        if len(json.load(f)["steps"]) >= 3 and os.path.getsize(path) > 50000:
                            break
                except (OSError, ValueError, KeyError):
                    pass
                time.sleep(0.02)
            if child.poll() is None:
                os.kill(child.pid, signal.SIGKILL)
        finally:
            if child.poll() is None:
                child.kill()
            child.wait(timeout=60)
            log.seek(0)
            output = log.read()
            log.close()
        self.assertEqual(child.returncode, -signal.SIGKILL, output)
        with open(path) as f:
            lines = f.read().split("\n")
        complete, last = lines[:-1], lines[-1]  # last: "" or a line cut off
        recs = [json.loads(line) for line in complete]
        self.assertGreater(len(recs), 100)
        self.assertEqual([r["seq"] for r in recs], list(range(len(recs))))
        if last:
            with self.assertRaises(ValueError):
                json.loads(last)
        for r in recs:  # a complete line's tensors were written before it
            for e in r["inputs"] + r["outputs"]:
                if "file" in e:
                    self.assertTrue(os.path.exists(os.path.join(out, e["file"])), e)
        m = manifest(out)
        self.assertEqual((m["format"], m["version"]), ("parity-dump", 2))
        done = [s for s in m["steps"][:-1]]
        self.assertGreaterEqual(len(done), 2)
        for s in done:  # finished steps' counts agree with the records
            self.assertEqual(s["records"], sum(r["step"] == s["step"] for r in recs))
        self.assertLessEqual(max(r["step"] for r in recs), m["steps"][-1]["step"])

    def test_two_gloo_ranks(self):
        out = os.path.join(self.tmp.name, "dist")
        init = "file://" + os.path.join(self.tmp.name, "rendezvous")
        ranks = [subprocess.Popen([sys.executable, "-c", RANK, str(r), init, out], env=env(),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for r in (0, 1)]
        logs = []
        for p in ranks:
            try:
                logs.append(p.communicate(timeout=180)[0])
            finally:
                if p.poll() is None:
                    p.kill()
        for p, log in zip(ranks, logs):
            self.assertEqual(p.returncode, 0, log)
        self.assertEqual(sorted(os.listdir(out)), ["rank0", "rank1"])
        dumps = [os.path.join(out, "rank%d" % r) for r in (0, 1)]
        recs = [records(d) for d in dumps]
        for r, (d, rs) in enumerate(zip(dumps, recs)):
            m = manifest(d)
            self.assertEqual((m["rank"], m["world_size"]), (r, 2))
            self.assertEqual({x["rank"] for x in rs}, {r})
            self.assertEqual([s["step"] for s in m["steps"]], [0, 1, 2])
        reduces = [[x for x in rs if x["op"] == "all_reduce"] for rs in recs]
        self.assertEqual([len(x) for x in reduces], [8, 8])  # 4 gradients, 2 steps
        for a, b in zip(*reduces):
            self.assertEqual((a["name"], a["step"], a["call"], a["overload"], a["pass"]),
                             (b["name"], b["step"], b["call"], "", "forward"))
            self.assertEqual(a["attrs"]["op"], "SUM")
            ina, inb = load(dumps[0], a["inputs"][0]), load(dumps[1], b["inputs"][0])
            outa, outb = load(dumps[0], a["outputs"][0]), load(dumps[1], b["outputs"][0])
            self.assertFalse(np.array_equal(ina, inb))  # different data per rank
            np.testing.assert_array_equal(outa, outb)   # the same sum on both
            np.testing.assert_allclose(outa, ina + inb, rtol=1e-6)
        gathers = [[x for x in rs if x["op"] == "all_gather"] for rs in recs]
        self.assertEqual([len(x) for x in gathers], [2, 2])
        for g in gathers[0]:
            self.assertEqual(len(g["outputs"]), 2)


if __name__ == "__main__":
    unittest.main()
