// SPDX-License-Identifier: Apache-2.0
// Throughput: each bench or model stage of the two bundles compared (parity bench compare),
// one criterion per suite on its geometric-mean ratio; an invalid result fails its suite.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "accept/criterion.h"
#include "bench/bench_compare.h"
#include "bench/result.h"

namespace parity::accept {
namespace {

Json Finite(std::optional<double> v) { return v && std::isfinite(*v) ? Json(*v) : Json(); }

std::vector<CriterionResult> JudgeStage(const AcceptInput& input, const StagePair& pair) {
  const ThroughputCriteria& c = input.criteria.throughput;
  auto single = [&](Verdict status, std::string reason) {
    CriterionResult r;
    r.id = "throughput." + pair.name;
    r.part = "throughput";
    r.stage = pair.name;
    r.title = fmt::format("each suite's geometric-mean ratio at least {:g}", c.min_ratio);
    r.status = status;
    r.reason = std::move(reason);
    return std::vector<CriterionResult>{std::move(r)};
  };
  if (auto problem = PairProblem(input, pair)) return single(problem->first, problem->second);
  const std::string base_path = input.baseline.PathOf(pair.baseline->result);
  const std::string cand_path = input.candidate.PathOf(pair.candidate->result);
  auto base = bench::LoadBenchDocument(base_path);
  if (!base.ok()) return single(Verdict::kError, base.status().message());
  auto cand = bench::LoadBenchDocument(cand_path);
  if (!cand.ok()) return single(Verdict::kError, cand.status().message());
  bench::BenchCompareOptions options;
  options.confidence = c.confidence;
  options.base_path = base_path;
  options.cand_path = cand_path;
  auto report = bench::CompareBench(*base, *cand, options);
  if (!report.ok()) return single(Verdict::kError, report.status().message());
  if (report->suite_geomeans.empty()) {
    return single(Verdict::kError,
                  fmt::format("no benchmark ran in both {} and {}", base_path, cand_path));
  }
  std::vector<CriterionResult> out;
  for (const auto& [suite, geomean] : report->suite_geomeans) {
    const double min = c.MinRatio(suite);
    CriterionResult r;
    r.id = fmt::format("throughput.{}.{}", pair.name, suite);
    r.part = "throughput";
    r.stage = pair.name;
    r.title = fmt::format("{}: geometric-mean ratio at least {:g}", suite, min);
    Json benchmarks = Json::array();
    int invalid = 0;
    std::string first_invalid;
    for (const bench::BenchComparison& b : report->comparisons) {
      if (b.suite != suite) continue;
      Json entry = {{"label", b.label},
                    {"benchmark", b.benchmark},
                    {"dtype", b.dtype},
                    {"unit", b.unit},
                    {"params", b.params},
                    {"base_median", Finite(b.base_median)},
                    {"cand_median", Finite(b.cand_median)},
                    {"ratio", Finite(b.ratio)},
                    {"verdict", b.verdict},
                    {"basis", b.basis}};
      entry["lo"] = b.interval ? Finite(b.interval->low) : Json();
      entry["hi"] = b.interval ? Finite(b.interval->high) : Json();
      if (!b.reason.empty()) entry["reason"] = b.reason;
      if (b.verdict == "invalid") {
        ++invalid;
        if (first_invalid.empty()) first_invalid = fmt::format("{}: {}", b.label, b.reason);
      }
      benchmarks.push_back(std::move(entry));
    }
    r.evidence = {{"suite", suite},
                  {"geomean", Finite(geomean)},
                  {"min_ratio", min},
                  {"confidence", c.confidence},
                  {"baseline", base_path},
                  {"candidate", cand_path},
                  {"baseline_device", report->base_device},
                  {"candidate_device", report->cand_device},
                  {"benchmarks", std::move(benchmarks)}};
    if (invalid > 0) {
      r.status = Verdict::kFail;
      r.reason = fmt::format("{} invalid result{} (first: {})", invalid, invalid > 1 ? "s" : "",
                             first_invalid);
    } else if (!std::isfinite(geomean) || geomean < min) {
      r.status = Verdict::kFail;
      r.reason = fmt::format("geometric-mean ratio {:.3f} is below {:g}", geomean, min);
    } else {
      r.status = Verdict::kPass;
      r.reason = fmt::format("geometric-mean ratio {:.3f} (at least {:g})", geomean, min);
    }
    out.push_back(std::move(r));
  }
  if (!report->only_in_base.empty() && !out.empty()) {
    out.front().evidence["only_in_baseline"] = report->only_in_base;
  }
  if (!report->only_in_cand.empty() && !out.empty()) {
    out.front().evidence["only_in_candidate"] = report->only_in_cand;
  }
  return out;
}

class Throughput final : public Part {
 public:
  std::string_view name() const override { return "throughput"; }
  std::vector<CriterionResult> Evaluate(const AcceptInput& input) const override {
    std::vector<CriterionResult> out;
    // bench stages and model stages (parity bench --suite model: criteria
    // throughput.<stage>.model) are compared alike.
    for (const char* kind : {"bench", "model"}) {
      for (const StagePair& pair : PairStages(input, kind)) {
        for (CriterionResult& r : JudgeStage(input, pair)) out.push_back(std::move(r));
      }
    }
    if (out.empty()) {
      out.push_back(NoStage(input, "throughput", "each suite's geometric-mean ratio", "bench"));
    }
    return out;
  }
};

}  // namespace

const Part* ThroughputPart() {
  static const Throughput part;
  return &part;
}

}  // namespace parity::accept
