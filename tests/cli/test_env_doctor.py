#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity env`, `parity env diff` and `parity doctor`: the fingerprint of
recorded trees (tests/fixtures), the knowledge base's verdicts on environments whose settings
its sourced entries rule on (docs/ENV.md), exit codes and messages.

The knowledge base itself is read here with PyYAML, independently of parity's loader, and
the expectations come from it and from the entries' sources, not from parity's output.

Environment (set by CTest): PARITY_BIN, PARITY_SOURCE_DIR.
"""
import json
import os
import subprocess
import tempfile
import unittest

import yaml

BIN = os.environ["PARITY_BIN"]
SOURCE = os.environ["PARITY_SOURCE_DIR"]
FIXTURES = os.path.join(SOURCE, "tests", "fixtures")

# Variables the fingerprint picks up from the machine running the tests; cleared so that the
# environments below are exactly what each test sets.
CLEAN = {k: v for k, v in os.environ.items()
         if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "ASAN_OPTIONS", "UBSAN_OPTIONS",
                  "LSAN_OPTIONS")}


def run(*args, env=None):
    e = dict(CLEAN)
    e.update(env or {})
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120, env=e)


def load_kb():
    with open(os.path.join(SOURCE, "data", "knowledge", "settings.yaml")) as f:
        settings = yaml.safe_load(f)["settings"]
    with open(os.path.join(SOURCE, "data", "knowledge", "symptoms.yaml")) as f:
        symptoms = yaml.safe_load(f)["symptoms"]
    return {s["name"]: s for s in settings}, symptoms


class Env(unittest.TestCase):
    def test_fingerprint_of_a_recorded_mi250_node(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "env.json")
            r = run("env", "--fs-root", os.path.join(FIXTURES, "monitor", "mi250-node"),
                    "--no-devices", "--json", out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                doc = json.load(f)
        self.assertEqual(doc["format"], "parity-env")
        self.assertEqual(doc["version"], 1)
        host = doc["host"]
        self.assertEqual(host["os"]["distribution"], "Ubuntu 22.04.4 LTS")
        self.assertEqual(sorted(g["pci_bus_id"] for g in host["gpus"]),
                         ["0000:29:00.0", "0000:2e:00.0", "0000:c1:00.0", "0000:c6:00.0"])
        self.assertEqual({g["gfx_target"] for g in host["gpus"]}, {"gfx90a"})
        self.assertEqual(host["libraries"]["rocm"]["version"], "6.2.0-66")
        self.assertIn("gfx90a", r.stdout)

    def test_diff_puts_what_changes_numerics_first(self):
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "a.json"), os.path.join(tmp, "b.json")
            tree = os.path.join(FIXTURES, "env", "h100-node")
            self.assertEqual(run("env", "--fs-root", tree, "--no-devices", "--json", a,
                                 env={"NVIDIA_TF32_OVERRIDE": "0"}).returncode, 0)
            self.assertEqual(run("env", "--fs-root", tree, "--no-devices", "--json", b,
                                 env={"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "1"}).returncode, 0)
            # Nothing that matters differs between a fingerprint and itself.
            same = run("env", "diff", a, a)
            self.assertEqual(same.returncode, 0, same.stdout + same.stderr)
            r = run("env", "diff", a, b, "--json", "-")
            self.assertEqual(r.returncode, 1, r.stderr)
            doc = json.loads(r.stdout)
        self.assertEqual(doc["format"], "parity-env-diff")
        diffs = doc["differences"]
        keys = [d["key"] for d in diffs]
        self.assertIn("host.environment.NVIDIA_TF32_OVERRIDE", keys)
        self.assertIn("host.environment.TORCH_ALLOW_TF32_CUBLAS_OVERRIDE", keys)
        relevant = [d for d in diffs if d["relevant"]]
        self.assertEqual(diffs[:len(relevant)], relevant)  # relevant ones first
        settings, _ = load_kb()
        for d in relevant:
            name = d["key"].rsplit(".", 1)[-1]
            if name in settings:
                self.assertIn(settings[name]["sources"][0]["ref"], d["note"])

    def test_bad_fingerprints_are_exit_2_naming_file_and_key(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "bad.json")
            with open(bad, "w") as f:
                f.write('{"format":"parity-env","version":1,"host":{"environment":{"X":1}}}')
            for args in (["env", "diff", bad, bad], ["doctor", "--env", bad]):
                r = run(*args)
                self.assertEqual(r.returncode, 2, args)
                self.assertIn("parity: error: " + bad, r.stderr)
                self.assertIn("host.environment.X", r.stderr)
            with open(bad, "w") as f:
                f.write('{"format":"parity-env","version":1,"host":')
            r = run("doctor", "--env", bad)
            self.assertEqual(r.returncode, 2)
            self.assertIn("not valid JSON", r.stderr)
            r = run("env", "diff", bad, os.path.join(tmp, "missing.json"))
            self.assertEqual(r.returncode, 2)


class Doctor(unittest.TestCase):
    def doctor(self, env, *extra):
        r = run("doctor", "--json", "-", *extra, env=env)
        self.assertIn(r.returncode, (0, 1), r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["format"], "parity-doctor")
        self.assertEqual(doc["version"], 1)
        return r.returncode, doc["findings"]

    def test_the_fact_checks_invented_and_misattributed_settings_are_errors(self):
        settings, _ = load_kb()
        for name, s in settings.items():
            if s["kind"] != "env" or s["status"] == "real":
                continue
            code, findings = self.doctor({name: "1"})
            self.assertEqual(code, 1, name)
            mine = [f for f in findings if f["setting"] == name and f["severity"] == "error"]
            self.assertEqual(len(mine), 1, name)
            self.assertEqual(mine[0]["rule"], "kb." + s["status"])
            self.assertEqual(mine[0]["value"], "1")
            self.assertEqual(mine[0]["sources"], s["sources"])

    def test_hsa_override_gfx_version_with_a_gfx_name(self):
        code, findings = self.doctor({"HSA_OVERRIDE_GFX_VERSION": "gfx90a"})
        self.assertEqual(code, 1)
        self.assertTrue(any(f["setting"] == "HSA_OVERRIDE_GFX_VERSION" and
                            f["severity"] == "error" for f in findings))

    def test_miopen_find_mode_3_is_hybrid_not_exhaustive(self):
        code, findings = self.doctor({"MIOPEN_FIND_MODE": "3"})
        self.assertEqual(code, 0)  # a valid value: no error
        text = " ".join(f["message"] for f in findings if f["setting"] == "MIOPEN_FIND_MODE")
        self.assertIn("HYBRID", text.upper())
        code, findings = self.doctor({"MIOPEN_FIND_MODE": "7"})
        self.assertEqual(code, 1)
        self.assertTrue(any(f["rule"] == "kb.invalid-value" for f in findings))

    def test_a_clean_environment_has_no_error(self):
        code, findings = self.doctor({})
        self.assertEqual(code, 0)
        self.assertFalse([f for f in findings if f["severity"] == "error"])

    def test_a_recorded_fingerprint_is_checked_not_this_machine(self):
        with tempfile.TemporaryDirectory() as tmp:
            fp = os.path.join(tmp, "env.json")
            r = run("env", "--fs-root", os.path.join(FIXTURES, "env", "h100-node"),
                    "--no-devices", "--json", fp, env={"HCCL_OVER_OFI": "1"})
            self.assertEqual(r.returncode, 0, r.stderr)
            code, findings = self.doctor({}, "--env", fp)
        self.assertEqual(code, 1)
        self.assertTrue(any(f["rule"] == "kb.other-vendor" for f in findings))

    def test_rules_lists_every_entry_with_its_sources(self):
        settings, symptoms = load_kb()
        r = run("doctor", "--rules", "--json", "-")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["format"], "parity-doctor-rules")
        self.assertEqual(doc["version"], 1)
        self.assertEqual({x["name"] for x in doc["rules"]}, set(settings))
        for x in doc["rules"]:
            self.assertEqual(x["sources"], settings[x["name"]]["sources"])
            self.assertEqual(x["status"], settings[x["name"]]["status"])
            self.assertEqual(x["stack"], settings[x["name"]]["stack"])
        self.assertEqual(len(doc["symptoms"]), len(symptoms))

    def test_symptom_auc_lower(self):
        r = run("doctor", "--symptom", "auc lower", env={"NVIDIA_TF32_OVERRIDE": "0"})
        self.assertEqual(r.returncode, 0, r.stderr)
        _, symptoms = load_kb()
        auc = [s for s in symptoms if "auc" in s["keywords"]]
        self.assertTrue(auc)
        self.assertIn(auc[0]["title"], r.stdout)
        for check in auc[0]["checks"]:
            self.assertIn(check["run"], r.stdout)

    def test_unknown_symptom_is_exit_2_with_the_list(self):
        r = run("doctor", "--symptom", "qwertyuiop")
        self.assertEqual(r.returncode, 2)
        self.assertIn("parity: error:", r.stderr)
        self.assertIn("matches no symptom", r.stderr)

    def test_a_malformed_knowledge_base_is_exit_2_naming_file_and_key(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(SOURCE, "data", "knowledge", "symptoms.yaml")) as f:
                symptoms = f.read()
            with open(os.path.join(tmp, "symptoms.yaml"), "w") as f:
                f.write(symptoms)
            with open(os.path.join(tmp, "settings.yaml"), "w") as f:
                f.write("format: parity-knowledge-settings\nversion: 1\nsettings:\n"
                        "  - name: X\n    kind: env\n    stack: ROCm\n    status: invented\n")
            r = run("doctor", "--knowledge", tmp)
            self.assertEqual(r.returncode, 2)
            self.assertIn(os.path.join(tmp, "settings.yaml"), r.stderr)
            self.assertIn("status", r.stderr)
            # A source without its quote, or a malformed version range: file, entry, line.
            entry = ("  - name: X\n    kind: env\n    stack: ROCm\n    status: real\n"
                     "    summary: s\n    effect: {performance: p}\n    advice: a\n")
            for extra, needle in (
                    ('    sources: [{ref: "https://example.org/x"}]\n', "needs 'quote'"),
                    ('    sources: [{ref: "https://example.org/x", quote: q}]\n'
                     '    versions: {component: torch, since: "2.5", until: "2.0"}\n',
                     "must be before 'until'")):
                with open(os.path.join(tmp, "settings.yaml"), "w") as f:
                    f.write("format: parity-knowledge-settings\nversion: 1\nsettings:\n"
                            + entry + extra)
                r = run("doctor", "--knowledge", tmp)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(os.path.join(tmp, "settings.yaml") + ": settings[0] (X): line ",
                              r.stderr)
                self.assertIn(needle, r.stderr)

    def test_every_source_quotes_what_it_relies_on(self):
        settings, symptoms = load_kb()
        for item in list(settings.values()) + symptoms:
            self.assertTrue(item["sources"], item.get("name", item.get("id")))
            for src in item["sources"]:
                self.assertEqual(set(src), {"ref", "quote"}, src)
                self.assertTrue(src["quote"].strip(), src)

    def test_the_tf32_override_statement_follows_the_recorded_torch(self):
        # Up to torch 1.13 the variable forces TF32; from 2.0 it sets only the initial default.
        with tempfile.TemporaryDirectory() as tmp:
            rules = {}
            for version in ("1.13.0a0+gitunknown", "2.1.0", None):
                path = os.path.join(tmp, "env.json")
                host = {"environment": {"TORCH_ALLOW_TF32_CUBLAS_OVERRIDE": "1"},
                        "gpus": [{"vendor": "NVIDIA"}]}
                if version:
                    host["python"] = {"torch": {"version": version, "cuda": "12.1"}}
                with open(path, "w") as f:
                    json.dump({"format": "parity-env", "version": 1, "host": host}, f)
                r = run("doctor", "--env", path, "--json", "-")
                self.assertIn(r.returncode, (0, 1), r.stderr)
                found = {f["rule"]: f for f in json.loads(r.stdout)["findings"]}
                rules[version] = found
            self.assertIn("tf32-cublas-override", rules["1.13.0a0+gitunknown"])
            self.assertNotIn("tf32-cublas-override-initial", rules["1.13.0a0+gitunknown"])
            self.assertIn("tf32-cublas-override-initial", rules["2.1.0"])
            self.assertNotIn("tf32-cublas-override", rules["2.1.0"])
            # Unknown version: both, each labelled with its range.
            self.assertEqual(rules[None]["tf32-cublas-override"]["versions"], "torch < 2.0")
            self.assertTrue(rules[None]["tf32-cublas-override-initial"]["message"]
                            .startswith("[torch >= 2.0] "))


if __name__ == "__main__":
    unittest.main()
