#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`parity serve` refusing what it must: methods other than GET and HEAD, paths out of the
roots, bodies, requests without the token; and the attacks of a page the user visits and of a
hostile client, each of which went through before (issue 51): DNS rebinding (a Host header naming another site),
pages under the roots running with the dashboard's origin, symbolic links inside dumps and
report directories leading out of the roots, a name that reads like loopback but resolves
elsewhere, and request heads that are too long, too many or too slow (cpp-httplib 0.11 reads
them all before any check). The store and the roots are test_serve.py's fixture.

Environment (set by CTest): PARITY_BIN, PARITY_STORE_GEN.
"""
import http.client
import json
import os
import select
import shutil
import socket
import subprocess
import tempfile
import unittest

import test_serve
from test_serve import BIN, GENERATED, Fixture, Serve, run

OUTSIDE = "leads outside the dump directory"


def tearDownModule():
    test_serve.tearDownModule()


def parse(data):
    """An HTTP answer's status, headers (lower-case names) and body."""
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and lines[0].startswith("HTTP/") else 0
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


def read_all(sock):
    """Everything the server sends until it closes (a reset ends it too)."""
    chunks = []
    while True:
        try:
            data = sock.recv(65536)
        except (ConnectionResetError, socket.timeout):
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks)


def raw(port, data, timeout=60):
    """Sends `data` on a new connection and reads the answer until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        return parse(read_all(s))


def get(port, path, host, headers=""):
    host_line = "" if host is None else "Host: %s\r\n" % host
    return raw(port, ("GET %s HTTP/1.1\r\n%s%sConnection: close\r\n\r\n"
                      % (path, host_line, headers)).encode())


def error_of(body):
    doc = json.loads(body)
    assert doc["format"] == "parity-serve-error", doc
    return doc["error"]


class Security(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fixture.get()
        cls.s = cls.f.serve

    def refused(self, path, statuses, **kwargs):
        status, _, body = self.s.request(path, **kwargs)
        self.assertIn(status, statuses, "%s: %d %s" % (path, status, body[:200]))
        self.assertNotIn(b"outside the root", body)
        return status

    def test_only_get_and_head(self):
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            self.refused("/api/runs", (405,), method=method, body=b"{}")
        for path in ("/api/runs", "/files/0/reports/signed/report.json"):
            status, _, body = self.s.request(path, method="HEAD")
            self.assertEqual((status, body), (200, b""), path)

    def test_nothing_outside_the_roots(self):
        for path in ("/files/0/../secret.txt", "/files/0/reports/../../secret.txt",
                     "/files/0/%2e%2e/secret.txt", "/files/0/%2E%2E%2Fsecret.txt",
                     "/files/0/reports%2fsigned%2freport.json", "/files/0/reports%5csigned",
                     "/files/0//etc/passwd", "/files/0/" + self.f.secret,
                     "/files/0/reports/secret-link.txt", "/files/0/reports/dir-link/secret.txt",
                     "/files/0/reports/signed/report.json%00.html", "/files/1/reports",
                     "/files/99/x", "/../../etc/passwd"):
            self.refused(path, (400, 403, 404))
        # A link that leads out is refused as such (and logged).
        for path in ("/files/0/reports/secret-link.txt", "/files/0/reports/dir-link/secret.txt"):
            self.refused(path, (403,))
        self.refused("/api/explain?dir_a=/etc&dir_b=/etc", (404,))

    def test_bounded_requests(self):
        self.refused("/api/runs?q=" + "x" * 10000, (400, 414))
        self.refused("/api/runs?q=" + "x" * 2000, (400,))
        headers = {"X-H%d" % i: "v" for i in range(100)}
        self.refused("/api/runs", (400, 431), headers=headers)
        self.refused("/api/runs", (413, 400), body=b"x" * 100)
        self.refused("/api/runs", (413, 400, 405), method="POST", body=b"x" * (1 << 17))

    def test_token_required_off_loopback(self):
        r = run("serve", "--db", self.f.db, "--listen", "0.0.0.0:0", timeout=30)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertIn("--token", r.stderr)
        self.assertNotIn("http://", r.stdout)

    def test_bearer_token(self):
        token_file = os.path.join(self.f.dir, "token")
        with open(token_file, "w") as f:
            f.write("t0ken-for-tests\n")
        for args in (["--token", "t0ken-for-tests"], ["--token-file", token_file]):
            s = Serve("--db", self.f.db, *args)
            try:
                for headers in ({}, {"Authorization": "Bearer wrong"},
                                {"Authorization": "Bearer t0ken-for-test"},
                                {"Authorization": "t0ken-for-tests"},
                                {"Authorization": "Basic t0ken-for-tests"}):
                    for path in ("/", "/api/runs", "/files/0/x", "/nothing"):
                        status, _, _ = s.request(path, headers=headers)
                        self.assertEqual(status, 401, (args, headers, path))
                doc = s.json("/api/runs?limit=1",
                             headers={"Authorization": "Bearer t0ken-for-tests"})
                self.assertEqual(doc["total"], GENERATED + 2)
            finally:
                s.stop()

    def test_store_is_not_written(self):
        before = os.stat(self.f.db).st_mtime_ns
        self.s.json("/api/runs")
        self.s.json("/api/trend?metric=gemm.fp32")
        self.assertEqual(os.stat(self.f.db).st_mtime_ns, before)


class HostHeader(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fixture.get()
        cls.port = cls.f.serve.port

    def test_loopback_names_with_the_port_are_answered(self):
        for host in ("127.0.0.1:%d", "localhost:%d", "LocalHost:%d", "[::1]:%d"):
            for path in ("/", "/api/runs?limit=1", "/files/0/reports/signed/report.json"):
                status, _, body = get(self.port, path, host % self.port)
                self.assertEqual(status, 200, (host, path, body[:200]))

    def test_rebinding_is_refused(self):
        p = self.port
        for host in ("rebind.attacker.example:%d" % p, "127.0.0.1.nip.io:%d" % p,
                     "127.0.0.1:%d" % (p + 1 if p < 65535 else p - 1), "127.0.0.1", "", None):
            for path in ("/", "/api/runs", "/files/0/reports/signed/report.json"):
                status, _, body = get(self.port, path, host)
                self.assertEqual(status, 421, (host, path))
                self.assertIn("Host header", error_of(body))
                self.assertNotIn(b"parity-runs", body)

    def test_allow_host_only_with_a_token(self):
        r = run("serve", "--db", self.f.db, "--listen", "127.0.0.1:0", "--allow-host",
                "parity.example", timeout=30)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertTrue(r.stderr.startswith("parity: error: --allow-host"), r.stderr)
        for bad in ("a/b", "x.example:80", "", "[zz::1]"):
            r = run("serve", "--db", self.f.db, "--listen", "127.0.0.1:0", "--token", "t",
                    "--allow-host", bad, timeout=30)
            self.assertEqual(r.returncode, 2, (bad, r.stdout + r.stderr))
            self.assertIn("--allow-host", r.stderr)
        s = Serve("--db", self.f.db, "--token", "t0ken", "--allow-host", "Parity.Example")
        try:
            bearer = "Authorization: Bearer t0ken\r\n"
            self.assertEqual(get(s.port, "/api/runs?limit=1", "parity.example:%d" % s.port,
                                 bearer)[0], 200)
            self.assertEqual(get(s.port, "/api/runs?limit=1", "parity.example:%d" % s.port)[0],
                             401)
            self.assertEqual(get(s.port, "/api/runs?limit=1", "other.example:%d" % s.port,
                                 bearer)[0], 421)
        finally:
            s.stop()


class PagesUnderTheRoots(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fixture.get()
        cls.port = cls.f.serve.port
        planted = os.path.join(cls.f.root, "planted")
        os.makedirs(os.path.join(planted, "fake-report"), exist_ok=True)
        page = "<html><script>fetch('/api/runs').then(r => r.text())</script></html>"
        for name in ("evil.html", "evil.htm", "evil.svg", "evil.xml", "fake-report/report.html"):
            with open(os.path.join(planted, name), "w") as f:
                f.write(page)
        with open(os.path.join(planted, "data.json"), "w") as f:
            f.write("{}")

    def headers(self, rel):
        status, headers, _ = get(self.port, "/files/0/" + rel, "127.0.0.1:%d" % self.port)
        self.assertEqual(status, 200, rel)
        return headers

    def test_reports_run_sandboxed(self):
        for rel in ("reports/signed/report.html", "planted/fake-report/report.html"):
            h = self.headers(rel)
            self.assertEqual(h.get("content-security-policy"), "sandbox allow-scripts", rel)
            self.assertNotIn("content-disposition", h)

    def test_other_pages_are_downloads(self):
        for rel in ("planted/evil.html", "planted/evil.htm", "planted/evil.svg",
                    "planted/evil.xml"):
            h = self.headers(rel)
            self.assertEqual(h.get("content-security-policy"), "sandbox", rel)
            self.assertTrue(h.get("content-disposition", "").startswith("attachment"), (rel, h))
        h = self.headers("planted/data.json")
        self.assertEqual(h.get("content-security-policy"), "sandbox")
        self.assertNotIn("content-disposition", h)


class SymbolicLinksOut(unittest.TestCase):
    """A root of its own, with links out of it in a dump and a report directory."""

    @classmethod
    def setUpClass(cls):
        cls.f = Fixture.get()
        cls.tmp = tempfile.TemporaryDirectory(prefix="parity-serve-links-")
        d = cls.tmp.name
        cls.root = os.path.join(d, "root")
        cls.outside = os.path.join(d, "outside")
        os.makedirs(cls.outside)
        dumps = {x["stage"]: x for x in cls.f.serve.json(
            "/api/compare?a=%d&b=%d" % (cls.f.ids["base"], cls.f.ids["cand"]))["dumps"]}
        a, b = dumps["dump"]["a"], dumps["dump"]["b"]
        for name, src in (("good", a), ("good2", b), ("evil", b)):
            shutil.copytree(src, os.path.join(cls.root, name))
        # Every tensor file of `evil` is a link to the same bytes outside the root.
        evil = os.path.join(cls.root, "evil")
        cls.linked = 0
        for dirpath, _, names in os.walk(evil):
            for name in names:
                if name in ("manifest.json", "records.jsonl"):
                    continue
                path = os.path.join(dirpath, name)
                target = os.path.join(cls.outside, "t%d-%s" % (cls.linked, name))
                shutil.move(path, target)
                os.symlink(target, path)
                cls.linked += 1
        # A report directory whose report.json is a link to a report outside.
        linked = os.path.join(cls.root, "reports", "linked")
        os.makedirs(linked)
        shutil.copy(os.path.join(cls.f.root, "reports", "signed", "report.json"),
                    os.path.join(cls.outside, "report.json"))
        os.symlink(os.path.join(cls.outside, "report.json"), os.path.join(linked, "report.json"))
        with open(os.path.join(cls.outside, "secret.txt"), "w") as f:
            f.write("the secret outside\n")
        os.symlink(os.path.join(cls.outside, "secret.txt"), os.path.join(cls.root, "link.txt"))
        cls.serve = Serve("--db", cls.f.db, "--root", cls.root)

    @classmethod
    def tearDownClass(cls):
        cls.serve.stop()
        cls.tmp.cleanup()

    def test_links_out_are_403_and_logged(self):
        self.assertGreater(self.linked, 0)
        s = self.serve
        ok = s.json("/api/explain?dir_a=good&dir_b=good2&limit=1")
        self.assertGreater(ok["total"], 0)
        status, _, body = s.request("/api/explain?dir_a=good&dir_b=evil&limit=1")
        self.assertEqual(status, 403, body[:300])
        self.assertIn(OUTSIDE, error_of(body))
        self.assertNotIn(self.outside.encode(), body)
        status, _, body = s.request("/files/0/link.txt")
        self.assertEqual(status, 403, body[:300])
        self.assertNotIn(b"the secret outside", body)
        reports = {r["path"]: r for r in s.json("/api/reports")["reports"]}
        linked = reports["reports/linked"]
        self.assertFalse(linked["readable"])
        self.assertIn("symbolic link out of the root", linked["problem"])
        self.assertNotIn("verdict", linked)
        # The server's log names what was refused and where it led.
        s.proc.terminate()
        _, log = s.proc.communicate(timeout=30)
        self.assertIn("parity serve: refused /files/0/link.txt", log)
        self.assertIn("parity serve: refused /api/explain", log)
        self.assertIn(os.path.join(self.outside, "report.json"), log)

    def test_the_cli_refuses_the_dump_too(self):
        r = run("explain", os.path.join(self.root, "good"), os.path.join(self.root, "evil"),
                timeout=120)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertTrue(r.stderr.startswith("parity: error: "), r.stderr)
        self.assertIn(OUTSIDE, r.stderr)


class LoopbackByAddress(unittest.TestCase):
    """A name that reads like loopback, mapped in /etc/hosts (a private mount namespace) to
    this machine's network address: serving it needs a token. Needs root and unshare."""

    def setUp(self):
        if os.geteuid() != 0 or shutil.which("unshare") is None:
            self.skipTest("needs root and unshare(1) for a private /etc/hosts")
        out = subprocess.run(["ip", "-o", "-4", "addr", "show", "scope", "global"],
                             capture_output=True, text=True)
        words = out.stdout.split()
        addresses = [words[i + 1].split("/")[0] for i, w in enumerate(words) if w == "inet"]
        if not addresses:
            self.skipTest("this machine has no non-loopback IPv4 address")
        self.address = addresses[0]
        self.f = Fixture.get()
        self.tmp = tempfile.TemporaryDirectory(prefix="parity-serve-hosts-")

    def tearDown(self):
        self.tmp.cleanup()

    def serve_as(self, address):
        hosts = os.path.join(self.tmp.name, "hosts")
        with open(hosts, "w") as f:
            f.write("127.0.0.1 localhost\n%s 127.evil.example\n" % address)
        return subprocess.Popen(
            ["unshare", "-m", "sh", "-c",
             'mount --bind "$1" /etc/hosts && exec "$2" serve --db "$3" --listen '
             '127.evil.example:0', "sh", hosts, BIN, self.f.db],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def test_a_name_resolving_off_loopback_needs_a_token(self):
        p = self.serve_as(self.address)
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            self.fail("serve listened on 127.evil.example -> %s without a token: %s"
                      % (self.address, out))
        self.assertEqual(p.returncode, 2, out + err)
        self.assertIn("needs --token", err)
        # The same name mapped to a loopback address is served.
        p = self.serve_as("127.0.0.5")
        try:
            line = p.stdout.readline()
            self.assertTrue(line.startswith("parity serve: http://127.evil.example:"), line)
        finally:
            p.terminate()
            p.communicate(timeout=30)


class HeadLimits(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.f = Fixture.get()
        cls.port = cls.f.serve.port
        cls.host = "Host: 127.0.0.1:%d\r\n" % cls.port

    def test_oversized_heads_are_refused_before_parsing(self):
        cases = [
            ("GET /api/runs?q=%s HTTP/1.1\r\n%s\r\n" % ("x" * 9000, self.host), 414,
             "request line is longer than 8192"),
            ("GET /api/runs HTTP/1.1\r\n%s%s\r\n"
             % (self.host, "".join("X-H%d: v\r\n" % i for i in range(100))), 431,
             "more than 64 header fields"),
            ("GET /api/runs HTTP/1.1\r\n%s%s\r\n"
             % (self.host, "".join("X-H%d: %s\r\n" % (i, "v" * 7000) for i in range(5))), 431,
             "larger than 32768 bytes"),
        ]
        for request, status, message in cases:
            got, headers, body = raw(self.port, request.encode())
            self.assertEqual(got, status, (message, body[:200]))
            self.assertIn(message, error_of(body))
            self.assertEqual(headers.get("connection"), "close")

    def test_an_endless_line_is_cut_off(self):
        sent = 0
        chunk = b"x" * (1 << 20)
        with socket.create_connection(("127.0.0.1", self.port), timeout=60) as s:
            s.sendall(b"GET /")
            try:
                while sent < (256 << 20):
                    s.sendall(chunk)
                    sent += len(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass
        # The server stopped reading within a few socket buffers, not 256 MiB.
        self.assertLess(sent, 64 << 20)

    def test_keep_alive_and_pipelining_still_work(self):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            for _ in range(3):
                conn.request("GET", "/api/runs?limit=1")
                response = conn.getresponse()
                self.assertEqual(response.status, 200)
                response.read()
        finally:
            conn.close()
        two = ("GET /api/runs?limit=1 HTTP/1.1\r\n%s\r\n"
               "GET /api/runs?limit=2 HTTP/1.1\r\n%sConnection: close\r\n\r\n"
               % (self.host, self.host))
        with socket.create_connection(("127.0.0.1", self.port), timeout=60) as s:
            s.sendall(two.encode())
            data = read_all(s)
        self.assertEqual(data.count(b"HTTP/1.1 200 OK"), 2, data[:300])


class SlowClients(unittest.TestCase):
    """A server of its own with a 2-second head deadline."""

    @classmethod
    def setUpClass(cls):
        cls.f = Fixture.get()
        cls.serve = Serve("--db", cls.f.db, "--head-timeout", "2")
        cls.port = cls.serve.port

    @classmethod
    def tearDownClass(cls):
        cls.serve.stop()

    def test_a_slow_head_is_answered_408(self):
        with socket.create_connection(("127.0.0.1", self.port), timeout=60) as s:
            s.sendall(b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:%d" % self.port)
            trickled = 0
            # A byte every 0.1 s for up to 600 bytes: far past the deadline.
            while trickled < 600:
                readable, _, _ = select.select([s], [], [], 0.1)
                if readable:
                    break
                try:
                    s.sendall(b"X" if trickled % 20 else b"\r\nX-Slow: ")
                except (BrokenPipeError, ConnectionResetError):
                    break
                trickled += 1
            status, _, body = parse(read_all(s))
        self.assertEqual(status, 408, body[:200])
        self.assertLess(trickled, 600)
        self.assertIn("did not arrive within 2000 ms", error_of(body))

    def test_slow_heads_are_bounded_in_count(self):
        sockets = []
        try:
            for _ in range(20):
                s = socket.create_connection(("127.0.0.1", self.port), timeout=60)
                s.sendall(b"GET / HTTP/1.1\r\n")
                sockets.append(s)
            # A whole head is not one of the waiting: answered while they wait.
            status, _, _ = get(self.port, "/api/runs?limit=1", "127.0.0.1:%d" % self.port)
            self.assertEqual(status, 200)
            statuses = sorted(parse(read_all(s))[0] for s in sockets)
        finally:
            for s in sockets:
                s.close()
        self.assertEqual(statuses, [408] * 16 + [503] * 4)


if __name__ == "__main__":
    unittest.main()
