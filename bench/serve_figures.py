#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Figures of `parity serve` (docs/PERFORMANCE.md): a store of 10,000 runs and a dump pair of
100,000 op calls; the first page load (time to the runs table filled, in headless Chromium)
and the API's latency p50/p99 under wrk for /api/runs, /api/trend, /api/compare and a page of
/api/explain, against `parity history --json` on the same store, timed in the same run.

The store is written by build/tests/parity_store_gen (the store's own Record: 10,000 runs on
4 nodes, two metrics a collect, tests/serve/store_gen.cc); its collect runs point, in turn, at
two real bundles collected here with a bench stage (stream, float64) so that /api/compare
compares real results. The dump pair is written with numpy in parity-dump v2 format: 100,000
op calls over 10 steps, 99% statistics-only (compared only) and 1% a replayable relu, with a
hash differing on B for one call in 50.

Usage: serve_figures.py [--parity build/parity] [--gen build/tests/parity_store_gen]
                        [--runs 10000] [--ops 100000] [--duration 5] [--baseline PARITY]
                        [--json OUT]
With --baseline, each endpoint's wrk figures are taken again for both binaries in turn and the
p50 ratios (this / baseline) are reported.
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "cli"))

PLAN = """plan: serve-figures
stages:
  - name: bench
    kind: bench
    suites: [stream]
    dtypes: [float64]
    n: 100000
    reps: 5
"""


