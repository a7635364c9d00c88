// SPDX-License-Identifier: Apache-2.0
// What `parity accept` requires of the candidate, with the defaults of the seed's acceptance
// and every threshold overridable in a YAML file (--criteria):
//
//   numerics:
//     tolerance: auto        # compare's policy: auto, torch, exact; or rtol/atol (explicit)
//     rtol: 1e-5             # explicit tolerances (both or either; the other is 0)
//     atol: 1e-8
//     golden: golden-dump    # a dump directory: B passes when no worse than `ratio` × A on it
//     ratio: 2.0
//     explain: true          # attribute a failing compare to its origins (parity explain)
//     allow_inherited: true  # tensors beyond their own op's rounding pass when explain finds
//                            # no origin: each op within rounding, the rest inherited
//   quality:
//     metric: auc            # auc, logloss, accuracy
//     margin: 0.0015         # equivalence margin (TOST), a share of the baseline's value
//     relative: true         # false: the margin is in the metric's units
//   throughput:
//     min_ratio: 1.0         # each suite's geometric-mean ratio (candidate over baseline)
//     suites: {gemm: 1.05}   # per-suite minimums
//     confidence: 0.95       # of the per-benchmark intervals
//   stability:
//     max_junction_celsius: 85
//     max_sdc_events: 0
//     max_uncorrectable_ecc: 0
//     max_xid_events: 0
//     max_unrecovered_faults: 0
//     max_fatal_alerts: 0
//   strict: false            # true: a skipped criterion fails the verdict (as --strict)
//
// Unknown keys and values are kInvalidInput "PATH: line N: problem" with "did you mean".
#ifndef PARITY_ACCEPT_CRITERIA_H_
#define PARITY_ACCEPT_CRITERIA_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "compare/tolerance.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity::accept {

struct NumericsCriteria {
  ToleranceRequest tolerance;         ///< policy "auto" unless set
  std::optional<std::string> golden;  ///< absolute, or relative to the criteria file
  double ratio = 2.0;
  bool explain = true;
  bool allow_inherited = true;
};

struct QualityCriteria {
  std::string metric = "auc";
  double margin = 0.0015;
  bool relative = true;
};

struct ThroughputCriteria {
  double min_ratio = 1.0;
  std::map<std::string, double> suites;  ///< suite -> its minimum, over min_ratio
  double confidence = 0.95;
  /// The minimum for `suite`.
  double MinRatio(const std::string& suite) const;
};

struct StabilityCriteria {
  double max_junction_celsius = 85.0;
  int64_t max_sdc_events = 0;
  int64_t max_uncorrectable_ecc = 0;
  int64_t max_xid_events = 0;
  int64_t max_unrecovered_faults = 0;
  int64_t max_fatal_alerts = 0;
};

struct Criteria {
  NumericsCriteria numerics;
  QualityCriteria quality;
  ThroughputCriteria throughput;
  StabilityCriteria stability;
  bool strict = false;
  std::string source = "defaults";  ///< "defaults", or the file they came from
};

/// The most a criteria file may hold.
inline constexpr std::size_t kMaxCriteriaBytes = std::size_t{1} << 20;

/// Parses a criteria file's text over the defaults; `path` names it and locates `golden`.
Result<Criteria> ParseCriteria(std::string_view text, const std::string& path);
/// Reads and parses the criteria file at `path`.
Result<Criteria> LoadCriteria(const std::string& path);

/// Every threshold in force, for the report.
Json CriteriaToJson(const Criteria& criteria);

}  // namespace parity::accept

#endif  // PARITY_ACCEPT_CRITERIA_H_
