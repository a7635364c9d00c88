// SPDX-License-Identifier: Apache-2.0
// The float64 oracle against PyTorch's float64 results (tests/gen/gen_oracle.py), its float32
// bounds, and records it must refuse without crashing.
#include "oracle/oracle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <string>

#include "io/dump.h"
#include "oracle/replay.h"
#include "testdata.h"

namespace parity {
namespace {

using nlohmann::json;

const json& OracleExpected() {
  static const json expected = [] {
    std::ifstream in(testing::TestDataPath("oracle/expected.json"));
    return json::parse(in);
  }();
  return expected;
}

DumpDir OpenDump(const std::string& key) {
  auto dump = DumpDir::Open(OracleExpected()[key].get<std::string>());
  EXPECT_TRUE(dump.ok()) << dump.status().message();
  return std::move(dump).value();
}

// A random op (dropout) is never "within bound": not judged, with its drop rate checked.
void ExpectWithinOrNotJudged(const OpReplay& r, const std::string& extra = "") {
  if (!r.judged) {
    EXPECT_FALSE(r.within_bound);
    EXPECT_NE(r.reason.find("not judged (random op"), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find("agrees with p"), std::string::npos) << r.reason;
    return;
  }
  EXPECT_TRUE(r.within_bound) << r.reason << extra;
}

TEST(Oracle, MatchesPyTorchFloat64OnEveryOp) {
  const DumpDir dump = OpenDump("f64_dir");
  ASSERT_EQ(dump.records().size(), OracleExpected()["f64"].size());
  for (const DumpRecord& record : dump.records()) {
    SCOPED_TRACE(record.name);
    auto r = ReplayRecord(dump, record);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_TRUE(r->replayable) << r->reason;
    // Two float64 implementations differ by summation order only: a few units of 2^-53.
    EXPECT_LE(r->rel_rmse, 1e-14);
    ExpectWithinOrNotJudged(*r);
  }
}

TEST(Oracle, PyTorchFloat32IsWithinItsBoundOnEveryOp) {
  const DumpDir dump = OpenDump("f32_dir");
  for (const DumpRecord& record : dump.records()) {
    SCOPED_TRACE(record.name);
    auto r = ReplayRecord(dump, record);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_TRUE(r->replayable) << r->reason;
    ExpectWithinOrNotJudged(*r, " max_abs " + std::to_string(r->max_abs));
    EXPECT_LE(r->rel_rmse, 1e-5);  // float32 rounding, not a wrong formula
  }
}

// Version 2 dumps of aten ops (tests/gen/gen_oracle.py's aten_cases), captured by parity_dump:
// every op of the reference workloads' training steps is among them.
TEST(Oracle, AtenOpsMatchPyTorchFloat64) {
  const DumpDir dump = OpenDump("f64_aten_dir");
  const auto ops = OracleExpected()["f64_aten"]["ops"].get<std::set<std::string>>();
  for (const std::string op : {"mm",
                               "addmm",
                               "baddbmm",
                               "convolution",
                               "convolution_backward",
                               "_softmax",
                               "_log_softmax_backward_data",
                               "native_layer_norm",
                               "native_layer_norm_backward",
                               "native_batch_norm",
                               "native_batch_norm_backward",
                               "gelu_backward",
                               "threshold_backward",
                               "embedding",
                               "embedding_dense_backward",
                               "_embedding_bag",
                               "max_pool2d_with_indices",
                               "max_pool2d_with_indices_backward",
                               "_adaptive_avg_pool2d_backward",
                               "nll_loss_forward",
                               "nll_loss_backward",
                               "binary_cross_entropy_with_logits",
                               "addcdiv_",
                               "_foreach_addcmul_",
                               "native_dropout",
                               "cat",
                               "gather",
                               "cumsum"}) {
    EXPECT_EQ(ops.count(op), 1u) << op << " was not recorded";
  }
  ASSERT_GE(dump.records().size(), OracleExpected()["f64_aten"]["cases"].size());
  for (const DumpRecord& record : dump.records()) {
    SCOPED_TRACE(std::to_string(record.seq) + " " + record.op);
    auto r = ReplayRecord(dump, record);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_TRUE(r->replayable) << r->reason;
    ExpectWithinOrNotJudged(*r);
    // Two float64 implementations differ by summation order only (an output stored narrower,
    // as _to_copy's float16, differs by its own rounding).
    const bool float64 =
        std::all_of(record.outputs.begin(), record.outputs.end(),
                    [](const DumpTensorRef& t) { return t.dtype != DType::kFloat16; });
    if (float64) {
      EXPECT_LE(r->rel_rmse, 1e-14);
    }
  }
}

TEST(Oracle, AtenOpsPyTorchFloat32IsWithinItsBound) {
  const DumpDir dump = OpenDump("f32_aten_dir");
  for (const DumpRecord& record : dump.records()) {
    SCOPED_TRACE(std::to_string(record.seq) + " " + record.op);
    auto r = ReplayRecord(dump, record);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_TRUE(r->replayable) << r->reason;
    ExpectWithinOrNotJudged(*r, " max_abs " + std::to_string(r->max_abs));
  }
}

TEST(Oracle, RecordsThatDoNotFitAreNotReplayableNeverCrashes) {
  const DumpDir dump = OpenDump("unfit_dir");
  const json& cases = OracleExpected()["unfit"];
  ASSERT_EQ(dump.records().size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i]["name"].get<std::string>());
    auto r = ReplayRecord(dump, dump.records()[i]);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->replayable);
    EXPECT_NE(r->reason.find(cases[i]["why"].get<std::string>()), std::string::npos) << r->reason;
  }
}

