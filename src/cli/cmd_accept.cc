// SPDX-License-Identifier: Apache-2.0
// parity accept BASE CAND -o OUT: every criterion judged; report.json, report.html, junit.xml.
#include <fmt/format.h>

#include <string>

#include "accept/accept.h"
#include "accept/criteria.h"
#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "fleet/fleet_accept.h"
#include "fleet/fleet_collect.h"
#include "store/store.h"

namespace parity::cli {

int RunAccept(int argc, char** argv) {
  CommonOptions common;
  accept::AcceptOptions options;
  std::string criteria_path, sign_key, db_path;
  bool no_store = false;
  auto app = MakeApp(
      "accept",
      "Judge the candidate bundle CAND against the baseline bundle BASE (each written by parity "
      "collect) and write the report into OUT: report.json (format parity-report, the "
      "evidence), report.html (a self-contained dashboard that opens offline), junit.xml, and "
      "with --sign report.sig (check it with parity verify). Criteria, each PASS, FAIL, SKIP or "
      "ERROR with its reason: numerics (every tensor of each dump stage within its auto "
      "tolerance, or the rest inherited from ops each within rounding as parity explain shows, "
      "or no more than 2x further from a golden; failures attributed to their origins), quality "
      "(each score file's AUC equivalent within 0.15% relative, TOST), "
      "throughput (each bench suite's geometric-mean ratio at least 1.0), stability (no "
      "silent data corruption, every injected fault recovered, junction temperature at most "
      "85 C, no uncorrectable ECC error, no XID event, no fatal alert); --criteria FILE "
      "overrides any threshold. A SKIP never counts as a pass. Exit 0 when the verdict is "
      "pass, 1 when it is fail, 2 on a bad bundle directory, criteria file or OUT. CAND may be a "
      "fleet directory (parity fleet collect): every member is judged against BASE, its report "
      "in OUT/nodes/<member>/, and the verdict, pass only when every member passed, in "
      "OUT/fleet-accept.json.",
      &common);
  app->add_option("baseline", options.baseline, "the trusted platform's bundle")->required();
  app->add_option("candidate", options.candidate, "the new platform's bundle, or a fleet directory")
      ->required();
  app->add_option("-o,--output", options.out,
                  "the report directory (made; a previous report "
                  "in it is replaced)")
      ->option_text("OUT")
      ->required();
  app->add_option("--criteria", criteria_path, "a YAML file of thresholds over the defaults")
      ->option_text("FILE");
  app->add_flag("--strict", options.strict, "a skipped criterion fails the verdict");
  app->add_option("--sign", sign_key, "sign the report with this secret key (parity keygen)")
      ->option_text("KEY");
  app->add_option("--db", db_path,
                  "the results store (default $XDG_DATA_HOME/parity/parity.db, else "
                  "~/.local/share/parity/parity.db)")
      ->option_text("PATH");
  app->add_flag("--no-store", no_store, "do not record the accept in the results store");
  if (auto code = Parse(*app, common, argc, argv)) return *code;

  if (!criteria_path.empty()) {
    auto criteria = accept::LoadCriteria(criteria_path);
    if (!criteria.ok()) return Fail(criteria.status());
    options.criteria = std::move(criteria).value();
  }
  if (!sign_key.empty()) options.sign_key = sign_key;
  if (!no_store) {
    options.db_path = db_path.empty() ? store::DefaultPath() : db_path;
    if (options.db_path.empty()) {
      Warn("no results store (XDG_DATA_HOME and HOME unset, no --db): the accept is not recorded");
    }
  }
  if (fleet::IsFleetDir(options.candidate)) {
    auto fleet_result = fleet::RunFleetAccept(options);
    if (!fleet_result.ok()) return Fail(fleet_result.status());
    if (common.human()) std::fputs(fleet::FleetAcceptText(*fleet_result).c_str(), stdout);
    if (Status s = WriteJsonOutput(common, fleet_result->document); !s.ok()) return Fail(s);
    return fleet_result->pass ? kExitOk : kExitCheckFailed;
  }
  auto result = accept::RunAccept(options);
  if (!result.ok()) return Fail(result.status());
  if (!result->store_problem.empty()) {
    Warn(fmt::format("results store {}: {}; the accept is not recorded", options.db_path,
                     result->store_problem));
  }
  if (common.human()) std::fputs(accept::AcceptText(*result).c_str(), stdout);
  if (Status s = WriteJsonOutput(common, result->report); !s.ok()) return Fail(s);
  return result->pass ? kExitOk : kExitCheckFailed;
}

}  // namespace parity::cli
