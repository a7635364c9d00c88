// SPDX-License-Identifier: Apache-2.0
// The AUC kernels: the radix sort's order against std::stable_sort, AUC on cases whose value
// is known by counting pairs, and the bootstrap's weighted AUC against the plain one.
#include "quality/auc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "quality/inference.h"

namespace parity {
namespace {

TEST(Auc, RadixOrderIsAStableSort) {
  std::mt19937_64 gen(5);
  std::normal_distribution<double> normal;
  std::vector<double> scores(50000);
  for (double& s : scores) s = std::round(normal(gen) * 100.0) / 100.0;  // many ties
  scores[3] = -0.0;
  scores[4] = 0.0;
  scores[5] = -1e300;
  scores[6] = 1e-310;  // subnormal
  const std::vector<uint32_t> order = SortedOrder(scores);
  std::vector<uint32_t> want(scores.size());
  std::iota(want.begin(), want.end(), 0u);
  std::stable_sort(want.begin(), want.end(),
                   [&](uint32_t a, uint32_t b) { return scores[a] < scores[b]; });
  EXPECT_EQ(order, want);
}

// The AUC by definition: over all (positive, negative) pairs, 1 when the positive scores
// higher, 1/2 on a tie.
double PairCountAuc(const std::vector<uint8_t>& y, const std::vector<double>& s) {
  double sum = 0.0, pairs = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    for (std::size_t j = 0; j < y.size(); ++j) {
      if (y[i] != 1 || y[j] != 0) continue;
      sum += s[i] > s[j] ? 1.0 : (s[i] == s[j] ? 0.5 : 0.0);
      pairs += 1.0;
    }
  }
  return sum / pairs;
}

TEST(Auc, EqualsThePairCount) {
  std::mt19937_64 gen(9);
  std::uniform_int_distribution<int> grid(0, 20);
  std::vector<uint8_t> y(400);
  std::vector<double> s(400);
  for (std::size_t i = 0; i < y.size(); ++i) {
    y[i] = i % 3 == 0 ? 1 : 0;
    s[i] = grid(gen) + (y[i] != 0 ? 3 : 0);
  }
  const Classes c = ClassesOf(y);
  const Placements p = ComputePlacements(c, s);
  EXPECT_NEAR(p.auc, PairCountAuc(y, s), 1e-15);
  // The mean of the negatives' placements is the AUC too.
  double v01 = 0.0;
  for (double v : p.v01) v01 += v;
  EXPECT_NEAR(v01 / static_cast<double>(p.v01.size()), p.auc, 1e-15);

  const std::vector<uint32_t> order = SortedOrder(s);
  std::vector<uint32_t> ones(y.size(), 1), twos(y.size(), 2);
  EXPECT_NEAR(WeightedAuc(y, s, order, ones), p.auc, 1e-15);
  EXPECT_NEAR(WeightedAuc(y, s, order, twos), p.auc, 1e-15);
  // Dropping every sample but two (weight 0) leaves one pair.
  std::vector<uint32_t> pair(y.size(), 0);
  pair[0] = 1;  // a positive
  pair[1] = 1;  // a negative
  EXPECT_EQ(WeightedAuc(y, s, order, pair), s[0] > s[1] ? 1.0 : (s[0] == s[1] ? 0.5 : 0.0));
}

TEST(Auc, SeparatedAndReversedScores) {
  const std::vector<uint8_t> y = {0, 0, 1, 1};
  const Classes c = ClassesOf(y);
  EXPECT_EQ(ComputePlacements(c, std::vector<double>{1, 2, 3, 4}).auc, 1.0);
  EXPECT_EQ(ComputePlacements(c, std::vector<double>{4, 3, 2, 1}).auc, 0.0);
  EXPECT_EQ(ComputePlacements(c, std::vector<double>{1, 1, 1, 1}).auc, 0.5);
  // Identical runs: the paired test has nothing to say.
  const Placements p = ComputePlacements(c, std::vector<double>{1, 3, 2, 4});
  const DeLongTest t = DeLongPaired(p, p);
  EXPECT_EQ(t.delta, 0.0);
  EXPECT_EQ(t.se, 0.0);
  EXPECT_EQ(t.p_value, 1.0);
}

TEST(Inference, TostAndTheMirrorTest) {
  // delta well inside the margin with a small se: equivalent; far outside: beyond.
  const EquivalenceTest inside = Tost(0.001, 0.001, 0.01, std::nullopt);
  EXPECT_LT(inside.p_value, 1e-6);
  EXPECT_GT(inside.p_beyond, 0.5);
  const EquivalenceTest outside = Tost(-0.05, 0.001, 0.01, std::nullopt);
  EXPECT_GT(outside.p_value, 0.5);
  EXPECT_LT(outside.p_beyond, 1e-6);
  // 90% interval: delta ± 1.6449 se under the normal.
  EXPECT_NEAR(inside.ci90_hi - inside.ci90_lo, 2 * 1.6448536269514722 * 0.001, 1e-12);
  const Summary s = Summarize(std::vector<double>{1, 2, 3, 4});
  EXPECT_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.sd, std::sqrt(5.0 / 3.0), 1e-15);
}

}  // namespace
}  // namespace parity
