// SPDX-License-Identifier: Apache-2.0
// `parity bench`: runs suites on one device of one backend, --repeat times, and builds the
// `parity-bench` v1 document (platform fingerprint, results, datasheet efficiency).
#ifndef PARITY_BENCH_RUNNER_H_
#define PARITY_BENCH_RUNNER_H_

#include <string>
#include <vector>

#include "bench/backend.h"
#include "bench/result.h"
#include "bench/suite.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity::bench {

struct BenchOptions {
  std::string backend = "cpu";
  int device = 0;
  std::vector<std::string> suites;  ///< empty: every suite
  int repeat = 1;                   ///< runs of the whole selection (--repeat)
  SuiteOptions suite;
  /// The platform fingerprint the document carries: `parity bench` passes env::Fingerprint();
  /// null takes HostFingerprint(). The device run on is added to it.
  Json platform;
};

/// A finished run: every result, merged over the repeats, and the document.
struct BenchRun {
  std::vector<BenchResult> results;
  Json document;
  int invalid = 0, skipped = 0, ok = 0;
};

/// Opens the backend and device and runs the suites. kInvalidInput for an unknown suite or
/// backend; kUnavailable when the backend or device can't run here.
Result<BenchRun> RunBench(const BenchOptions& options);

/// Runs on an already opened backend (tests use fakes); `device` is the opened device.
Result<BenchRun> RunBenchOn(Backend& backend, const DeviceInfo& device,
                            const BenchOptions& options);

/// Merges the results of repeated runs (same benchmarks, same order): samples concatenated,
/// each run's median kept, the best figure over all runs, invalid when any run was.
Result<std::vector<BenchResult>> MergeRuns(const std::vector<std::vector<BenchResult>>& runs);

/// The time now in UTC as ISO 8601 ("2026-12-06T14:03:11Z"), a document's "started".
std::string Iso8601Now();

/// The human-readable report: one table per suite.
std::string BenchText(const BenchRun& run);

}  // namespace parity::bench

#endif  // PARITY_BENCH_RUNNER_H_
