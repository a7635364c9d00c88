#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes tests/data/rng/philox_kat.json (checked in): the Philox4x32-10 values that
tests/rng/philox_test.cc and tests/cli/test_rng.py check parity's Philox against.

  "random123"      Philox4x32-10(counter, key): Random123's published known answers (the
                   philox4x32 10-round lines of kat_vectors; "source": "kat_vectors") and one
                   more case computed here ("source": "computed"). Computed by a pure-Python
                   Philox4x32-10 written from Salmon et al., "Parallel random numbers: as easy as
                   1, 2, 3" (SC 2011), after it reproduces the published answers; and, where
                   Debian's librandom123-dev is installed, by Random123's own philox.h in a
                   small C program, which must agree.
  "curand_device"  streams of cuRAND's device API (curand_init, curand, curand4,
                   curand_uniform, curand_uniform_double, curand_normal, curand_normal_double,
                   and the state's counter): NVIDIA's curand_kernel.h (CUDA 13) compiled for
                   the host by a small C++ program and run on the CPU (integer and uniform
                   values are what the GPU computes; normals follow the header's host branch,
                   sinf/cosf of the C library). Its integer words are checked here against the
                   Python Philox with curand_init's documented counter (docs/RNG.md).
                   Floats are stored as their bits and as printf's %.9g (float) or %.17g
                   (double) text, which is how `parity rng philox` prints them.

Needs a C++ compiler ($CXX, else c++) and CUDA's headers ($PARITY_CUDA_INCLUDE, else
$CUDA_HOME/include, else /usr/local/cuda/include); exits 77 (skipped) naming what is missing.

Usage: gen_philox.py [OUT]   (default: tests/data/rng)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "data", "rng")
SKIPPED = 77
MASK = 0xFFFFFFFF

# Salmon et al. 2011, section 3.3 (and Random123's philox.h): multipliers and Weyl key bumps.
M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85

# Random123 kat_vectors, philox4x32 with 10 rounds: counter, key, expected output.
PUBLISHED = [
    ([0x00000000, 0x00000000, 0x00000000, 0x00000000], [0x00000000, 0x00000000],
     [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]),
    ([0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff], [0xffffffff, 0xffffffff],
     [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]),
    ([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0],
     [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]),
]
COMPUTED = [([1, 0, 0, 0], [1, 0])]

# The device-API streams the tests replay: name, seed, subsequence, offset, calls.
STREAMS = [
    ("words", 42, 0, 0, ["curand"] * 8),
    ("subsequence_1", 42, 1, 0, ["curand", "counter"]),
    ("offset_5", 42, 0, 5, ["curand4", "curand"]),
    ("seed_64_bit", 0x0123456789ABCDEF, 3, 10, ["counter", "curand"]),
    ("uniform", 42, 0, 0, ["uniform"] * 8),
    ("uniform_double", 42, 0, 0, ["uniform_double"] * 2),
    ("normal", 42, 0, 0, ["normal"] * 8),
    ("normal_double", 42, 0, 0, ["normal_double"] * 4),
    ("normal_double_offset_1", 42, 0, 1, ["normal_double"] * 2),
    ("mixed", 42, 0, 0, ["curand", "normal", "curand", "normal"]),
]


def mulhilo(a, b):
    p = a * b
    return p >> 32, p & MASK


def philox4x32_10(ctr, key):
    """Salmon et al. 2011: ten rounds of the Philox S-box on (c0, c1, c2, c3), the key bumped
    by the Weyl constants between rounds."""
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0) & MASK, (k1 + W1) & MASK
        hi0, lo0 = mulhilo(M0, c0)
        hi1, lo1 = mulhilo(M1, c2)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return [c0, c1, c2, c3]


def device_word(seed, subsequence, offset):
    """Word offset mod 4 of Philox(counter = subsequence * 2^64 + offset // 4, key = seed):
    curand_init's counter (docs/RNG.md)."""
    block = offset // 4
    ctr = [block & MASK, (block >> 32) & MASK, subsequence & MASK, (subsequence >> 32) & MASK]
    return philox4x32_10(ctr, [seed & MASK, seed >> 32])[offset % 4]


def compiler():
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++")
    if not cxx:
        print("gen_philox.py: skipped: no C++ compiler ($CXX, c++)")
        sys.exit(SKIPPED)
    return cxx


def build_and_run(cxx, source, flags, tmp, name):
    src = os.path.join(tmp, name + ".cc")
    exe = os.path.join(tmp, name)
    with open(src, "w") as f:
        f.write(source)
    subprocess.run([cxx, "-std=c++17", "-O1", "-w", *flags, src, "-o", exe], check=True)
    return subprocess.run([exe], check=True, capture_output=True, text=True).stdout


RANDOM123_PROGRAM = r"""
#include <Random123/philox.h>
#include <cstdio>
int main() {
  const unsigned cases[][6] = {@CASES@};
  for (const auto& c : cases) {
    r123::Philox4x32_R<10> philox;
    r123::Philox4x32_R<10>::ctr_type ctr = {{c[0], c[1], c[2], c[3]}};
    r123::Philox4x32_R<10>::key_type key = {{c[4], c[5]}};
    const auto out = philox(ctr, key);
    std::printf("%u %u %u %u\n", out[0], out[1], out[2], out[3]);
  }
}
"""

