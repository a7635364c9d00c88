# SPDX-License-Identifier: Apache-2.0
"""scripts/gpu-check.sh end to end on the fake backend plugin (no GPU): the built parity
(GPU_CHECK_PARITY), the fake's simulated clock (PARITY_FAKE_CLOCK) and a stand-in for the cuBLAS
peer (fake_gpu_peer.py), tiny sizes, no stress drill. A passing run, a failing run that --record
still appends (to a copy of the PERFORMANCE file, never docs/PERFORMANCE.md), and a machine
without the CUDA toolkit (exit 3 naming it)."""
import hashlib
import os
import shutil
import subprocess
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "scripts", "gpu-check.sh")
PERFORMANCE = os.path.join(ROOT, "docs", "PERFORMANCE.md")
N = 4096


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class GpuCheck(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gpu_check_")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.performance = os.path.join(self.tmp, "PERFORMANCE.md")
        shutil.copy(PERFORMANCE, self.performance)
        self.real_digest = digest(PERFORMANCE)

    def run_check(self, *args, **env):
        full = dict(os.environ)
        full.update({
            "OUT": os.path.join(self.tmp, "out"),
            "GPU_CHECK_PARITY": os.environ["PARITY_BIN"],
            "GPU_CHECK_BACKEND": "fake",
            "GPU_CHECK_PEER": "python3 " + os.path.join(HERE, "fake_gpu_peer.py"),
            "GPU_CHECK_BENCH_ARGS": f"--n {N} --reps 2 --dtype float32",
            "GPU_CHECK_STRESS": "0",
            "GPU_CHECK_PERFORMANCE_FILE": self.performance,
            "GPU_CHECK_NO_INSTALL": "1",
            "PARITY_BACKEND_PATH": os.environ["PARITY_TEST_PLUGINS"],
            "PARITY_FAKE_CLOCK": "5,10",
            "FAKE_PEER_N": str(N),
        })
        full.pop("PARITY_FAKE_MODE", None)
        full.update(env)
        return subprocess.run(["bash", SCRIPT, *args], env=full, capture_output=True, text=True,
                              timeout=300)

    def section(self):
        with open(os.path.join(self.tmp, "out", "gpu-check.md")) as f:
            return f.read()

    def tearDown(self):
        self.assertEqual(digest(PERFORMANCE), self.real_digest, "docs/PERFORMANCE.md changed")

    def test_passing_run_is_recorded(self):
        p = self.run_check("--record")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        text = self.section()
        self.assertIn("Result: every figure valid and at its target", text)
        # Held timing: triad at the ceiling (ratio 1.000), GEMM at the peer's figure.
        self.assertRegex(text, r"\| stream.triad \| float32 \| [0-9.,]+ \| [0-9.,]+ \| 1.000 \|")
        self.assertRegex(text, r"\| float32 \| 256 \| [0-9.,]+ \| [0-9.,]+ \| 1.000 \|")
        with open(self.performance) as f:
            self.assertTrue(f.read().endswith(text))

    def test_failing_run_is_recorded_and_exits_1(self):
        p = self.run_check("--record", PARITY_FAKE_MODE="wrong-triad")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        text = self.section()
        self.assertIn("stream.triad float32 invalid", text)
        with open(self.performance) as f:
            recorded = f.read()
        self.assertTrue(recorded.endswith(text), "the failing run was not appended")
        self.assertIn("appended", p.stderr)

    def test_missing_toolkit_exits_3_naming_it(self):
        env = {"GPU_CHECK_NVCC": "", "OUT": os.path.join(self.tmp, "out3")}
        full = dict(os.environ)
        full.update(env)
        full.pop("GPU_CHECK_PARITY", None)
        full["GPU_CHECK_NO_INSTALL"] = "1"
        p = subprocess.run(["bash", SCRIPT], env=full, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 3, p.stdout + p.stderr)
        self.assertIn("the CUDA toolkit: nvcc not on PATH", p.stderr)
        self.assertIn("https://developer.nvidia.com/cuda-downloads", p.stderr)
        self.assertNotIn("CMake Error", p.stderr)

    def test_bad_option_is_usage(self):
        p = self.run_check("--recrod")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown option '--recrod'", p.stderr)


if __name__ == "__main__":
    unittest.main()
