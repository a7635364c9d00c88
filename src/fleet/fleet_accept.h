// SPDX-License-Identifier: Apache-2.0
// `parity accept BASE FLEET_DIR -o OUT`: every member of a fleet judged against the baseline
// bundle as `parity accept` judges one bundle, each report in OUT/nodes/<member>/, and the
// fleet's verdict (pass only when every member passed) in OUT/fleet-accept.json.
#ifndef PARITY_FLEET_FLEET_ACCEPT_H_
#define PARITY_FLEET_FLEET_ACCEPT_H_

#include <string>
#include <vector>

#include "accept/accept.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity::fleet {

/// One member's verdict: "pass", "fail", or "error" for a member without a bundle (its collect
/// failed) or whose bundle could not be judged.
struct MemberVerdict {
  std::string name;
  Json rank;
  std::string verdict;
  std::string reason;  ///< for "error"
  int passed = 0, failed = 0, skipped = 0, errors = 0;
  std::string report;  ///< OUT-relative report.json, when one was written
};

struct FleetAcceptResult {
  Json document;  ///< fleet-accept.json
  std::vector<MemberVerdict> members;
  bool pass = false;
  std::string out;
};

/// `options.candidate` is the fleet directory. OUT is made, or must hold nothing but a
/// previous fleet accept (replaced). kInvalidInput for a malformed fleet.json, a baseline that
/// is not a bundle, or an OUT that holds other files.
Result<FleetAcceptResult> RunFleetAccept(const accept::AcceptOptions& options);

std::string FleetAcceptText(const FleetAcceptResult& result);

}  // namespace parity::fleet

#endif  // PARITY_FLEET_FLEET_ACCEPT_H_
