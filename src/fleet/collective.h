// SPDX-License-Identifier: Apache-2.0
// The collectives of the collective suite, as nccl-tests defines them (doc/PERFORMANCE.md):
// how a size in bytes lays out over the ranks, the bus-bandwidth factor, and inputs whose
// exact result each rank can predict, so every output element is checked.
#ifndef PARITY_FLEET_COLLECTIVE_H_
#define PARITY_FLEET_COLLECTIVE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace parity::fleet {

enum class CollectiveKind {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kSendRecv
};

/// One collective: its name ("all_reduce"), what a rank sends and receives, and busbw.
struct Collective {
  CollectiveKind kind;
  std::string_view name;
  std::string_view description;
};

/// Every collective, in the order the suite runs them.
std::span<const Collective> Collectives();
const Collective* FindCollective(std::string_view name);

/// The element counts of one operation. `bytes` is nccl-tests' size column: the message for
/// all_reduce, broadcast and sendrecv; the whole gathered (or scattered) buffer for all_gather,
/// reduce_scatter and alltoall, so each rank contributes bytes/ranks of it.
struct Layout {
  std::size_t send_count = 0;  ///< float32 elements each rank sends
  std::size_t recv_count = 0;  ///< float32 elements each rank receives
  std::size_t bytes = 0;       ///< the size actually run (rounded down to whole elements)
};
/// Nothing when `bytes` holds too few elements for `ranks` (less than one float per rank).
std::optional<Layout> LayoutFor(CollectiveKind kind, std::size_t bytes, int ranks);

/// busbw / algbw, nccl-tests' factor: all_reduce 2(n−1)/n; all_gather, reduce_scatter and
/// alltoall (n−1)/n; broadcast and sendrecv 1.
double BusBandwidthFactor(CollectiveKind kind, int ranks);

/// algbw in GB/s (1e9 bytes): bytes moved per second as the user sees it, S/t.
double AlgorithmBandwidth(std::size_t bytes, double seconds);

/// The root of broadcast, and the peers of sendrecv (a ring: send to rank+1, receive from
/// rank−1).
inline constexpr int kRoot = 0;
int SendPeer(int rank, int ranks);
int RecvPeer(int rank, int ranks);

/// Fills `send` (layout.send_count elements) with rank `rank`'s input: small integers whose
/// sums over up to 2^16 ranks are exact in float32, so every result is known exactly.
void FillInput(CollectiveKind kind, int rank, int ranks, std::uint64_t seed, std::span<float> send);
/// The exact output rank `rank` receives (layout.recv_count elements).
void FillExpected(CollectiveKind kind, int rank, int ranks, std::uint64_t seed,
                  std::span<float> expected);

/// Float bits as integers that order like the floats (−0 and +0 both 0, negatives below),
/// so that the difference of two is their distance in ulps.
std::int64_t OrderedBits(float value);
/// Elements of `got` more than `max_ulps` from `expected` on the ordered mapping (NaN is
/// always wrong).
std::uint64_t CountWrong(std::span<const float> got, std::span<const float> expected,
                         std::uint64_t max_ulps);

}  // namespace parity::fleet

#endif  // PARITY_FLEET_COLLECTIVE_H_
