# SPDX-License-Identifier: Apache-2.0
"""`parity capture -o DIR -- COMMAND...` (issue 53): scripts without `import parity_dump`
captured by the launcher.

- Every workload of parity_workloads (the reference ones under any torch; the model-library
  ones where transformers, timm and TorchRec are installed) as a plain script: the launcher's
  dump equals the in-code capture's of the same script (records: ops, passes, steps, names,
  statistics and digests; the manifest's steps and generator digests), and the losses are
  those of an uncaptured run, bitwise.
- A Hugging Face Trainer script, unmodified, for 3 steps (where transformers is installed).
- torchrun --nproc_per_node 2 on gloo: rank0/ and rank1/, the agent writes nothing.
- A plan's dump stage whose command is `{parity} capture ... -- python SCRIPT`.
- `--mode hashes`: digests alone, those of the bytes `--mode tensors` saves; `parity compare`
  passes equal ones and never passes different ones.
- What passes through: stdout, stderr, the script's own exit code (3); a script that never
  constructs an optimizer: a dump with a note; SIGINT mid-step: exit 130 and a readable dump.
- Bad input: no `--`, no command, a non-empty or unusable -o, a command that isn't Python, a
  python flag that keeps the capture out: exit 2 before the command starts.
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

import numpy as np
import xxhash

BIN = os.environ["PARITY_BIN"]
PYTHON = sys.executable
SOURCE = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "python"))

# The same script, in code (argv[2] names the dump: the in-code capture) and plain (the
# launcher's). Batches are made before the optimizer: the launcher's step 0 begins as the
# optimizer's constructor returns, where the in-code capture starts. It prints the losses'
# bytes.
WORKLOAD_SCRIPT = '''
import sys
import torch
import parity_workloads

name = sys.argv[1]
w = parity_workloads.get(name, size="tiny", seed=0)
torch.manual_seed(7)
batches = list(w.batches(2))
opt = w.make_optimizer()
cap = None
if len(sys.argv) > 2:
    import parity_dump
    cap = parity_dump.capture(w.model, sys.argv[2], optimizer=opt, mode="stats").start()
losses = []
for inputs, target in batches:
    opt.zero_grad(set_to_none=True)
    loss = w.loss_fn(w.forward(w.model, inputs), target)
    loss.backward()
    opt.step()
    if cap is not None:
        cap.step()
    losses.append(loss.detach().double().item())
if cap is not None:
    cap.stop()
print("model", type(w.model).__name__)
print("losses", [float.hex(x) for x in losses])
'''

# A script with a known optimizer loop, its own output and exit code; it loops until
# interrupted when argv[1] is "forever".
TOY_SCRIPT = '''
import sys
import torch
print("to stdout")
print("to stderr", file=sys.stderr)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, 4), torch.randn(64, 1)
step = 0
while sys.argv[1] == "forever" or step < 3:
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    step += 1
sys.exit(int(sys.argv[1]) if sys.argv[1] != "forever" else 0)
'''

# GradScaler's loop; step 1's loss is made infinite when the scaler is enabled (torch 2.x's
# CPU GradScaler), so that GradScaler skips that optimizer step.
SCALER_SCRIPT = '''
import torch
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
if hasattr(torch.amp, "GradScaler"):
    scaler = torch.amp.GradScaler("cpu")
else:  # torch 1.13: CUDA's, disabled without a GPU (a warning)
    scaler = torch.cuda.amp.GradScaler(enabled=False)
x, y = torch.randn(8, 4), torch.randn(8, 1)
for i in range(3):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    if i == 1 and scaler.is_enabled():
        loss = loss * float("inf")
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
print("enabled" if scaler.is_enabled() else "disabled")
'''

NO_OPTIMIZER_SCRIPT = '''
import torch
print(float(torch.ones(3).sum()))
'''

DDP_SCRIPT = '''
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
torch.manual_seed(0)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(8, 4) + dist.get_rank()
for _ in range(2):
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()
dist.destroy_process_group()
'''

TRAINER_SCRIPT = '''
import torch
import transformers
from torch.utils.data import Dataset

class Tokens(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        ids = torch.randint(0, 64, (8,), generator=g)
        return {"input_ids": ids, "labels": ids.clone()}

config = transformers.LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32,
                                  num_hidden_layers=1, num_attention_heads=2,
                                  num_key_value_heads=2, max_position_embeddings=16)
torch.manual_seed(0)
model = transformers.LlamaForCausalLM(config)
args = transformers.TrainingArguments(
    output_dir=__import__("sys").argv[1], max_steps=3, per_device_train_batch_size=2,
    report_to=[], save_strategy="no", logging_strategy="no", use_cpu=True,
    dataloader_num_workers=0, disable_tqdm=True)
transformers.Trainer(model=model, args=args, train_dataset=Tokens()).train()
print("trained")
'''


def run(args, **kwargs):
    env = dict(os.environ, PYTHONPATH=SOURCE, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.update(kwargs.pop("env", {}))
    return subprocess.run(args, capture_output=True, text=True, timeout=600, env=env,
                          **kwargs)


def records(dump):
    """(tests/python/dumpv2.py has the same; importing it would import torch here.)"""
    with open(os.path.join(dump, "records.jsonl")) as f:
        return [json.loads(line) for line in f]


def manifest(dump):
    with open(os.path.join(dump, "manifest.json")) as f:
        return json.load(f)


class Workloads(unittest.TestCase):
    """The launcher's dump of each workload equals the in-code capture's."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.script = os.path.join(cls.tmp.name, "train_workload.py")
        with open(cls.script, "w") as f:
            f.write(WORKLOAD_SCRIPT)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def check(self, name):
        sys.path.insert(0, SOURCE)
        try:
            from parity_workloads import registry
            from parity_workloads.common import MissingLibraryError
            try:
                registry.get(name, size="tiny")
            except MissingLibraryError as e:
                self.skipTest(str(e))
        finally:
            sys.path.remove(SOURCE)
        base = os.path.join(self.tmp.name, name)
        in_code = run([PYTHON, self.script, name, base + ".in_code"])
        self.assertEqual(in_code.returncode, 0, in_code.stderr)
        launched = run([BIN, "capture", "--mode", "stats", "-o", base + ".launched", "--",
                        PYTHON, self.script, name])
        self.assertEqual(launched.returncode, 0, launched.stderr)
        # The script's output passes through: the same losses, bitwise, as the in-code
        # capture's (which equal an uncaptured run's: test_zoo_capture, test_dump_v2).
        self.assertEqual(launched.stdout, in_code.stdout)
        model = in_code.stdout.split("model ", 1)[1].split()[0]
        a, b = records(base + ".in_code"), records(base + ".launched")
        self.assertGreater(len(a), 0)
        self.assertEqual(len(a), len(b), name)
        for x, y in zip(a, b):
            self.assertEqual(x, y, name)
        ma, mb = manifest(base + ".in_code"), manifest(base + ".launched")
        self.assertEqual(ma["steps"], mb["steps"], name)
        self.assertEqual([s["step"] for s in mb["steps"]], [0, 1, 2])
        self.assertEqual(mb["launcher"]["model"], model)
        passes = {(r["step"], r["pass"]) for r in b}
        for step in (0, 1):
            for pass_ in ("forward", "backward", "optimizer"):
                self.assertIn((step, pass_), passes, name)


