#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A stand-in for bench/gpu_peer.cu in the scripts.gpu_check test: its JSON document, with the
figures the fake plugin reaches on its simulated clock (PARITY_FAKE_CLOCK=HOST_US,DEVICE_US:
DEVICE_US per call, held). The copy ceiling is float32 triad's figure at --n N (3 arrays of 4
bytes in DEVICE_US); GEMM is 2n^3 per DEVICE_US for float32 at 256 and 1024."""
import json
import os
import sys

device_s = float(os.environ["PARITY_FAKE_CLOCK"].split(",")[1]) * 1e-6
n = int(os.environ.get("FAKE_PEER_N", "4096"))
print(json.dumps({
    "format": "parity-gpu-peer", "version": 1, "device": "Fake Accelerator 0", "cublas": "fake",
    "copy": {"bytes": 3 * 4 * n, "gbs": 3 * 4 * n / device_s / 1e9, "reps": 1,
             "method": "the fake plugin's triad on its simulated clock"},
    "gemm": [{"dtype": "float32", "size": size, "gflops": 2.0 * size ** 3 / device_s / 1e9,
              "reps": 1, "calls_per_sample": 1, "call": "fake"} for size in (256, 1024)]}))
sys.exit(0)
