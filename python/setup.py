# SPDX-License-Identifier: Apache-2.0
"""Packs parity_dump, parity_workloads and parity with its compiled extension, taken from an
existing CMake build tree (never compiled here): $PARITY_BUILD_DIR, else ../build beside this
directory. A configured tree whose extension is not built yet gets that one target built. The
version is the CLI's (the tree's python/parity/_version.py). setuptools' own build/ and
egg-info go under the build tree, so nothing is written into python/."""

import glob
import os
import re
import shutil
import subprocess
import sysconfig

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


def _fail(message):
    raise SystemExit(f"parity setup.py: {message}")


def build_dir():
    given = os.environ.get("PARITY_BUILD_DIR")
    tree = os.path.abspath(given or os.path.join(HERE, "..", "build"))
    if not os.path.isfile(os.path.join(tree, "CMakeCache.txt")):
        _fail(f"no CMake build tree at {tree} ("
              + ("$PARITY_BUILD_DIR" if given else "no $PARITY_BUILD_DIR given, and ../build")
              + " is not one): build parity first (./scripts/build release) and set "
              "PARITY_BUILD_DIR to its build directory")
    return tree


def extension(tree):
    package = os.path.join(tree, "python", "parity")
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    found = glob.glob(os.path.join(package, "_parity*.so"))
    if not found:
        cache = open(os.path.join(tree, "CMakeCache.txt")).read()
        if re.search(r"^PARITY_PYTHON_BINDINGS:BOOL=OFF$", cache, re.M):
            _fail(f"{tree} is configured with PARITY_PYTHON_BINDINGS=OFF (a sanitizer build?)")
        subprocess.check_call(["cmake", "--build", tree, "--target", "_parity"])
        found = glob.glob(os.path.join(package, "_parity*.so"))
    matching = [f for f in found if f.endswith(suffix)]
    if not matching:
        _fail(f"{package} holds no extension for this interpreter ({suffix}): "
              f"{', '.join(map(os.path.basename, found)) or 'none'}")
    return matching[0]


def version(tree):
    path = os.path.join(tree, "python", "parity", "_version.py")
    try:
        text = open(path).read()
    except OSError:
        _fail(f"{path} is missing: reconfigure the build tree (cmake --preset release)")
    return re.search(r'__version__ = "([^"]+)"', text).group(1)


TREE = build_dir()
SCRATCH = os.path.join(TREE, "python-setuptools")
os.makedirs(SCRATCH, exist_ok=True)


class BuildPy(build_py):
    """Adds the prebuilt extension and the version module to the parity package."""

    def run(self):
        super().run()
        target = os.path.join(self.build_lib, "parity")
        os.makedirs(target, exist_ok=True)
        so = extension(TREE)
        shutil.copy2(so, os.path.join(target, os.path.basename(so)))
        shutil.copy2(os.path.join(TREE, "python", "parity", "_version.py"), target)


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True  # a platform wheel: parity holds a compiled extension


setup(
    version=version(TREE),
    cmdclass={"build_py": BuildPy},
    distclass=BinaryDistribution,
    options={"build": {"build_base": os.path.join(SCRATCH, "build")},
             "egg_info": {"egg_base": SCRATCH}},
)
