// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_record.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "core/version.h"

namespace parity::fleet {

store::RunRecord FleetRunRecord(const Json& manifest, const std::string& plan_name,
                                std::optional<int> level, const std::string& backend,
                                const std::string& fleet_dir, double finished) {
  store::RunRecord run;
  std::error_code ec;
  run.bundle = std::filesystem::absolute(fleet_dir, ec).string();
  const double duration = manifest.value("duration_s", 0.0);
  run.started = finished - duration;
  run.finished = finished;
  run.uid = fmt::format("fleet-{}-{:.6f}-{}", run.bundle, run.started, ::getpid());
  run.kind = "fleet";
  run.level = level;
  run.backend = backend;
  run.plan = plan_name;
  run.tool_version = kParityVersion;
  bool all_ok = true;
  if (manifest.contains("members") && manifest["members"].is_array()) {
    for (const Json& m : manifest["members"]) {
      if (m.value("rank", -1) == 0) run.node = m.value("host", "");
      store::StageRecord stage;
      stage.name = m.value("name", "");
      stage.kind = "member";
      const bool ok = m.value("status", "") == "ok";
      all_ok = all_ok && ok;
      stage.status = ok ? "passed" : "failed";
      stage.reason = m.value("reason", "");
      if (m.contains("seconds") && m["seconds"].is_number()) {
        stage.seconds = m["seconds"].get<double>();
      }
      run.stages.push_back(std::move(stage));
    }
  }
  run.status = all_ok && !run.stages.empty() ? "passed" : "failed";
  return run;
}

}  // namespace parity::fleet
