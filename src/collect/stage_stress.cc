// SPDX-License-Identifier: Apache-2.0
// The stress stage: `parity stress` with the stage's workload, matrix, length and injected
// faults; its parity-stress result kept in the bundle.
#include <fmt/format.h>

#include "collect/stage_kinds.h"
#include "collect/stage_util.h"
#include "stress/inject.h"
#include "stress/matrix.h"
#include "stress/workload.h"

namespace parity::collect {
namespace {

constexpr KeySpec kKeys[] = {
    {"workload", ValueType::kString},
    {"duration", ValueType::kNumber},
    {"steps", ValueType::kInt},
    {"workers", ValueType::kInt},
    {"matrix", ValueType::kString},
    {"seed", ValueType::kInt},
    {"inject", ValueType::kStringList},
    {"params", ValueType::kParamMap},
    {"checkpoint_every", ValueType::kInt},
    {"hang_timeout", ValueType::kNumber},
    {"command", ValueType::kCommand},
};

class StressStage final : public StageKind {
 public:
  std::string_view name() const override { return "stress"; }
  std::string_view summary() const override {
    return "parity stress: a workload supervised, SDC checks, fault drills; a parity-stress result";
  }
  std::span<const KeySpec> keys() const override { return kKeys; }

  Status Check(const Json& params, const CheckContext& context) const override {
    if (!params.contains("workload")) return Status::Invalid("", "'workload' is missing");
    auto workload = stress::FindWorkload(params["workload"].get<std::string>());
    if (!workload.ok()) return Status::Invalid("", workload.status().message());
    if (!params.contains("duration") && !params.contains("steps")) {
      return Status::Invalid("", "give 'duration' (seconds) or 'steps'");
    }
    if ((*workload)->create == nullptr && !params.contains("command")) {
      return Status::Invalid("", "the exec workload needs a 'command'");
    }
    if ((*workload)->create != nullptr && params.contains("command")) {
      return Status::Invalid("", "'command' is for the exec workload only");
    }
    for (const char* key : {"workers", "steps", "checkpoint_every"}) {
      if (params.contains(key) && params[key].get<std::int64_t>() < 1) {
        return Status::Invalid("", fmt::format("'{}' must be at least 1", key));
      }
    }
    if (params.contains("inject")) {
      for (const Json& spec : params["inject"]) {
        auto parsed = stress::ParseInjectSpec(spec.get<std::string>());
        if (!parsed.ok())
          return Status::Invalid("", fmt::format("inject: {}", parsed.status().message()));
      }
    }
    if (params.contains("matrix")) {
      const std::string path = Resolve(context.plan_dir, params["matrix"].get<std::string>());
      PARITY_RETURN_IF_ERROR(CheckRegularFile("matrix", path));
      auto matrix = stress::LoadMatrix(path);
      if (!matrix.ok())
        return Status::Invalid("", fmt::format("matrix: {}", matrix.status().message()));
    }
    return Status::Ok();
  }

  double Estimate(const Json& params) const override {
    return params.value("duration", 60.0) + 2.0;
  }

  StageOutcome Run(const StageRun& run) const override {
    const std::string result = run.stage_dir + "/stress.json";
    const Json& p = run.params;
    std::vector<std::string> argv = {
        run.parity,  "stress",    "--workload", p["workload"].get<std::string>(),
        "--backend", run.backend, "--json",     result,
        "--quiet"};
    if (p.contains("duration")) {
      argv.insert(argv.end(), {"--duration", fmt::format("{}", p["duration"].get<double>())});
    }
    for (const auto& [key, flag] : {std::pair{"steps", "--steps"},
                                    {"workers", "--workers"},
                                    {"seed", "--seed"},
                                    {"checkpoint_every", "--checkpoint-every"}}) {
      if (p.contains(key))
        argv.insert(argv.end(), {flag, std::to_string(p[key].get<std::int64_t>())});
    }
    if (p.contains("hang_timeout")) {
      argv.insert(argv.end(),
                  {"--hang-timeout", fmt::format("{}", p["hang_timeout"].get<double>())});
    }
    if (p.contains("matrix")) {
      argv.insert(argv.end(), {"--matrix", Resolve(run.plan_dir, p["matrix"].get<std::string>())});
    }
    if (p.contains("inject")) {
      for (const Json& spec : p["inject"])
        argv.insert(argv.end(), {"--inject", spec.get<std::string>()});
    }
    if (p.contains("params")) {
      for (const auto& [name, value] : p["params"].items()) {
        argv.insert(argv.end(), {"--param", fmt::format("{}={}", name,
                                                        value.is_string() ? value.get<std::string>()
                                                                          : value.dump())});
      }
    }
    if (p.contains("command")) {
      std::string command;
      for (const Json& word : p["command"]) {
        // Words are re-joined for --cmd, which splits them again: quote each one.
        std::string quoted = "'";
        for (char c : word.get<std::string>()) {
          if (c == '\'') {
            quoted += "'\\''";
          } else {
            quoted += c;
          }
        }
        command += fmt::format("{}{}", command.empty() ? "" : " ", quoted + "'");
      }
      argv.insert(argv.end(), {"--cmd", command});
    }
    // The collect's monitor stage samples throughout; the stress run need not sample as well.
    argv.push_back("--no-telemetry");
    const ProcessResult process = RunStageProcess(run, argv);
    StageOutcome outcome = OutcomeOfParity(run, process, "");
    if (outcome.status != "passed" && outcome.status != "failed") return outcome;
    auto doc = ReadResultJson(result, "parity-stress");
    if (!doc.ok()) {
      outcome.status = "error";
      outcome.reason = doc.status().message();
      return outcome;
    }
    outcome.result = run.stage_rel + "/stress.json";
    if (outcome.status == "failed") {
      std::string reasons;
      for (const Json& r : doc->value("reasons", Json::array())) {
        if (r.is_string())
          reasons += fmt::format("{}{}", reasons.empty() ? "" : "; ", r.get<std::string>());
      }
      outcome.reason = reasons.empty() ? "the stress run failed" : reasons;
    }
    auto metric = [&](std::string name, std::string unit, const Json& value, std::string better) {
      if (!value.is_number()) return;
      store::MetricRecord m;
      m.stage = run.name;
      m.name = std::move(name);
      m.params = Json({{"workload", p["workload"]}}).dump();
      m.unit = std::move(unit);
      m.value = value.get<double>();
      m.better = std::move(better);
      outcome.metrics.push_back(std::move(m));
    };
    const Json throughput = doc->value("throughput", Json::object());
    metric("stress.throughput", StringField(throughput, "unit"), throughput.value("value", Json()),
           "higher");
    const Json recovery = doc->value("recovery_s", Json::object());
    metric("stress.recovery_p50", "s", recovery.value("p50", Json()), "lower");
    metric("stress.recovery_max", "s", recovery.value("max", Json()), "lower");
    metric("stress.sdc_events", "", doc->value("sdc_event_count", Json()), "lower");
    outcome.summary = {{"steps", doc->value("steps", Json())},
                       {"faults_injected", doc->value("faults_injected", Json())},
                       {"faults_recovered", doc->value("faults_recovered", Json())},
                       {"verdict", doc->value("verdict", Json())}};
    return outcome;
  }
};

}  // namespace

const StageKind& StressStageKind() {
  static const StressStage kind;
  return kind;
}

}  // namespace parity::collect