// torch 2.x's GPU kernels (attention, RMSNorm), in records built from the math formula under
// their schemas (gen_oracle.py's gpu_kernel_cases): one element of each value output off by a
// bfloat16-sized error (2^-8) is beyond its bound; the outputs that are not values (RNG state,
// placeholders) are copied and not judged.
TEST(Oracle, GpuKernelsCatchAPlantedError) {
  const DumpDir dump = OpenDump("f32_dir");
  int kernels = 0;
  for (const DumpRecord& record : dump.records()) {
    const bool attention = record.op.starts_with("_scaled_dot_product_");
    if (!(attention || record.op.starts_with("_fused_rms_norm")) ||
        record.op.find("_for_cpu") != std::string::npos) {
      continue;
    }
    SCOPED_TRACE(record.name);
    ++kernels;
    auto loaded = LoadRecord(dump, record);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    auto oracle = Replay(loaded->call);
    ASSERT_TRUE(oracle.ok()) << oracle.status().message();
    ASSERT_EQ(oracle->size(), loaded->outputs.size());
    const std::size_t values = ValueOutputs(loaded->call, oracle->size());
    EXPECT_EQ(values, !attention || record.op.ends_with("_backward") ? oracle->size() : 2u);
    for (std::size_t i = 0; i < values; ++i) {
      Array wrong = loaded->call.recorded_outputs[i];
      auto at = std::find_if(wrong.data.begin(), wrong.data.end(),
                             [](double v) { return std::isfinite(v) && std::fabs(v) > 0.1; });
      if (at == wrong.data.end()) continue;  // empty: no logsumexp asked for
      *at *= 1.0 + 0x1p-8;
      auto tolerance = OutputTolerance(record, *loaded, i, {});
      ASSERT_TRUE(tolerance.ok()) << tolerance.status().message();
      auto judged = JudgeOutput(FromArray(wrong, DType::kFloat32, "planted"), (*oracle)[i],
                                std::move(*tolerance));
      ASSERT_TRUE(judged.ok()) << judged.status().message();
      EXPECT_FALSE(judged->within) << "output " << i;
      ASSERT_FALSE(judged->metrics.worst.empty());
      EXPECT_EQ(judged->metrics.worst[0].index, at - wrong.data.begin()) << "output " << i;
    }
  }
  EXPECT_EQ(kernels, 7 + 4);
}

TEST(Oracle, FbgemmKernelsAreComparedOnlySayingWhy) {
  OpCall call;
  call.op = "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function";
  call.inputs = {Array{{2}, {1, 2}}};
  auto y = Replay(call);
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("compared only: fbgemm::split_embedding"),
            std::string::npos)
      << y.status().message();
  EXPECT_FALSE(Replayable(call.op));
}

TEST(Oracle, LinearIsItsDefinition) {
  // x·Wᵀ on a hand-computed case (WrongFloatsAreCaughtAtTheirIndex, in bounds_test.cc, plants
  // a wrong float and finds it at its index).
  OpCall call;
  call.op = "linear";
  call.inputs = {Array{{2, 3}, {1, 2, 3, 4, 5, 6}}};
  call.params = {{"weight", Array{{2, 3}, {1, 0, -1, 0.5, 0.5, 0.5}}}};
  auto y = Replay(call);
  ASSERT_TRUE(y.ok());
  EXPECT_EQ((*y)[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_DOUBLE_EQ((*y)[0].data[0], 1 - 3);
  EXPECT_DOUBLE_EQ((*y)[0].data[1], 0.5 * 6);
  EXPECT_DOUBLE_EQ((*y)[0].data[3], 0.5 * 15);
}

TEST(Oracle, BroadcastingFollowsNumpy) {
  OpCall call;
  call.op = "add";
  call.inputs = {Array{{2, 1}, {1, 2}}, Array{{3}, {10, 20, 30}}};
  call.attrs = {{"alpha", 2}};
  auto y = Replay(call);
  ASSERT_TRUE(y.ok());
  EXPECT_EQ((*y)[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*y)[0].data, (std::vector<double>{21, 41, 61, 22, 42, 62}));
  EXPECT_TRUE(Replayable("scaled_dot_product_attention"));
  EXPECT_FALSE(Replayable("module"));
  const std::vector<std::string_view> ops = ReplayableOps();
  for (std::string_view op : {"linear", "addmm", "native_layer_norm", "_embedding_bag"}) {
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  }
  // In-place and _foreach_ forms replay as their op; random fills and unknown bases don't.
  for (std::string_view op : {"add_", "addmm_", "cumsum_", "_foreach_addcmul_", "_foreach_sqrt"}) {
    EXPECT_TRUE(Replayable(op)) << op;
  }
  for (std::string_view op :
       {"bernoulli_", "uniform_", "_foreach_norm", "_foreach_", "index_add_"}) {
    EXPECT_FALSE(Replayable(op)) << op;
  }
}

}  // namespace
}  // namespace parity
