#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity serve`: a store of two real collects (bench and dump stages on
this CPU) and thousands of generated runs (parity_store_gen, through the store's own Record),
report directories made by `parity accept` (signed, tampered, unsigned, half-written) under a
root; every endpoint of the JSON API, /api/compare's ratios against `parity bench compare
--json` on the same two bundles (the security cases: test_serve_hardening.py), bad input (a store of a
newer schema, a corrupt bundle), and the page in headless Chromium: it loads, two runs are
picked, the compare table shows bench compare's ratios, a trend opens, the runs table updates
while a generator writes the store.

Environment (set by CTest): PARITY_BIN, PARITY_STORE_GEN; PARITY_SERVE_SCREENSHOT (optional):
where the page test saves its screenshot of the compare page.
"""
import http.client
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

from sanitized import EXTERNAL_SKIP  # tests/cli/sanitized.py

BIN = os.environ["PARITY_BIN"]
GEN = os.environ["PARITY_STORE_GEN"]
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODEL = os.path.join(ROOT, "examples", "plan", "model.py")
GENERATED = 1500  # runs parity_store_gen writes

PLAN = """plan: serve-test
vars: {config: reference, threads: 1}
stages:
  - kind: env
  - name: bench
    kind: bench
    suites: [stream]
    dtypes: [float64]
    n: 100000
    reps: 5
    threads: "{var.threads}"
  - name: dump
    kind: dump
    command: [%(py)s, %(model)s, dump, "{out}", "--config={var.config}", "--threads={var.threads}"]
""" % {"py": json.dumps(sys.executable), "model": json.dumps(MODEL)}


def run(*args, timeout=300):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout)


def must(r, what):
    if r.returncode != 0:
        raise AssertionError("%s: exit %d\n%s%s" % (what, r.returncode, r.stdout, r.stderr))
    return r


class Serve:
    """A `parity serve` process on a free port."""

    def __init__(self, *args):
        self.proc = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:0", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("parity serve: http://"):
            self.stop()
            raise AssertionError("serve did not start: %r %s" % (line, self.proc.stderr.read()))
        self.port = int(line.split("http://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])

    def request(self, path, method="GET", headers=None, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            conn.putrequest(method, path, skip_host=False, skip_accept_encoding=True)
            for k, v in (headers or {}).items():
                conn.putheader(k, v)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            response = conn.getresponse()
            return response.status, response.getheader("Content-Type") or "", response.read()
        finally:
            conn.close()

    def json(self, path, expect=200, **kwargs):
        status, ctype, data = self.request(path, **kwargs)
        if status != expect:
            raise AssertionError("%s: HTTP %d (expected %d): %s" % (path, status, expect,
                                                                    data[:500]))
        doc = json.loads(data)
        if "format" not in doc or "version" not in doc:
            raise AssertionError("%s: no format/version: %s" % (path, data[:200]))
        return doc

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            stream.close()


class Fixture:
    """The store, the bundles and the reports every test class reads; made once."""

    made = None
    problem = None

    @classmethod
    def get(cls):
        if cls.problem is not None:  # made once: a failure is not retried by every class
            raise AssertionError("the fixture could not be made: %s" % cls.problem)
        if cls.made is None:
            try:
                cls.made = cls()
            except Exception as e:
                cls.problem = str(e)
                raise
        return cls.made

    def __init__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="parity-serve-test-")
        d = self.dir = self.tmp.name
        self.db = os.path.join(d, "parity.db")
        plan = os.path.join(d, "plan.yaml")
        with open(plan, "w") as f:
            f.write(PLAN)
        self.root = os.path.join(d, "root")
        self.base = os.path.join(self.root, "bundles", "base")
        self.cand = os.path.join(self.root, "bundles", "cand")
        for bundle, args in ((self.base, []),
                             (self.cand, ["--var", "config=optimised", "--var", "threads=0"])):
            must(run("collect", plan, "-o", bundle, "--db", self.db, "-q", *args), "collect")
        # A bundle whose manifest is half-written, for the runs that point at it.
        self.corrupt = os.path.join(self.root, "bundles", "corrupt")
        os.makedirs(self.corrupt)
        with open(os.path.join(self.corrupt, "manifest.json"), "w") as f:
            f.write('{"format": "parity-bundle", "stag')
        r = subprocess.run([GEN, self.db, str(GENERATED), self.corrupt], capture_output=True,
                           text=True, timeout=600)
        must(r, "parity_store_gen")
        # Reports: signed, the signed one tampered with, unsigned, half-written.
        criteria = os.path.join(d, "any-speed.yaml")
        with open(criteria, "w") as f:
            f.write("throughput:\n  min_ratio: 0\n")
        key = os.path.join(d, "key")
        must(run("keygen", "-o", key), "keygen")
        reports = os.path.join(self.root, "reports")
        self.signed = os.path.join(reports, "signed")
        must_pass = run("accept", self.base, self.cand, "-o", self.signed, "--no-store",
                        "--criteria", criteria, "--sign", key)
        if must_pass.returncode not in (0, 1):
            must(must_pass, "accept --sign")
        shutil.copytree(self.signed, os.path.join(reports, "tampered"))
        with open(os.path.join(reports, "tampered", "junit.xml"), "a") as f:
            f.write("<!-- changed -->\n")
        unsigned = run("accept", self.base, self.cand, "-o", os.path.join(reports, "unsigned"),
                       "--no-store", "--criteria", criteria)
        if unsigned.returncode not in (0, 1):
            must(unsigned, "accept")
        half = os.path.join(reports, "half")
        os.makedirs(half)
        with open(os.path.join(half, "report.json"), "w") as f:
            f.write('{"format": "parity-report", "verd')
        # A link that points out of the root, which must never be followed.
        self.secret = os.path.join(d, "secret.txt")
        with open(self.secret, "w") as f:
            f.write("outside the root\n")
        os.symlink(self.secret, os.path.join(reports, "secret-link.txt"))
        os.symlink(d, os.path.join(reports, "dir-link"))
        with sqlite3.connect(self.db) as conn:
            rows = conn.execute("SELECT id, bundle FROM runs WHERE kind = 'collect' AND "
                                "uid NOT LIKE 'gen-%' ORDER BY started").fetchall()
        self.ids = {os.path.basename(bundle): ident for ident, bundle in rows}
        self.serve = Serve("--db", self.db, "--root", self.root)

    @staticmethod
    def bench_result(bundle):
        with open(os.path.join(bundle, "manifest.json")) as f:
            [stage] = [s for s in json.load(f)["stages"] if s["name"] == "bench"]
        return os.path.join(bundle, stage["result"])

    def bench_compare(self):
        r = run("bench", "compare", self.bench_result(self.base), self.bench_result(self.cand),
                "--json", "-", "-q")
        if r.returncode not in (0, 1):
            must(r, "bench compare")
        return json.loads(r.stdout)


def tearDownModule():
    if Fixture.made is not None:
        Fixture.made.serve.stop()
        Fixture.made.tmp.cleanup()


class Api(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fixture.get()
        cls.s = cls.f.serve

    def test_runs_newest_first_with_every_field(self):
        doc = self.s.json("/api/runs?limit=500")
        self.assertEqual((doc["format"], doc["version"]), ("parity-runs", 1))
        self.assertEqual(doc["total"], GENERATED + 2)
        self.assertEqual(len(doc["runs"]), 500)
        started = [r["started"] for r in doc["runs"]]
        self.assertEqual(started, sorted(started, reverse=True))
        for r in doc["runs"]:
            for key in ("id", "kind", "status", "node", "plan", "level", "started"):
                self.assertIn(key, r)
            self.assertIn(r["kind"], ("collect", "accept", "fleet"))
        # The two real collects are the newest (the generated runs start in 2023).
        self.assertEqual({r["id"] for r in doc["runs"][:2]}, set(self.f.ids.values()))

    def test_runs_filter_search_and_pages(self):
        accepts = self.s.json("/api/runs?kind=accept&limit=500")
        self.assertEqual(accepts["total"], GENERATED // 10)
        self.assertTrue(all(r["kind"] == "accept" for r in accepts["runs"]))
        failed = self.s.json("/api/runs?status=failed&node=node-1&limit=500")
        expected = sum(1 for i in range(GENERATED) if i % 7 == 3 and i % 4 == 1)
        self.assertEqual(failed["total"], expected)
        found = self.s.json("/api/runs?q=GEN-77")
        self.assertEqual({r["uid"] for r in found["runs"]},
                         {"gen-%d" % i for i in range(GENERATED) if str(i).startswith("77")})
        one = self.s.json("/api/runs?limit=10&offset=0")["runs"]
        two = self.s.json("/api/runs?limit=10&offset=10")["runs"]
        self.assertFalse({r["id"] for r in one} & {r["id"] for r in two})
        run_doc = self.s.json("/api/run?id=%d" % self.f.ids["base"])
        self.assertEqual([s["name"] for s in run_doc["run"]["stages"]], ["env", "bench", "dump"])
        self.assertEqual(run_doc["bundle"], {"readable": True})
        gen_collect = self.s.json("/api/runs?kind=collect&q=gen-&limit=1")["runs"][0]["id"]
        corrupt = self.s.json("/api/run?id=%d" % gen_collect)["bundle"]
        self.assertFalse(corrupt["readable"])
        self.assertIn("corrupt/manifest.json", corrupt["problem"])

    def test_bad_parameters_and_ids(self):
        for path, status in (("/api/runs?limit=501", 400), ("/api/runs?limt=5", 400),
                             ("/api/runs?kind=nightly", 400), ("/api/runs?offset=-1", 400),
                             ("/api/run?id=99999999", 404), ("/api/run?id=x", 400),
                             ("/api/trend", 400), ("/api/trend?metric=no.such.metric", 404),
                             ("/api/compare?a=1", 400), ("/api/compare?a=1&b=99999999", 404),
                             ("/api/explain?a=1&b=2&cause=bad", 400), ("/api/nothing", 404)):
            doc = self.s.json(path, expect=status)
            self.assertEqual(doc["format"], "parity-serve-error")
            self.assertTrue(doc["error"])
        doc = self.s.json("/api/runs?limt=5", expect=400)
        self.assertIn("did you mean 'limit'", doc["error"])

    def test_trend_verdict_band_and_change_point(self):
        doc = self.s.json("/api/trend?metric=stream.triad&node=node-0")
        self.assertEqual((doc["format"], doc["version"]), ("parity-trend", 1))
        [series] = doc["series"]
        # node-0 holds the generated collects i % 4 == 0 (none of them i % 10 == 9).
        indexes = [i for i in range(GENERATED) if i % 4 == 0 and i % 10 != 9]
        self.assertEqual(series["trend"]["points"], len(indexes))
        self.assertEqual(series["trend"]["verdict"], "regressed")
        self.assertAlmostEqual(series["trend"]["last"], 80.0)
        first = series["points"][0]
        self.assertAlmostEqual(first["band"][0], first["value"] * 2.718281828459045 ** -0.03)
        # One change point, where 100-ish dropped to 80, with the environment that changed.
        [change] = series["change_points"]
        change_at = 2 * GENERATED // 3
        to_index = min(i for i in indexes if i >= change_at)
        self.assertEqual(change["to_uid"], "gen-%d" % to_index)
        self.assertEqual(change["verdict"], "regressed")
        diff = {d["key"]: d for d in change["env_diff"]}
        self.assertIn("host.environment.OMP_NUM_THREADS", diff)
        self.assertEqual((diff["host.environment.OMP_NUM_THREADS"]["baseline"],
                          diff["host.environment.OMP_NUM_THREADS"]["candidate"]), ("16", "8"))
        gemm = self.s.json("/api/trend?metric=gemm.fp32")
        self.assertEqual({s["trend"]["verdict"] for s in gemm["series"]}, {"steady"})
        self.assertTrue(all(not s["change_points"] for s in gemm["series"]))
        names = {m["name"] for m in self.s.json("/api/metrics")["metrics"]}
        self.assertTrue({"stream.triad", "gemm.fp32", "geomean.stream"} <= names)

    def test_compare_ratios_are_bench_compares(self):
        doc = self.s.json("/api/compare?a=%d&b=%d" % (self.f.ids["base"], self.f.ids["cand"]))
        self.assertEqual((doc["format"], doc["version"]), ("parity-serve-compare", 1))
        [stage] = doc["throughput"]
        reference = self.f.bench_compare()
        key = lambda c: (c["benchmark"], c["dtype"], json.dumps(c["params"], sort_keys=True))
        ours = {key(c): c for c in stage["report"]["comparisons"]}
        theirs = {key(c): c for c in reference["comparisons"]}
        self.assertEqual(set(ours), set(theirs))
        self.assertTrue(ours)
        for k, c in theirs.items():
            for field in ("ratio", "ci_low", "ci_high", "verdict", "base_median", "cand_median"):
                self.assertEqual(ours[k][field], c[field], (k, field))
        self.assertEqual(stage["report"]["suite_geomean"], reference["suite_geomean"])
        ids = {c["id"] for c in doc["criteria"]}
        self.assertIn("throughput.bench.stream", ids)
        self.assertIn("numerics.dump", ids)
        self.assertEqual([c["id"] for c in doc["numerics"]],
                         [c["id"] for c in doc["criteria"] if c["part"] == "numerics"])
        keys = {d["key"] for d in doc["env_diff"]["differences"]}
        self.assertIn("plan.vars.config", keys)  # reference against optimised
        self.assertEqual([d["stage"] for d in doc["dumps"]], ["dump"])
        # An accept run is not a bundle; a corrupt bundle is unreadable, and says why.
        accept_id = self.s.json("/api/runs?kind=accept&limit=1")["runs"][0]["id"]
        self.s.json("/api/compare?a=%d&b=%d" % (self.f.ids["base"], accept_id), expect=400)
        gen_collect = self.s.json("/api/runs?kind=collect&q=gen-&limit=1")["runs"][0]["id"]
        bad = self.s.json("/api/compare?a=%d&b=%d" % (self.f.ids["base"], gen_collect),
                          expect=422)
        self.assertIn("unreadable", bad["error"])
        self.assertIn("manifest.json", bad["error"])

    def test_reports_signatures_and_unreadable(self):
        doc = self.s.json("/api/reports")
        self.assertEqual((doc["format"], doc["version"]), ("parity-reports", 1))
        by_path = {r["path"]: r for r in doc["reports"]}
        self.assertEqual(set(by_path), {"reports/signed", "reports/tampered", "reports/unsigned",
                                        "reports/half"})
        self.assertEqual(by_path["reports/signed"]["signature"]["status"], "valid")
        tampered = by_path["reports/tampered"]["signature"]
        self.assertEqual((tampered["status"], tampered["changed"]), ("invalid", ["junit.xml"]))
        self.assertEqual(by_path["reports/unsigned"]["signature"]["status"], "unsigned")
        self.assertFalse(by_path["reports/half"]["readable"])
        self.assertIn("half-written", by_path["reports/half"]["problem"])
        self.assertTrue(by_path["reports/signed"]["readable"])
        self.assertIn(by_path["reports/signed"]["verdict"], ("pass", "fail"))
        status, ctype, body = self.s.request(by_path["reports/signed"]["url"])
        self.assertEqual(status, 200)
        self.assertTrue(ctype.startswith("text/html"))
        with open(os.path.join(self.f.signed, "report.html"), "rb") as f:
            self.assertEqual(body, f.read())

    def test_explain_pages_and_filters(self):
        base, cand = self.f.ids["base"], self.f.ids["cand"]
        doc = self.s.json("/api/explain?a=%d&b=%d&limit=2" % (base, cand))
        self.assertEqual((doc["format"], doc["version"]), ("parity-explain-page", 1))
        self.assertGreater(doc["total"], 2)
        self.assertEqual(doc["matched"], doc["total"])
        self.assertEqual(len(doc["ops"]), 2)
        self.assertEqual(sum(doc["causes"].values()), doc["total"])
        seqs = [op["seq"] for op in doc["ops"]]
        nxt = self.s.json("/api/explain?a=%d&b=%d&limit=2&offset=2" % (base, cand))
        self.assertFalse(set(seqs) & {op["seq"] for op in nxt["ops"]})
        for cause, n in doc["causes"].items():
            page = self.s.json("/api/explain?a=%d&b=%d&cause=%s&limit=500" % (base, cand, cause))
            self.assertEqual(page["matched"], n)
            self.assertTrue(all(op["cause"] == cause for op in page["ops"]))
        backward = self.s.json("/api/explain?a=%d&b=%d&pass=backward&limit=500" % (base, cand))
        self.assertTrue(all(op["pass"] == "backward" for op in backward["ops"]))
        first = doc["ops"][0]["name"]
        prefix = first.split(".")[0]
        module = self.s.json("/api/explain?a=%d&b=%d&module=%s&limit=500" % (base, cand, prefix))
        self.assertGreater(module["matched"], 0)
        self.assertTrue(all(op["name"].startswith(prefix) for op in module["ops"]))
        dumps = {d["stage"]: d for d in self.s.json(
            "/api/compare?a=%d&b=%d" % (base, cand))["dumps"]}
        rel = lambda path: os.path.relpath(path, self.f.root)
        by_dir = self.s.json("/api/explain?dir_a=%s&dir_b=%s&limit=5"
                             % (rel(dumps["dump"]["a"]), rel(dumps["dump"]["b"])))
        self.assertEqual(by_dir["total"], doc["total"])
        self.s.json("/api/explain?dir_a=../secret.txt&dir_b=bundles/cand/dump", expect=404)


class BadInput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fixture.get()

    def test_newer_schema_exits_2_before_listening(self):
        newer = os.path.join(self.f.dir, "newer.db")
        with sqlite3.connect(newer) as conn:
            conn.execute("CREATE TABLE runs(id INTEGER PRIMARY KEY)")
            conn.execute("PRAGMA user_version = 9")
        r = run("serve", "--db", newer, "--listen", "127.0.0.1:0", timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertIn("schema version 9 is newer", r.stderr)
        self.assertTrue(r.stderr.startswith("parity: error: " + newer))

    def test_missing_store_and_root(self):
        r = run("serve", "--db", os.path.join(self.f.dir, "none.db"), "--listen", "127.0.0.1:0",
                timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertFalse(os.path.exists(os.path.join(self.f.dir, "none.db")))
        r = run("serve", "--db", self.f.db, "--root", os.path.join(self.f.dir, "nope"),
                "--listen", "127.0.0.1:0", timeout=30)
        self.assertEqual(r.returncode, 2)
        self.assertIn("--root is not a directory", r.stderr)


class Listening(unittest.TestCase):
    def test_json_names_the_port(self):
        f = Fixture.get()
        out = os.path.join(f.dir, "serve.json")
        proc = subprocess.Popen([BIN, "serve", "--db", f.db, "--listen", "127.0.0.1:0", "-q",
                                 "--json", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while not os.path.exists(out) and time.monotonic() < deadline:
                time.sleep(0.05)
            with open(out) as fh:
                doc = json.load(fh)
            self.assertEqual((doc["format"], doc["version"]), ("parity-serve", 1))
            with urllib.request.urlopen(doc["url"] + "api/runs?limit=1", timeout=60) as r:
                self.assertEqual(json.load(r)["total"], GENERATED + 2)
        finally:
            proc.terminate()
            out_text, _ = proc.communicate(timeout=30)
        self.assertEqual(out_text, b"")  # -q: no line on stdout


class Live(unittest.TestCase):
    def test_new_runs_show_without_restarting(self):
        f = Fixture.get()
        db = os.path.join(f.dir, "live.db")
        subprocess.run([GEN, db, "3"], check=True, timeout=60)
        s = Serve("--db", db)
        try:
            self.assertEqual(s.json("/api/runs")["total"], 3)
            subprocess.run([GEN, db, "5"], check=True, timeout=60)  # same uids 0-2: updated
            self.assertEqual(s.json("/api/runs")["total"], 5)
        finally:
            s.stop()


@EXTERNAL_SKIP
class Page(unittest.TestCase):
    """The page in headless Chromium, driven over the DevTools protocol."""

    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, HERE)
        import report_html_check as rhc
        cls.rhc = rhc
        chromium = rhc.find_chromium(None)
        if chromium is None:
            raise unittest.SkipTest("chromium not found (Debian package chromium)")
        cls.f = Fixture.get()
        cls.browser = rhc.Browser(chromium)
        cls.errors = []
        cls.session = None

        def on_event(method, params, session):
            if method == "Runtime.exceptionThrown":
                cls.errors.append(json.dumps(params)[:300])

        try:
            cls.cdp = cls.browser.start(on_event)
            cls.cdp.call("Browser.getVersion")
        except (OSError, rhc.CdpError) as e:
            cls.browser.stop()
            raise unittest.SkipTest("chromium did not start: %s" % e)
        target = cls.cdp.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        cls.session = cls.cdp.call("Target.attachToTarget",
                                   {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Page"):
            cls.cdp.call(domain + ".enable", session=cls.session)

    @classmethod
    def tearDownClass(cls):
        cls.browser.stop()

    def js(self, expression):
        return self.cdp.evaluate(self.session, expression)

    def wait_for(self, expression, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.cdp.pump(0.1)
            try:
                value = self.js(expression)
            except self.rhc.CdpError:
                value = None
            if value:
                return value
        self.fail("timed out waiting for %s; page errors: %s" % (expression, self.errors))

    def test_compare_trend_and_live_runs(self):
        s = self.f.serve
        self.cdp.call("Page.navigate", {"url": "http://127.0.0.1:%d/" % s.port}, self.session)
        self.wait_for("document.body && document.body.dataset.runsReady === '1'")
        total = self.js("document.getElementById('runs-range').textContent")
        self.assertIn("of %d" % (GENERATED + 2), total)
        # Pick the two real collects and compare them.
        for name in ("base", "cand"):
            self.js("document.querySelector('tr[data-id=\"%d\"] input.pick').click()"
                    % self.f.ids[name])
            self.wait_for("document.querySelector('tr[data-id=\"%d\"]').classList"
                          ".contains('picked')" % self.f.ids[name])
        self.js("document.getElementById('runs-compare').click()")
        self.wait_for("document.body.dataset.compareReady === '1'", timeout=120)
        rows = self.js("[...document.querySelectorAll('#compare-table tbody tr')]"
                       ".map(r => [r.dataset.label, Number(r.dataset.ratio)])")
        reference = self.f.bench_compare()["comparisons"]
        self.assertEqual([ratio for _, ratio in rows], [c["ratio"] for c in reference])
        self.assertEqual([label.split(" ")[0] for label, _ in rows],
                         [c["benchmark"] for c in reference])
        criteria = self.js("document.querySelectorAll('#criteria-table tbody tr').length")
        self.assertGreater(criteria, 0)
        shot = os.environ.get("PARITY_SERVE_SCREENSHOT")
        if shot:
            import base64
            data = self.cdp.call("Page.captureScreenshot", {"format": "png"}, self.session)
            with open(shot, "wb") as f:
                f.write(base64.b64decode(data["data"]))
        # A trend opens, with its verdicts and a drawn chart.
        self.js("document.getElementById('tab-trends').click()")
        self.wait_for("document.getElementById('trend-metric').options.length > 0")
        self.js("document.getElementById('trend-metric').value = 'stream.triad';"
                "document.getElementById('trend-go').click()")
        self.wait_for("document.body.dataset.trendReady === '1'", timeout=120)
        verdicts = self.js("[...document.querySelectorAll('#trend-table tbody tr')]"
                           ".map(r => r.cells[8].textContent)")
        self.assertIn("regressed", verdicts)
        self.assertTrue(self.js("!!Chart.getChart(document.getElementById('trend-chart'))"))
        self.assertGreater(self.js("document.querySelectorAll('#trend-changes tbody tr').length"),
                           0)
        # Live: runs written to a store show in the runs table without a reload.
        db = os.path.join(self.f.dir, "page-live.db")
        subprocess.run([GEN, db, "3"], check=True, timeout=60)
        live = Serve("--db", db)
        try:
            self.cdp.call("Page.navigate", {"url": "http://127.0.0.1:%d/" % live.port},
                          self.session)
            self.wait_for("document.body && document.body.dataset.runsReady === '1' && "
                          "document.getElementById('runs-range').textContent.includes('of 3')")
            subprocess.run([GEN, db, "5"], check=True, timeout=60)
            self.wait_for("document.getElementById('runs-range').textContent.includes('of 5')",
                          timeout=30)
        finally:
            live.stop()
        self.assertEqual(self.errors, [])

    def test_localhost_and_a_sandboxed_report(self):
        port = self.f.serve.port
        self.cdp.call("Page.navigate", {"url": "http://localhost:%d/" % port}, self.session)
        self.wait_for("document.body && document.body.dataset.runsReady === '1'")
        # A report under the root draws its charts in an opaque origin (CSP sandbox).
        url = "http://127.0.0.1:%d/files/0/reports/signed/report.html" % port
        self.cdp.call("Page.navigate", {"url": url}, self.session)
        self.wait_for("document.documentElement.dataset.ready === '1'")
        root = "document.documentElement.dataset"
        self.assertGreater(int(self.js(root + ".chartsExpected")), 0)
        self.assertEqual(self.js(root + ".chartsDrawn"), self.js(root + ".chartsExpected"))
        self.assertEqual(self.js("window.origin"), "null")
        self.assertEqual(self.errors, [])


if __name__ == "__main__":
    unittest.main()
