#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`import parity` (python/parity, the bindings over the C++ libraries) against the parity CLI
on the same inputs: every function's `.to_dict()` equals the CLI's --json document, errors are
ParityError with the CLI's message, arrays of every dtype parity reads are read in place, the
GIL is released while parity computes, and parity.testing.assert_close.

Environment: PARITY_BIN (the CLI), PARITY_TESTDATA (tests/gen's dumps). The interpreter must
import parity (PYTHONPATH=build/python) and numpy; torch where present.
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np

import parity
import parity.testing

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

BIN = os.environ["PARITY_BIN"]
DATA = os.environ.get("PARITY_TESTDATA", "")


def cli(*args, codes=(0, 1)):
    r = subprocess.run([BIN, *args, "--json", "-", "--quiet"], capture_output=True, text=True,
                       timeout=300)
    if r.returncode not in codes:
        raise AssertionError(f"parity {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    return json.loads(r.stdout)


def cli_error(*args):
    """The message the CLI prints after 'parity: error: ' (exit 2)."""
    r = subprocess.run([BIN, *args, "--json", "-"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [l for l in r.stderr.splitlines() if l.startswith("parity: error: ")]
    assert len(lines) == 1, r.stderr
    return lines[0][len("parity: error: "):]


def without_paths(doc):
    """The compare document without what names the inputs (arrays have no path)."""
    doc = dict(doc)
    doc.pop("a"), doc.pop("b")
    return doc


def need_data(*parts):
    path = os.path.join(DATA, *parts)
    if not DATA or not os.path.exists(path):
        raise unittest.SkipTest(f"{path} missing: run the testdata fixture (ctest -R testdata)")
    return path


class Compare(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def files(self, a, b):
        pa, pb = os.path.join(self.tmp.name, "a.npy"), os.path.join(self.tmp.name, "b.npy")
        np.save(pa, a)
        np.save(pb, b)
        return pa, pb

    def check_arrays(self, a, b, *cli_args, **kwargs):
        pa, pb = self.files(a, b)
        expected = cli("compare", pa, pb, *cli_args)
        got = parity.compare(a, b, **kwargs)
        # Arrays are named "a" and "b", as the files a.npy and b.npy are.
        self.assertEqual(without_paths(got.to_dict()), without_paths(expected))
        # The same files given as paths: the whole document.
        self.assertEqual(parity.compare(pa, pb, **kwargs).to_dict(), expected)
        return got

    def test_float32_auto_with_k_matches_cli(self):
        rng = np.random.default_rng(1)
        b = rng.standard_normal((64, 300)).astype(np.float32)
        a = b + (rng.standard_normal(b.shape) * 1e-6).astype(np.float32)
        got = self.check_arrays(a, b, "--k", "512", k=512)
        t = got.tensors[0]
        self.assertTrue(got.passed)
        self.assertEqual(t.tolerance.k, 512)
        self.assertEqual(t.count, b.size)

    def test_failing_pair_has_histogram_and_worst(self):
        b = np.linspace(-1, 1, 10000, dtype=np.float32)
        a = b.copy()
        a[[3, 500, 9000]] += np.float32(0.01)
        got = self.check_arrays(a, b, "--k", "64", "--worst", "3", k=64, worst=3)
        self.assertFalse(got.passed)
        t = got.tensors[0]
        self.assertEqual(t.verdict, "fail")
        self.assertEqual(t.violations.count, 3)
        self.assertEqual(sorted(w["index"] for w in t.to_dict()["worst"]), [3, 500, 9000])

    def test_dtypes(self):
        rng = np.random.default_rng(2)
        base = rng.standard_normal(1000)
        cases = [base.astype(np.float64), base.astype(np.float16),
                 (base * 100).astype(np.int32), (base * 100).astype(np.int64),
                 (base * 10).astype(np.int8), np.abs(base * 100).astype(np.uint16),
                 np.abs(base * 100).astype(np.uint8), base > 0]
        for b in cases:
            with self.subTest(dtype=str(b.dtype)):
                a = b.copy()
                a[7] = a[8]
                got = self.check_arrays(a, b, "--tol", "torch", tol="torch")
                self.assertEqual(got.tensors[0].dtype, "bool" if b.dtype == bool
                                 else str(b.dtype))

    def test_policies_and_options(self):
        rng = np.random.default_rng(3)
        b = rng.standard_normal(4096).astype(np.float32)
        a = (b * np.float32(1 + 3e-7)).astype(np.float32)
        self.check_arrays(a, b, "--tol", "exact", tol="exact")
        self.check_arrays(a, b, "--rtol", "1e-3", "--atol", "0", rtol=1e-3, atol=0.0)
        self.check_arrays(a, b, "--k", "100", "--compute", "tf32", k=100, compute="tf32")
        self.check_arrays(a, b, "--k", "100", "--lambda", "2", "--tiny", "0.5",
                          k=100, lambda_=2.0, tiny=0.5)

    def test_non_contiguous_and_byte_swapped_arrays(self):
        rng = np.random.default_rng(4)
        b = rng.standard_normal((40, 50)).astype(np.float32)
        a = b + np.float32(1e-7)
        expected = parity.compare(a, b, k=8).to_dict()
        self.assertEqual(parity.compare(np.asfortranarray(a), b, k=8).to_dict(), expected)
        self.assertEqual(parity.compare(a.astype(">f4"), b, k=8).to_dict(), expected)

    def test_dumps_match_cli(self):
        base = need_data("compare", "dumps", "base")
        for other in ("same", "tf32_allowed", "gelu_off", "structural"):
            with self.subTest(other=other):
                path = os.path.join(DATA, "compare", "dumps", other)
                self.assertEqual(parity.compare(base, path).to_dict(),
                                 cli("compare", base, path))
        self.assertEqual(parity.compare(base, base, only=["fc1.*", "*.output.0"]).to_dict(),
                         cli("compare", base, base, "--only", "fc1.*", "--only", "*.output.0"))
        with self.assertRaises(parity.ParityError) as e:
            parity.compare(base, base, only="nothing*")
        self.assertEqual(str(e.exception), cli_error("compare", base, base, "--only", "nothing*"))

    def test_golden(self):
        rng = np.random.default_rng(5)
        g = rng.standard_normal(3000)
        a = g.astype(np.float32)
        b = (g * (1 + 1e-6)).astype(np.float32)
        pa, pb = self.files(a, b)
        pg = os.path.join(self.tmp.name, "g.npy")
        np.save(pg, g.astype(np.float32))
        self.assertEqual(parity.compare(pa, pb, golden=pg).to_dict(),
                         cli("compare", pa, pb, "--golden", pg))

    def test_torch_tensors(self):
        if torch is None:
            self.skipTest("torch is not installed")
        g = torch.Generator().manual_seed(0)
        b = torch.randn(256, 64, generator=g)
        a = b + 1e-7
        self.assertEqual(parity.compare(a, b, k=64).to_dict(),
                         parity.compare(a.numpy(), b.numpy(), k=64).to_dict())
        # bfloat16: its bits, as the file holds them
        a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)
        got = parity.compare(a16, b16, k=64)
        self.assertEqual(got.tensors[0].dtype, "bfloat16")
        ref = parity.compare(a16.view(torch.int16).numpy().view(np.uint16),
                             b16.view(torch.int16).numpy().view(np.uint16), k=64,
                             a_dtype="bfloat16", b_dtype="bfloat16")
        self.assertEqual(got.to_dict(), ref.to_dict())
        pa = os.path.join(self.tmp.name, "a.npy")
        pb = os.path.join(self.tmp.name, "b.npy")
        # parity_dump's convention: bfloat16 as <u2 in a dump; plain .npy files have no
        # bfloat16, so the CLI reads them as uint16: the check is the dtype override itself.
        np.save(pa, a16.view(torch.int16).numpy().view(np.uint16))
        np.save(pb, b16.view(torch.int16).numpy().view(np.uint16))
        self.assertEqual(parity.compare(pa, pb).tensors[0].dtype, "uint16")

    def test_text_report(self):
        b = np.ones(100, np.float32)
        got = parity.compare(b, b, k=10)
        self.assertIn("Summary: 1 tensor, 1 passed, 0 failed", got.text)


class Errors(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def test_missing_file_message_is_the_clis(self):
        missing = os.path.join(self.tmp.name, "nope.npy")
        ok = os.path.join(self.tmp.name, "ok.npy")
        np.save(ok, np.zeros(3, np.float32))
        with self.assertRaises(parity.ParityError) as e:
            parity.compare(missing, ok)
        self.assertEqual(str(e.exception), cli_error("compare", missing, ok))
        self.assertIsInstance(e.exception, ValueError)
        with self.assertRaises(parity.ParityError) as e:
            parity.inspect(missing)
        self.assertEqual(str(e.exception), cli_error("inspect", missing))

    def test_truncated_npy(self):
        bad = os.path.join(self.tmp.name, "bad.npy")
        np.save(bad, np.arange(100, dtype=np.float32))
        with open(bad, "r+b") as f:
            f.truncate(100)
        with self.assertRaises(parity.ParityError) as e:
            parity.compare(bad, bad)
        self.assertEqual(str(e.exception), cli_error("compare", bad, bad))

    def same_outcome(self, call, *args):
        """The CLI fails (exit 2) with the message ParityError carries, or both report alike."""
        r = subprocess.run([BIN, *args, "--json", "-", "--quiet"], capture_output=True,
                           text=True, timeout=300)
        if r.returncode == 2:
            with self.assertRaises(parity.ParityError) as e:
                call()
            self.assertEqual(str(e.exception), cli_error(*args))
            return True
        self.assertEqual(call().to_dict(), json.loads(r.stdout))
        return False

    def test_bad_dumps(self):
        root = need_data("compare", "bad_dumps")
        base = os.path.join(DATA, "compare", "dumps", "base")
        errors = 0
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name)
            with self.subTest(dump=name):
                errors += self.same_outcome(lambda: parity.compare(base, path), "compare", base,
                                            path)
                errors += self.same_outcome(lambda: parity.replay(path), "replay", path)
        self.assertGreaterEqual(errors, len(os.listdir(root)))

    def test_bad_arrays(self):
        with self.assertRaisesRegex(parity.ParityError, "a: numpy dtype 'complex64'"):
            parity.compare(np.zeros(3, np.complex64), np.zeros(3, np.complex64))
        with self.assertRaisesRegex(parity.ParityError, "b: expected a path"):
            parity._parity.compare(np.zeros(3), 5, None, None, None, "auto", None, None, [],
                                   None, None, 6.0, 2.0, None, 5, None, "")
        with self.assertRaisesRegex(parity.ParityError, "a: dtype 'bfloat16' has 2-byte items"):
            parity.compare(np.zeros(3, np.float32), np.zeros(3, np.float32), a_dtype="bfloat16")
        with self.assertRaisesRegex(parity.ParityError, "tol: 'loose' is not one of"):
            parity.compare(np.zeros(3), np.zeros(3), tol="loose")

    def test_structural_mismatch_is_a_result_not_an_error(self):
        got = parity.compare(np.zeros(3, np.float32), np.zeros(4, np.float32))
        self.assertFalse(got.passed)
        self.assertTrue(got.tensors[0].structural)
        self.assertNotIn("max_abs", got.tensors[0])  # not computed: absent, not 0


class Inspect(unittest.TestCase):
    def test_file_and_array_match_cli(self):
        with tempfile.TemporaryDirectory() as tmp:
            x = np.array([1.5, -2.0, 0.0, np.nan, np.inf], np.float32)
            p = os.path.join(tmp, "x.npy")
            np.save(p, x)
            expected = cli("inspect", p)
            self.assertEqual(parity.inspect(p).to_dict(), expected)
            got = parity.inspect(x, name="x").to_dict()
            self.assertEqual(got, expected["files"][0]["tensors"][0])
            self.assertEqual(parity.inspect(np.full(4, np.nan, np.float32)).mean, None)

    def test_dump_matches_cli(self):
        base = need_data("compare", "dumps", "base")
        self.assertEqual(parity.inspect(base).to_dict(), cli("inspect", base))


class ExplainReplay(unittest.TestCase):
    def test_explain_matches_cli(self):
        root = need_data("explain")
        for case in ("tf32-matmul", "identical", "dropout-seed"):
            with self.subTest(case=case):
                a, b = os.path.join(root, case, "a"), os.path.join(root, case, "b")
                got = parity.explain(a, b)
                expected = cli("explain", a, b)
                self.assertEqual(got.to_dict(), expected)
                code = subprocess.run([BIN, "explain", a, b, "--quiet"]).returncode
                self.assertEqual(got.exit_code, code)

    def test_replay_matches_cli(self):
        root = need_data("explain", "tf32-matmul")
        for side in ("a", "b"):
            path = os.path.join(root, side)
            self.assertEqual(parity.replay(path).to_dict(), cli("replay", path))


class QualityRng(unittest.TestCase):
    def test_auc_matches_cli(self):
        rng = np.random.default_rng(6)
        labels = (rng.random(2000) < 0.3).astype(np.float64)
        a = labels * 0.5 + rng.random(2000)
        b = a + rng.standard_normal(2000) * 0.01
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for name, x in (("labels", labels), ("a", a), ("b", b)):
                paths.append(os.path.join(tmp, name + ".npy"))
                np.save(paths[-1], x)
            expected = cli("quality", "auc", "--labels", paths[0], "--a", paths[1], "--b",
                           paths[2], "--bootstrap", "50", codes=(0, 1))
            got = parity.quality.auc(labels, a, b, bootstrap=50)
            self.assertEqual(got.to_dict(), expected)
            self.assertEqual(parity.quality.auc(*paths, bootstrap=50).to_dict(), expected)
        with self.assertRaisesRegex(parity.ParityError, "labels: label 2 at index 0"):
            parity.quality.auc(np.full(10, 2.0), a[:10], b[:10])

    def test_philox_matches_cli(self):
        with tempfile.TemporaryDirectory() as tmp:
            for dist in ("uint32", "uniform", "normal", "uniform_double", "normal_double"):
                with self.subTest(dist=dist):
                    out = os.path.join(tmp, dist + ".npy")
                    subprocess.run([BIN, "rng", "philox", "--seed", "42", "--subsequence", "3",
                                    "--offset", "5", "--count", "1001", "--dist", dist, "--out",
                                    out], check=True)
                    got = parity.rng.philox(42, 1001, subsequence=3, offset=5, dist=dist)
                    expected = np.load(out)
                    self.assertEqual(got.dtype, expected.dtype)
                    self.assertTrue(np.array_equal(got, expected))
        with self.assertRaisesRegex(parity.ParityError, "unknown distribution"):
            parity.rng.philox(1, 10, dist="gamma")


class Threads(unittest.TestCase):
    def test_gil_released_during_compare(self):
        """While one thread compares, another runs Python: it could not if the GIL were held.
        With a switch interval far beyond a compare's length, only a released GIL lets the main
        thread tick between the worker's clock readings around the call, whatever the load."""
        n = 1 << 26  # 256 MiB per array, one parity thread: a call of a good tenth of a second
        a = np.ones(n, np.float32)
        b = np.ones(n, np.float32)
        parity.set_threads(1)
        self.addCleanup(parity.set_threads, 0)
        self.addCleanup(sys.setswitchinterval, sys.getswitchinterval())
        sys.setswitchinterval(1000.0)
        attempts = 20  # a busy machine may not schedule the main thread during one call
        for _ in range(attempts):
            window = {}

            def work():
                window["start"] = time.monotonic()
                parity.compare(a, b, k=16)
                window["end"] = time.monotonic()

            ticks = []
            t = threading.Thread(target=work)
            t.start()
            while t.is_alive():
                ticks.append(time.monotonic())
                time.sleep(0.001)
            t.join()
            inside = [x for x in ticks if window["start"] < x < window["end"]]
            if inside:
                break
        self.assertTrue(inside, f"no tick inside any of {attempts} compares: the GIL was held")

    def test_two_threads_compare_concurrently(self):
        rng = np.random.default_rng(7)
        pairs = []
        for i in range(2):
            b = rng.standard_normal(1 << 20).astype(np.float32)
            a = b.copy()
            a[i * 10] += 1
            pairs.append((a, b))
        expected = [parity.compare(a, b, k=32).to_dict() for a, b in pairs]
        got = [None, None]

        def work(i):
            for _ in range(3):
                got[i] = parity.compare(*pairs[i], k=32).to_dict()

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(got, expected)

    def test_set_threads(self):
        old = parity.thread_count()
        try:
            parity.set_threads(1)
            self.assertEqual(parity.thread_count(), 1)
        finally:
            parity.set_threads(0)
        self.assertEqual(parity.thread_count(), old if old else parity.thread_count())


def _tf32(x):
    """float32 rounded to TF32's 10-bit mantissa (round to nearest even)."""
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0xFFF + ((bits >> 13) & 1)) & 0xFFFFE000
    return bits.astype(np.uint32).view(np.float32)


class AssertClose(unittest.TestCase):
    K = 1024

    def setUp(self):
        rng = np.random.default_rng(8)
        self.x = rng.standard_normal((64, self.K)).astype(np.float32)
        self.w = rng.standard_normal((self.K, 32)).astype(np.float32)
        # The reference: float64 products and sums, rounded once.
        self.expected = (self.x.astype(np.float64) @ self.w.astype(np.float64)).astype(np.float32)

    def test_passes_summation_order_noise(self):
        actual = self.x @ self.w  # float32, BLAS's own summation order
        parity.testing.assert_close(actual, self.expected, k=self.K)
        # Another order: sequential float32 sums of 16-element blocks.
        blocks = [(self.x[:, i:i + 16] @ self.w[i:i + 16]) for i in range(0, self.K, 16)]
        acc = np.zeros_like(blocks[0])
        for part in reversed(blocks):
            acc = (acc + part).astype(np.float32)
        parity.testing.assert_close(acc, self.expected, k=self.K)
        parity.testing.assert_close(acc, self.expected, k=self.K, op="matmul")

    def test_fails_planted_tf32_matmul(self):
        actual = (_tf32(self.x).astype(np.float64) @ _tf32(self.w).astype(np.float64)).astype(
            np.float32)
        with self.assertRaises(AssertionError) as e:
            parity.testing.assert_close(actual, self.expected, k=self.K)
        message = str(e.exception)
        self.assertIsInstance(e.exception, parity.testing.ParityAssertionError)
        for part in ("Tensor-likes are not close", f"K = {self.K}", "compute float32",
                     "Worst elements", "Violations:", "rtol = lambda*sqrt(K)*u_compute"):
            self.assertIn(part, message)
        self.assertFalse(e.exception.result.passed)
        # The same result is within TF32's own bound.
        parity.testing.assert_close(actual, self.expected, k=self.K, compute="tf32")

    def test_elementwise_op(self):
        a = np.linspace(1, 2, 1000, dtype=np.float32)
        b = np.nextafter(a, np.float32(3))  # one ulp
        parity.testing.assert_close(a, b, op="add")
        with self.assertRaises(AssertionError):
            parity.testing.assert_close(a, b, op="view")  # data movement: bitwise


if __name__ == "__main__":
    unittest.main()
