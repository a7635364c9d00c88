// SPDX-License-Identifier: Apache-2.0
// `parity quality curve`: two platforms' training curves (one file per seed) against each
// other: B's mean against A's seed envelope step by step, and the final values compared.
#ifndef PARITY_QUALITY_CURVE_H_
#define PARITY_QUALITY_CURVE_H_

#include <optional>
#include <string>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"
#include "quality/inference.h"

namespace parity {

struct CurveOptions {
  std::vector<std::string> a, b;  ///< CSV files with a header, one per run (seed)
  std::string step_column = "step";
  std::string value_column = "value";
  int64_t patience = 3;  ///< consecutive steps outside the envelope that make a departure
  double margin = 0.0015;
  bool relative = true;  ///< final-value margin as a share of A's final mean
};

/// One step present in every run.
struct CurvePoint {
  double step = 0.0;
  double a_mean = 0.0, a_min = 0.0, a_max = 0.0;
  double b_mean = 0.0;
  bool outside = false;  ///< B's mean outside [a_min, a_max]
};

struct CurveReport {
  std::vector<CurvePoint> points;
  /// The first step from which B's mean stays outside A's envelope for `patience` steps;
  /// absent when it never does, or when A has one run (no envelope).
  std::optional<double> first_departure;
  int64_t steps_outside = 0;
  int64_t runs_a = 0, runs_b = 0, patience = 0;
  std::vector<double> final_a, final_b;  ///< each run's value at the last common step
  std::optional<WelchTest> welch;
  std::optional<EquivalenceTest> tost;
  double margin = 0.0;
  std::string margin_text;
  std::string verdict, reason;
};

/// Reads every run, keeps the steps all runs have, and judges. Fails (exit 2, naming the
/// file and line) on unreadable files, missing columns, non-numbers, repeated steps or no
/// common step.
Result<CurveReport> RunCurve(const CurveOptions& options);

Json CurveReportJson(const CurveReport& report);
std::string CurveReportText(const CurveReport& report);

}  // namespace parity

#endif  // PARITY_QUALITY_CURVE_H_
