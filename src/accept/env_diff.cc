// SPDX-License-Identifier: Apache-2.0
#include "accept/env_diff.h"

namespace parity::accept {

std::map<std::string, Json> Settings(const BundleView& bundle) {
  std::map<std::string, Json> out;
  auto merge = [&](const std::map<std::string, Json>& more) {
    for (auto& [k, v] : more) out.emplace(k, v);
  };
  if (!bundle.manifest.is_object()) return out;
  const Json& m = bundle.manifest;
  for (const StageView* env : bundle.OfKind("env")) {
    if (env->result.empty()) continue;
    auto doc = ReadBundleJson(bundle, env->result, "parity-env");
    if (doc.ok()) merge(env::SettingsOf(*doc));
  }
  if (m.contains("fingerprint")) merge(Flatten(m["fingerprint"], "host"));
  if (m.contains("backend")) out["plan.backend"] = m["backend"];
  if (m.contains("plan") && m["plan"].is_object() && m["plan"].contains("vars")) {
    merge(Flatten(m["plan"]["vars"], "plan.vars"));
  }
  for (const StageView* dump : bundle.OfKind("dump")) {
    if (dump->result.empty()) continue;
    auto doc = ReadBundleJson(bundle, dump->result + "/manifest.json", "parity-dump");
    if (!doc.ok()) continue;
    Json copy = *doc;
    copy.erase("format");
    copy.erase("version");
    merge(Flatten(copy, "dump." + dump->name));
  }
  return out;
}

}  // namespace parity::accept
