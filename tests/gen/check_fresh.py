#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that checked-in reference data is what its generator writes now: runs the generator
into a temporary directory and compares every file it writes with the checked-in one, byte for
byte (JSON files: the same document, non-integer numbers within 1e-9 relative, as library
versions move their last bits), naming each stale or missing file.

    check_fresh.py NAME      one generator below (CTest: testdata.fresh.NAME)
    check_fresh.py --list    the names

Exits 0 (fresh), 1 (stale, missing, or the generator failed), or 77 (skipped: the generator
itself exited 77, saying what it needs that is not here).
"""
import difflib
import filecmp
import json
import math
import os
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
# libraries a generator calls (scipy's kstwo.sf moved by 1.2e-12 relative at one point): equal
# within this relative error, far inside the tests' own tolerances on such values.
# Everything else (integers, strings, the structure, every other file) must be identical.
JSON_REL_TOL = 1e-9
# Generators whose float32 results come from numpy's CPU-dispatched SIMD loops (a matmul, a
# float32 mean), which round differently on CPUs with other vector units: tests/gen/
# gen_stress.py's losses moved by 1.2e-7 relative (one float32 ulp) between the previous
# development machine and this one. Equal within this, far inside the 1e-4 the test uses.
FLOAT32_REL_TOL = {"stress": 1e-6}


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


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    name = argv[1]
    if name == "--list":
        print("\n".join(sorted([*GENERATORS, *SELF_CHECKING])))
        return 0
    if name in SELF_CHECKING:
        script, *args = SELF_CHECKING[name]
        p = subprocess.run([sys.executable, os.path.join(ROOT, script), *args])
        if p.returncode not in (0, SKIPPED):
            print(f"check_fresh: STALE: {script} {' '.join(args)} exited {p.returncode}: the "
                  f"checked-in files differ from what it writes now (run it without --check)")
            return 1
        if p.returncode == 0:
            print(f"check_fresh: fresh: {script} {' '.join(args)} passed")
        return p.returncode
    if name not in GENERATORS:
        print(f"check_fresh: unknown generator '{name}' (--list)", file=sys.stderr)
        return 2
    script, checked_in, *one_file = GENERATORS[name]
    rel_tol = FLOAT32_REL_TOL.get(name, JSON_REL_TOL)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, *one_file)
        p = subprocess.run([sys.executable, os.path.join(ROOT, script), out])
        if p.returncode == SKIPPED:
            print(f"check_fresh: SKIPPED: {script} could not run here (its reason above)")
            return SKIPPED
        if p.returncode != 0:
            print(f"check_fresh: FAILED: {script} exited {p.returncode}")
            return 1
        files = sorted(generated_files(tmp))
        if not files:
            print(f"check_fresh: FAILED: {script} wrote nothing")
            return 1
        problems = []
        for rel in files:
            ours = os.path.join(ROOT, checked_in, rel)
            shown = os.path.join(checked_in, rel)
            if not os.path.exists(ours):
                problems.append(f"MISSING: {shown} (written by {script}, not checked in)")
            elif (not filecmp.cmp(os.path.join(tmp, rel), ours, shallow=False)
                  and not same_json(ours, os.path.join(tmp, rel), rel_tol)):
                problems.append(f"STALE: {shown} differs from what {script} writes now"
                                + first_differences(ours, os.path.join(tmp, rel),
                                                    rel_tol=rel_tol))
    for problem in problems:
        print(f"check_fresh: {problem}")
    if problems:
        print(f"check_fresh: regenerate with: {script} {os.path.join(checked_in, *one_file)}")
        return 1
    print(f"check_fresh: fresh: the {len(files)} file{'s' if len(files) != 1 else ''} "
          f"{script} writes {'are' if len(files) != 1 else 'is'} checked in unchanged under "
          f"{checked_in}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
