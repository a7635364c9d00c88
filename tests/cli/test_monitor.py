#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of `parity monitor`: samples of recorded sysfs/procfs trees
(tests/fixtures/monitor, whose expected.json files were written from the files, not from parity),
the fake NVML and ROCm SMI libraries, rules and alerts on a tree changed while the monitor runs,
the exporter checked by `promtool check metrics` and scraped by a real Prometheus server.

Environment (set by CTest): PARITY_BIN, PARITY_FIXTURES (tests/fixtures/monitor),
PARITY_TEST_PLUGINS (the fake vendor libraries).
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request

from sanitized import EXTERNAL_SKIP  # tests/cli/sanitized.py

BIN = os.environ["PARITY_BIN"]
FIXTURES = os.environ["PARITY_FIXTURES"]
PLUGINS = os.environ["PARITY_TEST_PLUGINS"]
NO_VENDOR_LIBS = {"PARITY_NVML_LIBRARY": "/nonexistent/libnvidia-ml.so.1",
                  "PARITY_ROCM_SMI_LIBRARY": "/nonexistent/librocm_smi64.so.1"}


def env_with(extra=None):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PARITY_NVML", "PARITY_ROCM_SMI", "PARITY_FAKE"))}
    env.update(NO_VENDOR_LIBS)
    env.update(extra or {})
    return env


def parity(*args, env=None, timeout=60):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout,
                          env=env_with(env))


def roots(tree):
    base = os.path.join(FIXTURES, tree) if not os.path.isabs(tree) else tree
    return ["--sysfs-root", os.path.join(base, "sys"), "--procfs-root", os.path.join(base, "proc")]


def expected(tree):
    with open(os.path.join(FIXTURES, tree, "expected.json")) as f:
        return json.load(f)


def as_map(metrics, key_name="name"):
    return {(m[key_name], tuple(sorted(m["labels"].items()))): m["value"] for m in metrics}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url, method="GET"):
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


