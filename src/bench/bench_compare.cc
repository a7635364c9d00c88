// SPDX-License-Identifier: Apache-2.0
#include "bench/bench_compare.h"

#include <fmt/format.h>

#include <functional>
#include <map>

#include "core/text_table.h"

namespace parity::bench {
namespace {

constexpr int kResamples = 2000;

// Params that differ between the two sides, as "n: 1024 vs 2048".
std::vector<std::string> ParamDifferences(const Json& base, const Json& cand) {
  std::vector<std::string> out;
  for (const auto& [key, value] : base.items()) {
    if (!cand.contains(key)) {
      out.push_back(fmt::format("{}: {} vs absent", key, value.dump()));
    } else if (cand[key] != value) {
      out.push_back(fmt::format("{}: {} vs {}", key, value.dump(), cand[key].dump()));
    }
  }
  for (const auto& [key, value] : cand.items()) {
    if (!base.contains(key)) out.push_back(fmt::format("{}: absent vs {}", key, value.dump()));
  }
  return out;
}

std::string SuiteOf(const std::string& benchmark) {
  return benchmark.substr(0, benchmark.find('.'));
}

BenchComparison CompareOne(const BenchResult& b, const BenchResult& c,
                           const BenchCompareOptions& options) {
  BenchComparison cmp;
  cmp.label = b.Label();
  cmp.benchmark = b.benchmark;
  cmp.dtype = b.dtype;
  cmp.suite = SuiteOf(b.benchmark);
  cmp.unit = b.unit;
  cmp.params = b.params;
  cmp.higher_is_better = b.higher_is_better;
  if (!b.samples.empty()) cmp.base_median = Median(b.samples);
  if (!c.samples.empty()) cmp.cand_median = Median(c.samples);
  auto side_reason = [](std::string_view side, const BenchResult& r) {
    return fmt::format("{} {}: {}", side, OutcomeName(r.outcome), r.reason);
  };
  if (b.outcome == Outcome::kInvalid || c.outcome == Outcome::kInvalid) {
    cmp.verdict = "invalid";
    cmp.reason = b.outcome == Outcome::kInvalid ? side_reason("base", b) : side_reason("cand", c);
    return cmp;
  }
  if (b.outcome == Outcome::kSkipped || c.outcome == Outcome::kSkipped) {
    cmp.verdict = "skipped";
    cmp.reason = b.outcome == Outcome::kSkipped ? side_reason("base", b) : side_reason("cand", c);
    return cmp;
  }
  if (b.unit != c.unit) {
    cmp.verdict = "invalid";
    cmp.reason = fmt::format("units differ: base {}, cand {}", b.unit, c.unit);
    return cmp;
  }
  Interval ci;
  double ratio = 0.0;
  if (b.run_medians.size() >= 2 && c.run_medians.size() >= 2) {
    cmp.basis = "runs";
    ci = LogRatioInterval(b.run_medians, c.run_medians, options.confidence);
    ratio = GeometricMean(c.run_medians) / GeometricMean(b.run_medians);
  } else {
    cmp.basis = "samples";
    const uint64_t seed = std::hash<std::string>{}(b.Key());
    ci = BootstrapMedianRatio(b.samples, c.samples, options.confidence, kResamples, seed);
    ratio = *cmp.cand_median / *cmp.base_median;
  }
  if (!b.higher_is_better) {
    ratio = 1.0 / ratio;
    ci = {1.0 / ci.high, 1.0 / ci.low};
  }
  cmp.ratio = ratio;
  cmp.interval = ci;
  cmp.verdict = ci.low > 1.0 ? "faster" : ci.high < 1.0 ? "slower" : "same";
  return cmp;
}

std::string Fixed(std::optional<double> v, const char* fmt_spec = "{:.4g}") {
  return v ? fmt::format(fmt::runtime(fmt_spec), *v) : "-";
}

}  // namespace

Result<BenchCompareReport> CompareBench(const BenchDocument& base, const BenchDocument& cand,
                                        const BenchCompareOptions& options) {
  BenchCompareReport report;
  report.options = options;
  report.base_backend = base.backend;
  report.base_device = base.device;
  report.cand_backend = cand.backend;
  report.cand_device = cand.device;
  report.base_repeat = base.repeat;
  report.cand_repeat = cand.repeat;
  std::map<std::string, const BenchResult*> cand_by_key;
  for (const auto& [doc, path] :
       {std::pair{&base, &options.base_path}, std::pair{&cand, &options.cand_path}}) {
    std::map<std::string, int> seen;
    for (const BenchResult& r : doc->results) {
      if (++seen[r.Key()] == 2) {
        return Status::Invalid(*path, fmt::format("{} appears more than once", r.Label()));
      }
    }
  }
  for (const BenchResult& r : cand.results) cand_by_key.emplace(r.Key(), &r);
  std::map<std::string, bool> matched;
  std::map<std::string, std::vector<double>> suite_ratios;
  std::vector<std::string> suite_order;
  for (const BenchResult& b : base.results) {
    const auto it = cand_by_key.find(b.Key());
    if (it == cand_by_key.end()) {
      report.only_in_base.push_back(b.Label());
      continue;
    }
    matched[b.Key()] = true;
    const BenchResult& c = *it->second;
    // A skipped side ran nothing, so it has no settings to disagree with.
    const bool ran_both = b.outcome != Outcome::kSkipped && c.outcome != Outcome::kSkipped;
    const std::vector<std::string> differences =
        ran_both ? ParamDifferences(b.params, c.params) : std::vector<std::string>{};
    if (!differences.empty() && !options.allow_param_mismatch) {
      return Status::Invalid(
          options.cand_path,
          fmt::format("{} ran with other parameters than in {} ({}); compare like with like, "
                      "or pass --allow-param-mismatch",
                      b.Label(), options.base_path, fmt::join(differences, ", ")));
    }
    BenchComparison cmp = CompareOne(b, c, options);
    if (!differences.empty()) {
      cmp.params_differ = true;
      cmp.cand_params = c.params;
    }
    if (cmp.ratio) {
      if (!suite_ratios.contains(cmp.suite)) suite_order.push_back(cmp.suite);
      suite_ratios[cmp.suite].push_back(*cmp.ratio);
      if (cmp.basis == "samples") report.within_run_only = true;
    }
    if (options.min_ratio) {
      if (cmp.verdict == "invalid") {
        ++report.failures;
      } else if (cmp.interval && cmp.interval->high < *options.min_ratio) {
        cmp.below_min_ratio = true;
        ++report.failures;
      }
    }
    report.comparisons.push_back(std::move(cmp));
  }
  for (const BenchResult& c : cand.results) {
    if (!matched.contains(c.Key())) report.only_in_cand.push_back(c.Label());
  }
  for (const std::string& suite : suite_order) {
    report.suite_geomeans.emplace_back(suite, GeometricMean(suite_ratios[suite]));
  }
  return report;
}

Json BenchCompareJson(const BenchCompareReport& report) {
  Json doc = Document("parity-bench-compare", 1);
  doc["base"] = {{"path", report.options.base_path},
                 {"backend", report.base_backend},
                 {"device", report.base_device},
                 {"repeat", report.base_repeat}};
  doc["cand"] = {{"path", report.options.cand_path},
                 {"backend", report.cand_backend},
                 {"device", report.cand_device},
                 {"repeat", report.cand_repeat}};
  doc["confidence"] = report.options.confidence;
  doc["min_ratio"] = report.options.min_ratio ? Json(*report.options.min_ratio) : Json(nullptr);
  doc["within_run_noise_only"] = report.within_run_only;
  Json list = Json::array();
  for (const BenchComparison& c : report.comparisons) {
    Json j = {{"benchmark", c.benchmark},
              {"dtype", c.dtype.empty() ? Json(nullptr) : Json(c.dtype)},
              {"params", c.params},
              {"unit", c.unit},
              {"better", c.higher_is_better ? "higher" : "lower"}};
    if (c.params_differ) j["cand_params"] = c.cand_params;
    j["base_median"] = c.base_median ? Json(*c.base_median) : Json(nullptr);
    j["cand_median"] = c.cand_median ? Json(*c.cand_median) : Json(nullptr);
    j["ratio"] = c.ratio ? Json(*c.ratio) : Json(nullptr);
    j["ci_low"] = c.interval ? Json(c.interval->low) : Json(nullptr);
    j["ci_high"] = c.interval ? Json(c.interval->high) : Json(nullptr);
    j["basis"] = c.basis.empty() ? Json(nullptr) : Json(c.basis);
    j["verdict"] = c.verdict;
    if (!c.reason.empty()) j["reason"] = c.reason;
    if (report.options.min_ratio) j["below_min_ratio"] = c.below_min_ratio;
    list.push_back(std::move(j));
  }
  doc["comparisons"] = std::move(list);
  Json geomeans = Json::object();
  for (const auto& [suite, g] : report.suite_geomeans) geomeans[suite] = g;
  doc["suite_geomean"] = std::move(geomeans);
  doc["only_in_base"] = report.only_in_base;
  doc["only_in_cand"] = report.only_in_cand;
  doc["failures"] = report.failures;
  return doc;
}

std::string BenchCompareText(const BenchCompareReport& report) {
  std::string text = fmt::format("parity bench compare: base {} ({}, {}) vs cand {} ({}, {})\n",
                                 report.options.base_path, report.base_backend, report.base_device,
                                 report.options.cand_path, report.cand_backend, report.cand_device);
  text +=
      "ratio = candidate's performance / base's (cand/base of medians; base/cand for times): "
      "above 1 the candidate is faster\n\n";
  Table table({"benchmark", "dtype", "size", "unit", "base", "cand", "ratio",
               fmt::format("{:.0f}% CI", 100.0 * report.options.confidence), "verdict"},
              {false, false, true, false, true, true, true, false, false});
  for (const BenchComparison& c : report.comparisons) {
    std::string verdict = c.verdict;
    if (c.below_min_ratio) verdict += fmt::format(" (below {:g})", *report.options.min_ratio);
    if (!c.reason.empty()) verdict += ": " + c.reason;
    if (c.params_differ) verdict += " [params differ]";
    table.AddRow(
        {c.benchmark, c.dtype, c.params.contains("size") ? c.params["size"].dump() : "", c.unit,
         Fixed(c.base_median), Fixed(c.cand_median), Fixed(c.ratio, "{:.3f}"),
         c.interval ? fmt::format("[{:.3f}, {:.3f}]", c.interval->low, c.interval->high) : "",
         verdict});
  }
  text += table.Render("  ");
  if (!report.suite_geomeans.empty()) {
    text += "\ngeometric mean of ratios:";
    for (const auto& [suite, g] : report.suite_geomeans)
      text += fmt::format(" {} {:.3f}", suite, g);
    text += "\n";
  }
  if (!report.only_in_base.empty()) {
    text += fmt::format("only in base: {}\n", fmt::join(report.only_in_base, "; "));
  }
  if (!report.only_in_cand.empty()) {
    text += fmt::format("only in cand: {}\n", fmt::join(report.only_in_cand, "; "));
  }
  if (report.within_run_only) {
    text +=
        "\nnote: intervals from one run per side reflect within-run noise only, which "
        "understates run-to-run noise; run `parity bench --repeat K` on each side for "
        "run-level intervals\n";
  }
  if (report.options.min_ratio) {
    text += fmt::format("{} of {} comparisons fail --min-ratio {:g}\n", report.failures,
                        report.comparisons.size(), *report.options.min_ratio);
  }
  return text;
}

}  // namespace parity::bench
