// SPDX-License-Identifier: Apache-2.0
// The two platforms' settings side by side: the host fingerprint, the devices and backends, the
// plan's vars and each dump's framework settings, flattened to dotted keys; the keys that
// change numerics (TF32, matmul precision, determinism, thread counts, the BLAS library) are
// marked with a note that cites where the setting is documented.
#ifndef PARITY_ACCEPT_ENV_DIFF_H_
#define PARITY_ACCEPT_ENV_DIFF_H_

#include <map>
#include <string>
#include <vector>

#include "accept/bundle_view.h"
#include "core/json_util.h"

namespace parity::accept {

struct EnvDifference {
  std::string key;
  Json baseline, candidate;  ///< null: absent on that side
  bool relevant = false;     ///< the setting changes how results are computed
  std::string note;          ///< why, with its source; "" when not relevant
};

/// `doc` flattened: {"a":{"b":1},"l":[{"x":2}],"f":["p","q"]} -> a.b=1, l.0.x=2, f="p,q".
std::map<std::string, Json> Flatten(const Json& doc, const std::string& prefix);

/// Every setting of the bundle that accept compares, by key.
std::map<std::string, Json> Settings(const BundleView& bundle);

/// The keys whose values differ, the relevant ones first, then by key; at most `limit`.
std::vector<EnvDifference> DiffSettings(const std::map<std::string, Json>& baseline,
                                        const std::map<std::string, Json>& candidate,
                                        std::size_t limit = 2000);

Json EnvDiffJson(const std::vector<EnvDifference>& diff);

}  // namespace parity::accept

#endif  // PARITY_ACCEPT_ENV_DIFF_H_
