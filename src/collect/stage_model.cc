// SPDX-License-Identifier: Apache-2.0
// The model stage: `parity bench --suite model` on the plan's workloads (training throughput
// of PyTorch models, docs/WORKLOADS.md), its parity-bench result and loss curves kept in the
// bundle and its figures in the results store.
#include <fmt/format.h>

#include <cstdlib>

#include "collect/stage_kinds.h"
#include "collect/stage_util.h"
#include "workload/model_run.h"

namespace parity::collect {
namespace {

constexpr KeySpec kKeys[] = {
    {"workloads", ValueType::kStringList},
    {"size", ValueType::kString},
    {"steps", ValueType::kInt},
    {"warmup", ValueType::kInt},
    {"repeat", ValueType::kInt},
    {"device", ValueType::kInt},
    {"settings", ValueType::kParamMap},
    {"env", ValueType::kStringMap},
    {"python", ValueType::kString},
};

std::string Text(const Json& value) {
  return value.is_string() ? value.get<std::string>()
                           : value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

class ModelStage final : public StageKind {
 public:
  std::string_view name() const override { return "model"; }
  std::string_view summary() const override {
    return "parity bench --suite model: PyTorch workloads' training throughput and losses";
  }
  std::span<const KeySpec> keys() const override { return kKeys; }

  Status Check(const Json& params, const CheckContext&) const override {
    if (params.contains("size")) {
      const std::string size = params["size"].get<std::string>();
      if (size != "tiny" && size != "small" && size != "base") {
        return Status::Invalid("", fmt::format("size: '{}' is not tiny, small or base", size));
      }
    }
    for (const char* key : {"steps", "repeat"}) {
      if (params.contains(key) && params[key].get<std::int64_t>() < 1) {
        return Status::Invalid("", fmt::format("'{}' must be at least 1", key));
      }
    }
    if (params.contains("settings")) {
      for (const auto& [key, value] : params["settings"].items()) {
        Result<Json> knob = workload::KnobFromText(key, Text(value));
        if (!knob.ok()) return Status::Invalid("", "settings: " + knob.status().message());
      }
    }
    return Status::Ok();
  }

  double Estimate(const Json& params) const override {
    const double per = params.value("size", std::string("small")) == "base" ? 300.0 : 20.0;
    const double n = params.contains("workloads") ? params["workloads"].size() : 3.0;
    return per * n * static_cast<double>(params.value("repeat", std::int64_t{1}));
  }

  StageOutcome Run(const StageRun& run) const override {
    std::vector<std::string> argv = {run.parity,  "bench",
                                     "--suite",   "model",
                                     "--backend", run.backend,
                                     "--json",    run.stage_dir + "/bench.json",
                                     "--curves",  run.stage_dir + "/curves",
                                     "--quiet"};
    const Json& p = run.params;
    if (p.contains("workloads")) {
      std::string list;
      for (const Json& w : p["workloads"]) {
        list += fmt::format("{}{}", list.empty() ? "" : ",", w.get<std::string>());
      }
      argv.insert(argv.end(), {"--workload", list});
    }
    if (p.contains("size")) argv.insert(argv.end(), {"--size", p["size"].get<std::string>()});
    if (p.contains("python")) {
      argv.insert(argv.end(), {"--python", p["python"].get<std::string>()});
    }
    for (const char* key : {"steps", "warmup", "repeat", "device"}) {
      if (p.contains(key)) {
        argv.insert(argv.end(),
                    {fmt::format("--{}", key), std::to_string(p[key].get<std::int64_t>())});
      }
    }
    if (p.contains("settings")) {
      for (const auto& [key, value] : p["settings"].items()) {
        argv.insert(argv.end(), {"--set", fmt::format("{}={}", key, Text(value))});
      }
    }
    // A user's workload module beside the plan imports as it would from there.
    StageRun with_path = run;
    Json env = p.contains("env") ? p["env"] : Json::object();
    std::string path = env.contains("PYTHONPATH") ? env["PYTHONPATH"].get<std::string>() : "";
    if (path.empty()) {
      if (const char* current = std::getenv("PYTHONPATH"); current != nullptr) path = current;
    }
    env["PYTHONPATH"] = path.empty() ? run.plan_dir : path + ":" + run.plan_dir;
    with_path.params["env"] = env;
    return BenchOutcome(run, RunStageProcess(with_path, argv), "bench.json");
  }
};

}  // namespace

const StageKind& ModelStageKind() {
  static const ModelStage kind;
  return kind;
}

}  // namespace parity::collect
