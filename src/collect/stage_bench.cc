// SPDX-License-Identifier: Apache-2.0
// The bench stage: `parity bench` with the stage's suites and sizes, its parity-bench result
// kept in the bundle and its figures in the results store.
#include <fmt/format.h>

#include "bench/suite.h"
#include "collect/stage_kinds.h"
#include "collect/stage_util.h"

namespace parity::collect {
namespace {

constexpr KeySpec kKeys[] = {
    {"suites", ValueType::kStringList},
    {"dtypes", ValueType::kStringList},
    {"n", ValueType::kInt},
    {"reps", ValueType::kInt},
    {"repeat", ValueType::kInt},
    {"full", ValueType::kBool},
    {"device", ValueType::kInt},
    {"seed", ValueType::kInt},
    {"threads", ValueType::kInt},
};

std::string Join(const Json& list) {
  std::string out;
  for (const Json& item : list)
    out += fmt::format("{}{}", out.empty() ? "" : ",", item.get<std::string>());
  return out;
}

class BenchStage final : public StageKind {
 public:
  std::string_view name() const override { return "bench"; }
  std::string_view summary() const override {
    return "parity bench: suites, dtypes and sizes; a parity-bench result";
  }
  std::span<const KeySpec> keys() const override { return kKeys; }

  Status Check(const Json& params, const CheckContext&) const override {
    if (params.contains("suites")) {
      for (const Json& s : params["suites"]) {
        if (bench::FindSuite(s.get<std::string>()) == nullptr) {
          std::string names;
          for (const bench::Suite& suite : bench::Suites()) {
            names += fmt::format("{}{}", names.empty() ? "" : ", ", std::string(suite.name));
          }
          return Status::Invalid("", fmt::format("suites: unknown suite '{}' (the suites: {})",
                                                 s.get<std::string>(), names));
        }
      }
    }
    if (params.contains("dtypes")) {
      for (const Json& d : params["dtypes"]) {
        const std::string dtype = d.get<std::string>();
        if (dtype != "float64" && dtype != "float32" && dtype != "tf32" && dtype != "float16" &&
            dtype != "bfloat16") {
          return Status::Invalid(
              "", fmt::format("dtypes: '{}' is not float64, float32, tf32, float16 or bfloat16",
                              dtype));
        }
      }
    }
    for (const char* key : {"n", "reps", "repeat"}) {
      if (params.contains(key) && params[key].get<std::int64_t>() < 1) {
        return Status::Invalid("", fmt::format("'{}' must be at least 1", key));
      }
    }
    return Status::Ok();
  }

  double Estimate(const Json& params) const override {
    return params.value("full", false) ? 600.0 : 30.0;
  }

  StageOutcome Run(const StageRun& run) const override {
    const std::string result = run.stage_dir + "/bench.json";
    std::vector<std::string> argv = {run.parity, "bench", "--backend", run.backend,
                                     "--json",   result,  "--quiet"};
    const Json& p = run.params;
    if (p.contains("suites")) argv.insert(argv.end(), {"--suite", Join(p["suites"])});
    if (p.contains("dtypes")) argv.insert(argv.end(), {"--dtype", Join(p["dtypes"])});
    for (const char* key : {"n", "reps", "repeat", "device", "seed", "threads"}) {
      if (p.contains(key)) {
        argv.insert(argv.end(),
                    {fmt::format("--{}", key), std::to_string(p[key].get<std::int64_t>())});
      }
    }
    if (p.value("full", false)) argv.push_back("--full");
    return BenchOutcome(run, RunStageProcess(run, argv), "bench.json");
  }
};

}  // namespace

StageOutcome BenchOutcome(const StageRun& run, const ProcessResult& process,
                          const std::string& file) {
  StageOutcome outcome = OutcomeOfParity(run, process, "");
  if (outcome.status != "passed" && outcome.status != "failed") return outcome;
  const std::string result = run.stage_dir + "/" + file;
  auto doc = ReadResultJson(result, "parity-bench");
  if (!doc.ok()) {
    outcome.status = "error";
    outcome.reason = doc.status().message();
    return outcome;
  }
  outcome.result = run.stage_rel + "/" + file;
  int ok = 0, invalid = 0, skipped = 0;
  std::string first_invalid;
  if (doc->contains("results") && (*doc)["results"].is_array()) {
    for (const Json& r : (*doc)["results"]) {
      const std::string status = StringField(r, "status");
      if (status == "skipped") {
        ++skipped;
        continue;
      }
      const bool valid = r.value("valid", false);
      if (!valid) {
        ++invalid;
        if (first_invalid.empty()) {
          first_invalid = fmt::format("{} {}: {}", StringField(r, "benchmark"),
                                      StringField(r, "dtype"), StringField(r, "reason"));
        }
      } else {
        ++ok;
      }
      if (!r.contains("median") || !r["median"].is_number()) continue;
      store::MetricRecord metric;
      metric.stage = run.name;
      metric.name = StringField(r, "benchmark");
      metric.dtype = StringField(r, "dtype");
      metric.params = r.contains("params") ? r["params"].dump() : "{}";
      metric.unit = StringField(r, "unit");
      metric.value = r["median"].get<double>();
      if (r.contains("cv") && r["cv"].is_number()) metric.cv = r["cv"].get<double>();
      metric.valid = valid;
      metric.better = r.value("better", BetterOfUnit(metric.unit));
      outcome.metrics.push_back(std::move(metric));
    }
  }
  outcome.summary = {{"results", ok}, {"invalid", invalid}, {"skipped", skipped}};
  if (outcome.status == "failed") {
    outcome.reason =
        fmt::format("{} invalid result{}: {}", invalid, invalid == 1 ? "" : "s", first_invalid);
  }
  return outcome;
}

const StageKind& BenchStageKind() {
  static const BenchStage kind;
  return kind;
}

}  // namespace parity::collect
