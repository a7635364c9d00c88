// SPDX-License-Identifier: Apache-2.0
// `parity explain` does not blame the oracle's bound on the platform: a call both runs replay
// beyond the float32 bound by comparable errors (within kComparableErrors of each other) is
// not-judged with a warning, not an origin; one whose B error is ten times A's still is.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "explain/dump_pair.h"
#include "explain/explain.h"
#include "explain/side_evidence.h"
#include "testdata.h"

namespace parity {
namespace {

using ::parity::testing::Normal;
using ::parity::testing::TempDir;
using ::parity::testing::TestDump;

// x·wᵀ + b in double, each element then scaled by (1 + noise·N(0, 1)): an implementation whose
// error against the float64 replay is about `noise` (relative rms), far past float32's bound.
Array NoisyLinear(const Array& x, const Array& w, const Array& b, double noise, uint32_t seed) {
  const int64_t m = x.shape[0], k = x.shape[1], n = w.shape[0];
  Array y = Array::Filled({m, n});
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = b.data[j];
      for (int64_t q = 0; q < k; ++q) acc += x.data[i * k + q] * w.data[j * k + q];
      y.data[i * n + j] = acc * (1.0 + noise * dist(gen));
    }
  }
  return y;
}

// The linear recorded by A with error `noise_a` and by B with `noise_b`, on the same inputs.
ExplainReport Explain(const TempDir& tmp, double noise_a, double noise_b) {
  const Array x = Normal({16, 256}, 1, 1.0), w = Normal({32, 256}, 2, 1.0 / 16),
              b = Normal({32}, 3, 0.1);
  const Json cpu = {{"device", "cpu"}};
  TestDump a(tmp.File("a"), cpu, Json::object());
  a.Add("features.0", "linear", {x}, {{"weight", w}, {"bias", b}},
        {NoisyLinear(x, w, b, noise_a, 10)});
  a.Write();
  TestDump bd(tmp.File("b"), cpu, Json::object());
  bd.Add("features.0", "linear", {x}, {{"weight", w}, {"bias", b}},
         {NoisyLinear(x, w, b, noise_b, 20)});
  bd.Write();
  ExplainOptions options;
  options.a = a.dir();
  options.b = bd.dir();
  auto report = RunExplain(options);
  EXPECT_TRUE(report.ok()) << report.status().message();
  return std::move(report).value();
}

std::string Warnings(const ExplainReport& r) {
  std::string all;
  for (const std::string& w : r.warnings) all += w + "\n";
  return all;
}

TEST(ExplainBound, BothRunsBeyondItAlikeIsNoOriginButAWarning) {
  TempDir tmp;
  const ExplainReport r = Explain(tmp, 1e-4, 1e-4);
  ASSERT_EQ(r.ops.size(), 1u);
  const OpExplanation& op = r.ops[0];
  EXPECT_EQ(op.cause, Cause::kNotJudged) << op.reason;
  EXPECT_TRUE(op.bound_too_tight);
  EXPECT_TRUE(r.origins().empty());
  EXPECT_EQ(r.exit_code(), 0);
  ASSERT_TRUE(op.local_err_a && op.local_err_b);
  EXPECT_GT(*op.local_err_a, 5e-5);
  EXPECT_LT(*op.local_err_b / *op.local_err_a, explain_internal::kComparableErrors);
  EXPECT_NE(op.reason.find("the bound is too tight here: both runs exceed"), std::string::npos)
      << op.reason;
  const std::string warnings = Warnings(r);
  EXPECT_NE(warnings.find("the bound for linear is too tight here: both runs exceed it (A "),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("seq 0 'features.0'"), std::string::npos) << warnings;
  // The text lists it as not judged, after no origin, with the warning on top.
  const std::string text = ExplainReportText(r);
  EXPECT_NE(text.find("warning: the bound for linear is too tight"), std::string::npos) << text;
  EXPECT_NE(text.find("No origin among the calls judged"), std::string::npos) << text;
  EXPECT_NE(text.find("or both runs exceed the bound"), std::string::npos) << text;
}

TEST(ExplainBound, BTenTimesFartherThanAIsStillAnOrigin) {
  TempDir tmp;
  const ExplainReport r = Explain(tmp, 1e-4, 1e-3);
  ASSERT_EQ(r.ops.size(), 1u);
  const OpExplanation& op = r.ops[0];
  EXPECT_EQ(op.cause, Cause::kAlgorithmic) << op.reason;
  EXPECT_FALSE(op.bound_too_tight);
  ASSERT_EQ(r.origins().size(), 1u);
  EXPECT_EQ(r.exit_code(), 1);
  EXPECT_EQ(Warnings(r).find("too tight"), std::string::npos) << Warnings(r);
}

TEST(ExplainBound, ATenTimesFartherThanBIsStillAnOrigin) {
  // The factor is symmetric: the trusted side far off and B close is a difference starting here.
  TempDir tmp;
  const ExplainReport r = Explain(tmp, 1e-3, 1e-4);
  ASSERT_EQ(r.ops.size(), 1u);
  EXPECT_EQ(r.ops[0].cause, Cause::kAlgorithmic) << r.ops[0].reason;
  EXPECT_EQ(r.origins().size(), 1u);
}

}  // namespace
}  // namespace parity
