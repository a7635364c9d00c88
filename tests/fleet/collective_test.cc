// SPDX-License-Identifier: Apache-2.0
#include "fleet/collective.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace parity::fleet {
namespace {

// nccl-tests doc/PERFORMANCE.md: busBw = algBw × factor, with the factors it publishes.
TEST(BusBandwidth, MatchesNcclTestsDefinitions) {
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kAllReduce, 8), 2.0 * 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kReduceScatter, 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kSendRecv, 8), 1.0);
  // One rank moves nothing over a bus.
  EXPECT_DOUBLE_EQ(BusBandwidthFactor(CollectiveKind::kAllReduce, 1), 0.0);
  // algBw = size / time, in GB/s (10^9).
  EXPECT_DOUBLE_EQ(AlgorithmBandwidth(std::size_t{1} << 30, 0.5), 2.147483648);
}

// nccl-tests' size column: the per-rank buffer for all_reduce; the gathered (all_gather) or
// scattered-from (reduce_scatter) whole for the others, rounded to whole parts.
TEST(Layout, FollowsNcclTestsSizeColumn) {
  auto ar = LayoutFor(CollectiveKind::kAllReduce, 1024, 4);
  ASSERT_TRUE(ar);
  EXPECT_EQ(ar->send_count, 256u);
  EXPECT_EQ(ar->recv_count, 256u);
  auto ag = LayoutFor(CollectiveKind::kAllGather, 1024, 4);
  ASSERT_TRUE(ag);
  EXPECT_EQ(ag->send_count, 64u);
  EXPECT_EQ(ag->recv_count, 256u);
  auto rs = LayoutFor(CollectiveKind::kReduceScatter, 1000, 3);
  ASSERT_TRUE(rs);
  EXPECT_EQ(rs->send_count, 249u);
  EXPECT_EQ(rs->recv_count, 83u);
  EXPECT_EQ(rs->bytes, 996u);
  auto a2a = LayoutFor(CollectiveKind::kAllToAll, 64, 4);
  ASSERT_TRUE(a2a);
  EXPECT_EQ(a2a->send_count, 16u);
  EXPECT_EQ(a2a->recv_count, 16u);
  // Too small to give every rank one element, or no ranks: not run.
  EXPECT_FALSE(LayoutFor(CollectiveKind::kAllGather, 8, 4));
  EXPECT_FALSE(LayoutFor(CollectiveKind::kAllReduce, 2, 4));
  EXPECT_FALSE(LayoutFor(CollectiveKind::kAllReduce, 64, 0));
  EXPECT_EQ(FindCollective("alltoall")->kind, CollectiveKind::kAllToAll);
  EXPECT_EQ(FindCollective("allreduce"), nullptr);
  EXPECT_EQ(Collectives().size(), 6u);
}

// Every rank's inputs, combined here the way the collective defines, in an order no MPI
// library would use (last rank first): the expected results must match to the bit.
class Simulated : public ::testing::TestWithParam<int> {};

TEST_P(Simulated, ExpectedResultsAreWhatTheCollectiveComputes) {
  const int n = GetParam();
  const std::uint64_t seed = 12345;
  const std::size_t count = 7 * static_cast<std::size_t>(n);
  std::vector<std::vector<float>> in(static_cast<std::size_t>(n), std::vector<float>(count));
  for (int r = 0; r < n; ++r) FillInput(CollectiveKind::kAllReduce, r, n, seed, in[r]);
  std::vector<float> sum(count, 0.0f);
  for (int r = n - 1; r >= 0; --r) {
    for (std::size_t i = 0; i < count; ++i) sum[i] += in[r][i];
  }
  const std::size_t part = count / static_cast<std::size_t>(n);
  for (int r = 0; r < n; ++r) {
    std::vector<float> want(count);
    FillExpected(CollectiveKind::kAllReduce, r, n, seed, want);
    EXPECT_EQ(CountWrong(sum, want, 0), 0u);

    std::vector<float> rs(part);
    FillExpected(CollectiveKind::kReduceScatter, r, n, seed, rs);
    EXPECT_EQ(CountWrong(std::span<const float>(sum).subspan(r * part, part), rs, 0), 0u);

    std::vector<float> gathered, ag(count);
    for (int s = 0; s < n; ++s)
      gathered.insert(gathered.end(), in[s].begin(), in[s].begin() + part);
    FillExpected(CollectiveKind::kAllGather, r, n, seed, ag);
    EXPECT_EQ(CountWrong(gathered, ag, 0), 0u);

    std::vector<float> a2a, want_a2a(count);
    for (int s = 0; s < n; ++s) {
      a2a.insert(a2a.end(), in[s].begin() + r * part, in[s].begin() + (r + 1) * part);
    }
    FillExpected(CollectiveKind::kAllToAll, r, n, seed, want_a2a);
    EXPECT_EQ(CountWrong(a2a, want_a2a, 0), 0u);

    std::vector<float> from_prev(count);
    FillExpected(CollectiveKind::kSendRecv, r, n, seed, from_prev);
    EXPECT_EQ(CountWrong(in[(r + n - 1) % n], from_prev, 0), 0u);

    std::vector<float> bcast(count), held(count);
    FillExpected(CollectiveKind::kBroadcast, r, n, seed, bcast);
    EXPECT_EQ(CountWrong(in[0], bcast, 0), 0u);
    FillInput(CollectiveKind::kBroadcast, r, n, seed, held);
    // A non-root's buffer before the broadcast counts as wrong everywhere.
    EXPECT_EQ(CountWrong(held, bcast, 0), r == 0 ? 0u : count);
  }
  // Inputs differ between ranks (a transport that delivers the wrong rank's part is caught).
  if (n > 1) {
    EXPECT_GT(CountWrong(in[0], in[1], 0), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, Simulated, ::testing::Values(1, 2, 3, 4, 8));

TEST(CountWrong, UlpsOnTheOrderedIntegerMapping) {
  EXPECT_EQ(OrderedBits(0.0f), 0);
  EXPECT_EQ(OrderedBits(-0.0f), 0);
  EXPECT_EQ(OrderedBits(std::numeric_limits<float>::denorm_min()), 1);
  EXPECT_EQ(OrderedBits(-std::numeric_limits<float>::denorm_min()), -1);
  EXPECT_EQ(OrderedBits(std::nextafter(1.0f, 2.0f)) - OrderedBits(1.0f), 1);
  EXPECT_EQ(OrderedBits(-1.0f), -OrderedBits(1.0f));
  const std::vector<float> want = {1.0f, -2.0f, 0.0f, 3.0f};
  std::vector<float> got = want;
  got[2] = -0.0f;  // same value
  EXPECT_EQ(CountWrong(got, want, 0), 0u);
  got[0] = std::nextafter(1.0f, 2.0f);
  EXPECT_EQ(CountWrong(got, want, 0), 1u);
  EXPECT_EQ(CountWrong(got, want, 1), 0u);
  got[1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(CountWrong(got, want, 1000), 1u);
  got[3] = -3.0f;  // a sign flip is ~2^31 ulps away
  EXPECT_EQ(CountWrong(got, want, 1000), 2u);
  // A short result counts its missing elements as wrong.
  EXPECT_EQ(CountWrong(std::span<const float>(want).first(2), want, 0), 2u);
}

TEST(Ring, PeersFormOneCycle) {
  for (int n : {1, 2, 5}) {
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(RecvPeer(SendPeer(r, n), n), r);
    }
  }
  EXPECT_EQ(SendPeer(3, 4), 0);
  EXPECT_EQ(RecvPeer(0, 4), 3);
}

}  // namespace
}  // namespace parity::fleet