def _add(name):
    def test(self):
        self.check(name)
    test.__name__ = "test_" + name.replace("-", "_")
    setattr(Workloads, test.__name__, test)


for _name in ("cnn", "recsys", "transformer", "hf-llama", "hf-bert", "timm-vit",
              "timm-resnet", "torchrec-dlrm", "minilm"):
    _add(_name)


class Launcher(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def test_exit_code_and_output_pass_through(self):
        script = self.write("toy.py", TOY_SCRIPT)
        out = os.path.join(self.tmp.name, "dump")
        r = run([BIN, "capture", "-o", out, "--", PYTHON, script, "3"])
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(r.stdout, "to stdout\n")
        self.assertEqual(r.stderr, "to stderr\n")  # parity says nothing there
        m = manifest(out)
        self.assertEqual([s["step"] for s in m["steps"]], [0, 1, 2, 3])
        self.assertEqual(m["launcher"], {"started_at": "SGD.__init__", "model": "Sequential"})
        self.assertNotIn("note", m)
        names = {r["name"] for r in records(out)}
        self.assertIn("0.addmm", names)  # named after the model's module paths
        with open(os.path.join(out, "parity-capture.log")) as f:
            log = f.read()
        self.assertIn("step 0 ended when SGD.step() returned", log)
        self.assertIn("the command ended with exit code 3", log)

    def test_steps_window(self):
        script = self.write("toy.py", TOY_SCRIPT)
        out = os.path.join(self.tmp.name, "dump")
        r = run([BIN, "capture", "--steps", "1:2", "-o", out, "--", PYTHON, script, "0"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual({r["step"] for r in records(out)}, {1})
        self.assertEqual(manifest(out)["capture"]["steps"], {"start": 1, "stop": 2, "step": 1})

    def test_hashes_mode(self):
        """--mode hashes: each tensor's digest alone, that of the bytes --mode tensors saves
        (computed here by hashlib or python-xxhash); parity compare passes two runs of the
        script, and says which tensors differ when the learning rate does (never a pass)."""
        script = self.write("toy.py", TOY_SCRIPT)
        dumps = {}
        for mode in ("tensors", "hashes"):
            dumps[mode] = os.path.join(self.tmp.name, mode)
            r = run([BIN, "capture", "--mode", mode, "-o", dumps[mode], "--", PYTHON, script,
                     "0"])
            self.assertEqual(r.returncode, 0, r.stderr)
        m = manifest(dumps["hashes"])
        self.assertEqual(m["mode"], "hashes")
        self.assertEqual(os.listdir(os.path.join(dumps["hashes"], "tensors")), [])
        a, b = records(dumps["tensors"]), records(dumps["hashes"])
        self.assertEqual([r["name"] for r in a], [r["name"] for r in b])
        checked = 0
        for ra, rb in zip(a, b):
            for ea, eb in zip(ra["inputs"] + ra["outputs"], rb["inputs"] + rb["outputs"]):
                self.assertEqual(set(eb["stats"]), {"hash"})
                data = np.load(os.path.join(dumps["tensors"], ea["file"])).tobytes()
                expected = (hashlib.sha256(data).hexdigest() if m["hash"] == "sha256"
                            else xxhash.xxh3_128_hexdigest(data))
                self.assertEqual(eb["stats"]["hash"], expected, rb["name"])
                checked += 1
        self.assertGreater(checked, 50)

        again = os.path.join(self.tmp.name, "again")
        r = run([BIN, "capture", "--mode", "hashes", "-o", again, "--", PYTHON, script, "0"])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run([BIN, "compare", "--json", "-", dumps["hashes"], again])
        self.assertEqual(r.returncode, 0, r.stderr)
        summary = json.loads(r.stdout)["summary"]
        self.assertEqual(summary["passed"], summary["tensors"])

        other = self.write("toy_lr.py", TOY_SCRIPT.replace("lr=0.01", "lr=0.02"))
        planted = os.path.join(self.tmp.name, "planted")
        r = run([BIN, "capture", "--mode", "hashes", "-o", planted, "--", PYTHON, other, "0"])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = run([BIN, "compare", "--json", "-", dumps["hashes"], planted])
        self.assertEqual(r.returncode, 1, r.stderr)
        report = json.loads(r.stdout)
        differ = [t for t in report["tensors"] if t["verdict"] != "pass"]
        self.assertTrue(differ)
        verdicts = set()
        for t in differ:
            self.assertIn("the digests differ", t["reason"], t["name"])
            # Different bytes fail a bitwise tolerance (relu and copies are data movement);
            # under any other a float's digest tells no size: not compared, never a pass.
            expected = "fail" if t["tolerance"]["criterion"] == "bitwise" else "skip"
            self.assertEqual(t["verdict"], expected, t["name"])
            verdicts.add(t["verdict"])
        self.assertEqual(verdicts, {"fail", "skip"})
        # Step 0 ran on the same weights until the optimizer: its first records pass.
        first = records(dumps["hashes"])[0]["name"]
        self.assertTrue(any(t["verdict"] == "pass" and first in t["name"]
                            for t in report["tensors"]), first)

    def test_grad_scaler_paces_the_steps(self):
        script = self.write("scaler.py", SCALER_SCRIPT)
        out = os.path.join(self.tmp.name, "dump")
        r = run([BIN, "capture", "-o", out, "--", PYTHON, script])
        self.assertEqual(r.returncode, 0, r.stderr)
        m = manifest(out)
        self.assertTrue(m["capture"]["scaler"])
        self.assertEqual([s["step"] for s in m["steps"]], [0, 1, 2, 3])
        recs = records(out)
        forward_steps = {r["step"] for r in recs if r["op"] == "addmm"}
        self.assertEqual(forward_steps, {0, 1, 2})  # one forward a step, none merged
        skipped = [s["scaler"]["skipped"] for s in m["steps"][:3]]
        optimizer_steps = {r["step"] for r in recs if r["pass"] == "optimizer"}
        if r.stdout.strip() == "enabled":  # step 1's infinite loss: no optimizer step
            self.assertEqual(skipped, [False, True, False])
            self.assertNotIn(1, optimizer_steps)
        else:
            self.assertEqual(skipped, [False, False, False])
            self.assertEqual(optimizer_steps, {0, 1, 2})
        with open(os.path.join(out, "parity-capture.log")) as f:
            self.assertIn("GradScaler.update() returned", f.read())

    def test_a_script_without_an_optimizer(self):
        script = self.write("plain.py", NO_OPTIMIZER_SCRIPT)
        out = os.path.join(self.tmp.name, "dump")
        r = run([BIN, "capture", "-o", out, "--", PYTHON, script])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout, "3.0\n")
        m = manifest(out)
        self.assertEqual(m["steps"], [])
        self.assertIn("no torch.optim optimizer was constructed", m["note"])
        self.assertEqual(records(out), [])

    def test_a_script_that_never_imports_torch(self):
        script = self.write("hello.py", "print('hello')\n")
        out = os.path.join(self.tmp.name, "dump")
        r = run([BIN, "capture", "-o", out, "--", PYTHON, script])
        self.assertEqual((r.returncode, r.stdout), (0, "hello\n"), r.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "manifest.json")))
        with open(os.path.join(out, "parity-capture.log")) as f:
            self.assertIn("nothing was captured", f.read())

    def test_sigint_mid_step_leaves_a_readable_dump(self):
        script = self.write("toy.py", TOY_SCRIPT)
        out = os.path.join(self.tmp.name, "dump")
        env = dict(os.environ, PYTHONPATH=SOURCE)
        proc = subprocess.Popen([BIN, "capture", "-o", out, "--", PYTHON, script, "forever"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        log = os.path.join(out, "parity-capture.log")
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if os.path.exists(log):
                with open(log) as f:
                    if "step 0 ended" in f.read():
                        break
            time.sleep(0.1)
        time.sleep(0.5)  # some steps more, interrupted wherever it is
        proc.send_signal(signal.SIGINT)  # to parity alone: it passes it on
        proc.communicate(timeout=300)
        self.assertEqual(proc.returncode, 130)
        m = manifest(out)
        self.assertGreaterEqual(len(m["steps"]), 2)
        recs = records(out)  # every line parses
        self.assertEqual([r["seq"] for r in recs], list(range(len(recs))))
        self.assertEqual(sum(s["records"] for s in m["steps"]), len(recs))

    def test_torchrun_captures_each_rank(self):
        script = self.write("ddp.py", DDP_SCRIPT)
        out = os.path.join(self.tmp.name, "dump")
        torchrun = os.path.join(os.path.dirname(PYTHON), "torchrun")
        launcher = [torchrun] if os.path.exists(torchrun) else [PYTHON, "-m",
                                                                "torch.distributed.run"]
        command = launcher + ["--standalone", "--nproc_per_node", "2", script]
        alone = run(command, env={"OMP_NUM_THREADS": "1"})
        if alone.returncode != 0:  # Debian's torch 1.13 under Python 3.11
            lines = (alone.stderr.strip() or "no output").splitlines()
            self.skipTest("this torch's torchrun fails without parity: %s" % lines[-1])
        r = run([BIN, "capture", "-o", out, "--"] + command, env={"OMP_NUM_THREADS": "1"})
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertFalse(os.path.exists(os.path.join(out, "manifest.json")))  # the agent's
        for rank in (0, 1):
            dump = os.path.join(out, "rank%d" % rank)
            m = manifest(dump)
            self.assertEqual((m["rank"], m["world_size"]), (rank, 2))
            recs = records(dump)
            self.assertEqual({r["rank"] for r in recs}, {rank})
            self.assertEqual({r["step"] for r in recs if r["pass"] == "optimizer"}, {0, 1})

    def test_a_plan_dump_stage_captures_a_script(self):
        self.write("toy.py", TOY_SCRIPT)
        plan = self.write("plan.yaml", """\
            plan: capture
            stages:
              - name: train
                kind: dump
                command: ["{parity}", capture, -o, "{out}/dump", --, %s, "{plan_dir}/toy.py", "0"]
                dir: dump
            """ % json.dumps(PYTHON))
        bundle = os.path.join(self.tmp.name, "bundle")
        r = run([BIN, "collect", plan, "-o", bundle, "--level", "2", "--db",
                 os.path.join(self.tmp.name, "parity.db")])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        with open(os.path.join(bundle, "manifest.json")) as f:
            doc = json.load(f)
        train = next(s for s in doc["stages"] if s["name"] == "train")
        self.assertEqual(train["status"], "passed", train)
        dump = os.path.join(bundle, train["result"])
        self.assertEqual(train["summary"]["records"], len(records(dump)))
        self.assertEqual(manifest(dump)["launcher"]["model"], "Sequential")

    def test_hugging_face_trainer_unmodified(self):
        import importlib.util
        for package in ("transformers", "accelerate"):
            if importlib.util.find_spec(package) is None:
                self.skipTest("%s is not installed (the torch 2.x environment has it)"
                              % package)
        script = self.write("hf_trainer.py", TRAINER_SCRIPT)
        out = os.path.join(self.tmp.name, "dump")
        r = run([BIN, "capture", "-o", out, "--", PYTHON, script,
                 os.path.join(self.tmp.name, "trainer_out")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("trained", r.stdout)
        m = manifest(out)
        self.assertEqual(m["launcher"]["model"], "LlamaForCausalLM")
        recs = records(out)
        passes = {(r["step"], r["pass"]) for r in recs}
        for step in (0, 1, 2):
            for pass_ in ("forward", "backward", "optimizer"):
                self.assertIn((step, pass_), passes)
        self.assertTrue(any(r["module"].startswith("model.layers.0") for r in recs))


class BadInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        # The command would leave this file: it must not have started.
        self.marker = os.path.join(self.tmp.name, "ran")
        self.script = os.path.join(self.tmp.name, "mark.py")
        with open(self.script, "w") as f:
            f.write("open(%r, 'w').close()\n" % self.marker)

    def refused(self, args, *needles):
        r = run([BIN, "capture"] + args)
        self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
        self.assertTrue(r.stderr.startswith("parity: error: "), r.stderr)
        for needle in needles:
            self.assertIn(needle, r.stderr)
        self.assertFalse(os.path.exists(self.marker), "the command started")
        return r

    def test_usage(self):
        out = os.path.join(self.tmp.name, "d")
        self.refused(["-o", out, PYTHON, self.script], "no '--'", "Usage: parity capture")
        self.refused(["-o", out, "--"], "no command after '--'")
        self.refused(["--", PYTHON, self.script], "--out")

    def test_output_directory(self):
        busy = os.path.join(self.tmp.name, "busy")
        os.mkdir(busy)
        open(os.path.join(busy, "x"), "w").close()
        self.refused(["-o", busy, "--", PYTHON, self.script], busy, "not empty")
        a_file = os.path.join(self.tmp.name, "file")
        open(a_file, "w").close()
        self.refused(["-o", a_file, "--", PYTHON, self.script], "not a directory")
        self.refused(["-o", os.path.join(a_file, "sub"), "--", PYTHON, self.script],
                     "cannot be created")

    def test_not_python(self):
        out = os.path.join(self.tmp.name, "d")
        self.refused(["-o", out, "--", shutil.which("true") or "/bin/true"],
                     "not a Python interpreter or Python script", "python -m MODULE")
        self.refused(["-o", out, "--", "no-such-command-here"], "command not found")
        self.refused(["-o", out, "--", PYTHON, "-I", self.script], "-I")
        self.refused(["-o", out, "--", PYTHON, "-S", self.script], "sitecustomize")
        for steps in ("3:1", "1:2:3", "1:", ":2", "-1:2", "1:99999999999"):
            self.refused(["--steps", steps, "-o", out, "--", PYTHON, self.script], "--steps")


if __name__ == "__main__":
    unittest.main()
