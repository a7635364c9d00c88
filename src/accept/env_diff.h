// SPDX-License-Identifier: Apache-2.0
// The two bundles' settings side by side (env/env_diff.h compares them): the host fingerprint,
// the devices and backends, the plan's vars and each dump's framework settings.
#ifndef PARITY_ACCEPT_ENV_DIFF_H_
#define PARITY_ACCEPT_ENV_DIFF_H_

#include <map>
#include <string>

#include "accept/bundle_view.h"
#include "core/json_util.h"
#include "env/env_diff.h"

namespace parity::accept {

using env::DiffSettings;
using env::EnvDifference;
using env::EnvDiffJson;
using env::Flatten;

/// Every setting of the bundle that accept compares, by key: its env stage's document
/// (env::SettingsOf), the manifest's fingerprint where the env stage didn't run, the plan's
/// backend and vars, each dump's manifest.
std::map<std::string, Json> Settings(const BundleView& bundle);

}  // namespace parity::accept

#endif  // PARITY_ACCEPT_ENV_DIFF_H_
