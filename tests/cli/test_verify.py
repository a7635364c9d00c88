#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity keygen` and `parity verify` against an independent implementation
of the signature format: Python's `cryptography` (Ed25519) and `hashlib` (SHA-256) sign a
report directory as DESIGN's report.sig says; parity must accept it and name every change.

Environment (set by CTest): PARITY_BIN.
"""
import base64
import hashlib
import json
import os
import stat
import subprocess
import tempfile
import unittest

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization

BIN = os.environ["PARITY_BIN"]


def run(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)


def b64(data):
    return base64.b64encode(data).decode()


def sign(directory, private_key):
    """Writes DIR/report.sig the way the format says, with Python's libraries."""
    files = []
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, directory).replace(os.sep, "/")
            if rel == "report.sig":
                continue
            with open(path, "rb") as f:
                data = f.read()
            files.append({"path": rel, "bytes": len(data),
                          "sha256": hashlib.sha256(data).hexdigest()})
    files.sort(key=lambda f: f["path"].encode())
    manifest = "parity-signature v1\n" + "".join(
        "%s %d %s\n" % (f["sha256"], f["bytes"], f["path"]) for f in files)
    public = private_key.public_key().public_bytes(serialization.Encoding.Raw,
                                                   serialization.PublicFormat.Raw)
    doc = {"format": "parity-signature", "version": 1, "algorithm": "ed25519",
           "key_id": hashlib.sha256(public).hexdigest()[:16], "public_key": b64(public),
           "files": files, "signature": b64(private_key.sign(manifest.encode()))}
    with open(os.path.join(directory, "report.sig"), "w") as f:
        json.dump(doc, f)
    return public


class Verify(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.out = os.path.join(self.dir, "out")
        os.makedirs(os.path.join(self.out, "data"))
        for name, text in (("report.json", '{"verdict": "pass"}'), ("report.html", "<html/>"),
                           ("junit.xml", "<testsuite/>"), ("data/t.jsonl", "{}\n")):
            with open(os.path.join(self.out, name), "w") as f:
                f.write(text)

    def tearDown(self):
        self.tmp.cleanup()

    def write_pub(self, public, path):
        with open(path, "w") as f:
            json.dump({"format": "parity-public-key", "version": 1, "algorithm": "ed25519",
                       "key_id": hashlib.sha256(public).hexdigest()[:16],
                       "public_key": b64(public)}, f)

    def test_a_python_signed_report_verifies_and_every_change_is_named(self):
        public = sign(self.out, Ed25519PrivateKey.generate())
        pub = os.path.join(self.dir, "k.pub")
        self.write_pub(public, pub)
        r = run("verify", self.out, "--pubkey", pub, "--json", os.path.join(self.dir, "v.json"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(self.dir, "v.json")) as f:
            doc = json.load(f)
        self.assertTrue(doc["verified"] and doc["key_trusted"])
        self.assertEqual(doc["key_id"], hashlib.sha256(public).hexdigest()[:16])
        for name in ("report.json", "report.html", "junit.xml", "data/t.jsonl"):
            path = os.path.join(self.out, name)
            with open(path, "rb") as f:
                original = f.read()
            edited = bytearray(original)
            edited[len(edited) // 2] ^= 0x20
            with open(path, "wb") as f:
                f.write(bytes(edited))
            r = run("verify", self.out, "--pubkey", pub)
            self.assertEqual(r.returncode, 1, name)
            self.assertIn("CHANGED  " + name, r.stdout)
            with open(path, "wb") as f:
                f.write(original)
        with open(os.path.join(self.out, "data", "new.txt"), "w") as f:
            f.write("x")
        r = run("verify", self.out)
        self.assertEqual(r.returncode, 1)
        self.assertIn("ADDED    data/new.txt", r.stdout)
        os.remove(os.path.join(self.out, "data", "new.txt"))
        os.remove(os.path.join(self.out, "junit.xml"))
        r = run("verify", self.out)
        self.assertEqual(r.returncode, 1)
        self.assertIn("MISSING  junit.xml", r.stdout)

    def test_another_key_or_an_edited_signature_fails(self):
        sign(self.out, Ed25519PrivateKey.generate())
        other = os.path.join(self.dir, "other.pub")
        self.write_pub(Ed25519PrivateKey.generate().public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw), other)
        r = run("verify", self.out, "--pubkey", other)
        self.assertEqual(r.returncode, 1)
        self.assertIn("BAD SIGNATURE", r.stdout)
        # A report changed and report.sig's hash for it rewritten: the signature gives it away.
        path = os.path.join(self.out, "report.json")
        with open(path, "w") as f:
            f.write('{"verdict": "FAIL"}')
        sig_path = os.path.join(self.out, "report.sig")
        with open(sig_path) as f:
            sig = json.load(f)
        for entry in sig["files"]:
            if entry["path"] == "report.json":
                with open(path, "rb") as f:
                    entry["sha256"] = hashlib.sha256(f.read()).hexdigest()
        with open(sig_path, "w") as f:
            json.dump(sig, f)
        r = run("verify", self.out)
        self.assertEqual(r.returncode, 1)
        self.assertNotIn("CHANGED", r.stdout)
        self.assertIn("BAD SIGNATURE", r.stdout)

    def test_keygen_writes_a_key_python_can_sign_with(self):
        key = os.path.join(self.dir, "key")
        r = run("keygen", "-o", key)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(stat.S_IMODE(os.stat(key).st_mode), 0o600)
        with open(key) as f:
            secret = json.load(f)
        self.assertEqual(secret["format"], "parity-secret-key")
        raw = base64.b64decode(secret["secret_key"])
        self.assertEqual(len(raw), 64)  # libsodium's seed || public key
        private = Ed25519PrivateKey.from_private_bytes(raw[:32])
        public = private.public_key().public_bytes(serialization.Encoding.Raw,
                                                   serialization.PublicFormat.Raw)
        self.assertEqual(public, raw[32:])
        with open(key + ".pub") as f:
            pub = json.load(f)
        self.assertEqual(base64.b64decode(pub["public_key"]), public)
        self.assertEqual(pub["key_id"], hashlib.sha256(public).hexdigest()[:16])
        sign(self.out, private)
        r = run("verify", self.out, "--pubkey", key + ".pub")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = run("keygen", "-o", key)
        self.assertEqual(r.returncode, 2)
        self.assertIn("never overwritten", r.stderr)

    def test_bad_input(self):
        r = run("verify", self.out)
        self.assertEqual(r.returncode, 2)
        self.assertTrue(r.stderr.startswith("parity: error: "), r.stderr)
        self.assertIn("report.sig", r.stderr)
        with open(os.path.join(self.out, "report.sig"), "w") as f:
            f.write("{not json")
        r = run("verify", self.out)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not a JSON object", r.stderr)


if __name__ == "__main__":
    unittest.main()
