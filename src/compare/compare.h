// SPDX-License-Identifier: Apache-2.0
// `parity compare`: the front door of the comparison part.
#ifndef PARITY_COMPARE_COMPARE_H_
#define PARITY_COMPARE_COMPARE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compare/metrics.h"
#include "compare/tolerance.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity {

struct Side;  // compare/entries.h

struct CompareOptions {
  std::string a, b;
  std::optional<std::string> golden;
  ToleranceRequest tolerance;
  std::vector<ToleranceRule> rules;  ///< from --tol-file, first match wins
  std::vector<std::string> only;     ///< globs on tensor names; empty = all
  double ratio = 2.0;                ///< golden: B may be this many times worse than A
  std::optional<double> tiny;        ///< |b| below this is "small"; default per dtype
  int worst = 5;
  /// Plain tensors (not dump records): the op that produced them ("matmul", "add", ...), whose
  /// class picks the `auto` model (elementwise, data movement, reduction) as in a dump.
  std::string op;
};

/// A candidate's error against the golden, and the verdict rule's numbers.
struct GoldenVerdict {
  GoldenError err_a, err_b;
  double floor_rmse = 0.0, floor_max_abs = 0.0;
};

/// The result for one pair of tensors.
struct TensorResult {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  bool shape_known = true;  ///< false: a not-stored tensor recorded without a shape
  bool pass = false;
  bool structural = false;
  /// Neither passed nor failed: a side parity does not compare (a tensor the dump does not
  /// hold, a complex dtype); `reason` says which and why. Verdict "skip".
  bool not_compared = false;
  std::string reason;  ///< one line
  std::optional<PairMetrics> metrics;
  std::optional<Tolerance> tolerance;
  std::optional<GoldenVerdict> golden;
  Json stats_comparison;  ///< statistics-only tensors: the compared statistics
  double severity = 0.0;  ///< how far past (>1) or within (<=1) its tolerance; for ordering
};

struct CompareReport {
  std::string a, b, golden;
  std::string kind;                   ///< "files", "directories" or "dumps"
  std::vector<TensorResult> tensors;  ///< in execution order (dumps) or file order
  /// passed + failed + not_compared = tensors; structural counts among the failed.
  int64_t passed = 0, failed = 0, structural = 0, not_compared = 0;
  std::optional<std::string> first_divergence;  ///< dumps: the first failing tensor
  std::vector<std::string> warnings;
};

/// Opens both (three) inputs, pairs their tensors and judges each pair: pass, fail, or (a side
/// parity does not compare) not compared, which is neither. Fails (exit 2) only on unreadable
/// or malformed input; differences are results.
Result<CompareReport> RunCompare(const CompareOptions& options);

/// RunCompare on sides already open (OpenSide, MemorySide): options.a, .b and .golden are not
/// read; the report names the sides' paths.
Result<CompareReport> CompareSides(const CompareOptions& options, const Side& a, const Side& b,
                                   const Side* golden);

/// The tolerance a tensor was judged by, short: "auto: atol 8.1e-06 rtol 8.2e-06 (K=512,
/// float32)", "torch: ...", "golden", "-" for a structural mismatch or a pair not compared.
std::string ToleranceSummary(const TensorResult& result);

/// {"format":"parity-compare","version":1,"summary":{...},"tensors":[...]}.
Json CompareReportJson(const CompareReport& report);
/// The human report: a table worst first, histograms of failing tensors, a summary line.
std::string CompareReportText(const CompareReport& report);
/// One row per tensor: name, verdict and the main metrics.
std::string CompareReportCsv(const CompareReport& report);

}  // namespace parity

#endif  // PARITY_COMPARE_COMPARE_H_
