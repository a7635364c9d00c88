// SPDX-License-Identifier: Apache-2.0
// ComputeTrends on series built by hand: verdicts against hand-computed changes and noise
// bounds, both directions of better, single points, invalid points, grouping.
#include "store/trend.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace parity::store {
namespace {

SeriesPoint Point(double started, double value, std::optional<double> cv = std::nullopt,
                  std::string name = "stream.triad", std::string better = "higher",
                  std::string unit = "GB/s") {
  SeriesPoint p;
  p.uid = "run" + std::to_string(static_cast<int>(started));
  p.node = "gpu01";
  p.started = started;
  p.stage = "bench";
  p.name = std::move(name);
  p.dtype = "float64";
  p.params = "{}";
  p.unit = std::move(unit);
  p.better = std::move(better);
  p.value = value;
  p.cv = cv;
  return p;
}

TEST(ComputeTrends, DropBeyondThresholdRegresses) {
  // 100 -> 92 is -8%; the bound is max(5%, 3 * 1%) = 5%: regressed.
  const auto trends = ComputeTrends({Point(1, 100.0, 0.01), Point(2, 92.0, 0.01)}, 0.05);
  ASSERT_EQ(trends.size(), 1u);
  const Trend& t = trends[0];
  EXPECT_EQ(t.verdict, "regressed");
  ASSERT_TRUE(t.change.has_value());
  EXPECT_NEAR(*t.change, -0.08, 1e-12);
  EXPECT_NEAR(*t.vs_previous, -0.08, 1e-12);
  EXPECT_EQ(t.points, 2u);
  EXPECT_DOUBLE_EQ(t.first, 100.0);
  EXPECT_DOUBLE_EQ(t.last, 92.0);
  EXPECT_DOUBLE_EQ(t.min, 92.0);
  EXPECT_DOUBLE_EQ(t.max, 100.0);
  EXPECT_DOUBLE_EQ(t.first_started, 1.0);
  EXPECT_DOUBLE_EQ(t.last_started, 2.0);
  EXPECT_EQ(t.node, "gpu01");
  EXPECT_EQ(t.name, "stream.triad");
  EXPECT_EQ(t.dtype, "float64");
  EXPECT_EQ(t.unit, "GB/s");
  EXPECT_EQ(t.better, "higher");
}

TEST(ComputeTrends, NoiseIsJudgedOnTheLogRatio) {
  // A fall can't pass 100%, so with cv 50% a share-based noise bound (150%) would call even a
  // fall to a ten-thousandth steady; on the log ratio, |ln(92 / 1e6)| = 9.29 > 1.5.
  auto trends = ComputeTrends({Point(1, 1.0e6, 0.01), Point(2, 92.0, 0.5)}, 0.05);
  ASSERT_EQ(trends.size(), 1u);
  EXPECT_EQ(trends[0].verdict, "regressed");
  // ln(0.5) = -0.69 is inside 3 * 30% = 0.9: noise, though the share (-50%) passes 5%.
  trends = ComputeTrends({Point(1, 100.0, 0.3), Point(2, 50.0, 0.01)}, 0.05);
  EXPECT_EQ(trends[0].verdict, "steady");
  // Doubling: ln 2 = 0.69 > 3 * 20% = 0.6: improved.
  trends = ComputeTrends({Point(1, 100.0, 0.2), Point(2, 200.0, 0.01)}, 0.05);
  EXPECT_EQ(trends[0].verdict, "improved");
}

TEST(ComputeTrends, NoisySeriesNeedsALargerMove) {
  // The same -8% with cv 5%: the bound is 3 * 5% = 15%, so it is noise.
  auto trends = ComputeTrends({Point(1, 100.0, 0.05), Point(2, 92.0, 0.01)}, 0.05);
  ASSERT_EQ(trends.size(), 1u);
  EXPECT_EQ(trends[0].verdict, "steady");
  // The larger cv of first and last counts, whichever it is.
  trends = ComputeTrends({Point(1, 100.0, 0.01), Point(2, 92.0, 0.05)}, 0.05);
  EXPECT_EQ(trends[0].verdict, "steady");
  // Beyond 15%: regressed after all.
  trends = ComputeTrends({Point(1, 100.0, 0.05), Point(2, 80.0, 0.05)}, 0.05);
  EXPECT_EQ(trends[0].verdict, "regressed");
  // A cv in the middle of the series is not the first's or the last's.
  trends = ComputeTrends({Point(1, 100.0), Point(2, 99.0, 0.5), Point(3, 92.0)}, 0.05);
  EXPECT_EQ(trends[0].verdict, "regressed");
  EXPECT_NEAR(*trends[0].vs_previous, (92.0 - 99.0) / 99.0, 1e-12);
}

TEST(ComputeTrends, RiseIsImprovedAndSmallMovesAreSteady) {
  auto trends = ComputeTrends({Point(1, 100.0), Point(2, 106.0)}, 0.05);
  EXPECT_EQ(trends[0].verdict, "improved");
  EXPECT_NEAR(*trends[0].change, 0.06, 1e-12);
  trends = ComputeTrends({Point(1, 100.0), Point(2, 104.0)}, 0.05);
  EXPECT_EQ(trends[0].verdict, "steady");
  trends = ComputeTrends({Point(1, 100.0), Point(2, 96.0)}, 0.05);
  EXPECT_EQ(trends[0].verdict, "steady");
  // A negative first value: change is relative to its magnitude.
  trends = ComputeTrends({Point(1, -10.0), Point(2, -5.0)}, 0.05);
  EXPECT_NEAR(*trends[0].change, 0.5, 1e-12);
  EXPECT_EQ(trends[0].verdict, "improved");
}

TEST(ComputeTrends, LowerIsBetterFlipsTheVerdict) {
  // A latency from 4 us to 5 us is +25%: worse.
  auto trends = ComputeTrends({Point(1, 4.0, {}, "latency.launch", "lower", "us"),
                               Point(2, 5.0, {}, "latency.launch", "lower", "us")},
                              0.05);
  ASSERT_EQ(trends.size(), 1u);
  EXPECT_NEAR(*trends[0].change, 0.25, 1e-12);
  EXPECT_EQ(trends[0].verdict, "regressed");
  trends = ComputeTrends({Point(1, 5.0, {}, "latency.launch", "lower", "us"),
                          Point(2, 4.0, {}, "latency.launch", "lower", "us")},
                         0.05);
  EXPECT_NEAR(*trends[0].change, -0.2, 1e-12);
  EXPECT_EQ(trends[0].verdict, "improved");
}

TEST(ComputeTrends, UnknownDirectionIsChangedOrSteady) {
  auto trends = ComputeTrends({Point(1, 1.0, {}, "auc", ""), Point(2, 0.8, {}, "auc", "")}, 0.05);
  EXPECT_EQ(trends[0].verdict, "changed");
  trends = ComputeTrends({Point(1, 1.0, {}, "auc", ""), Point(2, 1.2, {}, "auc", "")}, 0.05);
  EXPECT_EQ(trends[0].verdict, "changed");
  trends = ComputeTrends({Point(1, 1.0, {}, "auc", ""), Point(2, 0.99, {}, "auc", "")}, 0.05);
  EXPECT_EQ(trends[0].verdict, "steady");
}

TEST(ComputeTrends, SinglePointAndZeroFirst) {
  auto trends = ComputeTrends({Point(1, 100.0, 0.01)}, 0.05);
  ASSERT_EQ(trends.size(), 1u);
  EXPECT_EQ(trends[0].verdict, "single");
  EXPECT_EQ(trends[0].points, 1u);
  EXPECT_FALSE(trends[0].change.has_value());
  EXPECT_FALSE(trends[0].vs_previous.has_value());
  EXPECT_DOUBLE_EQ(trends[0].first, 100.0);
  EXPECT_DOUBLE_EQ(trends[0].last, 100.0);

  // From 0 there is no relative change, but a rise of a higher-is-better figure is better.
  trends = ComputeTrends({Point(1, 0.0), Point(2, 3.0)}, 0.05);
  EXPECT_FALSE(trends[0].change.has_value());
  EXPECT_EQ(trends[0].verdict, "improved");
  trends = ComputeTrends({Point(1, 0.0), Point(2, 0.0)}, 0.05);
  EXPECT_EQ(trends[0].verdict, "steady");
  EXPECT_FALSE(trends[0].vs_previous.has_value());  // previous is 0
}

TEST(ComputeTrends, InvalidPointsAreLeftOut) {
  SeriesPoint bad_first = Point(1, 10.0);
  bad_first.valid = false;
  SeriesPoint bad_last = Point(4, 1.0);
  bad_last.valid = false;
  auto trends = ComputeTrends({bad_first, Point(2, 100.0), Point(3, 101.0), bad_last}, 0.05);
  ASSERT_EQ(trends.size(), 1u);
  EXPECT_EQ(trends[0].points, 2u);
  EXPECT_DOUBLE_EQ(trends[0].first, 100.0);
  EXPECT_DOUBLE_EQ(trends[0].last, 101.0);
  EXPECT_DOUBLE_EQ(trends[0].min, 100.0);
  EXPECT_DOUBLE_EQ(trends[0].first_started, 2.0);
  EXPECT_DOUBLE_EQ(trends[0].last_started, 3.0);
  EXPECT_EQ(trends[0].verdict, "steady");

  // Only invalid points: no trend at all.
  EXPECT_TRUE(ComputeTrends({bad_first, bad_last}, 0.05).empty());
}

TEST(ComputeTrends, GroupsByNodeNameDtypeAndParams) {
  std::vector<SeriesPoint> points;
  for (const std::string params : {R"({"n":1024})", R"({"n":4096})"}) {
    for (int i = 0; i < 3; ++i) {
      SeriesPoint p = Point(i + 1, params == R"({"n":1024})" ? 100.0 - 10 * i : 200.0, {}, "gemm",
                            "higher", "GFLOP/s");
      p.dtype = "float32";
      p.params = params;
      points.push_back(p);
    }
  }
  SeriesPoint other_dtype = Point(1, 50.0, {}, "gemm", "higher", "GFLOP/s");
  other_dtype.dtype = "float16";
  other_dtype.params = R"({"n":1024})";
  points.push_back(other_dtype);
  SeriesPoint other_node = points[0];
  other_node.node = "gpu02";
  points.push_back(other_node);

  const auto trends = ComputeTrends(points, 0.05);
  ASSERT_EQ(trends.size(), 4u);
  // Key order: node, name, dtype, params.
  EXPECT_EQ(trends[0].node, "gpu01");
  EXPECT_EQ(trends[0].dtype, "float16");
  EXPECT_EQ(trends[0].verdict, "single");
  EXPECT_EQ(trends[1].params, R"({"n":1024})");
  EXPECT_EQ(trends[1].points, 3u);
  EXPECT_DOUBLE_EQ(trends[1].first, 100.0);
  EXPECT_DOUBLE_EQ(trends[1].last, 80.0);
  EXPECT_NEAR(*trends[1].change, -0.2, 1e-12);
  EXPECT_NEAR(*trends[1].vs_previous, -10.0 / 90.0, 1e-12);
  EXPECT_EQ(trends[1].verdict, "regressed");
  EXPECT_EQ(trends[2].params, R"({"n":4096})");
  EXPECT_EQ(trends[2].points, 3u);
  EXPECT_EQ(trends[2].verdict, "steady");
  EXPECT_EQ(trends[3].node, "gpu02");
  EXPECT_EQ(trends[3].points, 1u);
}

TEST(ComputeTrends, OrdersEachSeriesByTime) {
  // Given newest first, first and last still follow time.
  const auto trends = ComputeTrends({Point(3, 92.0), Point(1, 100.0), Point(2, 96.0)}, 0.05);
  ASSERT_EQ(trends.size(), 1u);
  EXPECT_DOUBLE_EQ(trends[0].first, 100.0);
  EXPECT_DOUBLE_EQ(trends[0].last, 92.0);
  EXPECT_NEAR(*trends[0].vs_previous, -4.0 / 96.0, 1e-12);
  EXPECT_EQ(trends[0].verdict, "regressed");
}

}  // namespace
}  // namespace parity::store
