// SPDX-License-Identifier: Apache-2.0
#include "fleet/collective.h"

#include <array>
#include <bit>
#include <cmath>
#include <limits>

namespace parity::fleet {
namespace {

constexpr std::array<Collective, 6> kCollectives = {{
    {CollectiveKind::kAllReduce, "all_reduce", "sum of every rank's buffer, on every rank"},
    {CollectiveKind::kAllGather, "all_gather", "every rank's part, concatenated, on every rank"},
    {CollectiveKind::kReduceScatter, "reduce_scatter",
     "sum of every rank's buffer, part r of it on rank r"},
    {CollectiveKind::kAllToAll, "alltoall", "part d of rank s's buffer to part s on rank d"},
    {CollectiveKind::kBroadcast, "broadcast", "rank 0's buffer on every rank"},
    {CollectiveKind::kSendRecv, "sendrecv", "each rank to the next, in a ring"},
}};

// An input element: an integer in [-30, 30], so sums over 2^16 ranks stay below 2^24 and are
// exact in float32 in any order.
float Value(int rank, std::size_t index, std::uint64_t seed) {
  const std::uint64_t v = (index * 31 + static_cast<std::uint64_t>(rank) * 17 + seed) % 61;
  return static_cast<float>(static_cast<int>(v) - 30);
}

float Sum(int ranks, std::size_t index, std::uint64_t seed) {
  float sum = 0.0f;
  for (int r = 0; r < ranks; ++r) sum += Value(r, index, seed);
  return sum;
}

}  // namespace

std::span<const Collective> Collectives() { return kCollectives; }

const Collective* FindCollective(std::string_view name) {
  for (const Collective& c : kCollectives) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::optional<Layout> LayoutFor(CollectiveKind kind, std::size_t bytes, int ranks) {
  if (ranks < 1) return std::nullopt;
  const std::size_t n = static_cast<std::size_t>(ranks);
  const std::size_t elements = bytes / sizeof(float);
  Layout layout;
  switch (kind) {
    case CollectiveKind::kAllReduce:
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kSendRecv:
      if (elements == 0) return std::nullopt;
      layout.send_count = layout.recv_count = elements;
      layout.bytes = elements * sizeof(float);
      return layout;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll: {
      const std::size_t part = elements / n;
      if (part == 0) return std::nullopt;
      layout.send_count = kind == CollectiveKind::kAllGather ? part : part * n;
      layout.recv_count = kind == CollectiveKind::kReduceScatter ? part : part * n;
      layout.bytes = part * n * sizeof(float);
      return layout;
    }
  }
  return std::nullopt;
}

double BusBandwidthFactor(CollectiveKind kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2.0 * (n - 1.0) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return (n - 1.0) / n;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

double AlgorithmBandwidth(std::size_t bytes, double seconds) {
  return static_cast<double>(bytes) / seconds / 1e9;
}

int SendPeer(int rank, int ranks) { return (rank + 1) % ranks; }
int RecvPeer(int rank, int ranks) { return (rank + ranks - 1) % ranks; }

void FillInput(CollectiveKind kind, int rank, int ranks, std::uint64_t seed,
               std::span<float> send) {
  (void)ranks;
  if (kind == CollectiveKind::kBroadcast && rank != kRoot) {
    // What a non-root holds before the broadcast: never a valid result.
    for (float& v : send) v = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  for (std::size_t i = 0; i < send.size(); ++i) send[i] = Value(rank, i, seed);
}

void FillExpected(CollectiveKind kind, int rank, int ranks, std::uint64_t seed,
                  std::span<float> expected) {
  const std::size_t n = static_cast<std::size_t>(ranks);
  switch (kind) {
    case CollectiveKind::kAllReduce:
      for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = Sum(ranks, i, seed);
      return;
    case CollectiveKind::kAllGather: {
      const std::size_t part = expected.size() / n;
      for (std::size_t s = 0; s < n; ++s) {
        for (std::size_t i = 0; i < part; ++i) {
          expected[s * part + i] = Value(static_cast<int>(s), i, seed);
        }
      }
      return;
    }
    case CollectiveKind::kReduceScatter: {
      const std::size_t part = expected.size();
      const std::size_t offset = static_cast<std::size_t>(rank) * part;
      for (std::size_t i = 0; i < part; ++i) expected[i] = Sum(ranks, offset + i, seed);
      return;
    }
    case CollectiveKind::kAllToAll: {
      const std::size_t part = expected.size() / n;
      const std::size_t offset = static_cast<std::size_t>(rank) * part;
      for (std::size_t s = 0; s < n; ++s) {
        for (std::size_t i = 0; i < part; ++i) {
          expected[s * part + i] = Value(static_cast<int>(s), offset + i, seed);
        }
      }
      return;
    }
    case CollectiveKind::kBroadcast:
      for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = Value(kRoot, i, seed);
      return;
    case CollectiveKind::kSendRecv: {
      const int from = RecvPeer(rank, ranks);
      for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = Value(from, i, seed);
      return;
    }
  }
}

std::int64_t OrderedBits(float value) {
  const auto bits = static_cast<std::int32_t>(std::bit_cast<std::uint32_t>(value));
  // Negative floats order backwards as sign-magnitude integers: mirror them below zero, so −0
  // and +0 are both 0 and the smallest subnormals of either sign are ±1.
  return bits >= 0 ? bits : -static_cast<std::int64_t>(bits & 0x7fffffff);
}

std::uint64_t CountWrong(std::span<const float> got, std::span<const float> expected,
                         std::uint64_t max_ulps) {
  std::uint64_t wrong = 0;
  const std::size_t n = got.size() < expected.size() ? got.size() : expected.size();
  wrong += (got.size() > n ? got.size() - n : 0) + (expected.size() > n ? expected.size() - n : 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(got[i]) || std::isnan(expected[i])) {
      ++wrong;
      continue;
    }
    const std::int64_t d = OrderedBits(got[i]) - OrderedBits(expected[i]);
    if (static_cast<std::uint64_t>(d < 0 ? -d : d) > max_ulps) ++wrong;
  }
  return wrong;
}

}  // namespace parity::fleet