class Once(unittest.TestCase):
    def once(self, tree, sources="amdgpu,host", env=None):
        r = parity("monitor", "--once", "--json", "-", "--source", sources, *roots(tree), env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout)

    def check_tree(self, tree):
        doc = self.once(tree)
        self.assertEqual(doc["format"], "parity-monitor")
        self.assertEqual(doc["kind"], "sample")
        want = expected(tree)
        self.assertEqual(len(doc["devices"]), len(want["gpus"]))
        for i, (got, exp) in enumerate(zip(doc["devices"], want["gpus"])):
            self.assertEqual(got["device"], i)
            self.assertEqual(got["source"], "amdgpu")
            self.assertEqual(got["pci_bus_id"], exp["pci_bus_id"])
            self.assertEqual(got["model"], exp["model"])
            self.assertEqual(got.get("uuid"), exp["uuid"])
            self.assertEqual(as_map(got["metrics"]), as_map(exp["readings"], "metric"))
        host = as_map(doc["host"]["metrics"])
        # The --once sample has rates (a first read 0.25 s before): on a recorded tree nothing
        # moved, so CPU utilisation is absent (0/0) and RAPL power is 0 W.
        for (name, labels), value in list(host.items()):
            if name == "host_power_watts":
                self.assertEqual(value, 0.0)
                del host[(name, labels)]
        self.assertEqual(host, as_map(want["host"]["readings"], "metric"))

    def test_mi250_node(self):
        self.check_tree("mi250-node")

    def test_mi300x(self):
        self.check_tree("mi300x")

    def test_consumer(self):
        self.check_tree("consumer")

    def test_broken_files_are_absent(self):
        self.check_tree("broken")

    def test_text(self):
        r = parity("monitor", "--once", "--source", "amdgpu,host", *roots("mi250-node"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("device 3 (amdgpu): AMD", r.stdout)
        self.assertIn("gpu_temperature_celsius", r.stdout)
        self.assertIn("source amdgpu: up", r.stdout)

    def test_down_sources_are_reported_and_the_rest_go_on(self):
        r = parity("monitor", "--once", "--json", "-", *roots("mi300x"))
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        states = {s["name"]: s for s in doc["sources"]}
        self.assertEqual(list(states), ["nvml", "rocm-smi", "amdgpu", "host"])
        self.assertFalse(states["nvml"]["up"])
        self.assertIn("/nonexistent/libnvidia-ml.so.1", states["nvml"]["reason"])
        self.assertFalse(states["rocm-smi"]["up"])
        self.assertTrue(states["amdgpu"]["up"])
        self.assertTrue(states["host"]["up"])
        self.assertEqual(len(doc["devices"]), len(expected("mi300x")["gpus"]))

    def test_real_rocm_smi_library_without_a_gpu(self):
        # Debian's librocm_smi64 (installed by scripts/install-deps) on a machine without an
        # AMD GPU: down with its reason, never a crash.
        if not os.path.exists("/usr/lib/librocm_smi64.so.1"):
            self.skipTest("/usr/lib/librocm_smi64.so.1 is not installed")
        r = parity("monitor", "--once", "--json", "-", "--source", "rocm-smi,host",
                   *roots("host-rapl-edac"),
                   env={"PARITY_ROCM_SMI_LIBRARY": "/usr/lib/librocm_smi64.so.1"})
        self.assertEqual(r.returncode, 0, r.stderr)
        states = {s["name"]: s for s in json.loads(r.stdout)["sources"]}
        self.assertFalse(states["rocm-smi"]["up"])
        self.assertTrue(states["rocm-smi"]["reason"])

    def test_nothing_can_run(self):
        r = parity("monitor", "--once", "--source", "nvml,amdgpu", *roots("host-rapl-edac"))
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("parity: error: no telemetry source can run here", r.stderr)
        self.assertIn("nvml: ", r.stderr)
        self.assertIn("amdgpu: no AMD GPU", r.stderr)


class VendorLibraries(unittest.TestCase):
    """nvml and rocm-smi through the fakes of their C ABIs (tests/monitor/fake_*.cc), with the
    amdgpu and host sources on a recorded tree: device numbering across sources, and rocm-smi
    preferred to sysfs for a GPU both see."""

    def test_all_sources_together(self):
        with tempfile.TemporaryDirectory() as tmp:
            nvml = os.path.join(tmp, "nvml.json")
            with open(nvml, "w") as f:
                json.dump({"devices": [
                    {"name": "NVIDIA H200", "uuid": "GPU-aaaa", "pci_bus_id": "00000000:18:00.0",
                     "temperature_gpu": 61, "power_usage_mw": 412500,
                     "clocks_event_reasons": 0x40, "xid_events": [[]]},
                    {"name": "NVIDIA H200", "uuid": "GPU-bbbb", "pci_bus_id": "00000000:2A:00.0",
                     "temperature_gpu": 47, "memory": {"total": 150754820096, "used": 1 << 30}}]},
                    f)
            rsmi = os.path.join(tmp, "rsmi.json")
            with open(rsmi, "w") as f:
                # The mi300x tree's second AMD card, 0000:26:00.0: rocm-smi answers junction
                # temperature (not what sysfs says) and power, nothing else.
                json.dump({"devices": [{"name": "AMD Instinct MI300X", "unique_id": "0x1234",
                                        "bdfid": "0x2600",
                                        "temperature": {"junction": {"current": 70500}},
                                        "power_average": 555000000}]}, f)
            env = {"PARITY_NVML_LIBRARY": os.path.join(PLUGINS, "libfake_nvml.so"),
                   "PARITY_FAKE_NVML": nvml,
                   "PARITY_ROCM_SMI_LIBRARY": os.path.join(PLUGINS, "libfake_rocm_smi.so"),
                   "PARITY_FAKE_ROCM_SMI": rsmi}
            r = parity("monitor", "--once", "--json", "-", *roots("mi300x"), env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            doc = json.loads(r.stdout)
        self.assertTrue(all(s["up"] for s in doc["sources"]), doc["sources"])
        devices = doc["devices"]
        self.assertEqual([(d["device"], d["source"]) for d in devices],
                         [(0, "nvml"), (1, "nvml"), (2, "rocm-smi"), (3, "amdgpu")])
        self.assertEqual(devices[0]["pci_bus_id"], "0000:18:00.0")
        m0 = as_map(devices[0]["metrics"])
        self.assertEqual(m0[("gpu_temperature_celsius", (("sensor", "junction"),))], 61)
        self.assertEqual(m0[("gpu_power_watts", ())], 412.5)
        self.assertEqual(m0[("gpu_throttle_active", (("reason", "hw_thermal_slowdown"),))], 1)
        self.assertEqual(m0[("gpu_throttle_active", (("reason", "sw_power_cap"),))], 0)
        self.assertNotIn(("gpu_power_watts", ()), as_map(devices[1]["metrics"]))
        # The GPU both AMD sources see: rocm-smi's values where it answers, sysfs's elsewhere.
        merged = as_map(devices[2]["metrics"])
        self.assertEqual(devices[2]["pci_bus_id"], "0000:26:00.0")
        self.assertEqual(merged[("gpu_temperature_celsius", (("sensor", "junction"),))], 70.5)
        self.assertEqual(merged[("gpu_power_watts", ())], 555.0)
        self.assertEqual(merged[("gpu_temperature_celsius", (("sensor", "memory"),))], 51.0)
        self.assertEqual(merged[("gpu_memory_used_bytes", ())], 191033950208.0)
        self.assertEqual(devices[3]["pci_bus_id"], "0000:05:00.0")

    def test_incomplete_library_is_down_with_the_symbol(self):
        env = {"PARITY_NVML_LIBRARY": os.path.join(PLUGINS, "libfake_nvml_incomplete.so"),
               "PARITY_ROCM_SMI_LIBRARY": os.path.join(PLUGINS, "libfake_rocm_smi_incomplete.so")}
        r = parity("monitor", "--once", "--json", "-", "--source", "nvml,rocm-smi,host",
                   *roots("host-rapl-edac"), env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        states = {s["name"]: s for s in json.loads(r.stdout)["sources"]}
        self.assertIn("lacks nvmlDeviceGetHandleByIndex", states["nvml"]["reason"])
        self.assertIn("lacks rsmi_num_monitor_devices", states["rocm-smi"]["reason"])
        self.assertTrue(states["host"]["up"])
        r = parity("monitor", "--once", "--source", "nvml,rocm-smi", env=env)
        self.assertEqual(r.returncode, 3, r.stderr)


class BadInput(unittest.TestCase):
    def test_usage(self):
        for args, needle in (
                (["--interval", "0"], "--interval"),
                (["--interval", "abc"], "--interval"),
                (["--duration", "-1"], "--duration"),
                (["--source", "nvm"], "did you mean 'nvml'"),
                (["--serve", "9400"], "HOST:PORT"),
                (["--serve", "127.0.0.1:99999"], "0..65535"),
                (["--alert-exec", "notify 'unclosed"], "--alert-exec: the command has an unterminated '"),
                (["--record", "/nonexistent/dir/x.jsonl"], "/nonexistent/dir/x.jsonl"),
                (["--check"], "--rules"),
                (["--rules", "/nonexistent/rules.yaml"], "/nonexistent/rules.yaml")):
            with self.subTest(args=args):
                source = [] if "--source" in args else ["--source", "host"]
                r = parity("monitor", "--once", *source, *args, *roots("host-rapl-edac"))
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertTrue(r.stderr.startswith("parity: error:"), r.stderr)
                self.assertIn(needle, r.stderr)

    def test_bad_rules(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, text, needle in (
                    ("unknown_metric.yaml",
                     "- {name: hot, metric: gpu_temprature_celsius, op: '>', value: 85}\n",
                     "hot"),
                    ("bad_op.yaml",
                     "- {name: hot, metric: gpu_temperature_celsius, op: '=>', value: 85}\n",
                     "hot"),
                    ("not_yaml.yaml", "- {name: [\n", "not_yaml.yaml")):
                path = os.path.join(tmp, name)
                with open(path, "w") as f:
                    f.write(text)
                with self.subTest(name=name):
                    r = parity("monitor", "--rules", path, "--check")
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertIn(path, r.stderr)
                    self.assertIn(needle, r.stderr)

    def test_default_rules_round_trip(self):
        r = parity("monitor", "--print-default-rules")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("gpu_temperature_celsius", r.stdout)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "defaults.yaml")
            with open(path, "w") as f:
                f.write(r.stdout)
            c = parity("monitor", "--rules", path, "--check")
            self.assertEqual(c.returncode, 0, c.stderr)
            self.assertIn("valid", c.stdout)


class Running(unittest.TestCase):
    """The monitor sampling a copy of a tree that the test changes under it."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.tree = os.path.join(self.tmp, "tree")
        shutil.copytree(os.path.join(FIXTURES, "mi300x"), self.tree)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def card_file(self, device, name):
        """A file of the monitor's device `device`: the AMD cards in card-number order (the
        tree's card0 is the BMC's VGA controller)."""
        drm = os.path.join(self.tree, "sys/class/drm")
        cards = []
        for entry in os.listdir(drm):
            vendor = os.path.join(drm, entry, "device", "vendor")
            if entry[4:].isdigit() and os.path.exists(vendor):
                with open(vendor) as f:
                    if f.read().strip() == "0x1002":
                        cards.append(int(entry[4:]))
        card = sorted(cards)[device]
        return os.path.join(drm, f"card{card}", "device", name)

    def hwmon_file(self, card, name):
        base = self.card_file(card, "hwmon")
        return os.path.join(base, sorted(os.listdir(base))[0], name)

    def write(self, path, text):
        with open(path, "w") as f:
            f.write(text)

    @staticmethod
    def recorded(record):
        """The complete lines of the monitor's --record file so far (flushed every sample; a
        last line without its newline is still being written)."""
        try:
            with open(record) as f:
                text = f.read()
        except FileNotFoundError:
            return []
        return [json.loads(line) for line in text.split("\n")[:-1] if line]

    def wait_for(self, proc, what, condition, deadline=60.0):
        """Polls condition() until it holds, and fails when the monitor exits first or the
        (generous) deadline passes: no fixed sleep that a loaded machine can outrun."""
        end = time.monotonic() + deadline
        while True:
            got = condition()
            if got:
                return got
            if proc.poll() is not None:
                out, err = proc.communicate()
                self.fail(f"the monitor exited ({proc.returncode}) before {what}: {err}")
            self.assertLess(time.monotonic(), end, f"not within {deadline} s: {what}")
            time.sleep(0.02)

    def samples_and_alerts(self, record):
        lines = self.recorded(record)
        return ([x for x in lines if x["kind"] == "sample"],
                [x for x in lines if x["kind"] == "alert" and not x["resolved"]])

    @staticmethod
    def junction(sample, device=0):
        return [m["value"] for m in sample["devices"][device]["metrics"]
                if m["name"] == "gpu_temperature_celsius" and m["labels"]["sensor"] == "junction"]

    def test_threshold_for_n_samples_fires_once_per_episode(self):
        rules = os.path.join(self.tmp, "rules.yaml")
        self.write(rules, "- name: hot\n  metric: gpu_temperature_celsius\n"
                          "  labels: {sensor: junction, device: '0'}\n"
                          "  op: '>'\n  value: 90\n  for: 2\n  severity: fatal\n")
        record = os.path.join(self.tmp, "record.jsonl")
        got = os.path.join(self.tmp, "alert.json")
        hook = f"{sys.executable} -c \"import sys; open('{got}', 'a').write(sys.stdin.read())\""
        # Each change waits for what the monitor recorded; --duration only has to outlast
        # them on a loaded machine (the exit status, 1, needs the run to end by itself).
        proc = subprocess.Popen(
            [BIN, "monitor", "--interval", "0.1", "--duration", "8", "--source", "amdgpu",
             "--rules", rules, "--record", record, "--alert-exec", hook, "--json",
             os.path.join(self.tmp, "summary.json"), "-q", *roots(self.tree)],
            env=env_with(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        temp = self.hwmon_file(0, "temp2_input")
        self.wait_for(proc, "3 cool samples recorded",
                      lambda: len(self.samples_and_alerts(record)[0]) >= 3)
        self.write(temp, "95000\n")   # hot: an episode starts
        self.wait_for(proc, "the first alert",
                      lambda: len(self.samples_and_alerts(record)[1]) >= 1)
        self.write(temp, "50000\n")   # cool
        self.wait_for(proc, "a cool sample after the first alert",
                      lambda: self.junction(self.samples_and_alerts(record)[0][-1]) == [50.0])
        self.write(temp, "96000\n")   # hot again: a second episode
        self.wait_for(proc, "the second alert",
                      lambda: len(self.samples_and_alerts(record)[1]) >= 2)
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 1, err)
        with open(record) as f:
            lines = [json.loads(line) for line in f]
        samples = [x for x in lines if x["kind"] == "sample"]
        alerts = [x for x in lines if x["kind"] == "alert" and not x["resolved"]]
        self.assertGreaterEqual(len(samples), 20)
        self.assertEqual(len(alerts), 2, alerts)
        self.assertEqual({a["rule"] for a in alerts}, {"hot"})
        self.assertEqual(alerts[0]["severity"], "fatal")
        self.assertEqual(alerts[0]["labels"]["device"], "0")
        self.assertEqual(alerts[0]["value"], 95.0)
        # Each alert fired on the second hot sample, not the first.
        for alert in alerts:
            before = [s for s in samples if s["time"] <= alert["time"]]
            temps = [m["value"] for m in before[-2]["devices"][0]["metrics"]
                     if m["name"] == "gpu_temperature_celsius"
                     and m["labels"]["sensor"] == "junction"]
            self.assertGreater(temps[0], 90)
        with open(got) as f:
            hooked = [json.loads(line) for line in f if line.strip()]
        self.assertEqual(len(hooked), 2)
        self.assertEqual(hooked[0]["rule"], "hot")
        with open(os.path.join(self.tmp, "summary.json")) as f:
            summary = json.load(f)
        self.assertEqual(summary["kind"], "summary")
        self.assertEqual(summary["alerts_total"], {"hot": 2})
        series = {(s["name"], s["labels"].get("device"), s["labels"].get("sensor")): s
                  for s in summary["series"]}
        junction = series[("gpu_temperature_celsius", "0", "junction")]
        self.assertEqual(junction["max"], 96.0)
        self.assertEqual(junction["min"], 50.0)

    def test_new_uncorrectable_error_fires_the_default_rule(self):
        record = os.path.join(self.tmp, "record.jsonl")
        # --duration only has to outlast the waits below (the exit status needs the run to
        # end by itself).
        proc = subprocess.Popen(
            [BIN, "monitor", "--interval", "0.1", "--duration", "5", "--source", "amdgpu",
             "--record", record, *roots(self.tree)],
            env=env_with(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The error is new only after a sample without it.
        self.wait_for(proc, "2 samples recorded",
                      lambda: len(self.samples_and_alerts(record)[0]) >= 2)
        self.write(self.card_file(1, "ras/umc_err_count"), "ue: 1\nce: 0\n")
        self.wait_for(proc, "the uncorrectable_ecc alert",
                      lambda: any(a["rule"] == "uncorrectable_ecc"
                                  for a in self.samples_and_alerts(record)[1]))
        out, err = proc.communicate(timeout=60)
        self.assertEqual(proc.returncode, 1, err)
        self.assertIn("parity: alert: [fatal]", err)
        with open(record) as f:
            alerts = [json.loads(line) for line in f if '"kind":"alert"' in line]
        # (The tree's GPUs draw more than the default 450 W: board_power fires too.)
        fired = [a for a in alerts if not a["resolved"] and a["rule"] == "uncorrectable_ecc"]
        self.assertEqual(len(fired), 1, alerts)
        self.assertEqual(fired[0]["labels"]["device"], "1")
        self.assertEqual(fired[0]["labels"]["severity"], "uncorrectable")
        self.assertEqual(fired[0]["labels"]["block"], "umc")
        # One line per device per sample on stdout while not serving.
        self.assertIn("dev 1 AMD Instinct MI300X", out)

    def test_interrupt_writes_the_summary_and_exits_130(self):
        summary = os.path.join(self.tmp, "summary.json")
        record = os.path.join(self.tmp, "record.jsonl")
        proc = subprocess.Popen(
            [BIN, "monitor", "--interval", "0.1", "--source", "amdgpu,host", "--json", summary,
             "--record", record, "-q", *roots(self.tree)], env=env_with(),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.wait_for(proc, "3 samples recorded",
                      lambda: len(self.samples_and_alerts(record)[0]) >= 3)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        self.assertEqual(proc.returncode, 130, err)
        with open(summary) as f:
            doc = json.load(f)
        self.assertTrue(doc["interrupted"])
        self.assertGreaterEqual(doc["samples"], 3)


class Exporter(unittest.TestCase):
    def start(self, tree, extra=()):
        proc = subprocess.Popen(
            [BIN, "monitor", "--serve", "127.0.0.1:0", "--interval", "0.2", "--source",
             "amdgpu,host", *extra, *roots(tree)],
            env=env_with(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = proc.stderr.readline()
        self.assertIn("parity: serving http://127.0.0.1:", line)
        port = int(line.split("127.0.0.1:")[1].split("/")[0])
        self.addCleanup(self.stop, proc)
        base = f"http://127.0.0.1:{port}"
        # Until the first sample is published (the tests then assert on it), or a deadline.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status, body, _ = http(base + "/metrics")
            if "parity_gpu_" in body:
                break
            time.sleep(0.05)
        return proc, port

    def stop(self, proc):
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()

    def test_routes_and_promtool(self):
        proc, port = self.start("mi250-node")
        base = f"http://127.0.0.1:{port}"
        status, body, headers = http(base + "/metrics")
        self.assertEqual(status, 200)
        self.assertIn("text/plain; version=0.0.4", headers["Content-Type"])
        self.assertIn("# TYPE parity_gpu_ecc_errors_total counter", body)
        self.assertIn('parity_source_up{source="amdgpu"} 1', body)
        self.assertIn("parity_alerts_total{rule=", body)
        want = expected("mi250-node")["gpus"][0]
        temp = [r for r in want["readings"] if r["metric"] == "gpu_temperature_celsius"][0]
        needle = (f'parity_gpu_temperature_celsius{{device="0",model="{want["model"]}",'
                  f'sensor="{temp["labels"]["sensor"]}"')
        self.assertIn(needle, body)
        check = subprocess.run(["promtool", "check", "metrics"], input=body, capture_output=True,
                               text=True, timeout=60)
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        status, body, _ = http(base + "/healthz")
        self.assertEqual((status, body), (200, "ok\n"))
        self.assertEqual(http(base + "/")[0], 404)
        self.assertEqual(http(base + "/api/v1/query")[0], 404)
        self.assertEqual(http(base + "/metrics", method="POST")[0], 405)
        self.assertEqual(http(base + "/metrics", method="DELETE")[0], 405)
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)
        self.assertEqual(proc.returncode, 130)

    def test_port_in_use_is_unavailable(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen()
            port = s.getsockname()[1]
            r = parity("monitor", "--serve", f"127.0.0.1:{port}", "--once", "--source", "host",
                       *roots("host-rapl-edac"))
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("can't bind", r.stderr)

    @EXTERNAL_SKIP
    def test_scraped_by_prometheus(self):
        if not shutil.which("prometheus"):
            self.fail("prometheus is not installed: scripts/install-deps installs it")
        proc, port = self.start("mi250-node")
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp, True)
        config = os.path.join(tmp, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: parity\n    static_configs:\n"
                    f"      - targets: ['127.0.0.1:{port}']\n")
        prom_port = free_port()
        prom = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp}/data",
             f"--web.listen-address=127.0.0.1:{prom_port}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addCleanup(self.stop_prometheus, prom)
        query = (f"http://127.0.0.1:{prom_port}/api/v1/query?query=" +
                 urllib.parse.quote("parity_gpu_temperature_celsius"))
        result = []
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                status, body, _ = http(query)
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
                continue
            if status == 200:
                result = json.loads(body)["data"]["result"]
                if result:
                    break
            time.sleep(0.5)
        self.assertTrue(result, "Prometheus never returned parity_gpu_temperature_celsius")
        want = {}
        for i, gpu in enumerate(expected("mi250-node")["gpus"]):
            for r in gpu["readings"]:
                if r["metric"] == "gpu_temperature_celsius":
                    want[(str(i), r["labels"]["sensor"])] = r["value"]
        got = {(m["metric"]["device"], m["metric"]["sensor"]): float(m["value"][1])
               for m in result}
        self.assertEqual(got, want)
        for m in result:
            self.assertEqual(m["metric"]["job"], "parity")
            self.assertEqual(m["metric"]["vendor"], "AMD")
        up = http(f"http://127.0.0.1:{prom_port}/api/v1/query?query=" +
                  urllib.parse.quote('parity_source_up{source="amdgpu"}'))[1]
        self.assertEqual(json.loads(up)["data"]["result"][0]["value"][1], "1")

    def stop_prometheus(self, prom):
        prom.terminate()
        try:
            prom.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            prom.kill()
            prom.communicate()


@EXTERNAL_SKIP
class Deploy(unittest.TestCase):
    """deploy/: the Prometheus files pass promtool, and the dashboard queries only metrics the
    monitor exports."""
    DEPLOY = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "deploy")

    def promtool(self, *args):
        r = subprocess.run(["promtool", *args], capture_output=True, text=True, timeout=120,
                           cwd=os.path.join(self.DEPLOY, "prometheus"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_prometheus_files(self):
        self.promtool("check", "rules", "parity-alerts.yml")
        self.promtool("test", "rules", "parity-alerts.test.yml")
        self.promtool("check", "config", "--syntax-only", "prometheus.yml")

    def test_dashboard_metrics_exist(self):
        with open(os.path.join(self.DEPLOY, "grafana", "parity-dashboard.json")) as f:
            text = f.read()
        json.loads(text)
        names = set(re.findall(r"\bparity_[a-z_]+", text))
        self.assertIn("parity_gpu_temperature_celsius", names)
        with open(os.path.join(os.path.dirname(self.DEPLOY), "src", "monitor", "metrics.cc")) as f:
            catalogue = {"parity_" + m for m in re.findall(r'\{"((?:gpu|host)_[a-z_]+)"', f.read())}
        catalogue |= {"parity_alerts_total", "parity_source_up", "parity_monitor_samples_total",
                      "parity_monitor_last_sample_timestamp_seconds"}
        unknown = sorted(n for n in names if n not in catalogue)
        self.assertEqual(unknown, [], "dashboard queries metrics the monitor does not export")


if __name__ == "__main__":
    unittest.main()
