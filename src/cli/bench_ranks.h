// SPDX-License-Identifier: Apache-2.0
// The suites of `parity bench` that run across MPI ranks (collective, interconnect): their
// options on the bench command line, and the run on every rank with rank 0 reporting.
#ifndef PARITY_CLI_BENCH_RANKS_H_
#define PARITY_CLI_BENCH_RANKS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cli/common.h"
#include "core/status.h"

namespace CLI {
class App;
}

namespace parity::cli {

/// What `parity bench` takes for the rank suites.
struct RankSuiteFlags {
  std::string collectives;  ///< --collective NAME[,NAME]
  std::string min_bytes;    ///< --min-bytes (8, 4K, 64M, 1G)
  std::string max_bytes;    ///< --max-bytes
  int iters = 0;            ///< --iters
  std::string inject;       ///< --inject corrupt:rank=R
  std::string transport;    ///< --transport mpi|nccl|rccl ("" : by the backend)
};
void AddRankSuiteFlags(CLI::App& app, RankSuiteFlags* flags);

/// True for "collective" and "interconnect".
bool IsRankSuite(const std::string& suite);

/// "8", "4K", "64M", "1G" (powers of 1024), "1GiB", "512B": bytes; kInvalidInput naming `flag`.
Result<std::size_t> ParseByteSize(const std::string& text, std::string_view flag);

/// Runs the rank suites on every rank: exit code (rank 0 prints and writes --json).
int RunRankSuites(const std::vector<std::string>& suites, const std::string& backend, int reps,
                  std::uint64_t seed, const RankSuiteFlags& flags, const CommonOptions& common);

}  // namespace parity::cli

#endif  // PARITY_CLI_BENCH_RANKS_H_
