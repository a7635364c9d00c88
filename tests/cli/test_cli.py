#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the parity binary: exit codes, error messages, JSON against numpy.

Environment (set by CTest): PARITY_BIN, PARITY_TESTS_BIN, PARITY_TESTDATA (written by
tests/gen/gen_testdata.py), PARITY_SANITIZED (1 under ASan, where address-space limits can't
be used).
"""
import json
import math
import os
import resource
import struct
import subprocess
import tempfile
import unittest

import numpy as np

BIN = os.environ["PARITY_BIN"]
TESTS_BIN = os.environ.get("PARITY_TESTS_BIN")
DATA = os.environ["PARITY_TESTDATA"]
from sanitized import SANITIZED  # tests/cli/sanitized.py
with open(os.path.join(DATA, "expected.json")) as f:
    EXPECTED = json.load(f)


def limit_memory():
    # Bad input must be refused without allocating what a header claims.
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def run(*args, limit=False, timeout=60):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout,
                          preexec_fn=limit_memory if (limit and not SANITIZED) else None)


class CommandLine(unittest.TestCase):
    def test_version(self):
        r = run("--version")
        self.assertEqual(r.returncode, 0)
        self.assertRegex(r.stdout, r"^parity \d+\.\d+\.\d+\n$")

    def test_help_lists_commands(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("inspect", r.stdout)
        self.assertIn("Exit codes", r.stdout)

    def test_every_command_has_help(self):
        for command in ("inspect", "compare", "replay"):
            for args in ((command, "--help"), ("help", command)):
                r = run(*args)
                self.assertEqual(r.returncode, 0, args)
                self.assertIn("Usage: parity %s" % command, r.stdout)
                self.assertIn("--json", r.stdout)

    def test_no_command_is_a_usage_error(self):
        r = run()
        self.assertEqual(r.returncode, 2)
        self.assertIn("Usage:", r.stderr)

    def test_unknown_command_suggests(self):
        r = run("inpsect", "x.npy")
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.startswith("parity: error: unknown command 'inpsect'"))
        self.assertIn("did you mean 'inspect'?", r.stderr)
        r = run("frobnicate")
        self.assertEqual(r.returncode, 2)
        self.assertNotIn("did you mean", r.stderr)

    def test_bad_flags_are_usage_errors(self):
        for args in (("inspect",), ("inspect", "--threads", "-3", "x.npy"),
                     ("inspect", "--threads", "many", "x.npy"),
                     ("inspect", "x.npy", "--bogus"), ("--bogus",)):
            r = run(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertTrue(r.stderr.startswith("parity: error:"), r.stderr)


class Inspect(unittest.TestCase):
    def inspect_json(self, *paths):
        r = run("inspect", "--json", "-", *paths)
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)  # strict JSON: no NaN or Infinity tokens
        self.assertEqual(doc["format"], "parity-inspect")
        self.assertEqual(doc["version"], 1)
        return doc

    def check_number(self, tensor, key, want, what, scale=0.0):
        got = tensor[key]
        if want is None:
            self.assertIsNone(got, what)
        elif isinstance(want, str):  # numpy's own result is non-finite
            self.assertIsNone(got, what)
            self.assertEqual(tensor[key + "_nonfinite"], want, what)
        elif isinstance(want, int) and not isinstance(want, bool):
            self.assertEqual(got, want, what)
        else:
            # Float64 sums of n terms round by about n*u*scale (scale = mean magnitude of the
            # terms), so numpy's and parity's results may differ by that much.
            scale = float(scale)  # "inf" when numpy's own scale overflowed
            tol = 1e-10 * max(1.0, abs(want), scale)
            self.assertLessEqual(abs(got - want), tol, "%s: %r vs numpy %r" % (what, got, want))

    def test_statistics_match_numpy_for_every_generated_file(self):
        for entry in EXPECTED["files"]:
            doc = self.inspect_json(os.path.join(DATA, entry["path"]))
            (f,) = doc["files"]
            self.assertEqual(f["format"], entry["format"])
            self.assertEqual(len(f["tensors"]), len(entry["tensors"]), entry["path"])
            for got, want in zip(f["tensors"], entry["tensors"]):
                what = "%s:%s" % (entry["path"], want["name"])
                self.assertEqual(got["name"], want["name"], what)
                self.assertEqual(got["dtype"], want["dtype"], what)
                self.assertEqual(got["shape"], want["shape"], what)
                self.assertEqual(got["numel"], math.prod(want["shape"]), what)
                s = want["stats"]
                for key in ("nan", "inf", "zeros"):
                    self.assertEqual(got[key], s[key], "%s %s" % (what, key))
                for key in ("min", "max"):
                    self.check_number(got, key, s[key], "%s %s" % (what, key))
                self.check_number(got, "mean", s["mean"], what + " mean", s["abs_mean"])
                self.check_number(got, "std", s["std"], what + " std", s["rms"])

    def test_directory_lists_every_tensor_file_in_order(self):
        doc = self.inspect_json(os.path.join(DATA, "npz"), os.path.join(DATA, "safetensors"))
        names = [os.path.relpath(f["path"], DATA) for f in doc["files"]]
        self.assertEqual(names, ["npz/deflated.npz", "npz/fortran.npz", "npz/stored.npz",
                                 "safetensors/all_dtypes.safetensors",
                                 "safetensors/unaligned.safetensors"])

    def test_human_table(self):
        r = run("inspect", os.path.join(DATA, "npy/float32_le_c.npy"))
        self.assertEqual(r.returncode, 0)
        lines = r.stdout.splitlines()
        self.assertIn("(npy, 1 tensor)", lines[0])
        self.assertEqual(lines[1].split(), ["name", "dtype", "shape", "numel", "min", "max",
                                            "mean", "std", "nan", "inf", "zeros"])
        self.assertIn("float32_le_c", lines[2])

    def test_json_file_and_quiet(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "out.json")
            r = run("inspect", "--quiet", "--json", out, os.path.join(DATA, "npz/stored.npz"))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "")
            with open(out) as f:
                doc = json.load(f)
            self.assertEqual([t["name"] for t in doc["files"][0]["tensors"]],
                             ["weight", "bias", "steps", "mask", "half_be", "empty"])
            r = run("inspect", "--json", os.path.join(tmp, "no/such/dir/out.json"),
                    os.path.join(DATA, "npz/stored.npz"))
            self.assertEqual(r.returncode, 2)
            self.assertIn("no/such/dir/out.json", r.stderr)

    def test_threads_do_not_change_results(self):
        path = os.path.join(DATA, "npy/big_float32.npy")
        one = run("inspect", "--threads", "1", "--json", "-", path)
        many = run("inspect", "--threads", "4", "--json", "-", path)
        self.assertEqual(one.returncode, 0)
        self.assertEqual(one.stdout, many.stdout)


class BadInput(unittest.TestCase):
    def test_every_bad_file_is_exit_2_naming_file_and_problem(self):
        for entry in EXPECTED["bad"]:
            path = os.path.join(DATA, entry["path"])
            r = run("inspect", path, limit=True, timeout=10)
            self.assertEqual(r.returncode, 2, "%s: %s" % (entry["path"], r.stderr))
            self.assertTrue(r.stderr.startswith("parity: error: "), r.stderr)
            self.assertIn(path, r.stderr)
            self.assertIn(entry["error"], r.stderr)
            self.assertEqual(r.stderr.count("\n"), 1, r.stderr)

    def test_missing_file_and_fifo(self):
        r = run("inspect", os.path.join(DATA, "no-such-file.npy"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("No such file or directory", r.stderr)
        with tempfile.TemporaryDirectory() as tmp:
            fifo = os.path.join(tmp, "pipe.npy")
            os.mkfifo(fifo)
            r = run("inspect", fifo, timeout=10)  # must not wait for a writer
            self.assertEqual(r.returncode, 2)
            self.assertIn("not a regular file", r.stderr)


class Writers(unittest.TestCase):
    """Files written by parity's writers, read by numpy and by the safetensors spec."""

    @unittest.skipUnless(TESTS_BIN, "needs PARITY_TESTS_BIN")
    def test_numpy_and_the_spec_read_what_parity_wrote(self):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, PARITY_EXPORT_DIR=tmp)
            r = subprocess.run([TESTS_BIN, "--gtest_filter=WriterExport.*"], env=env,
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            with open(os.path.join(tmp, "manifest.json")) as f:
                manifest = json.load(f)
            stored = {"bfloat16": "<u2", "float8_e4m3fn": "|u1", "float8_e5m2": "|u1"}
            numpy_name = {"bool": "|b1", "int8": "|i1", "uint8": "|u1", "int16": "<i2",
                          "uint16": "<u2", "int32": "<i4", "uint32": "<u4", "int64": "<i8",
                          "uint64": "<u8", "float16": "<f2", "float32": "<f4",
                          "float64": "<f8"}
            for item in manifest:
                arr = np.load(os.path.join(tmp, item["file"]))
                want = stored.get(item["dtype"], numpy_name.get(item["dtype"]))
                self.assertEqual(arr.dtype.str, want, item["file"])
                self.assertEqual(list(arr.shape), item["shape"])
                self.assertEqual(arr.tobytes().hex(), item["hex"], item["file"])
            self.assertEqual(np.load(os.path.join(tmp, "scalar.npy")).shape, ())
            # safetensors, parsed per the format description.
            with open(os.path.join(tmp, "all.safetensors"), "rb") as f:
                blob = f.read()
            (n,) = struct.unpack("<Q", blob[:8])
            self.assertEqual((8 + n) % 8, 0, "data should be 8-byte aligned")
            header = json.loads(blob[8:8 + n])
            self.assertEqual(header["__metadata__"], {"writer": "parity"})
            data = blob[8 + n:]
            codes = {"bool": "BOOL", "int8": "I8", "uint8": "U8", "int16": "I16",
                     "uint16": "U16", "int32": "I32", "uint32": "U32", "int64": "I64",
                     "uint64": "U64", "float16": "F16", "bfloat16": "BF16", "float32": "F32",
                     "float64": "F64", "float8_e4m3fn": "F8_E4M3", "float8_e5m2": "F8_E5M2"}
            end = 0
            for item in manifest:
                t = header[item["dtype"]]
                self.assertEqual(t["dtype"], codes[item["dtype"]])
                self.assertEqual(t["shape"], item["shape"])
                begin, stop = t["data_offsets"]
                self.assertEqual(begin, end)
                self.assertEqual(data[begin:stop].hex(), item["hex"])
                end = stop
            self.assertEqual(end, len(data))


if __name__ == "__main__":
    unittest.main()
