#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the seed corpus of fuzz/fuzz_stress_checkpoint.cc into fuzz/corpus/stress_checkpoint/
(checked in): checkpoint files packed here from the format src/stress/checkpoint.h describes,
with the checksum by Python's hashlib (BLAKE2b-256), not by libsodium as parity computes it,
and two --inject values (the same target parses its input as one too).

  valid          step 42, payload "PARITYSW state", its correct checksum
  empty_payload  step 0, no payload, its correct checksum
  truncated      step 7, a 40-byte payload ("x" * 40) announced, the file cut after 18 bytes of
                 the checksum (so neither the checksum nor the payload is there)
  inject_every   kill:every=2.5
  inject_p       hang:p=0.3

The format, little-endian: "PARITYCK", u32 version (1), u32 0, i64 step, u64 payload bytes,
then BLAKE2b-256 over those 32 header bytes and the payload, then the payload.

Usage: gen_stress_checkpoint_seeds.py [OUT]   (default: fuzz/corpus/stress_checkpoint)
"""
import hashlib
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "fuzz", "corpus",
                                                         "stress_checkpoint")


def checkpoint(step, payload):
    header = b"PARITYCK" + struct.pack("<IIqQ", 1, 0, step, len(payload))
    digest = hashlib.blake2b(header + payload, digest_size=32).digest()
    return header + digest + payload


def main():
    files = {
        "valid": checkpoint(42, b"PARITYSW state"),
        "empty_payload": checkpoint(0, b""),
        "truncated": checkpoint(7, b"x" * 40)[:50],
        "inject_every": b"kill:every=2.5",
        "inject_p": b"hang:p=0.3",
    }
    os.makedirs(OUT, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
