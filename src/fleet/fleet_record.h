// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>

#include "core/json_util.h"
#include "store/store.h"

namespace parity::fleet {

/// What a fleet collect recorded in fleet.json, as one run of kind "fleet" for the results
/// store: rank 0's host as its node, the plan's name, the level asked for (none: the collects'
/// default), status "passed" when every member collected and "failed" otherwise, one stage per
/// member (kind "member", with its status, reason and seconds), and the fleet directory as its
/// bundle. `finished` is the Unix time the fleet ended; its start is that less its duration.
store::RunRecord FleetRunRecord(const Json& manifest, const std::string& plan_name,
                                std::optional<int> level, const std::string& backend,
                                const std::string& fleet_dir, double finished);

}  // namespace parity::fleet
