#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that checked-in reference data is what its generator writes now: runs the generator
into a temporary directory and compares every file it writes with the checked-in one, byte for
byte (JSON files: the same document, non-integer numbers within 1e-9 relative, as library
versions and BLAS kernels move their last bits), naming each stale or missing file. It does so
once under each OpenBLAS core type of CORETYPES (OPENBLAS_CORETYPE), and each run must match:
the data must not depend on the processor that generated it. A core type whose kernels cannot
run on this CPU is skipped, with the reason.

    check_fresh.py NAME      one generator below (CTest: testdata.fresh.NAME)
    check_fresh.py --list    the names

Exits 0 (fresh under every core type that could run, at least one), 1 (stale, missing, or the
generator failed, under any), or 77 (skipped: no core type could run here, or the generator
itself exited 77, saying what it needs that is not here).
"""
import difflib
import filecmp
import json
import math
import os
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SKIPPED = 77

# name: (generator, relative to the source tree; the checked-in directory it writes; and,
# for a generator whose argument is its one output file, that file's name).
GENERATORS = {
    "philox": ("tests/gen/gen_philox.py", "tests/data/rng"),
    "ks": ("tests/gen/gen_ks.py", "tests/data/rng", "ks_expected.json"),
    "rng": ("tests/gen/gen_rng.py", "tests/data/rng"),
    "quality": ("tests/gen/gen_quality.py", "tests/data/quality"),
    "stress": ("tests/gen/gen_stress.py", "tests/data/stress"),
    "stress_checkpoint_seeds": ("tests/gen/gen_stress_checkpoint_seeds.py",
                                "fuzz/corpus/stress_checkpoint"),
}
# Generators that compare on their own (they write in place otherwise).
SELF_CHECKING = {
    "monitor_fixtures": ["tests/fixtures/monitor/compute_expected.py", "--check"],
}


def generated_files(top):
    for dirpath, _, names in os.walk(top):
        for name in names:
            yield os.path.relpath(os.path.join(dirpath, name), top)


# JSON numbers that are not integers may differ in their last bits between versions of the
# libraries a generator calls (scipy's kstwo.sf moved by 1.2e-12 relative at one point) and
# between BLAS kernels (kstwo's Durbin and Pomeranz methods multiply matrices with dgemm: 2.9e-12
# relative between OpenBLAS's Haswell and Prescott kernels): equal within this relative error,
# far inside the tests' own tolerances on such values (1e-6 in tests/rng/ks_test.cc).
# Everything else (integers, strings, the structure, every other file) must be identical.
JSON_REL_TOL = 1e-9

# The OpenBLAS kernels every generator runs under, one run each (Debian's OpenBLAS has every
# x86-64 core's and otherwise picks by the CPU): kernels for other vector units sum in other
# orders, and numpy's float32 matmul once made tests/gen/gen_stress.py's losses differ by
# 6.8e-8 relative between an AVX-512 machine and an AVX2 one (2.4e-7 between the Haswell and
# Sandybridge kernels).
CORETYPES = ("Haswell", "SkylakeX")
# The CPU flag each core type's kernels need, named in a skip's reason.
CORETYPE_FLAG = {"Haswell": "avx2", "SkylakeX": "avx512f"}
# A BLAS call by the interpreter the generators run under.
BLAS_PROBE = "import numpy; numpy.ones((2, 2)) @ numpy.ones((2, 2))"


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def coretype_problem(core):
    """Why OpenBLAS cannot run its `core` kernels here, else None: a small matmul under
    OPENBLAS_CORETYPE=core must run on them (OpenBLAS 0.3.21 takes the name as given and dies
    of SIGILL where the CPU lacks the instructions; another may fall back to another core)."""
    env = dict(os.environ, OPENBLAS_CORETYPE=core, OPENBLAS_VERBOSE="2")
    try:
        p = subprocess.run([sys.executable, "-c", BLAS_PROBE], env=env, capture_output=True,
                           text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return f"a 2x2 matmul under OPENBLAS_CORETYPE={core} did not finish in 120 s"
    flags = cpu_flags()
    flag = CORETYPE_FLAG.get(core)
    lacks = (f": this CPU has no {flag} among /proc/cpuinfo's flags"
             if flags is not None and flag and flag not in flags else "")
    if p.returncode < 0:
        try:
            died = signal.Signals(-p.returncode).name
        except ValueError:
            died = f"signal {-p.returncode}"
        return f"OpenBLAS's {core} kernels died of {died} on a 2x2 matmul{lacks}"
    used = [line.split(":", 1)[1].strip() for line in p.stderr.splitlines()
            if line.startswith("Core:")]
    if p.returncode == 0 and used and used[-1].lower() != core.lower():
        return f"OpenBLAS ran its {used[-1]} kernels for OPENBLAS_CORETYPE={core}{lacks}"
    return None  # runs there, or no numpy to ask: each generator reports for itself


def json_differences(a, b, where="$", rel_tol=JSON_REL_TOL):
    """Where two parsed JSON documents differ beyond rel_tol, as a list of lines."""
    if isinstance(a, float) or isinstance(b, float):
        if (isinstance(a, (int, float)) and isinstance(b, (int, float))
                and not isinstance(a, bool) and not isinstance(b, bool)
                and (a == b or math.isclose(a, b, rel_tol=rel_tol, abs_tol=0.0))):
            return []
        return [f"{where}: checked in {a!r}, now {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            return [f"{where}: checked-in keys {list(a)}, now {list(b)}"]
        return [d for k in a for d in json_differences(a[k], b[k], f"{where}.{k}", rel_tol)]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: checked in {len(a)} items, now {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b))
                for d in json_differences(x, y, f"{where}[{i}]", rel_tol)]
    if type(a) is not type(b) or a != b:
        return [f"{where}: checked in {a!r}, now {b!r}"]
    return []


def same_json(checked_in, fresh, rel_tol=JSON_REL_TOL):
    """None when either file is not JSON; else whether they agree (json_differences)."""
    if not checked_in.endswith(".json"):
        return None
    try:
        with open(checked_in) as a, open(fresh) as b:
            return not json_differences(json.load(a), json.load(b), rel_tol=rel_tol)
    except ValueError:
        return None


def first_differences(checked_in, fresh, lines=12, rel_tol=JSON_REL_TOL):
    """Where two JSON files differ, else the start of a unified diff of two text files
    (nothing for binary files)."""
    try:
        with open(checked_in) as a, open(fresh) as b:
            diff = json_differences(json.load(a), json.load(b), rel_tol=rel_tol)
        return "".join(f"\n  {d}" for d in diff[:lines])
    except ValueError:
        pass
    try:
        with open(checked_in) as a, open(fresh) as b:
            diff = list(difflib.unified_diff(a.readlines(), b.readlines(), "checked in", "now",
                                             n=0))
    except UnicodeDecodeError:
        return ""
    return "\n" + "".join(diff[:lines]).rstrip("\n")


FRESH, STALE, FAILED = "fresh", "stale", "failed"


def check_self_checking(name, env, say):
    """Runs a self-checking generator's check under env: FRESH, STALE or SKIPPED."""
    script, *args = SELF_CHECKING[name]
    p = subprocess.run([sys.executable, os.path.join(ROOT, script), *args], env=env)
    if p.returncode == SKIPPED:
        return SKIPPED
    if p.returncode != 0:
        say(f"STALE: {script} {' '.join(args)} exited {p.returncode}: the checked-in files "
            f"differ from what it writes now (run it without --check)")
        return STALE
    say(f"fresh: {script} {' '.join(args)} passed")
    return FRESH


