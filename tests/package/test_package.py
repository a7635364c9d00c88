# SPDX-License-Identifier: Apache-2.0
"""scripts/package end to end: the Debian packages are built from this build tree, their
control fields say what a fresh Debian 12 without a compiler needs (shared libraries' packages
and python3, never a -dev package, a compiler or a vendor GPU runtime), and the unpacked files
work on their own: parity --version and devices (plugins from the package's /usr/lib/parity),
the demo plan at level 1 from /usr/share/parity/examples, the Python packages with the
extension, the man pages and bash completion."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

BIN = os.environ["PARITY_BIN"]
BUILD = os.path.dirname(os.path.abspath(BIN))
SOURCE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PACKAGE = os.path.join(SOURCE, "scripts", "package")
# What must never be a hard dependency: build tools, headers, vendor GPU runtimes.
TOOLS = {"gcc", "g++", "cpp", "clang", "cmake", "make", "ninja-build", "build-essential"}
VENDOR = ("nvidia", "cuda", "cublas", "amdhip", "hsa-runtime", "rocm", "hipcc")


def forbidden(name):
    return (name.endswith("-dev") or name in TOOLS or name.split("-")[0] in TOOLS
            or any(v in name for v in VENDOR))


def run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)


def field(deb, name):
    return run(["dpkg-deb", "-f", deb, name]).stdout.strip()


def names(depends):
    """Package names in a Depends-style field (alternatives and versions dropped)."""
    out = []
    for clause in filter(None, (c.strip() for c in depends.split(","))):
        for alternative in clause.split("|"):
            out.append(alternative.split("(")[0].strip())
    return out


class Package(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        for tool in ("dpkg-deb", "dpkg-shlibdeps", "help2man"):
            if shutil.which(tool) is None:
                raise unittest.SkipTest(f"{tool} is missing (scripts/install-deps installs it)")
        cls.tmp = tempfile.mkdtemp(prefix="parity-package-")
        r = run([PACKAGE, "--no-build"], env=dict(os.environ, PARITY_BUILD_DIR=BUILD))
        if r.returncode != 0:
            raise AssertionError(f"scripts/package failed ({r.returncode}):\n{r.stdout}{r.stderr}")
        cls.version = run([BIN, "--version"]).stdout.split()[1]
        cls.debs = {}
        for line in r.stdout.splitlines():
            path = line.split(" (")[0]
            cls.debs[field(path, "Package")] = path
        cls.root = os.path.join(cls.tmp, "root")
        for deb in cls.debs.values():
            subprocess.run(["dpkg-deb", "-x", deb, cls.root], check=True)
        cls.bin = os.path.join(cls.root, "usr", "bin", "parity")
        cls.site = os.path.join(cls.root, "usr", "lib", "python3", "dist-packages")
        # The unpacked tree as an installation: its dist-packages where /usr's would be.
        cls.env = dict(os.environ, PYTHONPATH=cls.site, PATH=os.path.dirname(cls.bin) + ":"
                       + os.environ.get("PATH", ""))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_names_and_versions(self):
        self.assertIn("parity", self.debs)
        for package, deb in self.debs.items():
            self.assertEqual(os.path.basename(deb),
                             f"{package}_{self.version}_{field(deb, 'Architecture')}.deb")
            self.assertEqual(field(deb, "Version"), self.version)

    def test_depends_are_runtime_packages(self):
        depends = field(self.debs["parity"], "Depends")
        listed = names(depends)
        for name in ("libsqlite3-0", "libsodium23", "libyaml-cpp0.7", "libzip4", "python3",
                     "python3-numpy"):
            self.assertIn(name, listed, depends)
        for name in listed:
            self.assertFalse(forbidden(name), f"{name} in {depends}")
            # Every name is a package of this Debian release (installed here: the build links it).
            status = run(["dpkg-query", "-W", "-f", "${Status}", name]).stdout
            self.assertIn("install ok installed", status, name)
        self.assertIn("python3-torch", names(field(self.debs["parity"], "Recommends")))

    def test_plugins_have_vendor_runtimes_as_suggests_only(self):
        plugins = [p for p in self.debs if p != "parity"]
        self.assertTrue(plugins, "no plugin package: this build has neither cuda nor hip")
        for package in plugins:
            deb = self.debs[package]
            self.assertEqual(field(deb, "Depends"), f"parity (= {self.version})")
            self.assertTrue(field(deb, "Suggests"), package)
            files = run(["dpkg-deb", "-c", deb]).stdout
            self.assertIn(f"./usr/lib/parity/libparity_backend_{package[len('parity-'):]}.so",
                          files)

    def test_version_and_devices_from_the_package(self):
        r = run([self.bin, "--version"], env=self.env)
        self.assertEqual(r.stdout.strip(), f"parity {self.version}")
        r = run([self.bin, "devices", "--json", "-"], env=self.env)
        self.assertIn(r.returncode, (0, 3), r.stderr)
        doc = json.loads(r.stdout)
        text = json.dumps(doc)
        self.assertIn("cpu", text)
        plugin_dir = os.path.join(self.root, "usr", "bin", "..", "lib", "parity")
        self.assertIn(plugin_dir, doc["plugin_directories"])
        for package in self.debs:
            if package != "parity":
                self.assertIn(f"{plugin_dir}/libparity_backend_{package[len('parity-'):]}.so",
                              text)

    def test_demo_plan_at_level_1(self):
        plan = os.path.join(self.root, "usr", "share", "parity", "examples", "plan.yaml")
        bundle = os.path.join(self.tmp, "bundle")
        r = run([self.bin, "collect", plan, "-o", bundle, "--level", "1", "--json", "-"],
                env=self.env, cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stdout[-2000:] + r.stderr[-2000:])
        stages = {s["name"]: s["status"] for s in json.loads(r.stdout)["stages"]}
        for stage in ("env", "bench", "dump", "quality"):
            self.assertEqual(stages.get(stage), "passed", stages)
        # The dump came from the packaged parity_dump, not a checkout's.
        r = run([sys.executable, "-c",
                 "import parity_dump, parity_workloads, parity; "
                 "print(parity_dump.__file__); print(parity_workloads.__file__); "
                 "print(parity.__file__); print(parity.__version__)"],
                env=self.env, cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.split()
        for path in lines[:3]:
            self.assertTrue(path.startswith(self.site), path)
        self.assertEqual(lines[3], self.version)

    def test_extension_computes(self):
        code = ("import numpy as np, parity; a = np.arange(1000, dtype=np.float32); "
                "r = parity.compare(a, a + 1).to_dict(); print(r['tensors'][0]['max_abs'])")
        r = run([sys.executable, "-c", code], env=self.env, cwd=self.tmp)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(float(r.stdout), 1.0)

    def test_man_pages(self):
        man = os.path.join(self.root, "usr", "share", "man", "man1")
        commands = [line.split()[0] for line in
                    run([BIN, "--help"]).stdout.split("Commands:")[1].split("\n\n")[0]
                    .splitlines() if line.startswith("  ")]
        self.assertIn("collect", commands)
        for command in ["parity"] + [f"parity-{c}" for c in commands]:
            self.assertTrue(os.path.exists(os.path.join(man, f"{command}.1.gz")), command)
        page = run(["man", "-l", os.path.join(man, "parity-collect.1.gz")],
                   env=dict(os.environ, MANWIDTH="100"))
        if page.returncode != 0:
            self.skipTest(f"man cannot render here: {page.stderr.strip()}")
        self.assertIn("PARITY-COLLECT(1)", page.stdout)
        self.assertIn("--level", page.stdout)
        self.assertNotIn(BUILD, page.stdout)

    def test_bash_completion(self):
        completion = os.path.join(self.root, "usr", "share", "bash-completion", "completions",
                                  "parity")
        script = (f"source {completion}; "
                  "COMP_WORDS=(parity col); COMP_CWORD=1; _parity; echo \"${COMPREPLY[*]}\"; "
                  "COMP_WORDS=(parity collect --lev); COMP_CWORD=2; _parity; "
                  "echo \"${COMPREPLY[*]}\"; "
                  "COMP_WORDS=(parity fleet rep); COMP_CWORD=2; _parity; echo \"${COMPREPLY[*]}\"")
        r = run(["bash", "-c", script], env=self.env)
        self.assertEqual(r.stdout.splitlines(), ["collect", "--level", "report"], r.stderr)


class BadInput(unittest.TestCase):
    def test_not_a_build_tree(self):
        with tempfile.TemporaryDirectory() as empty:
            r = run([PACKAGE, "--no-build"], env=dict(os.environ, PARITY_BUILD_DIR=empty))
        self.assertEqual(r.returncode, 2)
        self.assertIn("is not a release build tree", r.stderr)


if __name__ == "__main__":
    unittest.main()
