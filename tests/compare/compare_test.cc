// SPDX-License-Identifier: Apache-2.0
// Comparing dump directories with planted differences; tolerance policies and rules.
#include "compare/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "compare/scale.h"
#include "compare/tolerance.h"
#include "testdata.h"

namespace parity {
namespace {

using nlohmann::json;

const json& CompareExpected() {
  static const json expected = [] {
    std::ifstream in(testing::TestDataPath("compare/expected.json"));
    return json::parse(in);
  }();
  return expected;
}

const TensorResult* Find(const CompareReport& r, const std::string& name) {
  for (const TensorResult& t : r.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

TEST(CompareDumps, PlantedDifferencesAreFoundWhereTheyStart) {
  const json& cases = CompareExpected()["dumps"];
  ASSERT_EQ(cases.size(), 6u);
  for (const json& c : cases) {
    CompareOptions options;
    options.a = c["a"].get<std::string>();
    options.b = c["b"].get<std::string>();
    SCOPED_TRACE(options.b);
    auto report = RunCompare(options);
    ASSERT_TRUE(report.ok()) << report.status().message();
    EXPECT_EQ(report->kind, "dumps");
    if (c.contains("failed")) {
      EXPECT_EQ(report->failed, c["failed"].get<int64_t>());
    }
    if (c.contains("first_divergence")) {
      if (c["first_divergence"].is_null()) {
        EXPECT_FALSE(report->first_divergence.has_value());
      } else {
        ASSERT_TRUE(report->first_divergence.has_value());
        EXPECT_EQ(*report->first_divergence, c["first_divergence"].get<std::string>());
      }
    }
    for (const json& name : c.value("pass", json::array())) {
      const TensorResult* t = Find(*report, name.get<std::string>());
      ASSERT_NE(t, nullptr) << name;
      EXPECT_TRUE(t->pass) << name << ": " << t->reason;
    }
    for (const json& name : c.value("structural", json::array())) {
      const TensorResult* t = Find(*report, name.get<std::string>());
      ASSERT_NE(t, nullptr) << name;
      EXPECT_TRUE(t->structural) << name;
      EXPECT_FALSE(t->pass);
    }
    if (c.contains("warning")) {
      bool found = false;
      for (const std::string& w : report->warnings) {
        found = found || w.find(c["warning"].get<std::string>()) != std::string::npos;
      }
      EXPECT_TRUE(found);
    }
  }
}

TEST(CompareDumps, AutoUsesTheOpAndItsSummands) {
  const json& c = CompareExpected()["dumps"][0];
  CompareOptions options;
  options.a = c["a"].get<std::string>();
  options.b = c["b"].get<std::string>();
  auto report = RunCompare(options);
  ASSERT_TRUE(report.ok());
  const TensorResult* fc1 = Find(*report, "fc1.forward.0.output.0");
  ASSERT_NE(fc1, nullptr);
  ASSERT_TRUE(fc1->tolerance.has_value());
  EXPECT_EQ(fc1->tolerance->policy, "auto");
  EXPECT_EQ(fc1->tolerance->k, 256);
  EXPECT_EQ(fc1->tolerance->scale_source, "summands");
  EXPECT_EQ(fc1->tolerance->compute, "float32");
  const TensorResult* gelu = Find(*report, "act.forward.0.output.0");
  ASSERT_NE(gelu, nullptr);
  EXPECT_EQ(gelu->tolerance->criterion, Criterion::kAbsRel);
  EXPECT_EQ(gelu->tolerance->k, 1);
  EXPECT_EQ(gelu->tolerance->lambda, 16.0);
  const TensorResult* softmax = Find(*report, "softmax.forward.0.output.0");
  ASSERT_NE(softmax, nullptr);
  EXPECT_EQ(softmax->tolerance->k, 32);
  EXPECT_EQ(softmax->tolerance->scale_source, "output rms");
  const TensorResult* stats = Find(*report, "head_stats.forward.0.output.0");
  ASSERT_NE(stats, nullptr);
  EXPECT_TRUE(stats->pass) << stats->reason;
  EXPECT_TRUE(stats->stats_comparison["statistics_only"].get<bool>());
}

TEST(CompareDumps, BrokenDumpsNameTheFileLineAndProblem) {
  const json& cases = CompareExpected()["bad_dumps"];
  ASSERT_GE(cases.size(), 10u);
  for (const json& c : cases) {
    CompareOptions options;
    options.a = options.b = c["dir"].get<std::string>();
    SCOPED_TRACE(options.a);
    auto report = RunCompare(options);
    ASSERT_FALSE(report.ok());
    EXPECT_EQ(report.status().code(), StatusCode::kInvalidInput);
    EXPECT_NE(report.status().message().find(options.a), std::string::npos)
        << report.status().message();
    EXPECT_NE(report.status().message().find(c["error"].get<std::string>()), std::string::npos)
        << report.status().message();
  }
}

TEST(Tolerance, ReductionLengthPerOp) {
  TensorContext c;
  c.op = "linear";
  c.input_shapes = {{8, 512}};
  c.param_shapes = {{"weight", {1024, 512}}};
  EXPECT_EQ(ReductionLength(c), 512);
  c = {};
  c.op = "conv2d";
  c.input_shapes = {{1, 6, 32, 32}};
  c.param_shapes = {{"weight", {16, 3, 5, 5}}};  // groups = 2
  EXPECT_EQ(ReductionLength(c), 75);
  c = {};
  c.op = "softmax";
  c.input_shapes = {{4, 10, 7}};
  c.attrs = {{"dim", 1}};
  EXPECT_EQ(ReductionLength(c), 10);
  c.op = "sum";
  c.attrs = {{"dim", json::array({0, -1})}};
  EXPECT_EQ(ReductionLength(c), 28);
  c.attrs = json::object();
  EXPECT_EQ(ReductionLength(c), 280);
  c = {};
  c.op = "layer_norm";
  c.input_shapes = {{2, 3, 64}};
  c.attrs = {{"normalized_shape", json::array({3, 64})}};
  // y: the chain around statistics of 192 elements, 2·⌈log2 192⌉ + 8 (tests/oracle/bounds_test.cc)
  EXPECT_EQ(ReductionLength(c), 2 * 8 + 8);
  c.op = "native_layer_norm";  // aten: the same family
  EXPECT_EQ(ReductionLength(c), 2 * 8 + 8);
  c.index = 1;  // its mean: a tree over 192
  EXPECT_EQ(ReductionLength(c), 2 * 8 + 8);
  c.index = 0;
  c.op = "batch_norm";
  c.input_shapes = {{8, 4, 5, 5}};
  EXPECT_EQ(ReductionLength(c), 2 * 8 + 8);
  c = {};
  c.op = "addmm";  // self is the added term: K is mat1's last dim
  c.input_shapes = {{16}, {8, 32}, {32, 16}};
  EXPECT_EQ(ReductionLength(c), 32);
  c.op = "convolution";
  c.input_shapes = {{1, 6, 32, 32}, {16, 3, 5, 5}, {16}};
  EXPECT_EQ(ReductionLength(c), 75);
  c.op = "sum";
  c.input_shapes = {{4, 5}};
  c.attrs = {{"dim", json::array()}};  // aten's sum.dim_IntList: every dim
  EXPECT_EQ(ReductionLength(c), 20);
  c.input_shapes = {{}};  // a 0-d tensor over dim -1
  c.attrs = {{"dim", json::array({-1})}};
  EXPECT_EQ(ReductionLength(c), 1);
  EXPECT_EQ(FamilyOf("add_").name, "add");
  EXPECT_EQ(FamilyOf("_foreach_addcmul_").name, "addcmul");
  EXPECT_EQ(FamilyOf("embedding_renorm_").name, "embedding_renorm_");
  EXPECT_EQ(ClassifyOp("threshold_backward"), OpClass::kDataMovement);
  EXPECT_EQ(ClassifyOp("_softmax_backward_data"), OpClass::kReduction);
  c = {};
  c.op = "scaled_dot_product_attention";
  c.input_shapes = {{2, 4, 16, 64}, {2, 4, 128, 64}, {2, 4, 128, 64}};
  EXPECT_EQ(ReductionLength(c), 64 + 2 * 128);  // Q·Kᵀ, the softmax's sum, then ·V
  c.op = "custom_thing";
  EXPECT_FALSE(ReductionLength(c).has_value());
}

TEST(Tolerance, AutoDerivationFollowsTheManifestAndTheOpClass) {
  TensorContext c;
  c.dtype = DType::kFloat32;
  c.op = "linear";
  c.role = "output";
  c.input_shapes = {{8, 1024}};
  ToleranceRequest request;
  Tolerance t = ResolveTolerance(request, {}, "x", c);
  EXPECT_EQ(t.compute, "float32");
  EXPECT_DOUBLE_EQ(t.atol_per_scale, 6.0 * 32.0 * std::ldexp(1.0, -24));
  EXPECT_TRUE(t.needs_output_scale);
  c.tf32_matmul = true;
  t = ResolveTolerance(request, {}, "x", c);
  EXPECT_EQ(t.compute, "tf32");
  EXPECT_DOUBLE_EQ(t.u_compute, std::ldexp(1.0, -11));
  c.op = "relu";
  EXPECT_EQ(ResolveTolerance(request, {}, "x", c).criterion, Criterion::kBitwise);
  c.op = "add";
  t = ResolveTolerance(request, {}, "x", c);
  EXPECT_EQ(t.criterion, Criterion::kAbsRel);
  EXPECT_EQ(t.k, 1);
  EXPECT_DOUBLE_EQ(t.rtol, 18.0 * std::ldexp(1.0, -24));  // 16u compute + 2u storage
  c.op = "linear";
  c.role = "input";
  EXPECT_EQ(ResolveTolerance(request, {}, "x", c).policy, "torch");
  c.dtype = DType::kInt64;
  c.role = "output";
  EXPECT_EQ(ResolveTolerance(request, {}, "x", c).max_ulps, 0);
}

TEST(Tolerance, TorchDefaultsAreTorchTestings) {
  EXPECT_EQ(TorchDefaults(DType::kFloat16), std::make_pair(1e-3, 1e-5));
  EXPECT_EQ(TorchDefaults(DType::kBFloat16), std::make_pair(1.6e-2, 1e-5));
  EXPECT_EQ(TorchDefaults(DType::kFloat32), std::make_pair(1.3e-6, 1e-5));
  EXPECT_EQ(TorchDefaults(DType::kFloat64), std::make_pair(1e-7, 1e-7));
  EXPECT_EQ(TorchDefaults(DType::kInt32), std::make_pair(0.0, 0.0));
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Tolerance, RulesFileFirstMatchWinsAndErrorsNameTheLine) {
  auto rules = LoadToleranceRules(WriteTemp("rules.yaml",
                                            "- match: 'fc*.output.*'\n"
                                            "  rtol: 1e-3\n"
                                            "  atol: 1e-4\n"
                                            "- match: '*'\n"
                                            "  policy: exact\n"));
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  ASSERT_EQ(rules->size(), 2u);
  TensorContext c;
  Tolerance t = ResolveTolerance({}, *rules, "fc1.forward.0.output.0", c);
  EXPECT_EQ(t.policy, "file");
  EXPECT_EQ(t.rtol, 1e-3);
  EXPECT_EQ(t.atol, 1e-4);
  EXPECT_NE(t.reason.find("line 1"), std::string::npos);
  t = ResolveTolerance({}, *rules, "other", c);
  EXPECT_EQ(t.criterion, Criterion::kUlps);
  EXPECT_EQ(t.max_ulps, 0);

  for (const auto& [text, problem] : std::vector<std::pair<std::string, std::string>>{
           {"- match: x\n  rtol: 1\n  colour: red\n", "line 3: unknown key 'colour'"},
           {"- match: x\n  policy: fuzzy\n", "line 2: unknown policy 'fuzzy'"},
           {"match: x\n", "expected a list"},
           {"- rtol: 1\n", "line 1: the rule has no 'match'"},
           {"- match: x\n  rtol: lots\n", "line 2"},
           {"- match: [unclosed\n", "not valid YAML"},
       }) {
    auto bad = LoadToleranceRules(WriteTemp("bad.yaml", text));
    ASSERT_FALSE(bad.ok()) << text;
    EXPECT_NE(bad.status().message().find(problem), std::string::npos) << bad.status().message();
  }
  EXPECT_FALSE(LoadToleranceRules("/no/such/rules.yaml").ok());
}

Tensor Make(std::vector<int64_t> shape, std::vector<float> values) {
  auto meta = MakeTensorMeta("", "t", DType::kFloat32, std::move(shape));
  std::vector<std::byte> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return Tensor::Owned(*meta, std::move(bytes));
}

TEST(SummandScale, LinearMatchesTheDefinitionComputedDirectly) {
  const std::vector<float> x = {1, -2, 3, 0.5f, 4, -1};                 // 2 x 3
  const std::vector<float> w = {2, 1, -1, 0, 3, 2, -2, 1, 1, 1, 1, 1};  // 4 x 3
  double sum = 0;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      for (int k = 0; k < 3; ++k) sum += std::pow(x[i * 3 + k] * w[j * 3 + k], 2);
    }
  }
  const double expected = std::sqrt(sum / 8);
  auto scale = SummandScale("linear", 3, {Make({2, 3}, x)}, {{"weight", Make({4, 3}, w)}});
  ASSERT_TRUE(scale.ok());
  ASSERT_TRUE(scale->has_value());
  EXPECT_NEAR(**scale, expected, 1e-12 * expected);
  // matmul of the same with the transposed weight gives the same scale.
  std::vector<float> wt(12);
  for (int j = 0; j < 4; ++j) {
    for (int k = 0; k < 3; ++k) wt[k * 4 + j] = w[j * 3 + k];
  }
  auto mm = SummandScale("matmul", 3, {Make({2, 3}, x), Make({3, 4}, wt)}, {});
  ASSERT_TRUE(mm.ok() && mm->has_value());
  EXPECT_NEAR(**mm, expected, 1e-12 * expected);
  auto none = SummandScale("softmax", 3, {Make({2, 3}, x)}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

}  // namespace
}  // namespace parity
