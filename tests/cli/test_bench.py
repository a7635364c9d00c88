#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity bench`, `parity bench list`, `parity bench compare` and
`parity devices`: small real runs on the cpu backend, validation proven to fail through the fake
plugin's planted wrong kernels (tests/bench/fake_backend_plugin.cc), and compare verdicts and
intervals on synthetic documents of known noise against numpy and scipy
(tests/gen/gen_bench.py).

Environment (set by CTest): PARITY_BIN, PARITY_TESTDATA, PARITY_TEST_PLUGINS (the fake plugins'
directory; the plugin tests are skipped without it).
"""
import json
import math
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np
import scipy.stats as st

BIN = os.environ["PARITY_BIN"]
DATA = os.path.join(os.environ["PARITY_TESTDATA"], "bench")
PLUGINS = os.environ.get("PARITY_TEST_PLUGINS")
with open(os.path.join(DATA, "expected.json")) as f:
    EXPECTED = json.load(f)

SUITES = ["stream", "gemm", "transfer", "rng", "latency"]
# bench list also names peer (asked for by name only) and the suites that run across MPI ranks
# (tests/cli/test_fleet.py).
LISTED = SUITES + ["peer", "collective", "interconnect", "model"]
STREAM_KERNELS = ["copy", "mul", "add", "triad", "dot", "nstream"]
# BabelStream's bytes per element moved by each kernel, in units of sizeof(T).
STREAM_WEIGHTS = {"copy": 2, "mul": 2, "add": 3, "triad": 3, "dot": 2, "nstream": 4}
ITEM_SIZE = {"float64": 8, "float32": 4}
MIB = 1 << 20


def parity(*args, env=None, timeout=300):
    """Runs the parity binary with no plugin path or fake mode from the caller's environment."""
    full_env = {k: v for k, v in os.environ.items()
                if k not in ("PARITY_BACKEND_PATH", "PARITY_FAKE_MODE")}
    full_env.update(env or {})
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout,
                          env=full_env)


def fake_env(mode="ok", devices=None):
    env = {"PARITY_BACKEND_PATH": PLUGINS, "PARITY_FAKE_MODE": mode}
    if devices is not None:
        env["PARITY_FAKE_DEVICES"] = str(devices)
    return env


def data(name):
    return os.path.join(DATA, name)


def load(path):
    with open(path) as f:
        return json.load(f)


def key(r):
    """parity's match key: benchmark, dtype, params.size (as expected.json writes it)."""
    size = r["params"].get("size")
    return f"{r['benchmark']}|{r['dtype'] or ''}|{'' if size is None else json.dumps(size)}"


def by_key(results):
    out = {key(r): r for r in results}
    assert len(out) == len(results), "duplicate keys"
    return out


def plugin_beside_binary(name):
    exe_dir = os.path.dirname(os.path.realpath(BIN))
    return any(os.path.exists(os.path.join(d, f"libparity_backend_{name}.so"))
               for d in (exe_dir, os.path.join(exe_dir, "..", "lib", "parity")))


class Checks(unittest.TestCase):
    def assertRel(self, got, want, rel):
        self.assertIsNotNone(got)
        self.assertLessEqual(abs(got - want), rel * abs(want), (got, want))

    def assertError(self, r, code=2, *words):
        self.assertEqual(r.returncode, code, (r.stdout, r.stderr))
        self.assertTrue(r.stderr.startswith("parity: error:"), r.stderr)
        for word in words:
            self.assertIn(word, r.stderr)

    def check_document(self, doc, backend, device=None, repeat=1):
        self.assertEqual((doc["format"], doc["version"]), ("parity-bench", 1))
        self.assertEqual(doc["backend"], backend)
        self.assertEqual(doc["repeat"], repeat)
        platform = doc["platform"]
        for field in ("cpu", "memory", "os", "blas", "environment", "device"):
            self.assertIn(field, platform)
        self.assertEqual(platform["device"]["backend"], backend)
        self.assertEqual(platform["device"]["name"], doc["device"])
        if device is not None:
            self.assertEqual(doc["device"], device)
        statuses = [r["status"] for r in doc["results"]]
        self.assertEqual(doc["summary"], {s: statuses.count(s)
                                          for s in ("ok", "invalid", "skipped")})

    def check_figures(self, r):
        """The summary fields and best agree with the samples (numpy's median, ddof-1 cv)."""
        s = np.array(r["samples"])
        self.assertTrue((s > 0).all() and np.isfinite(s).all(), r)
        self.assertRel(r["median"], float(np.median(s)), 1e-12)
        self.assertEqual((r["min"], r["max"]), (s.min(), s.max()))
        if len(s) > 1:
            self.assertRel(r["cv"], float(s.std(ddof=1) / s.mean()), 1e-9)
        # The fastest repetition: the largest rate, the smallest time.
        self.assertEqual(r["best"], s.max() if r["better"] == "higher" else s.min())
        self.assertGreaterEqual(r["best"] if r["better"] == "higher" else -r["best"],
                                r["median"] if r["better"] == "higher" else -r["median"])

    def check_ok(self, r):
        self.assertEqual((r["status"], r["valid"]), ("ok", True), r.get("reason"))
        self.assertNotIn("reason", r)
        self.assertIsInstance(r["validation"], dict)
        self.assertIn("method", r["validation"])
        self.check_figures(r)