def check_generator(name, env, say):
    """Runs a generator into a temporary directory under env and compares what it writes with
    the checked-in files: FRESH, STALE, FAILED or SKIPPED."""
    script, checked_in, *one_file = GENERATORS[name]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, *one_file)
        p = subprocess.run([sys.executable, os.path.join(ROOT, script), out], env=env)
        if p.returncode == SKIPPED:
            return SKIPPED
        if p.returncode != 0:
            say(f"FAILED: {script} exited {p.returncode}")
            return FAILED
        files = sorted(generated_files(tmp))
        if not files:
            say(f"FAILED: {script} wrote nothing")
            return FAILED
        problems, close = [], []
        for rel in files:
            ours = os.path.join(ROOT, checked_in, rel)
            shown = os.path.join(checked_in, rel)
            if not os.path.exists(ours):
                problems.append(f"MISSING: {shown} (written by {script}, not checked in)")
            elif filecmp.cmp(os.path.join(tmp, rel), ours, shallow=False):
                pass
            elif same_json(ours, os.path.join(tmp, rel)):
                close.append(rel)
            else:
                problems.append(f"STALE: {shown} differs from what {script} writes now"
                                + first_differences(ours, os.path.join(tmp, rel)))
    for problem in problems:
        say(problem)
    if problems:
        say(f"regenerate with: {script} {os.path.join(checked_in, *one_file)}")
        return STALE
    within = (f" ({', '.join(close)}: the same JSON within {JSON_REL_TOL:g} relative, not "
              "byte for byte)" if close else "")
    say(f"fresh: the {len(files)} file{'s' if len(files) != 1 else ''} {script} writes "
        f"{'are' if len(files) != 1 else 'is'} checked in unchanged under {checked_in}{within}")
    return FRESH


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    name = argv[1]
    if name == "--list":
        print("\n".join(sorted([*GENERATORS, *SELF_CHECKING])))
        return 0
    if name not in GENERATORS and name not in SELF_CHECKING:
        print(f"check_fresh: unknown generator '{name}' (--list)", file=sys.stderr)
        return 2
    check = check_self_checking if name in SELF_CHECKING else check_generator
    outcomes = {}  # core type: outcome
    skips = {}  # core type: reason
    for core in CORETYPES:
        def say(line, core=core):
            print(f"check_fresh: [OPENBLAS_CORETYPE={core}] {line}", flush=True)

        problem = coretype_problem(core)
        if problem:
            say(f"SKIPPED: {problem}")
            outcomes[core], skips[core] = SKIPPED, problem
            continue
        outcomes[core] = check(name, dict(os.environ, OPENBLAS_CORETYPE=core), say)
        if outcomes[core] == SKIPPED:
            skips[core] = "the generator could not run here (its reason above)"
            say(f"SKIPPED: {skips[core]}")
    parts = [f"{outcome} under {core}" if outcome != SKIPPED else
             f"skipped under {core}: {skips[core]}" for core, outcome in outcomes.items()]
    if any(outcome in (STALE, FAILED) for outcome in outcomes.values()):
        verdict, code = "FAILED", 1
    elif all(outcome == SKIPPED for outcome in outcomes.values()):
        verdict, code = "SKIPPED", SKIPPED
    else:
        verdict, code = "passed", 0
    print(f"check_fresh: {name}: {verdict}: {'; '.join(parts)}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
