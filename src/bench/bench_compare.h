// SPDX-License-Identifier: Apache-2.0
// `parity bench compare BASE CAND`: per benchmark the ratio of the candidate's median to the
// base's with a confidence interval, a verdict that takes noise into account, and the
// geometric mean per suite.
#ifndef PARITY_BENCH_BENCH_COMPARE_H_
#define PARITY_BENCH_BENCH_COMPARE_H_

#include <optional>
#include <string>
#include <vector>

#include "bench/result.h"
#include "bench/stats.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity::bench {

struct BenchCompareOptions {
  std::optional<double> min_ratio;    ///< --min-ratio: fail when a ratio's upper bound is below
  bool allow_param_mismatch = false;  ///< --allow-param-mismatch
  double confidence = 0.95;           ///< --confidence
  std::string base_path, cand_path;   ///< for the report
};

/// One benchmark present in both documents.
struct BenchComparison {
  std::string label, benchmark, dtype, suite, unit;
  Json params = Json::object();
  bool params_differ = false;
  Json cand_params = Json::object();  ///< when they differ
  bool higher_is_better = true;
  std::optional<double> base_median, cand_median;
  /// The candidate's performance over the base's: cand/base of medians for rates, base/cand for
  /// times, so above 1 always means the candidate is faster.
  std::optional<double> ratio;
  std::optional<Interval> interval;
  std::string basis;    ///< "runs" (run-level medians) or "samples" (within one run)
  std::string verdict;  ///< faster, slower, same, invalid, skipped
  std::string reason;   ///< for invalid or skipped: which side, and why
  bool below_min_ratio = false;
};

struct BenchCompareReport {
  BenchCompareOptions options;
  std::string base_backend, base_device, cand_backend, cand_device;
  int base_repeat = 1, cand_repeat = 1;
  std::vector<BenchComparison> comparisons;
  std::vector<std::string> only_in_base, only_in_cand;  ///< labels
  /// Geometric mean of the ratios per suite (suites with at least one compared benchmark).
  std::vector<std::pair<std::string, double>> suite_geomeans;
  bool within_run_only = false;  ///< some interval came from within-run samples
  int failures = 0;              ///< comparisons failing --min-ratio (invalid ones included)
};

/// Compares `cand` against `base`. kInvalidInput when benchmarks present in both ran with
/// different parameters (unless options.allow_param_mismatch), naming the first.
Result<BenchCompareReport> CompareBench(const BenchDocument& base, const BenchDocument& cand,
                                        const BenchCompareOptions& options);

Json BenchCompareJson(const BenchCompareReport& report);
std::string BenchCompareText(const BenchCompareReport& report);

}  // namespace parity::bench

#endif  // PARITY_BENCH_BENCH_COMPARE_H_
