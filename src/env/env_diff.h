// SPDX-License-Identifier: Apache-2.0
// Two platforms' settings side by side: fingerprints (or bundles) flattened to dotted keys, and
// the keys whose values differ, those that change numerics or speed first, each explained from
// the knowledge base (or a short table for parity's own keys) with its source.
#ifndef PARITY_ENV_ENV_DIFF_H_
#define PARITY_ENV_ENV_DIFF_H_

#include <map>
#include <string>
#include <vector>

#include "core/json_util.h"

namespace parity::env {

struct EnvDifference {
  std::string key;
  Json baseline, candidate;  ///< null: absent on that side
  bool relevant = false;     ///< the setting changes how results are computed, or how fast
  std::string note;          ///< why, with its source; "" when not relevant
};

/// `doc` flattened: {"a":{"b":1},"l":[{"x":2}],"f":["p","q"]} -> a.b=1, l.0.x=2, f="p,q".
/// Keys that differ between any two runs (created, uid, path, ...) are left out.
std::map<std::string, Json> Flatten(const Json& doc, const std::string& prefix);

/// The settings of a parity-env document: "host.*" from its fingerprint, "backends.NAME.*" from
/// its devices.
std::map<std::string, Json> SettingsOf(const Json& env_doc);

/// The keys whose values differ, the relevant ones first, then by key; at most `limit`.
/// A key holding a knowledge-base entry's value ("host.environment.MIOPEN_FIND_MODE",
/// "host.python.settings.torch.backends.cudnn.allow_tf32", parity_dump's setting names) is
/// relevant and explained by that entry; its version-dependent statements are picked by the
/// versions each side records (host.python.torch.version, .cuda, .hip), all of them, labelled
/// with their ranges, where a side records none.
std::vector<EnvDifference> DiffSettings(const std::map<std::string, Json>& baseline,
                                        const std::map<std::string, Json>& candidate,
                                        std::size_t limit = 2000);

/// [{"key","baseline","candidate","relevant","note"}].
Json EnvDiffJson(const std::vector<EnvDifference>& diff);

}  // namespace parity::env

#endif  // PARITY_ENV_ENV_DIFF_H_