class List(Checks):
    def test_text(self):
        r = parity("bench", "list")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = [line for line in r.stdout.splitlines() if line and not line.startswith(" ")]
        self.assertEqual(names, LISTED)
        self.assertIn("BabelStream", r.stdout)

    def test_json(self):
        r = parity("bench", "list", "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual((doc["format"], doc["version"]), ("parity-bench-suites", 1))
        self.assertEqual([s["name"] for s in doc["suites"]], LISTED)
        for s in doc["suites"]:
            self.assertGreater(len(s["description"]), 40, s)


class CpuRun(Checks):
    """Small real runs on the built-in cpu backend, each run once for the class."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="parity_bench_")
        runs = {
            "stream": ["--suite", "stream", "--n", "100000", "--reps", "5"],
            "stream32": ["--suite", "stream", "--dtype", "float32", "--n", "100000", "--reps",
                         "3"],
            "gemm": ["--suite", "gemm", "--dtype", "float64,float32", "--reps", "2"],
            "rng": ["--suite", "rng", "--n", "100000", "--reps", "3"],
            "latency": ["--suite", "latency", "--reps", "3"],
            "transfer": ["--suite", "transfer", "--reps", "2"],
            "repeat": ["--suite", "stream,latency", "--n", "100000", "--reps", "5", "--repeat",
                       "2"],
        }
        cls.runs, cls.docs = {}, {}
        for name, args in runs.items():
            path = os.path.join(cls.tmp, name + ".json")
            cls.runs[name] = parity("bench", *args, "--json", path)
            cls.docs[name] = load(path) if os.path.exists(path) else None

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def doc(self, name):
        r = self.runs[name]
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIsNotNone(self.docs[name])
        return self.docs[name]

    def test_stream(self):
        doc = self.doc("stream")
        self.check_document(doc, "cpu")
        self.assertEqual(doc["summary"], {"ok": 12, "invalid": 0, "skipped": 0})
        got = [(r["benchmark"], r["dtype"]) for r in doc["results"]]
        self.assertEqual(got, [(f"stream.{k}", d) for d in ("float64", "float32")
                               for k in STREAM_KERNELS])
        for r in doc["results"]:
            with self.subTest(r["benchmark"], dtype=r["dtype"]):
                self.check_ok(r)
                self.assertEqual(r["params"], {"n": 100000, "reps": 5})
                self.assertEqual((r["unit"], r["better"]), ("GB/s", "higher"))
                self.assertEqual(len(r["samples"]), 4)  # reps - 1: the first is dropped
                v = r["validation"]
                for array in "abc":
                    self.assertEqual(v[array]["failures"], 0)
                kernel = r["benchmark"].split(".")[1]
                self.assertEqual(v["bytes_per_repetition"],
                                 STREAM_WEIGHTS[kernel] * ITEM_SIZE[r["dtype"]] * 100000)
                if kernel == "dot":
                    self.assertRel(v["dot"]["got"], v["dot"]["expected"], v["dot_mrel"])
        # Text output was written alongside the JSON file.
        self.assertIn("stream.triad", self.runs["stream"].stdout)
        self.assertIn("12 ok, 0 invalid, 0 skipped", self.runs["stream"].stdout)

    def test_stream_dtype_filter(self):
        doc = self.doc("stream32")
        self.assertEqual([(r["benchmark"], r["dtype"]) for r in doc["results"]],
                         [(f"stream.{k}", "float32") for k in STREAM_KERNELS])
        self.assertEqual(doc["settings"]["dtypes"], ["float32"])
        for r in doc["results"]:
            self.assertEqual(len(r["samples"]), 2)

    def test_gemm(self):
        doc = self.doc("gemm")
        self.check_document(doc, "cpu")
        got = [(r["dtype"], r["params"]["size"]) for r in doc["results"]]
        self.assertEqual(got, [(d, n) for d in ("float64", "float32") for n in (256, 1024, 2048)])
        for r in doc["results"]:
            with self.subTest(dtype=r["dtype"], size=r["params"]["size"]):
                self.check_ok(r)
                n = r["params"]["size"]
                self.assertEqual(r["params"], {"size": n, "m": n, "n": n, "k": n, "reps": 2})
                self.assertEqual((r["benchmark"], r["unit"]), ("gemm", "GFLOP/s"))
                self.assertEqual(len(r["samples"]), 2)
                self.assertGreater(r["validation"]["checked"], 0)
                self.assertEqual(r["validation"]["failures"], 0)

    def test_rng(self):
        doc = self.doc("rng")
        self.check_document(doc, "cpu")
        [r] = doc["results"]
        self.check_ok(r)
        self.assertEqual((r["benchmark"], r["dtype"], r["unit"]),
                         ("rng.philox_uniform", "float32", "GB/s"))
        self.assertEqual(r["params"], {"n": 100000, "reps": 3})
        self.assertEqual(len(r["samples"]), 3)
        self.assertGreater(r["validation"]["checked"], 1000)
        self.assertEqual(r["validation"]["mismatches"], 0)

    def test_latency(self):
        doc = self.doc("latency")
        self.check_document(doc, "cpu")
        self.assertEqual([r["benchmark"] for r in doc["results"]],
                         ["latency.launch", "latency.launch_sync"])
        for r in doc["results"]:
            self.check_ok(r)
            self.assertEqual((r["unit"], r["better"], r["dtype"]), ("us", "lower", None))
            self.assertEqual(r["params"], {"reps": 3, "launches": 1000})
            self.assertEqual(len(r["samples"]), 3)
            self.assertEqual(r["validation"]["bad_readings"], 0)

    def test_transfer(self):
        doc = self.doc("transfer")
        self.check_document(doc, "cpu")
        sizes = [4096, 64 * 1024, MIB, 16 * MIB, 256 * MIB]
        names = [f"transfer.{d}_{m}" for m in ("pageable", "pinned") for d in ("h2d", "d2h")]
        self.assertEqual([(r["benchmark"], r["params"]["size"]) for r in doc["results"]],
                         [(b, s) for b in names for s in sizes])
        for r in doc["results"]:
            with self.subTest(r["benchmark"], size=r["params"]["size"]):
                self.assertIsNone(r["dtype"])
                if r["benchmark"].endswith("_pinned"):
                    # Pinned memory does not apply on the cpu backend: skipped, never a pass.
                    self.assertEqual((r["status"], r["valid"]), ("skipped", None))
                    self.assertTrue(r["reason"])
                    self.assertEqual(r["samples"], [])
                    self.assertIsNone(r["best"])
                    continue
                self.check_ok(r)
                size = r["params"]["size"]
                self.assertEqual(r["params"]["reps"], 2)
                self.assertEqual(r["params"]["batch"], min(max(64 * MIB // size, 1), 4096))
                self.assertEqual(len(r["samples"]), 2)
                self.assertEqual(r["validation"]["bytes_checked"], size)
                self.assertEqual(r["validation"]["mismatches"], 0)
        self.assertEqual(doc["summary"]["skipped"], 10)

    def test_repeat(self):
        doc = self.doc("repeat")
        self.check_document(doc, "cpu", repeat=2)
        self.assertEqual(len(doc["results"]), 14)
        for r in doc["results"]:
            with self.subTest(r["benchmark"], dtype=r["dtype"]):
                self.check_ok(r)
                per_run = 4 if r["benchmark"].startswith("stream.") else 5
                self.assertEqual(len(r["samples"]), 2 * per_run)
                self.assertEqual(len(r["runs"]), 2)
                # Each run's median, the runs' samples one after another.
                for i in range(2):
                    self.assertRel(r["runs"][i],
                                   float(np.median(r["samples"][i * per_run:(i + 1) * per_run])),
                                   1e-12)
        # A single run writes no "runs".
        self.assertTrue(all("runs" not in r for r in self.doc("stream")["results"]))


class Errors(Checks):
    def test_usage_errors(self):
        quick = ["--suite", "latency", "--reps", "1"]
        cases = [
            (["--suite", "nonsense"], ["unknown suite 'nonsense'", "stream, gemm, transfer, "
                                       "rng, latency"]),
            (["--suite", "strem"], ["did you mean 'stream'"]),
            (["--suite", "latency,strem"], ["unknown suite 'strem'"]),
            (quick + ["--dtype", "int8"], ["--dtype", "int8"]),
            (quick + ["--dtype", "float32,int8"], ["int8"]),
            (quick + ["--frobnicate"], ["--frobnicate"]),
            (["--suite", "latency", "--reps", "0"], ["--reps"]),
            (quick + ["--repeat", "0"], ["--repeat"]),
            (quick + ["--device", "-1"], ["--device"]),
        ]
        for args, words in cases:
            with self.subTest(args=args):
                with tempfile.TemporaryDirectory() as tmp:
                    out = os.path.join(tmp, "out.json")
                    r = parity("bench", *args, "--json", out)
                    self.assertError(r, 2, *words)
                    self.assertFalse(os.path.exists(out))

    def test_unknown_backend(self):
        r = parity("bench", "--backend", "cdua", "--suite", "latency", "--reps", "1")
        self.assertError(r, 2, "unknown backend 'cdua'", "cuda")

    def test_unknown_backend_suggestion(self):
        # A swap of two adjacent letters is one edit.
        r = parity("bench", "--backend", "cdua", "--suite", "latency", "--reps", "1")
        self.assertIn("did you mean 'cuda'", r.stderr)

    def test_gpu_backends_without_a_gpu(self):
        """Built plugins load and say, exit 3, what their runtime answered; missing ones say so."""
        errors = {"cuda": ("cudaErrorInsufficientDriver (35)", "cudaErrorNoDevice (100)"),
                  "hip": ("hipErrorNoDevice (100)",)}
        for name, expected in errors.items():
            with self.subTest(backend=name):
                r = parity("bench", "--backend", name, "--suite", "stream", "--n", "1000",
                           "--reps", "2")
                if not plugin_beside_binary(name):
                    self.assertError(r, 3, f"libparity_backend_{name}.so", "not found")
                    continue
                if r.returncode == 0:  # a machine with that GPU
                    continue
                self.assertEqual(r.returncode, 3, r.stderr)
                self.assertTrue(r.stderr.startswith(f"parity: error: {name} backend: "), r.stderr)
                self.assertTrue(any(e in r.stderr for e in expected), r.stderr)
        r = parity("devices", "--json", "-")
        doc = json.loads(r.stdout)
        backends = {b["name"]: b for b in doc["backends"]}
        for name, expected in errors.items():
            if plugin_beside_binary(name) and not backends[name]["available"]:
                self.assertTrue(any(e in backends[name]["reason"] for e in expected),
                                backends[name]["reason"])
                self.assertTrue(backends[name]["origin"].endswith(f"libparity_backend_{name}.so"))

    def test_tf32_and_float16_are_skipped_on_cpu_with_reasons(self):
        path = os.path.join(tempfile.mkdtemp(prefix="parity_tf32_"), "r.json")
        r = parity("bench", "--suite", "gemm", "--dtype", "tf32,float16", "--reps", "1",
                   "--json", path)
        self.assertEqual(r.returncode, 3, r.stderr)  # nothing asked for can run here
        doc = load(path)
        self.assertEqual([(x["dtype"], x["params"]["size"]) for x in doc["results"]],
                         [(d, n) for d in ("tf32", "float16") for n in (256, 1024, 2048)])
        for x in doc["results"]:
            self.assertEqual(x["status"], "skipped")
            self.assertIsNone(x["valid"])
            self.assertIn("cpu backend: no", x["reason"])
        self.assertError(parity("bench", "--dtype", "tf16"), 2, "--dtype", "'tf16'")

    def test_gemm_dump_matches_numpy_and_compares(self):
        tmp = tempfile.mkdtemp(prefix="parity_gemm_dump_")
        dump = os.path.join(tmp, "cpu")
        # Two runs (--repeat 2): the products of the first only, each record once.
        r = parity("bench", "--suite", "gemm", "--dtype", "float64,float32", "--reps", "1",
                   "--repeat", "2", "--gemm-dump", dump, "--json", os.path.join(tmp, "r.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        manifest = load(os.path.join(dump, "manifest.json"))
        self.assertEqual((manifest["format"], manifest["version"]), ("parity-dump", 1))
        self.assertEqual(manifest["platform"]["backend"], "cpu")
        with open(os.path.join(dump, "records.jsonl")) as f:
            records = [json.loads(line) for line in f]
        # Orders up to 1024 only: 256 and 1024 of each dtype.
        self.assertEqual([x["name"] for x in records],
                         [f"gemm.{d}.n{n}" for d in ("float64", "float32") for n in (256, 1024)])
        for x in records:
            with self.subTest(record=x["name"]):
                self.assertEqual((x["op"], x["pass"], x["call"]), ("matmul", "forward", 0))
                a, b = (np.load(os.path.join(dump, t["file"])) for t in x["inputs"])
                c = np.load(os.path.join(dump, x["outputs"][0]["file"]))
                n = int(x["name"].rsplit("n", 1)[1])
                self.assertEqual(c.shape, (n, n))
                self.assertEqual(str(c.dtype), x["outputs"][0]["dtype"])
                self.assertIn("cblas_", x["attrs"]["implementation"])
                # numpy's own product in float64, as an independent oracle.
                want = a.astype(np.float64) @ b.astype(np.float64)
                scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
                u = 2.0 ** -53 if c.dtype == np.float64 else 2.0 ** -24
                self.assertLessEqual(float(np.max(np.abs(c - want) / scale)), 4 * n * u)
        # A dump compares against itself, record by record, through the auto tolerance.
        r = parity("compare", dump, dump, "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        # Writing into a directory that has files is refused before anything runs.
        self.assertError(parity("bench", "--suite", "gemm", "--gemm-dump", dump), 2, dump,
                         "not an empty directory")
        shutil.rmtree(tmp, ignore_errors=True)

    def test_peer_on_one_device(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "peer.json")
            r = parity("bench", "--suite", "peer", "--json", out)
            self.assertEqual(r.returncode, 3, r.stderr)
            self.assertIn("parity: error: nothing asked for can run here", r.stderr)
            self.assertIn("SKIP: the cpu backend has 1 device here: no pair to copy between",
                          r.stdout)
            doc = load(out)
        self.assertEqual(doc["summary"], {"ok": 0, "invalid": 0, "skipped": 1})
        self.assertEqual(doc["results"][0]["benchmark"], "peer.bandwidth")

    @unittest.skipIf(plugin_beside_binary("cuda"), "a CUDA plugin is built here")
    def test_cuda_without_plugin(self):
        r = parity("bench", "--backend", "cuda", "--suite", "latency", "--reps", "1")
        self.assertError(r, 3, "libparity_backend_cuda.so", "not found")


@unittest.skipUnless(PLUGINS, "needs PARITY_TEST_PLUGINS (the fake backend plugins)")
class Plugins(Checks):
    def devices(self, mode="ok"):
        r = parity("devices", "--json", "-", env=fake_env(mode))
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual((doc["format"], doc["version"]), ("parity-devices", 1))
        self.assertEqual(doc["plugin_directories"][0], PLUGINS)
        return {b["name"]: b for b in doc["backends"]}

    def test_devices(self):
        backends = self.devices()
        self.assertTrue(backends["cpu"]["available"])
        self.assertEqual(backends["cpu"]["origin"], "built-in")
        self.assertGreaterEqual(len(backends["cpu"]["devices"]), 1)
        fake = backends["fake"]
        self.assertTrue(fake["available"])
        self.assertEqual(fake["origin"], os.path.join(PLUGINS, "libparity_backend_fake.so"))
        self.assertEqual([(d["index"], d["name"]) for d in fake["devices"]],
                         [(0, "Fake Accelerator 0"), (1, "NVIDIA H200")])
        self.assertEqual(fake["devices"][1]["vendor"], "NVIDIA")
        fakeabi = backends["fakeabi"]
        self.assertFalse(fakeabi["available"])
        self.assertIn("version 999", fakeabi["reason"])
        self.assertEqual(fakeabi["devices"], [])
        for name in ("cuda", "hip"):
            self.assertIn(name, backends)
            if not plugin_beside_binary(name):
                self.assertFalse(backends[name]["available"])
                self.assertIn(f"libparity_backend_{name}.so", backends[name]["reason"])
        # The text form says the same.
        r = parity("devices", env=fake_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("1: NVIDIA H200 (NVIDIA)", r.stdout)
        self.assertIn("unavailable", r.stdout)

    def test_gpu_check_report(self):
        """scripts/gpu_check_report.py: figures at their targets pass, a slow triad fails."""
        out = tempfile.mkdtemp(prefix="parity_gpu_check_")
        r = parity("bench", "--backend", "fake", "--suite", "stream,gemm", "--dtype", "float32",
                   "--n", "20000", "--reps", "3", "--json", os.path.join(out, "cuda.json"),
                   env=fake_env())
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = load(os.path.join(out, "cuda.json"))
        triad = next(x for x in doc["results"] if x["benchmark"] == "stream.triad")
        gemm = [{"dtype": x["dtype"], "size": x["params"]["size"], "gflops": x["best"] / 0.95}
                for x in doc["results"] if x["benchmark"] == "gemm" and x["status"] == "ok"]
        with open(os.path.join(out, "compare.json"), "w") as f:
            json.dump({"summary": {"tensors": 2, "passed": 2}}, f)
        script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts",
                              "gpu_check_report.py")

        def report(ceiling):
            with open(os.path.join(out, "peer.json"), "w") as f:
                json.dump({"copy": {"gbs": ceiling, "method": "test"}, "gemm": gemm}, f)
            return subprocess.run(["/usr/bin/python3", script, "--out", out], capture_output=True,
                                  text=True, timeout=60)

        ok = report(triad["best"] / 0.95)
        self.assertEqual(ok.returncode, 0, ok.stdout + ok.stderr)
        self.assertIn("every figure valid and at its target", ok.stdout)
        self.assertIn("| 0.950 | >= 0.90 |", ok.stdout)
        with open(os.path.join(out, "gpu-check.md")) as f:
            self.assertEqual(f.read().strip(), ok.stdout.strip())
        slow = report(triad["best"] / 0.5)
        self.assertEqual(slow.returncode, 1, slow.stdout)
        self.assertIn("stream.triad float32: 0.500 of the ceiling", slow.stdout)
        shutil.rmtree(out, ignore_errors=True)

    def test_refusing_runtime(self):
        fake = self.devices("refuse")["fake"]
        self.assertFalse(fake["available"])
        self.assertIn("fake runtime: no driver loaded", fake["reason"])
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.json")
            r = parity("bench", "--backend", "fake", "--suite", "latency", "--reps", "1",
                       "--json", out, env=fake_env("refuse"))
            self.assertError(r, 3, "fake runtime: no driver loaded")
            self.assertFalse(os.path.exists(out))

    def run_fake(self, mode, *args, device=None, devices=None):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.json")
            extra = ["--device", str(device)] if device is not None else []
            r = parity("bench", "--backend", "fake", *extra, *args, "--json", out,
                       env=fake_env(mode, devices), timeout=600)
            doc = load(out) if os.path.exists(out) else None
        return r, doc

    def test_correct_fake_kernels_pass(self):
        # The control for the planted faults below: the same runs with correct kernels pass.
        r, doc = self.run_fake("ok", "--suite", "stream,rng", "--n", "4096", "--reps", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_document(doc, "fake", "Fake Accelerator 0")
        self.assertEqual(doc["summary"], {"ok": 13, "invalid": 0, "skipped": 0})
        for res in doc["results"]:
            self.check_ok(res)
            self.assertIsNone(res["peak"])  # no datasheet for "Fake Accelerator 0"

    def test_wrong_triad(self):
        r, doc = self.run_fake("wrong-triad", "--suite", "stream", "--n", "1000", "--reps", "3")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIsNotNone(doc, "the JSON is written when a result is invalid")
        self.check_document(doc, "fake")
        results = {(x["benchmark"], x["dtype"]): x for x in doc["results"]}
        self.assertEqual(len(results), 12)
        for dtype in ("float64", "float32"):
            triad = results["stream.triad", dtype]
            self.assertEqual((triad["status"], triad["valid"]), ("invalid", False))
            self.assertIn("a differs", triad["reason"])
            self.assertGreater(triad["validation"]["a"]["failures"], 0)
            self.assertEqual(triad["validation"]["a"]["first_bad_index"], 500)
            # The bad element reaches b and c through the next repetitions' kernels, and "a
            # wrong array fails every kernel that writes it" (docs/BENCH.md).
            for kernel in ("copy", "mul", "add"):
                self.assertEqual(results[f"stream.{kernel}", dtype]["status"], "invalid")
            # nstream runs on fresh arrays, without triad: untouched by the fault.
            self.check_ok(results["stream.nstream", dtype])
        self.assertIn("INVALID", r.stdout)

    def test_wrong_gemm(self):
        r, doc = self.run_fake("wrong-gemm", "--suite", "gemm", "--dtype", "float32", "--reps",
                               "1")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(doc["results"]), 3)
        for res in doc["results"]:
            with self.subTest(size=res["params"]["size"]):
                if res["params"]["size"] > 1024:  # the fake's plain-loop GEMM stops at 1024
                    self.assertEqual((res["status"], res["valid"]), ("skipped", None))
                    self.assertIn("only up to n = 1024", res["reason"])
                    continue
                self.assertEqual((res["dtype"], res["status"], res["valid"]),
                                 ("float32", "invalid", False))
                self.assertIn("outside parity compare's auto bound", res["reason"])
                self.assertGreater(res["validation"]["failures"], 0)

    def test_wrong_rng(self):
        r, doc = self.run_fake("wrong-rng", "--suite", "rng", "--n", "4096", "--reps", "2")
        self.assertEqual(r.returncode, 1, r.stderr)
        [res] = doc["results"]
        self.assertEqual((res["status"], res["valid"]), ("invalid", False))
        self.assertEqual(res["validation"]["mismatches"], res["validation"]["checked"])
        self.assertIn("element 0 is", res["reason"])

    def test_wrong_copy(self):
        r, doc = self.run_fake("wrong-copy", "--suite", "transfer", "--reps", "1")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertEqual(len(doc["results"]), 20)
        for res in doc["results"]:
            size = res["params"]["size"]
            with self.subTest(res["benchmark"], size=size):
                if size > 4096:  # the fake copy drops the last byte of copies over 4 KiB
                    self.assertEqual((res["status"], res["valid"]), ("invalid", False))
                    self.assertEqual(res["validation"]["mismatches"], 1)
                    self.assertIn(f"first at byte {size - 1}", res["reason"])
                else:
                    # The fake backend has pinned memory, so nothing is skipped.
                    self.check_ok(res)

    def peer_results(self, doc):
        return {(x["benchmark"], x["params"]["src"], x["params"]["dst"],
                 x["params"]["direction"], x["params"]["peer_access"]): x
                for x in doc["results"]}

    def test_peer_matrix_of_three_devices(self):
        r, doc = self.run_fake("ok", "--suite", "peer", "--n", "1024", "--reps", "3", devices=3)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_document(doc, "fake", "Fake Accelerator 0")
        self.assertEqual(doc["suites"], ["peer"])
        results = self.peer_results(doc)
        # Every ordered pair, peer access on and off: one-way and latency; both ways once per
        # unordered pair.
        self.assertEqual(len(results), len(doc["results"]))
        self.assertEqual(len(results), 6 * 2 * 2 + 3 * 2)
        for (bench, src, dst, direction, access), res in results.items():
            with self.subTest(bench=bench, src=src, dst=dst, direction=direction, access=access):
                self.check_ok(res)
                self.assertNotEqual(src, dst)
                self.assertEqual(len(res["samples"]), 3)
                if bench == "peer.latency":
                    self.assertEqual((res["unit"], res["better"]), ("us", "lower"))
                    self.assertEqual(res["params"]["bytes"], 8)
                    continue
                self.assertEqual(res["unit"], "GB/s")
                self.assertEqual(res["params"]["bytes"], 4096)
                # 256 MiB per sample at most 128 copies (a held queue's most); time_us per copy.
                self.assertEqual(res["params"]["batch"], 128)
                moved = 4096 * 128 * (2 if direction == "bi" else 1)
                self.assertRel(res["time_us"], moved / 1e9 / res["median"] * 1e6 / 128, 1e-9)
                self.assertEqual(res["validation"]["bytes_checked"],
                                 4096 * (2 if direction == "bi" else 1))
                if direction == "bi":
                    self.assertLess(src, dst)
        for title in ("one-way bandwidth, peer access on (GB/s, 4096 B copies)",
                      "bidirectional bandwidth, peer access off (staged)",
                      "latency, peer access on (us per 8 B copy)",
                      "device(row) -> device(column)"):
            self.assertIn(title, r.stdout)

    def test_peer_copy_planted_wrong(self):
        r, doc = self.run_fake("wrong-peer", "--suite", "peer", "--n", "1000", "--reps", "1")
        self.assertEqual(r.returncode, 1, r.stderr)
        results = self.peer_results(doc)
        for access in (True, False):
            self.check_ok(results[("peer.bandwidth", 0, 1, "uni", access)])
            wrong = results[("peer.bandwidth", 1, 0, "uni", access)]
            self.assertEqual((wrong["status"], wrong["valid"]), ("invalid", False))
            self.assertEqual(wrong["validation"]["mismatches"], 1)
            self.assertIn("first at byte 3999", wrong["reason"])
            both = results[("peer.bandwidth", 0, 1, "bi", access)]
            self.assertEqual(both["status"], "invalid")
        self.assertIn("peer.bandwidth 1->0 4000 uni p2p: INVALID: 1 of 4000 bytes differ",
                      r.stdout)

    def test_peer_access_missing(self):
        r, doc = self.run_fake("no-peer", "--suite", "peer", "--n", "1000", "--reps", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        statuses = {}
        for res in doc["results"]:
            statuses.setdefault(res["params"]["peer_access"], set()).add(res["status"])
            if res["params"]["peer_access"]:
                self.assertIn("cannot reach each other's memory directly", res["reason"])
        self.assertEqual(statuses, {True: {"skipped"}, False: {"ok"}})
        self.assertIn("SKIP: devices 0 and 1 cannot reach", r.stdout)

    def test_known_device_peaks(self):
        r, doc = self.run_fake("ok", "--suite", "stream", "--n", "1000", "--reps", "3",
                               device=1)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_document(doc, "fake", "NVIDIA H200")
        self.assertEqual(doc["platform"]["device"]["index"], 1)
        self.assertIn("H200", doc["platform"]["device"]["datasheet"])
        peaks = {res["peak"] for res in doc["results"]}
        self.assertEqual(len(peaks), 1)  # memory bandwidth, for every stream kernel
        for res in doc["results"]:
            self.check_ok(res)
            self.assertGreater(res["peak"], 1000.0)  # GB/s of HBM3e
            self.assertEqual(res["efficiency"], res["best"] / res["peak"])
            self.assertTrue(res["peak_source"].startswith("http"), res["peak_source"])

    def test_missing_device(self):
        r, doc = self.run_fake("ok", "--suite", "stream", "--n", "1000", "--reps", "3",
                               device=5)
        self.assertError(r, 3, "no device 5")
        self.assertIsNone(doc)


class Compare(Checks):
    def compare(self, base, cand, *args, expect=0):
        r = parity("bench", "compare", base, cand, "--json", "-", *args)
        self.assertEqual(r.returncode, expect, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual((doc["format"], doc["version"]), ("parity-bench-compare", 1))
        return doc, {key(c): c for c in doc["comparisons"]}

    def test_within_run_verdicts(self):
        for name, planted in (("cand_faster", 1.25), ("cand_same", 1.0), ("cand_slower", 0.8)):
            with self.subTest(name):
                doc, cmps = self.compare(data("base.json"), data(name + ".json"))
                want = EXPECTED["within"][name]
                self.assertEqual(set(cmps), set(want))
                self.assertTrue(doc["within_run_noise_only"])
                self.assertEqual((doc["failures"], doc["min_ratio"]), (0, None))
                self.assertEqual((doc["only_in_base"], doc["only_in_cand"]), ([], []))
                self.assertEqual(doc["base"]["device"], "Synthetic Base")
                self.assertEqual(doc["cand"]["path"], data(name + ".json"))
                for k, w in want.items():
                    c = cmps[k]
                    self.assertEqual(c["verdict"], w["verdict"], k)
                    if w["verdict"] == "skipped":
                        self.assertIn("skipped", c["reason"])
                        self.assertIsNone(c["ratio"])
                        continue
                    self.assertEqual((c["basis"], c["better"]), ("samples", w["better"]))
                    self.assertRel(c["base_median"], w["base_median"], 1e-12)
                    self.assertRel(c["cand_median"], w["cand_median"], 1e-12)
                    self.assertRel(c["ratio"], w["ratio"], 1e-12)
                    self.assertRel(c["ratio"], planted, 1e-9)
                    self.assertLess(c["ci_low"], c["ratio"])
                    self.assertGreater(c["ci_high"], c["ratio"])
                    # parity's 2000-resample bootstrap against numpy's 20000: the same interval
                    # up to resampling noise (a fraction of the half width).
                    half = math.log(w["boot_high"] / w["boot_low"]) / 2
                    self.assertLess(abs(math.log(c["ci_low"] / w["boot_low"])), 0.3 * half, k)
                    self.assertLess(abs(math.log(c["ci_high"] / w["boot_high"])), 0.3 * half, k)
                for suite, g in EXPECTED["suite_geomean"][name].items():
                    self.assertRel(doc["suite_geomean"][suite], g, 1e-12)
                self.assertNotIn("transfer", doc["suite_geomean"])

    def test_times_are_inverted(self):
        _, cmps = self.compare(data("base.json"), data("cand_faster.json"))
        c = cmps["latency.launch||"]
        self.assertEqual((c["unit"], c["better"], c["verdict"]), ("us", "lower", "faster"))
        self.assertLess(c["cand_median"], c["base_median"])  # the candidate takes less time
        self.assertRel(c["ratio"], c["base_median"] / c["cand_median"], 1e-12)

    def test_text(self):
        r = parity("bench", "compare", data("base.json"), data("cand_slower.json"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("within-run noise only", r.stdout)
        self.assertIn("geometric mean of ratios: stream 0.800 gemm 0.800 latency 0.800",
                      r.stdout)
        rows = [line.split() for line in r.stdout.splitlines() if line.startswith("  ")]
        verdicts = {row[0]: row for row in rows}
        self.assertEqual(verdicts["stream.triad"][-1], "slower")
        self.assertEqual(verdicts["latency.launch"][-1], "slower")
        self.assertIn("0.800", verdicts["latency.launch"])

    def test_repeat_runs(self):
        doc, cmps = self.compare(data("base_r.json"), data("cand_r.json"))
        self.assertFalse(doc["within_run_noise_only"])
        self.assertEqual((doc["base"]["repeat"], doc["cand"]["repeat"]), (5, 5))
        verdicts = set()
        for k, w in EXPECTED["repeat"].items():
            c = cmps[k]
            with self.subTest(k):
                self.assertEqual(c["basis"], "runs")
                self.assertEqual(c["verdict"], w["verdict"])
                self.assertRel(c["ratio"], w["ratio"], 1e-12)
                self.assertRel(c["ci_low"], w["ci_low"], 1e-9)
                self.assertRel(c["ci_high"], w["ci_high"], 1e-9)
                verdicts.add(c["verdict"])
        self.assertEqual(verdicts, {"faster", "same", "slower"})
        self.assertEqual(cmps["transfer.h2d_pinned||4096"]["verdict"], "skipped")
        r = parity("bench", "compare", data("base_r.json"), data("cand_r.json"))
        self.assertNotIn("within-run noise only", r.stdout)

    def test_repeat_runs_confidence(self):
        # At --confidence 0.9, against scipy on the runs read from the files.
        base = by_key(load(data("base_r.json"))["results"])
        cand = by_key(load(data("cand_r.json"))["results"])
        doc, cmps = self.compare(data("base_r.json"), data("cand_r.json"), "--confidence", "0.9")
        self.assertEqual(doc["confidence"], 0.9)
        for k in EXPECTED["repeat"]:
            lb, lc = np.log(base[k]["runs"]), np.log(cand[k]["runs"])
            vb, vc = lb.var(ddof=1) / len(lb), lc.var(ddof=1) / len(lc)
            df = (vb + vc) ** 2 / (vb ** 2 / (len(lb) - 1) + vc ** 2 / (len(lc) - 1))
            half = st.t.ppf(0.95, df) * math.sqrt(vb + vc)
            diff = lc.mean() - lb.mean()
            low, high = math.exp(diff - half), math.exp(diff + half)
            if base[k]["better"] == "lower":
                low, high = 1 / high, 1 / low
            self.assertRel(cmps[k]["ci_low"], low, 1e-9)
            self.assertRel(cmps[k]["ci_high"], high, 1e-9)
            # Narrower than the 95% interval.
            self.assertGreater(cmps[k]["ci_low"], EXPECTED["repeat"][k]["ci_low"])

    def test_one_side_without_runs(self):
        # Run-level intervals need runs on both sides; otherwise the within-run bootstrap.
        doc, cmps = self.compare(data("base_r.json"), data("cand_faster.json"))
        self.assertTrue(doc["within_run_noise_only"])
        for k, c in cmps.items():
            if c["verdict"] != "skipped":
                self.assertEqual((c["basis"], c["verdict"]), ("samples", "faster"), k)

    def test_min_ratio(self):
        doc, cmps = self.compare(data("base.json"), data("cand_slower.json"), "--min-ratio",
                                 "0.9", expect=1)
        self.assertEqual(doc["min_ratio"], 0.9)
        self.assertEqual(doc["failures"], 5)
        for k, c in cmps.items():
            self.assertEqual(c["below_min_ratio"], c["verdict"] != "skipped", k)
        r = parity("bench", "compare", data("base.json"), data("cand_slower.json"),
                   "--min-ratio", "0.9")
        self.assertEqual(r.returncode, 1)
        self.assertIn("5 of 6 comparisons fail --min-ratio 0.9", r.stdout)
        for name in ("cand_faster", "cand_same"):
            doc, cmps = self.compare(data("base.json"), data(name + ".json"), "--min-ratio",
                                     "0.9")
            self.assertEqual(doc["failures"], 0)
            self.assertFalse(any(c["below_min_ratio"] for c in cmps.values()))

    def test_min_ratio_uses_upper_bound(self):
        # A ratio below R whose interval still reaches above R is not a failure.
        _, cmps = self.compare(data("base.json"), data("cand_slower.json"))
        ratios = [c["ratio"] for c in cmps.values() if c["ratio"] is not None]
        highs = [c["ci_high"] for c in cmps.values() if c["ci_high"] is not None]
        threshold = (max(ratios) + min(highs)) / 2
        self.assertGreater(threshold, max(ratios))
        doc, _ = self.compare(data("base.json"), data("cand_slower.json"), "--min-ratio",
                              repr(threshold))
        self.assertEqual(doc["failures"], 0)

    def test_invalid(self):
        k = EXPECTED["invalid"]["key"]
        doc, cmps = self.compare(data("base.json"), data("cand_invalid.json"))
        c = cmps[k]
        self.assertEqual(c["verdict"], "invalid")
        self.assertIn("cand invalid", c["reason"])
        self.assertIn(EXPECTED["invalid"]["reason"], c["reason"])
        self.assertEqual((c["ratio"], c["ci_low"], c["ci_high"]), (None, None, None))
        self.assertEqual(doc["failures"], 0)
        others = [x["verdict"] for kk, x in cmps.items() if kk != k]
        self.assertEqual(sorted(others), ["same"] * 4 + ["skipped"])
        # An invalid result fails --min-ratio whatever the threshold.
        doc, cmps = self.compare(data("base.json"), data("cand_invalid.json"), "--min-ratio",
                                 "0.01", expect=1)
        self.assertEqual(doc["failures"], 1)
        self.assertEqual(cmps[k]["verdict"], "invalid")
        # The same file as the base: the base side is named.
        _, cmps = self.compare(data("cand_invalid.json"), data("base.json"))
        self.assertIn("base invalid", cmps[k]["reason"])

    def test_param_mismatch(self):
        want = EXPECTED["params_mismatch"]
        r = parity("bench", "compare", data("base.json"), data("cand_params.json"))
        self.assertError(r, 2, want["label"], want["difference"], "--allow-param-mismatch")
        self.assertTrue(r.stderr.startswith(f"parity: error: {data('cand_params.json')}:"),
                        r.stderr)
        self.assertEqual(r.stdout, "")
        doc, cmps = self.compare(data("base.json"), data("cand_params.json"),
                                 "--allow-param-mismatch")
        triad = cmps["stream.triad|float64|"]
        self.assertEqual(triad["params"]["n"], 33554432)
        self.assertEqual(triad["cand_params"]["n"], 16777216)
        self.assertEqual(triad["verdict"], "same")
        self.assertEqual([k for k, c in cmps.items() if "cand_params" in c],
                         ["stream.triad|float64|"])
        r = parity("bench", "compare", data("base.json"), data("cand_params.json"),
                   "--allow-param-mismatch")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("[params differ]", r.stdout)

    def test_only_in_one(self):
        base = load(data("base.json"))
        cand = load(data("cand_same.json"))
        cand["results"] = [r for r in cand["results"] if r["benchmark"] != "stream.copy"]
        extra = json.loads(json.dumps(cand["results"][0]))
        extra["params"]["size"] = 7  # another sweep point: its own benchmark
        cand["results"].append(extra)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "cand.json")
            with open(path, "w") as f:
                json.dump(cand, f)
            doc, cmps = self.compare(data("base.json"), path)
        self.assertEqual(doc["only_in_base"], ["stream.copy float32"])
        self.assertEqual(doc["only_in_cand"], ["stream.triad float64 size=7"])
        self.assertEqual(len(cmps), len(base["results"]) - 1)

    def test_skipped_side_with_other_params(self):
        # A benchmark that ran on one side (a GPU's pinned transfer) and was skipped on the
        # other has no settings to disagree with: compared as "skipped", not refused.
        base = load(data("base.json"))
        for r in base["results"]:
            if r["benchmark"] == "transfer.h2d_pinned":
                r.update({"params": {"size": 4096, "reps": 20, "batch": 4096},
                          "samples": [10.0, 11.0, 12.0], "status": "ok", "valid": True})
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "gpu.json")
            with open(path, "w") as f:
                json.dump(base, f)
            _, cmps = self.compare(path, data("cand_same.json"))
        self.assertEqual(cmps["transfer.h2d_pinned||4096"]["verdict"], "skipped")

    def test_malformed(self):
        good = load(data("base.json"))
        text = json.dumps(good)

        def edit(fn):
            doc = json.loads(text)
            fn(doc)
            return json.dumps(doc)

        def set_sample(i, value):
            return lambda d: d["results"][i]["samples"].__setitem__(3, value)

        cases = [
            ("notjson.json", "this is not JSON\n", "not valid JSON"),
            ("half.json", text[:len(text) // 2], "not valid JSON"),
            ("empty.json", "", "not valid JSON"),
            ("array.json", "[1, 2]", "not a JSON object"),
            ("format.json", edit(lambda d: d.update(format="parity-compare")), "format"),
            ("noformat.json", edit(lambda d: d.pop("format")), "format"),
            ("v2.json", edit(lambda d: d.update(version=2)), "version 2"),
            ("results.json", edit(lambda d: d.update(results={"a": 1})), "'results'"),
            ("noresults.json", edit(lambda d: d.pop("results")), "'results'"),
            ("negative.json", edit(set_sample(0, -1.5)), "-1.5"),
            ("zero.json", edit(set_sample(1, 0)), "result 2 (stream.copy)"),
            ("string.json", edit(set_sample(2, "fast")), "\"fast\""),
            ("nullsample.json", edit(set_sample(2, None)), "result 3"),
            ("samples_obj.json", edit(lambda d: d["results"][0].update(samples={"x": 1})),
             "'samples' is not a list"),
            ("nosamples.json", edit(lambda d: d["results"][0].update(samples=[])),
             "no samples"),
            ("runs.json", edit(lambda d: d["results"][0].update(runs=[1.0, -2.0])), "'runs'"),
            ("status.json", edit(lambda d: d["results"][2].update(status="great")), "great"),
            ("better.json", edit(lambda d: d["results"][2].update(better="more")), "more"),
            ("nounit.json", edit(lambda d: d["results"][2].pop("unit")), "'unit'"),
            ("nobench.json", edit(lambda d: d["results"][1].pop("benchmark")), "'benchmark'"),
            ("params.json", edit(lambda d: d["results"][1].update(params=[1])), "'params'"),
            ("valid.json", edit(lambda d: d["results"][1].update(valid="yes")), "'valid'"),
            ("result.json", edit(lambda d: d["results"].append(3)), "result 7"),
            ("repeat.json", edit(lambda d: d.update(repeat=0)), "'repeat'"),
        ]
        with tempfile.TemporaryDirectory() as tmp:
            for name, content, word in cases:
                path = os.path.join(tmp, name)
                with open(path, "w") as f:
                    f.write(content)
                for args in ((path, data("base.json")), (data("base.json"), path)):
                    with self.subTest(name, side="base" if args[0] == path else "cand"):
                        r = parity("bench", "compare", *args)
                        self.assertError(r, 2, word)
                        self.assertTrue(r.stderr.startswith(f"parity: error: {path}:"),
                                        r.stderr)
            for path, word in ((os.path.join(tmp, "missing.json"), "missing.json"),
                               (tmp, tmp)):
                with self.subTest(path):
                    r = parity("bench", "compare", data("base.json"), path)
                    self.assertError(r, 2, word)
                    self.assertTrue(r.stderr.startswith(f"parity: error: {path}:"), r.stderr)
        r = parity("bench", "compare", data("base.json"))
        self.assertError(r, 2)
        r = parity("bench", "compare", data("base.json"), data("base.json"), "--min-ratio", "-1")
        self.assertError(r, 2, "--min-ratio")

    def test_valid_false_is_invalid(self):
        # A result that says valid: false is invalid whatever its status says.
        doc = load(data("cand_same.json"))
        doc["results"][0]["valid"] = False
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "cand.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            _, cmps = self.compare(data("base.json"), path)
        self.assertEqual(cmps["stream.triad|float64|"]["verdict"], "invalid")

    def test_real_round_trip(self):
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for side, repeat in (("base", "1"), ("cand", "1"), ("base_r", "2"), ("cand_r", "2")):
                path = os.path.join(tmp, side + ".json")
                r = parity("bench", "--suite", "latency", "--reps", "3", "--repeat", repeat,
                           "--json", path, "-q")
                self.assertEqual(r.returncode, 0, r.stderr)
                paths.append(path)
            docs = [by_key(load(p)["results"]) for p in paths]
            # One run per side: within-run bootstrap, ratio of medians (base/cand: times).
            doc, cmps = self.compare(paths[0], paths[1])
            self.assertEqual(sorted(cmps), ["latency.launch_sync||", "latency.launch||"])
            self.assertTrue(doc["within_run_noise_only"])
            for k, c in cmps.items():
                self.assertEqual(c["basis"], "samples")
                self.assertIn(c["verdict"], ("faster", "same", "slower"))
                b, cnd = np.median(docs[0][k]["samples"]), np.median(docs[1][k]["samples"])
                self.assertRel(c["ratio"], b / cnd, 1e-12)
                self.assertLessEqual(c["ci_low"], c["ratio"])
                self.assertGreaterEqual(c["ci_high"], c["ratio"])
            # --repeat 2 on both sides: Welch on the run medians, as scipy computes it.
            doc, cmps = self.compare(paths[2], paths[3])
            self.assertFalse(doc["within_run_noise_only"])
            for k, c in cmps.items():
                self.assertEqual(c["basis"], "runs")
                lb, lc = np.log(docs[2][k]["runs"]), np.log(docs[3][k]["runs"])
                vb, vc = lb.var(ddof=1) / 2, lc.var(ddof=1) / 2
                self.assertRel(c["ratio"], math.exp(lb.mean() - lc.mean()), 1e-12)
                if vb + vc > 0:
                    df = (vb + vc) ** 2 / (vb ** 2 + vc ** 2)
                    half = st.t.ppf(0.975, df) * math.sqrt(vb + vc)
                    # In logs: two runs a side give a wide interval with df between 1 and 2,
                    # where scipy's t quantile is itself off by up to 1.5e-9 relative (Boost's
                    # agrees with mpmath to 1e-15 at df 1.2: 8.6488265107488733), so the
                    # reference allows 1e-8 of the half-width.
                    for got, want in ((c["ci_low"], lb.mean() - lc.mean() - half),
                                      (c["ci_high"], lb.mean() - lc.mean() + half)):
                        self.assertLessEqual(abs(math.log(got) - want), 1e-8 * max(1, half))


if __name__ == "__main__":
    unittest.main()
