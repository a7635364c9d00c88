// SPDX-License-Identifier: Apache-2.0
// `parity accept BASE CAND -o OUT`: the front door of the acceptance part. Every criterion of
// every part judged on the two bundles, and OUT written: report.json (format `parity-report`
// v1, the evidence), report.html (the dashboard), junit.xml, and report.sig when signing.
#ifndef PARITY_ACCEPT_ACCEPT_H_
#define PARITY_ACCEPT_ACCEPT_H_

#include <optional>
#include <string>
#include <vector>

#include "accept/bundle_view.h"
#include "accept/criteria.h"
#include "accept/criterion.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity::accept {

struct AcceptOptions {
  std::string baseline, candidate;  ///< bundle directories
  std::string out;                  ///< the report directory
  Criteria criteria;
  bool strict = false;                  ///< a SKIP fails the verdict (also criteria.strict)
  std::optional<std::string> sign_key;  ///< a secret key (parity keygen): writes report.sig
  std::string db_path;                  ///< the results store; "" records nothing
};

struct AcceptResult {
  Json report;  ///< report.json's document
  std::vector<CriterionResult> criteria;
  bool pass = false;
  bool strict = false;
  int passed = 0, failed = 0, skipped = 0, errors = 0;
  std::string out;
  std::vector<std::string> files;  ///< written into OUT, in order
  std::string store_problem;       ///< why the run was not recorded ("" when it was, or no store)
  double seconds = 0.0;
};

/// The report's files in OUT.
inline constexpr const char* kReportFiles[] = {"report.json", "report.html", "junit.xml",
                                               "report.sig"};

/// Judges the candidate bundle against the baseline and writes OUT (made when missing). The
/// verdict is pass when no criterion failed or errored, and (strict) none was skipped. A
/// bundle's missing or corrupt files make the criteria that needed them ERROR; the report is
/// still written. kInvalidInput when a bundle is not a directory, OUT is a file, holds files
/// other than a report's, or can't be written, or the signing key can't be read.
Result<AcceptResult> RunAccept(const AcceptOptions& options);

/// Every part's criteria on two open bundles, in the report's order, as RunAccept judges them
/// (the telemetry records read as it reads them); writes nothing.
std::vector<CriterionResult> JudgeCriteria(const BundleView& baseline, const BundleView& candidate,
                                           const Criteria& criteria);

/// {"id","part","stage","title","status","reason","evidence"}: a criterion as report.json has it.
Json CriterionJson(const CriterionResult& c);

/// The human summary: the criteria table and the verdict.
std::string AcceptText(const AcceptResult& result);

}  // namespace parity::accept

#endif  // PARITY_ACCEPT_ACCEPT_H_
