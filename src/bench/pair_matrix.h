// SPDX-License-Identifier: Apache-2.0
// Results measured between two endpoints (ranks, devices) drawn as matrices "row -> column",
// as CUDA's p2pBandwidthLatencyTest and nccl-tests' peers print them: the peer suite's devices
// and the interconnect suite's ranks.
#ifndef PARITY_BENCH_PAIR_MATRIX_H_
#define PARITY_BENCH_PAIR_MATRIX_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/result.h"

namespace parity::bench {

/// One matrix per distinct title(r), in the order titles first appear, each `count` x `count`
/// with `corner` in its top-left cell: the cell at (params.src, params.dst) holds the result's
/// median (three significant digits), or INVALID; a result with params.direction "bi" fills
/// (dst, src) too, and the diagonal is "-". Skipped results are listed first as
/// "benchmark size: SKIP: reason" lines instead, and invalid ones last as "benchmark size:
/// INVALID: reason".
std::string PairMatrixText(const std::vector<BenchResult>& results, int count,
                           std::string_view corner,
                           const std::function<std::string(const BenchResult&)>& title);

}  // namespace parity::bench

#endif  // PARITY_BENCH_PAIR_MATRIX_H_
