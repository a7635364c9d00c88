// SPDX-License-Identifier: Apache-2.0
// `parity bench compare`: verdicts on samples with a known ratio, times inverted, parameters
// refused, --min-ratio, invalid results, geometric means.
#include "bench/bench_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace parity::bench {
namespace {

BenchResult Result(std::string benchmark, double center, uint64_t seed, bool rate = true) {
  BenchResult r;
  r.benchmark = std::move(benchmark);
  r.dtype = "float64";
  r.params = {{"n", 1000}, {"reps", 40}};
  r.unit = rate ? "GB/s" : "us";
  r.higher_is_better = rate;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 0.02);
  for (int i = 0; i < 39; ++i) r.samples.push_back(center * std::exp(noise(rng)));
  return r;
}

BenchDocument Doc(std::vector<BenchResult> results) {
  BenchDocument d;
  d.backend = std::string("cpu");  // not = "cpu": GCC 12 -Wrestrict false positive (PR 105329)
  d.device = std::string("X");
  d.results = std::move(results);
  return d;
}

TEST(BenchCompare, VerdictsFollowTheTrueRatio) {
  const BenchDocument base =
      Doc({Result("stream.triad", 100, 1), Result("stream.copy", 100, 2),
           Result("stream.add", 100, 3), Result("latency.launch", 10, 4, false)});
  const BenchDocument cand =
      Doc({Result("stream.triad", 125, 5), Result("stream.copy", 100, 2),
           Result("stream.add", 80, 7), Result("latency.launch", 5, 8, false)});
  auto report = CompareBench(base, cand, {});
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->comparisons.size(), 4u);
  EXPECT_EQ(report->comparisons[0].verdict, "faster");
  EXPECT_NEAR(*report->comparisons[0].ratio, 1.25, 0.02);
  EXPECT_EQ(report->comparisons[1].verdict, "same");
  EXPECT_EQ(report->comparisons[2].verdict, "slower");
  // Half the launch time is twice as fast.
  EXPECT_EQ(report->comparisons[3].verdict, "faster");
  EXPECT_NEAR(*report->comparisons[3].ratio, 2.0, 0.05);
  EXPECT_LT(report->comparisons[3].interval->low, 2.0 + 0.05);
  EXPECT_TRUE(report->within_run_only);
  EXPECT_EQ(report->comparisons[0].basis, "samples");
  // Geometric mean per suite: stream's three ratios.
  ASSERT_EQ(report->suite_geomeans.size(), 2u);
  const double g = std::cbrt(*report->comparisons[0].ratio * *report->comparisons[1].ratio *
                             *report->comparisons[2].ratio);
  EXPECT_NEAR(report->suite_geomeans[0].second, g, 1e-12);
  EXPECT_EQ(report->failures, 0);
}

TEST(BenchCompare, RunLevelFiguresWhenBothSidesRepeated) {
  BenchResult b = Result("stream.triad", 100, 1), c = Result("stream.triad", 90, 2);
  b.run_medians = {100, 102, 98};
  c.run_medians = {90, 91, 89};
  auto report = CompareBench(Doc({b}), Doc({c}), {});
  ASSERT_TRUE(report.ok());
  const BenchComparison& cmp = report->comparisons[0];
  EXPECT_EQ(cmp.basis, "runs");
  EXPECT_FALSE(report->within_run_only);
  EXPECT_NEAR(*cmp.ratio, std::cbrt(90.0 * 91 * 89) / std::cbrt(100.0 * 102 * 98), 1e-12);
  EXPECT_EQ(cmp.verdict, "slower");
}

TEST(BenchCompare, ParameterMismatchIsRefusedUnlessAllowed) {
  BenchResult c = Result("stream.triad", 100, 2);
  c.params["n"] = 2000;
  BenchCompareOptions options;
  options.base_path = "a.json";
  options.cand_path = "b.json";
  auto report = CompareBench(Doc({Result("stream.triad", 100, 1)}), Doc({c}), options);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(report.status().message().find("n: 1000 vs 2000"), std::string::npos)
      << report.status().message();
  options.allow_param_mismatch = true;
  report = CompareBench(Doc({Result("stream.triad", 100, 1)}), Doc({c}), options);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->comparisons[0].params_differ);
}

TEST(BenchCompare, SizesAreDifferentBenchmarksNotMismatches) {
  BenchResult b = Result("gemm", 100, 1), c = Result("gemm", 100, 2);
  b.params["size"] = 1024;
  c.params["size"] = 2048;
  auto report = CompareBench(Doc({b}), Doc({c}), {});
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->comparisons.empty());
  EXPECT_EQ(report->only_in_base, std::vector<std::string>{"gemm float64 size=1024"});
  EXPECT_EQ(report->only_in_cand, std::vector<std::string>{"gemm float64 size=2048"});
}

TEST(BenchCompare, MinRatioFailsOnUpperBoundAndOnInvalid) {
  BenchCompareOptions options;
  options.min_ratio = 0.9;
  auto report = CompareBench(Doc({Result("stream.triad", 100, 1)}),
                             Doc({Result("stream.triad", 80, 2)}), options);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->failures, 1);
  EXPECT_TRUE(report->comparisons[0].below_min_ratio);
  // 0.88 is below 0.9, but its interval reaches above it: not a failure.
  report = CompareBench(Doc({Result("stream.triad", 100, 1)}), Doc({Result("stream.triad", 97, 2)}),
                        options);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->failures, 0);
  BenchResult bad = Result("stream.triad", 200, 2);
  bad.outcome = Outcome::kInvalid;
  bad.reason = "a differs";
  report = CompareBench(Doc({Result("stream.triad", 100, 1)}), Doc({bad}), options);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->comparisons[0].verdict, "invalid");
  EXPECT_EQ(report->comparisons[0].reason, "cand invalid: a differs");
  EXPECT_FALSE(report->comparisons[0].ratio.has_value());
  EXPECT_EQ(report->failures, 1);
  // Without --min-ratio, the same is reported, not failed.
  report = CompareBench(Doc({Result("stream.triad", 100, 1)}), Doc({bad}), {});
  EXPECT_EQ(report->failures, 0);
}

}  // namespace
}  // namespace parity::bench
