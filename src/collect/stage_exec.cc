// SPDX-License-Identifier: Apache-2.0
// The exec stage: an external command (a training run, an MLPerf benchmark), run without a
// shell, with metrics taken from a JSON file it writes or from its output (metric_extract.h).
#include <fmt/format.h>

#include "collect/metric_extract.h"
#include "collect/stage_kinds.h"
#include "collect/stage_util.h"
#include "core/file_util.h"

namespace parity::collect {
namespace {

constexpr KeySpec kKeys[] = {
    {"command", ValueType::kCommand},
    {"env", ValueType::kStringMap},
    {"cwd", ValueType::kString},
    {"metrics", ValueType::kMetrics},
};

class ExecStage final : public StageKind {
 public:
  std::string_view name() const override { return "exec"; }
  std::string_view summary() const override {
    return "an external command; metrics from its JSON output or by regex; a parity-exec result";
  }
  std::span<const KeySpec> keys() const override { return kKeys; }

  Status Check(const Json& params, const CheckContext&) const override {
    PARITY_RETURN_IF_ERROR(CheckCommandKeys(params));
    if (params.contains("metrics")) {
      for (const Json& spec : params["metrics"]) PARITY_RETURN_IF_ERROR(CheckMetricSpec(spec));
    }
    return Status::Ok();
  }

  double Estimate(const Json&) const override { return 60.0; }

  StageOutcome Run(const StageRun& run) const override {
    std::vector<std::string> argv;
    ProcessResult process;
    StageOutcome outcome = RunStageCommand(run, &argv, &process);
    Json doc = Document("parity-exec", 1);
    doc["command"] = argv;
    doc["exit_code"] = process.started && process.signal == 0 ? Json(process.exit_code) : Json();
    doc["signal"] = process.signal != 0 ? Json(process.signal) : Json();
    doc["timed_out"] = process.timed_out;
    doc["seconds"] = process.seconds;
    Json metrics = Json::array();
    std::string missing;
    if (outcome.status == "passed" && run.params.contains("metrics")) {
      std::string log;
      bool log_read = false;
      for (const Json& spec : run.params["metrics"]) {
        const std::string name = spec["name"].get<std::string>();
        Result<double> value = Status::Invalid("", "");
        std::string source;
        if (spec.contains("json")) {
          const std::string file = Resolve(run.stage_dir, spec["json"].get<std::string>());
          source =
              fmt::format("{}:{}", spec["json"].get<std::string>(), spec["key"].get<std::string>());
          auto text = ReadSmallFile(file, std::size_t{64} << 20, "metrics file");
          if (!text.ok()) {
            value = text.status();
          } else {
            const Json parsed = Json::parse(*text, nullptr, false);
            value = parsed.is_discarded() ? Result<double>(Status::Invalid(file, "not valid JSON"))
                                          : ValueAtKey(parsed, spec["key"].get<std::string>());
          }
        } else {
          if (!log_read) {
            log = LogTail(run.log_path, std::size_t{16} << 20);
            log_read = true;
          }
          source = fmt::format("regex {}", spec["regex"].get<std::string>());
          value = ValueByRegex(log, spec["regex"].get<std::string>());
        }
        if (!value.ok()) {
          if (missing.empty())
            missing = fmt::format("metric '{}': {}", name, value.status().message());
          continue;
        }
        const std::string unit = StringField(spec, "unit");
        const std::string better = spec.value("better", BetterOfUnit(unit));
        metrics.push_back({{"name", name},
                           {"value", *value},
                           {"unit", unit},
                           {"better", better.empty() ? Json() : Json(better)},
                           {"source", source}});
        store::MetricRecord m;
        m.stage = run.name;
        m.name = name;
        m.unit = unit;
        m.value = *value;
        m.better = better;
        outcome.metrics.push_back(std::move(m));
        outcome.summary[name] = *value;
      }
    }
    doc["metrics"] = metrics;
    if (!missing.empty()) {
      outcome.status = "error";
      outcome.reason = missing;
    }
    doc["status"] = outcome.status;
    if (!outcome.reason.empty()) doc["reason"] = outcome.reason;
    WriteStageResult(run, "exec.json", doc, outcome);
    return outcome;
  }
};

}  // namespace

const StageKind& ExecStageKind() {
  static const ExecStage kind;
  return kind;
}

}  // namespace parity::collect
