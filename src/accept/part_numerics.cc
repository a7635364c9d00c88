// SPDX-License-Identifier: Apache-2.0
// Numerics: each dump stage of the two bundles compared tensor by tensor (parity compare, the
// criteria's tolerance, or three-way against a golden dump), and a failing compare attributed
// to its origins (parity explain).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "accept/criterion.h"
#include "compare/compare.h"
#include "compare/entries.h"
#include "explain/explain.h"

namespace parity::accept {
namespace {

/// At most this many tensors are listed one by one in the evidence.
constexpr std::size_t kMaxListedTensors = 100000;
/// The failing tensors whose element histograms are kept, worst first.
constexpr std::size_t kFailingHistograms = 5;

Json Finite(double v) { return std::isfinite(v) ? Json(v) : Json(); }

Json TensorEntry(std::size_t order, const TensorResult& t) {
  Json e = {{"order", order},
            {"name", t.name},
            {"dtype", t.dtype},
            {"pass", t.pass},
            {"structural", t.structural},
            {"not_compared", t.not_compared},
            {"tolerance", ToleranceSummary(t)}};
  if (t.metrics) {
    e["max_abs"] = Finite(t.metrics->max_abs);
    e["rmse"] = Finite(t.metrics->rmse());
    e["max_rel"] = Finite(t.metrics->max_rel);
  }
  e["ratio"] = t.structural || t.not_compared ? Json() : Finite(t.severity);
  if (!t.pass) e["reason"] = t.reason;
  return e;
}

/// The index of the first tensor that is an output of the op call, when there is one.
Json OrderOf(const OpExplanation& op, const CompareReport& report) {
  const std::string prefix =
      RecordTensorPrefix(op.rank, op.step, op.name, op.pass, op.call) + ".output";
  for (std::size_t i = 0; i < report.tensors.size(); ++i) {
    if (report.tensors[i].name.rfind(prefix, 0) == 0) return i;
  }
  return Json();
}

Json Origins(const ExplainReport& explain, const CompareReport& report) {
  Json origins = Json::array();
  for (const OpExplanation* op : explain.origins()) {
    Json o = {{"seq", op->seq},
              {"step", op->step},
              {"name", op->name},
              {"op", op->op},
              {"cause", CauseName(op->cause)},
              {"reason", op->reason}};
    o["precision"] = op->effective_precision ? Json(*op->effective_precision) : Json();
    o["order"] = OrderOf(*op, report);
    origins.push_back(std::move(o));
  }
  return origins;
}

CriterionResult Judge(const AcceptInput& input, const StagePair& pair) {
  const NumericsCriteria& c = input.criteria.numerics;
  CriterionResult r;
  r.id = "numerics." + pair.name;
  r.part = "numerics";
  r.stage = pair.name;
  r.title = c.golden ? fmt::format(
                           "no tensor more than {}x further from the golden than the "
                           "baseline's",
                           c.ratio)
                     : fmt::format("every tensor within its {} tolerance", c.tolerance.policy);
  if (auto problem = PairProblem(input, pair)) {
    std::tie(r.status, r.reason) = *problem;
    return r;
  }
  CompareOptions options;
  options.a = input.baseline.PathOf(pair.baseline->result);
  options.b = input.candidate.PathOf(pair.candidate->result);
  options.golden = c.golden;
  options.tolerance = c.tolerance;
  options.ratio = c.ratio;
  auto report = RunCompare(options);
  if (!report.ok()) {
    r.status = Verdict::kError;
    r.reason = report.status().message();
    return r;
  }
  Json& e = r.evidence;
  e["baseline_dump"] = options.a;
  e["candidate_dump"] = options.b;
  e["tolerance"] = c.tolerance.policy;
  if (c.golden) e["golden"] = *c.golden;
  e["kind"] = report->kind;
  e["tensors_total"] = report->tensors.size();
  e["passed"] = report->passed;
  e["failed"] = report->failed;
  e["structural"] = report->structural;
  e["not_compared"] = report->not_compared;
  e["first_divergence"] = report->first_divergence ? Json(*report->first_divergence) : Json();
  e["warnings"] = report->warnings;
  Json tensors = Json::array();
  std::array<int64_t, 10> histogram{};
  std::vector<const TensorResult*> failing;
  for (std::size_t i = 0; i < report->tensors.size(); ++i) {
    const TensorResult& t = report->tensors[i];
    if (i < kMaxListedTensors) tensors.push_back(TensorEntry(i, t));
    if (t.metrics && t.metrics->judged) {
      for (std::size_t b = 0; b < histogram.size(); ++b) {
        histogram[b] += t.metrics->ratio_histogram[b];
      }
    }
    if (!t.pass && t.metrics && t.metrics->judged) failing.push_back(&t);
  }
  e["tensors"] = std::move(tensors);
  e["tensors_listed"] = std::min(report->tensors.size(), kMaxListedTensors);
  e["ratio_bounds"] = kRatioBinBounds;
  e["ratio_histogram"] = histogram;
  std::stable_sort(
      failing.begin(), failing.end(),
      [](const TensorResult* x, const TensorResult* y) { return x->severity > y->severity; });
  if (failing.size() > kFailingHistograms) failing.resize(kFailingHistograms);
  Json failing_histograms = Json::array();
  for (const TensorResult* t : failing) {
    failing_histograms.push_back({{"name", t->name}, {"counts", t->metrics->ratio_histogram}});
  }
  e["failing_histograms"] = std::move(failing_histograms);
  e["origins"] = Json::array();

  const int64_t bad = report->failed;
  if (bad == 0 && report->passed == 0 && report->not_compared > 0) {  // nothing to pass
    r.status = Verdict::kSkip;
    r.reason = fmt::format("none of the {} tensors could be compared", report->tensors.size());
    for (const TensorResult& t : report->tensors) {
      if (t.not_compared) {
        r.reason += fmt::format(" (the first, {}: {})", t.name, t.reason);
        break;
      }
    }
    return r;
  }
  if (bad == 0) {
    r.status = Verdict::kPass;
    r.reason =
        report->not_compared == 0
            ? fmt::format("{} tensors, every one within its tolerance", report->tensors.size())
            : fmt::format(
                  "{} tensors compared, every one within its tolerance; {} not compared "
                  "(tensors the dumps do not hold, or complex)",
                  report->passed, report->not_compared);
    return r;
  }
  r.status = Verdict::kFail;
  r.reason = fmt::format(
      "{} of {} tensors failed{}{}", bad, report->tensors.size(),
      report->structural > 0 ? fmt::format(" ({} structurally)", report->structural) : "",
      report->first_divergence
          ? fmt::format("; the first in execution order: {}", *report->first_divergence)
          : "");
  if (!c.explain || report->kind != "dumps") return r;
  ExplainOptions explain_options;
  explain_options.a = options.a;
  explain_options.b = options.b;
  auto explain = RunExplain(explain_options);
  if (!explain.ok()) {
    e["explain_problem"] = explain.status().message();
    r.reason += "; explain could not attribute them: " + explain.status().message();
    return r;
  }
  e["origins"] = Origins(*explain, *report);
  const auto origins = explain->origins();
  if (!origins.empty()) {
    const OpExplanation& first = *origins.front();
    r.reason += fmt::format(
        "; {} {} ({}{})", origins.size() > 1 ? "origins start at" : "origin", first.name,
        CauseName(first.cause),
        first.effective_precision ? fmt::format(", {}", *first.effective_precision) : "");
  } else if (explain->input_difference) {
    r.reason += "; the inputs already differ: " + explain->input_difference_detail;
  } else if (c.allow_inherited && report->structural == 0) {
    // Each op was within its rounding on its own inputs: the tensors beyond their own op's
    // tolerance carry differences inherited from upstream rounding.
    e["inherited"] = true;
    r.status = Verdict::kPass;
    r.reason = fmt::format(
        "{} tensors; {} beyond their own op's rounding, each inherited: explain finds every op "
        "within rounding on its own inputs (no origin)",
        report->tensors.size(), bad);
  } else {
    r.reason += "; explain finds no origin: the differences are inherited from rounding";
  }
  return r;
  return r;
}

class Numerics final : public Part {
 public:
  std::string_view name() const override { return "numerics"; }
  std::vector<CriterionResult> Evaluate(const AcceptInput& input) const override {
    std::vector<CriterionResult> out;
    for (const StagePair& pair : PairStages(input, "dump")) out.push_back(Judge(input, pair));
    if (out.empty()) {
      out.push_back(NoStage(input, "numerics", "every tensor within its tolerance", "dump"));
    }
    return out;
  }
};

}  // namespace

const Part* NumericsPart() {
  static const Numerics part;
  return &part;
}

}  // namespace parity::accept