CURAND_PROGRAM = r"""
#include <curand_kernel.h>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
// One line per call: the call, then its value(s); floats as bits, then printf's text.
static void Float(const char* call, float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  std::printf("%s %u %.9g\n", call, bits, v);
}
static void Double(const char* call, double v) {
  unsigned long long bits;
  std::memcpy(&bits, &v, 8);
  std::printf("%s %llu %.17g\n", call, bits, v);
}
static void Run(unsigned long long seed, unsigned long long sub, unsigned long long offset,
                const char* const* calls, int n) {
  curandStatePhilox4_32_10_t s;
  curand_init(seed, sub, offset, &s);
  std::printf("stream\n");
  for (int i = 0; i < n; ++i) {
    const std::string c = calls[i];
    if (c == "curand") {
      std::printf("curand %u\n", curand(&s));
    } else if (c == "curand4") {
      const uint4 v = curand4(&s);
      std::printf("curand4 %u %u %u %u\n", v.x, v.y, v.z, v.w);
    } else if (c == "counter") {
      std::printf("counter %u %u %u %u\n", s.ctr.x, s.ctr.y, s.ctr.z, s.ctr.w);
    } else if (c == "uniform") {
      Float("uniform", curand_uniform(&s));
    } else if (c == "uniform_double") {
      Double("uniform_double", curand_uniform_double(&s));
    } else if (c == "normal") {
      Float("normal", curand_normal(&s));
    } else if (c == "normal_double") {
      Double("normal_double", curand_normal_double(&s));
    }
  }
}
int main() {
@BODY@
}
"""


def random123_check(cxx, tmp, cases):
    """Random123's own philox.h, where librandom123-dev is installed: None if it is not."""
    if not os.path.exists("/usr/include/Random123/philox.h"):
        print("gen_philox.py: note: /usr/include/Random123/philox.h not found "
              "(librandom123-dev): the Python Philox is checked against the published answers "
              "only")
        return None
    rows = ", ".join("{" + ", ".join(f"{v}u" for v in ctr + key) + "}" for ctr, key in cases)
    out = build_and_run(cxx, RANDOM123_PROGRAM.replace("@CASES@", rows), [], tmp, "random123")
    return [[int(x) for x in line.split()] for line in out.splitlines()]


def curand_streams(cxx, tmp):
    include = os.environ.get("PARITY_CUDA_INCLUDE") or os.path.join(
        os.environ.get("CUDA_HOME", "/usr/local/cuda"), "include")
    if not os.path.exists(os.path.join(include, "curand_kernel.h")):
        print(f"gen_philox.py: skipped: {include}/curand_kernel.h not found (the CUDA toolkit)")
        sys.exit(SKIPPED)
    body = []
    for i, (_, seed, sub, offset, calls) in enumerate(STREAMS):
        names = ", ".join(f'"{c}"' for c in calls)
        body.append(f"  {{ const char* const c[] = {{{names}}}; "
                    f"Run({seed}ULL, {sub}ULL, {offset}ULL, c, {len(calls)}); }}")
    source = CURAND_PROGRAM.replace("@BODY@", "\n".join(body))
    out = build_and_run(cxx, source, [f"-I{include}"], tmp, "curand")
    streams, current = [], None
    for line in out.splitlines():
        words = line.split()
        if words[0] == "stream":
            current = []
            streams.append(current)
        elif words[0] in ("curand4", "counter"):
            current.append({"call": words[0], "value": [int(w) for w in words[1:]]})
        elif words[0] == "curand":
            current.append({"call": "curand", "value": int(words[1])})
        else:
            current.append({"call": words[0], "bits": int(words[1]), "text": words[2]})
    result = []
    for (name, seed, sub, offset, _), calls in zip(STREAMS, streams):
        result.append({"name": name, "seed": seed, "subsequence": sub, "offset": offset,
                       "calls": calls})
    return result


def check_words(stream):
    """The curand/curand4 words against the Python Philox at curand_init's counter."""
    position = stream["offset"]
    for call in stream["calls"]:
        if call["call"] in ("curand", "curand4"):
            values = call["value"] if call["call"] == "curand4" else [call["value"]]
            for v in values:
                want = device_word(stream["seed"], stream["subsequence"], position)
                if v != want:
                    sys.exit(f"gen_philox.py: curand_kernel.h gave {v:#x} at {stream['name']} "
                             f"position {position}, the Python Philox {want:#x}")
                position += 1
        elif call["call"] != "counter":
            return  # floats take whole blocks or pairs: not followed here


def main():
    for ctr, key, want in PUBLISHED:
        got = philox4x32_10(ctr, key)
        if got != want:
            sys.exit(f"gen_philox.py: the Python Philox gives {[hex(x) for x in got]} for "
                     f"counter {ctr} key {key}; Random123 publishes {[hex(x) for x in want]}")
    cases = [(ctr, key) for ctr, key, _ in PUBLISHED] + COMPUTED
    outputs = [philox4x32_10(ctr, key) for ctr, key in cases]
    cxx = compiler()
    with tempfile.TemporaryDirectory() as tmp:
        reference = random123_check(cxx, tmp, cases)
        if reference is not None and reference != outputs:
            sys.exit(f"gen_philox.py: Random123's philox.h gives {reference}, "
                     f"the Python Philox {outputs}")
        streams = curand_streams(cxx, tmp)
    for stream in streams:
        check_words(stream)
    doc = {
        "generator": "tests/gen/gen_philox.py",
        "random123": [
            {"counter": ctr, "key": key, "output": out,
             "source": "kat_vectors" if i < len(PUBLISHED) else "computed"}
            for i, ((ctr, key), out) in enumerate(zip(cases, outputs))],
        "curand_device": streams,
    }
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "philox_kat.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
