// SPDX-License-Identifier: Apache-2.0
// The monitor stage: its keys and their checks. It runs beside the other stages (Telemetry,
// telemetry.h), from the first stage to the last.
#include <fmt/format.h>

#include "collect/stage_kinds.h"
#include "collect/stage_util.h"
#include "monitor/rules.h"
#include "monitor/sources.h"

namespace parity::collect {
namespace {

constexpr KeySpec kKeys[] = {
    {"interval", ValueType::kNumber},
    {"sources", ValueType::kStringList},
    {"rules", ValueType::kString},
};

class MonitorStage final : public StageKind {
 public:
  std::string_view name() const override { return "monitor"; }
  std::string_view summary() const override {
    return "telemetry sampled while all the other stages run, with the monitor's rules";
  }
  std::span<const KeySpec> keys() const override { return kKeys; }
  bool background() const override { return true; }

  Status Check(const Json& params, const CheckContext& context) const override {
    const double interval = params.value("interval", 1.0);
    if (interval < 0.05 || interval > 3600) {
      return Status::Invalid("", "'interval' must be 0.05 to 3600 seconds");
    }
    if (params.contains("sources")) {
      for (const Json& s : params["sources"]) {
        const std::string name = s.get<std::string>();
        if (monitor::FindSource(name) == nullptr) {
          std::string names;
          for (const monitor::SourceEntry& e : monitor::SourceTable()) {
            names += fmt::format("{}{}", names.empty() ? "" : ", ", std::string(e.name));
          }
          return Status::Invalid(
              "", fmt::format("sources: unknown source '{}' (the sources: {})", name, names));
        }
      }
    }
    if (params.contains("rules")) {
      const std::string path = Resolve(context.plan_dir, params["rules"].get<std::string>());
      PARITY_RETURN_IF_ERROR(CheckRegularFile("rules", path));
      auto rules = monitor::LoadRules(path);
      if (!rules.ok())
        return Status::Invalid("", fmt::format("rules: {}", rules.status().message()));
    }
    return Status::Ok();
  }

  double Estimate(const Json&) const override { return 0.0; }

  StageOutcome Run(const StageRun&) const override {
    StageOutcome outcome;
    outcome.reason = "the monitor stage runs beside the others, not in turn";
    return outcome;
  }
};

}  // namespace

const StageKind& MonitorStageKind() {
  static const MonitorStage kind;
  return kind;
}

}  // namespace parity::collect
