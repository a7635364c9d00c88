// SPDX-License-Identifier: Apache-2.0
// BabelStream's model: byte weights, order, the arrays each kernel writes, and the gold values
// against their closed forms.
#include "bench/stream_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace parity::bench {
namespace {

TEST(StreamModel, ClassicOrderAndByteWeightsAreBabelStreams) {
  // src/benchmark.h: Copy 2, Mul 2, Add 3, Triad 3, Dot 2; Nstream 4.
  std::vector<std::pair<std::string, std::size_t>> got;
  for (const StreamKernelInfo& k : ClassicStreamKernels()) got.emplace_back(k.benchmark, k.weight);
  const std::vector<std::pair<std::string, std::size_t>> want = {{"stream.copy", 2},
                                                                 {"stream.mul", 2},
                                                                 {"stream.add", 3},
                                                                 {"stream.triad", 3},
                                                                 {"stream.dot", 2}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(NstreamKernel().benchmark, "stream.nstream");
  EXPECT_EQ(NstreamKernel().weight, 4u);
  EXPECT_EQ(NstreamKernel().op, StreamOp::kNstream);
  EXPECT_FALSE(ClassicStreamKernels()[4].op.has_value());  // dot is Backend::Dot
}

TEST(StreamModel, ArraysWritten) {
  EXPECT_EQ(StreamArraysWritten(StreamOp::kCopy), std::vector<int>{2});
  EXPECT_EQ(StreamArraysWritten(StreamOp::kMul), std::vector<int>{1});
  EXPECT_EQ(StreamArraysWritten(StreamOp::kAdd), std::vector<int>{2});
  EXPECT_EQ(StreamArraysWritten(StreamOp::kTriad), std::vector<int>{0});
  EXPECT_EQ(StreamArraysWritten(StreamOp::kNstream), std::vector<int>{0});
}

TEST(StreamModel, ClassicGoldMatchesClosedForm) {
  // One classic repetition: c = a; b = 0.4c; c = a + b = 1.4a; a = b + 0.4c = 0.96a.
  // So after r repetitions a = 0.1·0.96^r, b = 0.04·0.96^(r-1), c = 0.14·0.96^(r-1), and
  // the last dot = a·b·n.
  const std::size_t n = 1000;
  for (int reps : {1, 2, 10, 100}) {
    const StreamGold<double> g = EvolveStreamGold<double>(ClassicStreamKernels(), reps, n);
    const double a = 0.1 * std::pow(0.96, reps);
    const double b = 0.04 * std::pow(0.96, reps - 1);
    const double c = 0.14 * std::pow(0.96, reps - 1);
    EXPECT_NEAR(g.a, a, 1e-13 * a) << reps;
    EXPECT_NEAR(g.b, b, 1e-13 * b) << reps;
    EXPECT_NEAR(g.c, c, 1e-13 * c) << reps;
    EXPECT_NEAR(g.sum, a * b * n, 1e-12 * a * b * n) << reps;
  }
}

TEST(StreamModel, NstreamGoldGrowsByBPlusScalarC) {
  // From the start values (b = 0.2, c = 0), a += 0.2 each repetition.
  const auto nstream = std::span(&NstreamKernel(), 1);
  const StreamGold<double> g = EvolveStreamGold<double>(nstream, 50, 10);
  EXPECT_NEAR(g.a, 0.1 + 50 * 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(g.b, 0.2);
  EXPECT_DOUBLE_EQ(g.c, 0.0);
  const StreamGold<float> f = EvolveStreamGold<float>(nstream, 50, 10);
  EXPECT_NEAR(f.a, 10.1f, 1e-4f);
}

TEST(StreamModel, ValueTestIsBabelStreamsRelativeTest) {
  const double mrel = 100 * std::numeric_limits<double>::epsilon();
  EXPECT_TRUE(StreamValueAgrees(1.0, 1.0, mrel));
  EXPECT_TRUE(StreamValueAgrees(1.0 + 50 * std::numeric_limits<double>::epsilon(), 1.0, mrel));
  EXPECT_FALSE(StreamValueAgrees(1.0 + 1e-12, 1.0, mrel));
  EXPECT_FALSE(StreamValueAgrees(std::nan(""), 1.0, mrel));
  EXPECT_FALSE(StreamValueAgrees(-1.0, 1.0, mrel));
  EXPECT_TRUE(StreamValueAgrees(0.0, 0.0, mrel));
}

}  // namespace
}  // namespace parity::bench
