// SPDX-License-Identifier: Apache-2.0
// The quality stage: a command that writes model scores and labels into {out}; the files are
// checked (numbers, labels 0 or 1, one score per label) and each score file's AUC recorded.
#include <fmt/format.h>

#include <cmath>

#include "collect/stage_kinds.h"
#include "collect/stage_util.h"
#include "core/file_util.h"
#include "io/values.h"
#include "quality/auc.h"

namespace parity::collect {
namespace {

constexpr KeySpec kKeys[] = {
    {"command", ValueType::kCommand},   {"env", ValueType::kStringMap},
    {"cwd", ValueType::kString},        {"labels", ValueType::kString},
    {"scores", ValueType::kStringList}, {"column", ValueType::kString},
};

Status CheckRelative(const std::string& key, const std::string& path) {
  if (path.empty() || path[0] == '/' || path.find("..") != std::string::npos) {
    return Status::Invalid("", fmt::format("'{}': '{}' must be a relative path inside the stage's "
                                           "directory",
                                           key, path));
  }
  return Status::Ok();
}

class QualityStage final : public StageKind {
 public:
  std::string_view name() const override { return "quality"; }
  std::string_view summary() const override {
    return "a command that writes score and label files into {out}; checked, AUC recorded";
  }
  std::span<const KeySpec> keys() const override { return kKeys; }

  Status Check(const Json& params, const CheckContext&) const override {
    PARITY_RETURN_IF_ERROR(CheckCommandKeys(params));
    if (!params.contains("labels"))
      return Status::Invalid("", "'labels' (the label file) is missing");
    if (!params.contains("scores")) return Status::Invalid("", "'scores' (score files) is missing");
    PARITY_RETURN_IF_ERROR(CheckRelative("labels", params["labels"].get<std::string>()));
    for (const Json& s : params["scores"])
      PARITY_RETURN_IF_ERROR(CheckRelative("scores", s.get<std::string>()));
    return Status::Ok();
  }

  double Estimate(const Json&) const override { return 60.0; }

  StageOutcome Run(const StageRun& run) const override {
    StageOutcome outcome = RunStageCommand(run);
    if (outcome.status != "passed") return outcome;
    const std::optional<std::string> column =
        run.params.contains("column") ? std::optional(run.params["column"].get<std::string>())
                                      : std::nullopt;
    const std::string labels_name = run.params["labels"].get<std::string>();
    auto fail = [&](const Status& s) {
      outcome.status = "error";
      outcome.reason = s.message();
      return outcome;
    };
    auto labels = ReadValues(run.stage_dir + "/" + labels_name, column);
    if (!labels.ok()) return fail(labels.status());
    std::vector<uint8_t> classes(labels->size());
    for (std::size_t i = 0; i < labels->size(); ++i) {
      const double v = (*labels)[i];
      if (v != 0.0 && v != 1.0) {
        return fail(Status::Invalid(labels_name, fmt::format("label {} is {}, not 0 or 1", i, v)));
      }
      classes[i] = static_cast<uint8_t>(v);
    }
    const Classes counted = ClassesOf(classes);
    if (counted.positives == 0 || counted.negatives == 0) {
      return fail(Status::Invalid(labels_name, "the labels hold only one class"));
    }
    Json doc = Document("parity-quality-inputs", 1);
    doc["labels"] = labels_name;
    doc["column"] = column ? Json(*column) : Json();
    doc["n"] = labels->size();
    doc["positives"] = counted.positives;
    Json scores = Json::array();
    for (const Json& s : run.params["scores"]) {
      const std::string name = s.get<std::string>();
      auto values = ReadValues(run.stage_dir + "/" + name, column);
      if (!values.ok()) return fail(values.status());
      if (values->size() != labels->size()) {
        return fail(Status::Invalid(
            name, fmt::format("{} scores for {} labels", values->size(), labels->size())));
      }
      for (std::size_t i = 0; i < values->size(); ++i) {
        if (!std::isfinite((*values)[i])) {
          return fail(Status::Invalid(name, fmt::format("score {} is not finite", i)));
        }
      }
      const double auc = ComputePlacements(counted, *values).auc;
      scores.push_back({{"file", name}, {"auc", auc}});
      store::MetricRecord m;
      m.stage = run.name;
      m.name = "quality.auc";
      m.params = Json({{"scores", name}}).dump();
      m.value = auc;
      m.better = "higher";
      outcome.metrics.push_back(std::move(m));
    }
    doc["scores"] = scores;
    outcome.summary = {{"n", labels->size()}, {"scores", scores.size()}};
    WriteStageResult(run, "quality.json", doc, outcome);
    return outcome;
  }
};

}  // namespace

const StageKind& QualityStageKind() {
  static const QualityStage kind;
  return kind;
}

}  // namespace parity::collect