def write_dump(root, ops, differ):
    """A parity-dump v2 directory of `ops` op calls; `differ`: B's hashes differ."""
    os.makedirs(os.path.join(root, "tensors"), exist_ok=True)
    x = np.linspace(-1.0, 1.0, 64, dtype=np.float32)
    np.save(os.path.join(root, "tensors", "in.npy"), x)
    np.save(os.path.join(root, "tensors", "out.npy"), np.maximum(x, 0).astype(np.float32))
    steps = 10
    per_step = ops // steps
    manifest = {"format": "parity-dump", "version": 2, "level": "aten", "rank": 0,
                "world_size": 1, "mode": "tensors", "platform": {}, "framework": {},
                "omitted": {}, "steps": [{"step": s, "records": per_step} for s in range(steps)]}
    with open(os.path.join(root, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    with open(os.path.join(root, "records.jsonl"), "w") as f:
        seq = 0
        for s in range(steps):
            for k in range(per_step):
                layer = k % 500
                passname = "forward" if k < per_step // 2 else "backward"
                if k % 100 == 0:
                    files = [{"file": "tensors/in.npy", "dtype": "float32", "shape": [64]},
                             {"file": "tensors/out.npy", "dtype": "float32", "shape": [64]}]
                    r = {"name": "layers.%d.act" % layer, "module": "layers.%d" % layer,
                         "op": "relu", "attrs": {},
                         "inputs": [dict(files[0], arg="self")], "outputs": [files[1]]}
                else:
                    h = "b%d" % seq if differ and seq % 50 == 0 else "a%d" % seq
                    st = {"dtype": "float32", "shape": [8, 8],
                          "stats": {"min": 0.0, "max": 1.0, "mean": 0.5, "l2": 1.0, "nan": 0,
                                    "inf": 0, "zero": 0, "hash": "in%d" % seq}}
                    out = dict(st, stats=dict(st["stats"], hash=h,
                                              l2=1.0 + (1e-3 if h.startswith("b") else 0)))
                    r = {"name": "layers.%d.linear" % layer, "module": "layers.%d" % layer,
                         "op": "addmm", "attrs": {"beta": 1, "alpha": 1},
                         "inputs": [dict(st, arg="self"), dict(st, arg="mat1")],
                         "outputs": [out]}
                r.update({"seq": seq, "step": s, "rank": 0, "overload": "default",
                          "pass": passname, "call": k // 500, "params": {}})
                f.write(json.dumps(r) + "\n")
                seq += 1


def wrk(url, duration, connections=8, threads=2):
    out = subprocess.run(["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % duration,
                          "--latency", url], capture_output=True, text=True, check=True).stdout
    def ms(label):
        m = re.search(r"^\s*%s\s+([\d.]+)(us|ms|s)\s*$" % re.escape(label), out, re.M)
        value, unit = float(m.group(1)), m.group(2)
        return value / 1000.0 if unit == "us" else value * 1000.0 if unit == "s" else value
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return {"p50_ms": ms("50%"), "p99_ms": ms("99%"), "requests_per_s": rps,
            "non_2xx": int(errors.group(1)) if errors else 0}


def get(url):
    with urllib.request.urlopen(url, timeout=600) as r:
        return r.read()


def first_page_load(url):
    """Seconds from navigation to the runs table filled, in headless Chromium; or None."""
    import report_html_check as rhc
    chromium = rhc.find_chromium(None)
    if chromium is None:
        return None
    browser = rhc.Browser(chromium)
    try:
        cdp = browser.start(lambda *a: None)
        target = cdp.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = cdp.call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"]
        cdp.call("Page.enable", session=session)
        start = time.monotonic()
        cdp.call("Page.navigate", {"url": url}, session)
        while time.monotonic() - start < 60:
            try:
                if cdp.evaluate(session, "document.body && document.body.dataset.runsReady === "
                                         "'1' && document.querySelectorAll('#runs-table tbody "
                                         "tr').length > 0"):
                    return time.monotonic() - start
            except rhc.CdpError:
                pass
            cdp.pump(0.005)
        return None
    finally:
        browser.stop()


def measure(parity, db, root, duration, full=True):
    """A `parity serve` of `parity` on the store and roots: (when `full`) the first page load,
    the page's fetches, the cold compare and explain; and each endpoint under wrk."""
    out = {}
    proc = subprocess.Popen([parity, "serve", "--db", db, "--root", root, "--listen",
                             "127.0.0.1:0"], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        base = line.split(" ")[2].rstrip("/")
        runs = json.loads(get(base + "/api/runs?kind=collect&limit=2"))["runs"]
        a, b = runs[1]["id"], runs[0]["id"]
        explain = base + "/api/explain?dir_a=dumps/a&dir_b=dumps/b"
        if full:
            out["first_page_load_s"] = first_page_load(base + "/")
            t = time.monotonic()
            get(base + "/")
            get(base + "/serve.js")
            get(base + "/chart.js")
            get(base + "/api/runs?limit=50")
            out["page_fetch_s"] = round(time.monotonic() - t, 4)
            t = time.monotonic()
            get(base + "/api/compare?a=%d&b=%d" % (a, b))
            out["compare_cold_s"] = round(time.monotonic() - t, 3)
            t = time.monotonic()
            first = json.loads(get(explain + "&limit=1"))
            out["explain_cold_s"] = round(time.monotonic() - t, 2)
            out["explain_total_ops"] = first["total"]
            out["explain_causes"] = first["causes"]
        else:
            get(base + "/api/compare?a=%d&b=%d" % (a, b))  # computed once, then cached
            get(explain + "&limit=1")
        urls = {
            "asset": base + "/serve.css",  # no work of its own: the HTTP layer alone
            "runs_10": base + "/api/runs?limit=10",
            "runs": base + "/api/runs?limit=100",
            "runs_search": base + "/api/runs?q=gen-99&limit=100",
            "trend": base + "/api/trend?metric=stream.triad&node=node-0",
            "compare": base + "/api/compare?a=%d&b=%d" % (a, b),
            "explain_page": explain + "&pass=backward&module=layers.4&offset=200&limit=100",
        }
        # One connection (a user's page) and eight (a team's pages polling at once).
        out["wrk"] = {"%s_c%d" % (name, c): wrk(url, duration, connections=c,
                                                threads=min(c, 2))
                      for c in (1, 8) for name, url in urls.items()}
    finally:
        proc.terminate()
        proc.wait()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parity", default=os.path.join(HERE, "..", "build", "parity"))
    ap.add_argument("--gen", default=os.path.join(HERE, "..", "build", "tests", "parity_store_gen"))
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--ops", type=int, default=100000)
    ap.add_argument("--duration", type=int, default=5, help="seconds of wrk per figure")
    ap.add_argument("--baseline", help="another parity binary (e.g. an earlier commit's): its "
                    "serve measured on the same store, alternating, and the p50 ratios given")
    ap.add_argument("--json")
    args = ap.parse_args()
    out = {"machine": platform.machine(), "cpus": os.cpu_count(), "runs": args.runs,
           "ops": args.ops}
    with tempfile.TemporaryDirectory(prefix="parity-serve-figures-") as d:
        plan = os.path.join(d, "plan.yaml")
        with open(plan, "w") as f:
            f.write(PLAN)
        bundles = [os.path.join(d, "root", "bundles", n) for n in ("a", "b")]
        for b in bundles:
            subprocess.run([args.parity, "collect", plan, "-o", b, "--no-store", "-q"], check=True)
        db = os.path.join(d, "parity.db")
        t = time.monotonic()
        subprocess.run([args.gen, db, str(args.runs), *bundles], check=True)
        out["store_write_s"] = round(time.monotonic() - t, 2)
        out["store_bytes"] = os.path.getsize(db)
        t = time.monotonic()
        write_dump(os.path.join(d, "root", "dumps", "a"), args.ops, False)
        write_dump(os.path.join(d, "root", "dumps", "b"), args.ops, True)
        out["dump_write_s"] = round(time.monotonic() - t, 2)

        # The peer: parity history --json on the same store (every run; and one trend).
        for name, extra in (("history_runs_all", ["--limit", "0"]),
                            ("history_runs_100", ["--limit", "100"]),
                            ("history_trend", ["--benchmark", "stream.triad", "--node",
                                               "node-0"])):
            times = []
            for _ in range(3):
                t = time.monotonic()
                subprocess.run([args.parity, "history", "--db", db, "--json", os.devnull, "-q",
                                *extra], check=True)
                times.append(time.monotonic() - t)
            out[name + "_s"] = round(statistics.median(times), 4)

        root = os.path.join(d, "root")
        out.update(measure(args.parity, db, root, args.duration))
        if args.baseline:
            # Another build on the same store and roots, alternating with this one (baseline,
            # this, this, baseline) so that a change of load weighs on both alike.
            rounds = {"baseline": [], "this": []}
            for who in ("baseline", "this", "this", "baseline"):
                parity = args.baseline if who == "baseline" else args.parity
                rounds[who].append(measure(parity, db, root, args.duration, full=False)["wrk"])
            out["against_baseline"] = {
                key: {"p50_ms": [statistics.mean(r[key]["p50_ms"] for r in rounds[w])
                                 for w in ("baseline", "this")],
                      "p50_ratio": round(
                          statistics.mean(r[key]["p50_ms"] for r in rounds["this"]) /
                          statistics.mean(r[key]["p50_ms"] for r in rounds["baseline"]), 3)}
                for key in rounds["this"][0]}
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
