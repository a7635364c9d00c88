// SPDX-License-Identifier: Apache-2.0
// `parity bench --suite collective` and `--suite interconnect`, run by every rank under mpirun:
// each collective over a sweep of sizes, out of place and in place, timed as nccl-tests times
// it and checked after every size; and the point-to-point bandwidth and latency matrix
// between ranks. Every rank returns the same results; rank 0 reports them.
#ifndef PARITY_FLEET_COLLECTIVE_BENCH_H_
#define PARITY_FLEET_COLLECTIVE_BENCH_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/result.h"
#include "core/json_util.h"
#include "core/status.h"
#include "fleet/mpi_session.h"
#include "fleet/transport.h"

namespace parity::fleet {

struct CollectiveOptions {
  std::vector<std::string> collectives;          ///< empty: every one, in Collectives() order
  std::size_t min_bytes = 8;                     ///< --min-bytes
  std::size_t max_bytes = std::size_t{1} << 30;  ///< --max-bytes; sizes double from min
  int reps = 5;                                  ///< timed samples per size (--reps)
  std::optional<int> iters;  ///< operations per sample; default 20, fewer above 4 MiB
  std::uint64_t seed = 42;   ///< input pattern
  /// Test injection (--inject corrupt:rank=R): that rank changes one element of every output
  /// before it is checked, so the run must report it wrong.
  std::optional<int> corrupt_rank;
  /// Lines of progress, on rank 0 only (may be empty).
  std::function<void(std::string_view)> progress;
};

/// Names in `names` that are not collectives, as an error naming the first; Ok when all are.
Status CheckCollectiveNames(const std::vector<std::string>& names);

/// Operations timed per sample at `bytes` when --iters is not given.
int DefaultIterations(std::size_t bytes);

/// Every collective and size: `collective.<name>` results in GB/s of busbw (samples, best,
/// median), with algbw, busbw, time_us and wrong fields; invalid when any rank's output was
/// wrong. A size no rank could allocate is a skipped result with the reason.
Result<std::vector<bench::BenchResult>> RunCollectiveSuite(const MpiSession& session,
                                                           Transport& transport,
                                                           const CollectiveOptions& options);

struct InterconnectOptions {
  std::size_t bytes = std::size_t{64} << 20;  ///< message of the bandwidth matrix
  int reps = 5;
  std::optional<int> iters;
  std::uint64_t seed = 42;
  std::function<void(std::string_view)> progress;
};

/// For every ordered pair of ranks: `interconnect.bandwidth` one way (params.direction "uni")
/// and both ways at once ("bi", the sum of both directions) in GB/s, and
/// `interconnect.latency`, half the round trip of 8 bytes, in us. Every message is checked.
Result<std::vector<bench::BenchResult>> RunInterconnectSuite(const MpiSession& session,
                                                             Transport& transport,
                                                             const InterconnectOptions& options);

/// nccl-tests' table: per collective and size, out-of-place and in-place time(us), algbw,
/// busbw and #wrong, then "# Out of bounds values" and "# Avg bus bandwidth".
std::string CollectiveText(const std::vector<bench::BenchResult>& results);
/// The matrices "rank(row) -> rank(column)": uni and bidirectional GB/s and latency us.
std::string InterconnectText(const std::vector<bench::BenchResult>& results, int ranks);

/// The parity-bench v1 document of a run across ranks: `platform` (rank 0's fingerprint) with
/// "ranks": each rank's host, the backend, "device": "N ranks on H hosts", suites, settings.
Json RanksDocument(const MpiSession& session, Json platform, std::string_view backend,
                   const std::vector<std::string>& suites, Json settings, double seconds,
                   const std::vector<bench::BenchResult>& results);

}  // namespace parity::fleet

#endif  // PARITY_FLEET_COLLECTIVE_BENCH_H_
