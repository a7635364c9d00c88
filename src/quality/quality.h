// SPDX-License-Identifier: Apache-2.0
// `parity quality auc|logloss|accuracy`: is B's model quality at parity with A's on the same
// evaluation set? Paired tests for one run per side, seed spread, Welch and TOST equivalence
// for several, a stratified bootstrap on request.
#ifndef PARITY_QUALITY_QUALITY_H_
#define PARITY_QUALITY_QUALITY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "quality/auc.h"
#include "quality/inference.h"

namespace parity {

struct QualityOptions {
  std::string metric;  ///< "auc", "logloss" or "accuracy"
  std::string labels;
  std::vector<std::string> a, b;  ///< one score file per run (seed)
  std::optional<std::string> column;
  double margin = 0.0015;
  bool relative = true;  ///< margin as a share of A's value (else in the metric's units)
  int64_t bootstrap = 0;
  uint64_t seed = 0;
  double threshold = 0.5;  ///< accuracy: a score at or above it predicts the positive class
  /// Values already in memory (the Python bindings' arrays), by the name `labels`, `a` or `b`
  /// gives them: used instead of reading a file of that name.
  std::map<std::string, std::vector<double>> values;
};

/// The metric names `parity quality` knows, in its registry's order.
std::vector<std::string_view> QualityMetrics();

/// A paired comparison of per-sample values (logloss terms, correctness) of one run per side:
/// the mean difference B - A, its standard error from the differences' sd, z, p, 95% CI.
struct PairedDifference {
  int64_t n = 0;
  double delta = 0.0, se = 0.0, z = 0.0, p_value = 1.0, ci95_lo = 0.0, ci95_hi = 0.0;
};

struct BootstrapResult {
  int64_t replicates = 0;
  uint64_t seed = 0;
  double se = 0.0, ci95_lo = 0.0, ci95_hi = 0.0;
};

struct QualityReport {
  std::string metric;
  bool higher_is_better = true;
  std::vector<double> runs_a, runs_b;   ///< the metric of each run
  double value_a = 0.0, value_b = 0.0;  ///< means over runs
  double delta = 0.0;                   ///< value_b - value_a
  double margin = 0.0;                  ///< in the metric's units
  std::string margin_text;              ///< how it was set
  std::optional<DeLongTest> delong;
  std::optional<PairedDifference> paired;
  std::optional<Summary> seeds_a, seeds_b;
  std::optional<WelchTest> welch;
  EquivalenceTest tost;
  std::optional<BootstrapResult> bootstrap;
  std::optional<double> normalized_entropy_a, normalized_entropy_b;  ///< logloss
  int64_t samples = 0, positives = 0;
  std::string verdict;  ///< "pass", "fail" or "inconclusive"
  std::string reason;
};

/// Reads the labels and every run's scores, computes the metric per run and judges B against
/// A. Fails (exit 2, naming the file) on unreadable files, lengths that differ, NaN or Inf,
/// labels other than 0 and 1, one class absent where the metric needs both, probabilities
/// outside [0, 1] for logloss, or one run on one side and several on the other.
Result<QualityReport> RunQuality(const QualityOptions& options);

/// {"format":"parity-quality","version":1,"metric":..,"<metric>_a":..,"<metric>_b":..,...}.
Json QualityReportJson(const QualityReport& report);
std::string QualityReportText(const QualityReport& report);

}  // namespace parity

#endif  // PARITY_QUALITY_QUALITY_H_
