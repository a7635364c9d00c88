#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""parity_dump format version 2 on the three parity_workloads (recsys, transformer, cnn): two
Adam steps each, in float32 and under CPU bfloat16 autocast, captured and not: the numerics
are bitwise the same, and the dump holds every pass's ops, attributed and saved as they ran.
Read back with json and numpy."""
import os
import unittest

import numpy as np
import torch

import parity_workloads
from dumpv2 import bitwise_equal, load, manifest, records, tempdir, train

# recsys takes torch's default Adam (single-tensor on the CPU), the others the foreach one.
FOREACH = {"recsys": None, "transformer": True, "cnn": True}

# Ops each pass of each workload must hold: each item is a set of alternatives (later torch
# versions name some kernels differently).
EXPECTED = {
    "recsys": {
        "forward": [{"_embedding_bag"}, {"cumsum"}, {"sub"}, {"addmm"}, {"relu"}, {"bmm"},
                    {"gather"}, {"sigmoid"}, {"binary_cross_entropy"}, {"cat"}, {"stack"}],
        "backward": [{"_embedding_bag_dense_backward", "_embedding_bag_backward"},
                     {"binary_cross_entropy_backward"}, {"sigmoid_backward"}, {"mm"},
                     {"bmm"}, {"threshold_backward"}, {"scatter_add", "scatter_add_"}],
        "optimizer": [{"addcdiv_"}, {"mul_"}, {"add_"}, {"sqrt"}],
    },
    "transformer": {
        "forward": [{"embedding"}, {"index_select"}, {"addmm"}, {"native_layer_norm"},
                    {"bernoulli_", "native_dropout"},
                    # torch 2.x's attention in training: SDPA's math path (bmm,
                    # _safe_softmax) or one of its fused kernels.
                    {"baddbmm", "bmm", "_scaled_dot_product_flash_attention_for_cpu",
                     "_scaled_dot_product_efficient_attention"},
                    {"_softmax", "_safe_softmax", "_scaled_dot_product_flash_attention_for_cpu",
                     "_scaled_dot_product_efficient_attention"},
                    {"tanh", "tanh_"}, {"sigmoid", "sigmoid_"}, {"_log_softmax"},
                    {"nll_loss_forward"}, {"div", "div_", "mul"}],
        "backward": [{"native_layer_norm_backward"}, {"mm"}, {"tanh_backward"},
                     {"sigmoid_backward"}, {"embedding_dense_backward"},
                     {"_log_softmax_backward_data"}, {"nll_loss_backward"}],
        "optimizer": [{"_foreach_add_", "_foreach_add"}, {"_foreach_sqrt"},
                      {"_foreach_addcdiv_", "_foreach_div_"}],
    },
    "cnn": {
        "forward": [{"convolution"},
                    {"native_batch_norm", "_native_batch_norm_legit",
                     "_batch_norm_with_update"},
                    {"max_pool2d_with_indices"}, {"avg_pool2d"}, {"_adaptive_avg_pool2d"},
                    {"relu"}, {"addmm"}, {"_log_softmax"}, {"nll_loss_forward"}],
        "backward": [{"convolution_backward"},
                     {"native_batch_norm_backward", "batch_norm_backward"},
                     {"max_pool2d_with_indices_backward"}, {"avg_pool2d_backward"},
                     {"_adaptive_avg_pool2d_backward"}, {"threshold_backward"}, {"mm"}],
        "optimizer": [{"_foreach_add_", "_foreach_add"}, {"_foreach_sqrt"}],
    },
}

# Ops that never compute: never records.
NEVER_RECORDED = {"view", "t", "transpose", "expand", "detach", "_reshape_alias", "lift_fresh",
                  "empty", "empty_like", "new_empty", "empty_strided", "alias", "unsqueeze",
                  "select", "slice", "split", "unbind", "_unsafe_view"}
FILLS = {"bernoulli_", "uniform_", "normal_", "random_", "fill_", "zero_"}


def setUpModule():
    global TMP, RUNS
    TMP = tempdir()
    RUNS = {}
    for name in parity_workloads.names():
        for autocast in (False, True):
            dump = os.path.join(TMP.name, "%s_%s" % (name, "bf16" if autocast else "fp32"))
            plain = train(name, autocast=autocast, foreach=FOREACH[name])
            captured = train(name, autocast=autocast, foreach=FOREACH[name], out=dump)
            RUNS[name, autocast] = (plain, captured, dump)


def tearDownModule():
    TMP.cleanup()


class Workloads(unittest.TestCase):
    def test_capture_changes_no_bit(self):
        for (name, autocast), (plain, captured, _) in RUNS.items():
            with self.subTest(workload=name, autocast=autocast):
                for key in ("losses", "outputs"):
                    self.assertEqual(len(plain[key]), 2)
                    for a, b in zip(plain[key], captured[key]):
                        self.assertTrue(bitwise_equal(a, b), key)
                for step, (pa, pb) in enumerate(zip(plain["params"], captured["params"])):
                    self.assertTrue(all(bitwise_equal(a, b) for a, b in zip(pa, pb)), step)
                # The steps did train: the parameters moved.
                self.assertFalse(all(bitwise_equal(a, b) for a, b in
                                     zip(plain["params"][0], plain["params"][1])))
                self.assertFalse(captured["optimizer"].__dict__.get("step"))

    def test_every_pass_holds_its_ops(self):
        for (name, autocast), (_, _, dump) in RUNS.items():
            recs = records(dump)
            for step in (0, 1):
                for pass_, groups in EXPECTED[name].items():
                    ops = {r["op"] for r in recs if r["step"] == step and r["pass"] == pass_}
                    for group in groups:
                        with self.subTest(workload=name, autocast=autocast, step=step,
                                          pass_=pass_, ops=sorted(group)):
                            self.assertTrue(ops & group, sorted(ops))

    def test_records_are_consistent(self):
        for (name, autocast), (_, captured, dump) in RUNS.items():
            with self.subTest(workload=name, autocast=autocast):
                recs = records(dump)
                m = manifest(dump)
                self.assertEqual((m["format"], m["version"], m["level"], m["mode"]),
                                 ("parity-dump", 2, "aten", "tensors"))
                self.assertEqual((m["rank"], m["world_size"]), (0, 1))
                self.assertEqual([r["seq"] for r in recs], list(range(len(recs))))
                self.assertEqual([s["step"] for s in m["steps"]], [0, 1, 2])
                for s in m["steps"]:
                    self.assertEqual(s["records"], sum(r["step"] == s["step"] for r in recs))
                self.assertEqual(m["steps"][2]["records"], 0)  # opened by the last step()
                self.assertEqual(sorted({r["step"] for r in recs}), [0, 1])
                self.assertTrue({"view", "t", "detach"} <= set(m["omitted"]), m["omitted"])
                self.assertTrue(all(v > 0 for v in m["omitted"].values()))
                modules = {n for n, _ in captured["model"].named_modules()}
                calls = {}
                for r in recs:
                    self.assertNotIn(r["op"], NEVER_RECORDED)
                    self.assertIn(r["pass"], ("forward", "backward", "optimizer"))
                    self.assertIn(r["module"], modules)
                    self.assertEqual(r["name"], r["module"] + "." + r["op"] if r["module"]
                                     else r["op"])
                    self.assertTrue(r["overload"])
                    key = (r["step"], r["name"], r["pass"])
                    self.assertEqual(r["call"], calls.get(key, 0), r)
                    calls[key] = r["call"] + 1
                    if r["op"] in FILLS:
                        self.assertNotIn("self", [e["arg"] for e in r["inputs"]], r)
                    for e in r["inputs"] + r["outputs"]:
                        array = np.load(os.path.join(dump, e["file"]))
                        self.assertEqual(list(array.shape), e["shape"], r["name"])
                    for e in r["inputs"]:
                        self.assertIn("arg", e)

    def test_autocast_dtypes_are_the_ones_that_ran(self):
        for name in parity_workloads.names():
            with self.subTest(workload=name):
                fp32 = records(RUNS[name, False][2])
                bf16 = records(RUNS[name, True][2])
                dtypes = {e["dtype"] for r in fp32 for e in r["inputs"] + r["outputs"]}
                self.assertNotIn("bfloat16", dtypes)
                compute = [r for r in bf16 if r["pass"] == "forward" and r["op"] in
                           ("addmm", "mm", "convolution", "bmm")]
                self.assertTrue(compute)
                for r in compute:
                    if r["op"] == "bmm":
                        # torch 2.x's SDPA math path computes in float32 on bf16 inputs it
                        # upcast itself: the record holds what bmm ran on.
                        self.assertEqual(r["outputs"][0]["dtype"], r["inputs"][0]["dtype"],
                                         r["name"])
                        continue
                    self.assertEqual(r["outputs"][0]["dtype"], "bfloat16", r["name"])
                casts = [r for r in bf16 if r["op"] == "_to_copy"
                         and r["attrs"].get("dtype") == "bfloat16"]
                self.assertTrue(casts)  # autocast's conversions are records
                self.assertEqual(casts[0]["inputs"][0]["dtype"], "float32")

    def test_saved_tensors_are_the_ones_that_ran(self):
        losses = {"recsys": "binary_cross_entropy", "transformer": "nll_loss_forward",
                  "cnn": "nll_loss_forward"}
        for (name, autocast), (_, captured, dump) in RUNS.items():
            with self.subTest(workload=name, autocast=autocast):
                recs = records(dump)
                for step in (0, 1):
                    loss = [r for r in recs if r["step"] == step and r["op"] == losses[name]]
                    self.assertEqual(len(loss), 1)
                    got = load(dump, loss[0]["outputs"][0])
                    want = captured["losses"][step].float().numpy()
                    np.testing.assert_array_equal(got, want)
                # The embedding tables of the first step are the model's initial ones.
                initial = dict(parity_workloads.get(name).model.named_parameters())
                tables = [r for r in recs if r["step"] == 0 and r["pass"] == "forward"
                          and r["op"] in ("embedding", "_embedding_bag")]
                self.assertEqual(len(tables), {"recsys": 3, "transformer": 1, "cnn": 0}[name])
                for r in tables:
                    weight = [e for e in r["inputs"] if e["arg"] == "weight"][0]
                    np.testing.assert_array_equal(
                        load(dump, weight), initial[r["module"] + ".weight"].detach().numpy())
                # A _foreach_ op that returns nothing records the tensors it wrote.
                for r in recs:
                    if r["op"].startswith("_foreach_") and r["op"].endswith("_"):
                        n = sum(e["arg"] == "self" for e in r["inputs"])
                        self.assertEqual(len(r["outputs"]), n, r["name"])

    def test_backward_is_attributed_to_the_modules(self):
        def modules(name, op):
            recs = records(RUNS[name, False][2])
            return {r["module"] for r in recs if r["pass"] == "backward" and r["op"] == op}

        self.assertTrue({"encoder.layers.0.norm1", "encoder.layers.1.norm2"}
                        <= modules("transformer", "native_layer_norm_backward"))
        self.assertIn("lstm", modules("transformer", "tanh_backward"))
        self.assertIn("encoder.layers.0.self_attn", modules("transformer", "mm"))
        self.assertEqual(modules("transformer", "embedding_dense_backward"), {"embed"})
        self.assertEqual(modules("cnn", "convolution_backward"),
                         {"features.0.0", "features.1.0"})
        self.assertEqual(modules("cnn", "max_pool2d_with_indices_backward"), {"features.0.3"})
        # torch 1.13 records the dense kernel, torch 2.x the op above it.
        self.assertEqual(modules("recsys", "_embedding_bag_dense_backward")
                         | modules("recsys", "_embedding_bag_backward"),
                         {"embeddings.%d" % i for i in range(3)})
        # The loss is no submodule: its backward has no module.
        self.assertEqual(modules("cnn", "nll_loss_backward"), {""})

    def test_generator_digests_follow_the_random_draws(self):
        for name in ("transformer", "cnn"):
            steps = manifest(RUNS[name, False][2])["steps"]
            digests = [s["generators"]["cpu"] for s in steps]
            self.assertEqual(len(digests[0]), 64)
            if name == "transformer":  # dropout draws: every step starts elsewhere
                self.assertEqual(len(set(digests)), 3)
            else:  # no random op
                self.assertEqual(len(set(digests)), 1)
        a = manifest(RUNS["transformer", False][2])["steps"]
        b = manifest(RUNS["transformer", True][2])["steps"]
        self.assertEqual(a[0]["generators"], b[0]["generators"])  # same seed


if __name__ == "__main__":
    unittest.main()
