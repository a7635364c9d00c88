// SPDX-License-Identifier: Apache-2.0
// Summaries, and the intervals of `bench compare` checked by their coverage of a known ratio on
// simulated benchmark samples.
#include "bench/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace parity::bench {
namespace {

TEST(Stats, Summary) {
  const std::vector<double> v = {4, 1, 3, 2};
  const Summary s = Summarize(v);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  // numpy: np.std([1,2,3,4], ddof=1) / 2.5
  EXPECT_NEAR(s.cv, 1.2909944487358056 / 2.5, 1e-15);
  EXPECT_DOUBLE_EQ(Median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(Summarize(std::vector<double>{7}).cv, 0.0);
  EXPECT_NEAR(GeometricMean(std::vector<double>{1, 4, 16}), 4.0, 1e-15);
}

std::vector<double> Noisy(std::mt19937_64& rng, double center, double sigma, int n) {
  std::normal_distribution<double> noise(0.0, sigma);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * std::exp(noise(rng)));
  return v;
}

TEST(Stats, BootstrapIntervalCoversTheTrueRatio) {
  std::mt19937_64 rng(2024);
  int covered = 0;
  const int trials = 300;
  for (int t = 0; t < trials; ++t) {
    const auto base = Noisy(rng, 100.0, 0.05, 49);
    const auto cand = Noisy(rng, 125.0, 0.05, 49);
    const Interval ci = BootstrapMedianRatio(base, cand, 0.95, 1000, t);
    EXPECT_LT(ci.low, ci.high);
    if (ci.low <= 1.25 && 1.25 <= ci.high) ++covered;
  }
  // The percentile bootstrap of a median is a little liberal with 49 samples.
  EXPECT_GE(covered, static_cast<int>(0.88 * trials));
  EXPECT_LE(covered, static_cast<int>(0.995 * trials));
}

TEST(Stats, BootstrapIsReproducibleAndSeesNoDifferenceInEqualSamples) {
  std::mt19937_64 rng(7);
  const auto v = Noisy(rng, 10.0, 0.1, 30);
  const Interval a = BootstrapMedianRatio(v, v, 0.95, 500, 3);
  const Interval b = BootstrapMedianRatio(v, v, 0.95, 500, 3);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  EXPECT_LT(a.low, 1.0);
  EXPECT_GT(a.high, 1.0);
}

TEST(Stats, WelchLogIntervalCoversTheTrueRatio) {
  std::mt19937_64 rng(99);
  int covered = 0;
  const int trials = 1000;
  for (int t = 0; t < trials; ++t) {
    const auto base = Noisy(rng, 50.0, 0.04, 5);
    const auto cand = Noisy(rng, 40.0, 0.08, 4);
    const Interval ci = LogRatioInterval(base, cand, 0.95);
    if (ci.low <= 0.8 && 0.8 <= ci.high) ++covered;
  }
  // Welch's interval is exact for normal logs up to the Satterthwaite approximation.
  EXPECT_GE(covered, 930);
  EXPECT_LE(covered, 975);
}

TEST(Stats, WelchLogIntervalWithoutSpreadIsAPoint) {
  const Interval ci = LogRatioInterval(std::vector<double>{2, 2}, std::vector<double>{3, 3}, 0.95);
  EXPECT_DOUBLE_EQ(ci.low, 1.5);
  EXPECT_DOUBLE_EQ(ci.high, 1.5);
}

}  // namespace
}  // namespace parity::bench
