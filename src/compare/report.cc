// SPDX-License-Identifier: Apache-2.0
// The three forms of a compare report: JSON, a human-readable table, CSV.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "compare/compare.h"
#include "core/text_table.h"
#include "io/tensor.h"

namespace parity {
namespace {

constexpr std::size_t kAllRowsUpTo = 50;       // beyond this, the table shows failures and the
constexpr std::size_t kPassingRows = 20;       // passing tensors closest to their tolerance
constexpr std::size_t kHistograms = 3;         // failing tensors shown with an error histogram
constexpr std::size_t kNotComparedLines = 20;  // pairs not compared listed with their reasons

// The verdict as JSON and CSV spell it.
std::string_view Verdict(const TensorResult& r) {
  return r.not_compared ? "skip" : r.pass ? "pass" : "fail";
}

// Table order: failing, then not compared, then passing.
int Rank(const TensorResult& r) { return r.not_compared ? 1 : r.pass ? 2 : 0; }

std::string Num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.3g}", v);
}

std::string Csv(const std::string& field) {
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

// Table rows: all tensors when few, else the failures, the pairs not compared and the passing
// tensors nearest to failing; worst first.
std::vector<const TensorResult*> Rows(const CompareReport& report, std::size_t* hidden) {
  std::vector<const TensorResult*> rows;
  for (const TensorResult& r : report.tensors) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](const TensorResult* x, const TensorResult* y) {
    if (Rank(*x) != Rank(*y)) return Rank(*x) < Rank(*y);
    return x->severity > y->severity;
  });
  *hidden = 0;
  if (rows.size() > kAllRowsUpTo) {
    const auto failing = static_cast<std::size_t>(
        std::count_if(rows.begin(), rows.end(), [](const TensorResult* r) { return !r->pass; }));
    const std::size_t keep = std::min(rows.size(), failing + kPassingRows);
    *hidden = rows.size() - keep;
    rows.resize(keep);
  }
  return rows;
}

std::string Histogram(const PairMetrics& v) {
  static const char* kLabels[] = {"0",          "(0, 1e-3]", "(1e-3, 0.01]", "(0.01, 0.1]",
                                  "(0.1, 0.5]", "(0.5, 1]",  "(1, 2]",       "(2, 10]",
                                  "(10, 100]",  "> 100"};
  const int64_t total =
      std::accumulate(v.ratio_histogram.begin(), v.ratio_histogram.end(), int64_t{0});
  std::string out = "      |a-b| / allowed   elements\n";
  for (std::size_t i = 0; i < v.ratio_histogram.size(); ++i) {
    const int64_t n = v.ratio_histogram[i];
    const int bar = total > 0 && n > 0 ? std::max(1, static_cast<int>(30.0 * n / total)) : 0;
    out += fmt::format("      {:<16}{:>12}  {}{}\n", kLabels[i], n, std::string(bar, '#'),
                       i == 5 ? "   <- allowed up to here" : "");
  }
  return out;
}

}  // namespace

std::string ToleranceSummary(const TensorResult& r) {
  if (r.structural || r.not_compared || !r.tolerance) return "-";
  const Tolerance& t = *r.tolerance;
  if (r.golden) return fmt::format("golden");
  switch (t.criterion) {
    case Criterion::kBitwise:
      return t.policy + ": bitwise";
    case Criterion::kUlps:
      return fmt::format("{}: {} ulp", t.policy, t.max_ulps);
    case Criterion::kAbsRel:
      break;
  }
  std::string s = fmt::format("{}: atol {} rtol {}", t.policy, Num(t.atol), Num(t.rtol));
  if (t.k) s += fmt::format(" (K={}, {})", *t.k, t.compute);
  return s;
}

Json CompareReportJson(const CompareReport& report) {
  Json doc = Document("parity-compare", 1);
  Json summary = Json::object();
  summary["tensors"] = report.tensors.size();
  summary["passed"] = report.passed;
  summary["failed"] = report.failed;
  summary["structural"] = report.structural;
  summary["not_compared"] = report.not_compared;
  summary["first_divergence"] = report.first_divergence ? Json(*report.first_divergence) : Json();
  doc["a"] = report.a;
  doc["b"] = report.b;
  if (!report.golden.empty()) doc["golden"] = report.golden;
  doc["kind"] = report.kind;
  doc["summary"] = std::move(summary);
  doc["warnings"] = report.warnings;
  Json tensors = Json::array();
  for (const TensorResult& r : report.tensors) {
    Json t = Json::object();
    t["name"] = r.name;
    t["dtype"] = r.dtype;
    t["shape"] = r.shape_known ? Json(r.shape) : Json();
    if (r.metrics) {
      const Json metrics = MetricsJson(*r.metrics, r.shape);
      for (auto it = metrics.begin(); it != metrics.end(); ++it) t[it.key()] = it.value();
    }
    if (!r.stats_comparison.is_null()) t["statistics"] = r.stats_comparison;
    if (r.tolerance) t["tolerance"] = r.tolerance->ToJson();
    if (r.golden) {
      const GoldenVerdict& g = *r.golden;
      auto err = [](const GoldenError& e) {
        Json j = Json::object();
        SetNumber(j, "rmse", e.rmse);
        SetNumber(j, "max_abs", e.max_abs);
        j["nonfinite_mismatch"] = e.nonfinite_mismatch;
        return j;
      };
      t["golden"] = {{"err_a", err(g.err_a)}, {"err_b", err(g.err_b)}};
      SetNumber(t["golden"], "floor_rmse", g.floor_rmse);
      SetNumber(t["golden"], "floor_max_abs", g.floor_max_abs);
    }
    if (r.metrics && r.metrics->judged) {
      t["violations"] = {{"count", r.metrics->violations},
                         {"ratio_bounds", kRatioBinBounds},
                         {"ratio_histogram", r.metrics->ratio_histogram}};
    }
    t["structural"] = r.structural;
    t["not_compared"] = r.not_compared;
    t["verdict"] = Verdict(r);
    t["reason"] = r.reason;
    tensors.push_back(std::move(t));
  }
  doc["tensors"] = std::move(tensors);
  return doc;
}

std::string CompareReportText(const CompareReport& report) {
  const std::size_t n = report.tensors.size();
  std::string out = fmt::format("parity compare {} {}{} ({}, {} tensor{})\n", report.a, report.b,
                                report.golden.empty() ? "" : " --golden " + report.golden,
                                report.kind, n, n == 1 ? "" : "s");
  for (const std::string& w : report.warnings) out += "  warning: " + w + "\n";
  std::size_t hidden = 0;
  const std::vector<const TensorResult*> rows = Rows(report, &hidden);
  Table table({"verdict", "name", "dtype", "shape", "max_abs", "rmse", "max_rel", "cosine",
               "max_ulp", "tolerance"},
              {false, false, false, false, true, true, true, true, true, false});
  for (const TensorResult* r : rows) {
    const std::string verdict = r->not_compared ? "SKIP"
                                : r->pass       ? "pass"
                                : r->structural ? "STRUCT"
                                                : "FAIL";
    std::vector<std::string> row = {verdict, r->name, r->dtype,
                                    r->shape_known ? ShapeString(r->shape) : "?"};
    if (r->metrics) {
      const PairMetrics& m = *r->metrics;
      row.insert(row.end(), {Num(m.max_abs), Num(m.rmse()), Num(m.max_rel), Num(m.cosine()),
                             fmt::format("{:g}", m.max_ulp)});
    } else {
      row.insert(row.end(), {"-", "-", "-", "-", "-"});
    }
    row.push_back(ToleranceSummary(*r));
    table.AddRow(std::move(row));
  }
  out += table.Render("  ");
  if (hidden > 0)
    out += fmt::format("  ... and {} more passing tensors (--json has all)\n", hidden);
  bool header = false;
  std::size_t histograms = 0;
  for (const TensorResult* r : rows) {
    if (r->pass || r->not_compared) continue;
    if (!header) {
      out += "\nFailures, worst first:\n";
      header = true;
    }
    out += fmt::format("  {}: {}\n", r->name, r->reason);
    if (r->metrics && r->metrics->judged && histograms < kHistograms) {
      out += Histogram(*r->metrics);
      if (++histograms == kHistograms) out += "  (--json has the histograms of every tensor)\n";
    }
  }
  if (report.not_compared > 0) {
    out += "\nNot compared (neither passed nor failed):\n";
    std::size_t listed = 0;
    for (const TensorResult& r : report.tensors) {
      if (!r.not_compared) continue;
      if (listed++ == kNotComparedLines) {
        out += fmt::format("  ... and {} more (--json has all)\n",
                           report.not_compared - static_cast<int64_t>(kNotComparedLines));
        break;
      }
      out += fmt::format("  {}: {}\n", r.name, r.reason);
    }
  }
  if (report.first_divergence) {
    out += fmt::format("\nFirst divergence in execution order: {}\n", *report.first_divergence);
  }
  out += fmt::format("\nSummary: {} tensor{}, {} passed, {} failed ({} structural)", n,
                     n == 1 ? "" : "s", report.passed, report.failed, report.structural);
  if (report.not_compared > 0) out += fmt::format(", {} not compared", report.not_compared);
  out += "\n";
  return out;
}

std::string CompareReportCsv(const CompareReport& report) {
  std::string out =
      "name,verdict,dtype,shape,count,max_abs,mean_abs,rmse,max_rel,mean_rel,cosine,max_ulp,"
      "mean_ulp,nan_mismatch,inf_mismatch,identical,policy,rtol,atol,reason\n";
  for (const TensorResult& r : report.tensors) {
    std::vector<std::string> f = {r.name, std::string(Verdict(r)), r.dtype,
                                  r.shape_known ? ShapeString(r.shape) : ""};
    if (r.metrics) {
      const PairMetrics& m = *r.metrics;
      for (std::string v :
           {std::to_string(m.count), Num(m.max_abs), Num(m.mean_abs()), Num(m.rmse()),
            Num(m.max_rel), Num(m.mean_rel()), Num(m.cosine()), fmt::format("{:g}", m.max_ulp),
            Num(m.mean_ulp()), std::to_string(m.nan_mismatch), std::to_string(m.inf_mismatch),
            Num(m.count ? static_cast<double>(m.identical) / m.count : 1.0)}) {
        f.push_back(v);
      }
    } else {
      f.insert(f.end(), 12, "");
    }
    if (r.tolerance) {
      f.insert(f.end(), {r.tolerance->policy, Num(r.tolerance->rtol), Num(r.tolerance->atol)});
    } else {
      f.insert(f.end(), 3, "");
    }
    f.push_back(r.reason);
    for (std::size_t i = 0; i < f.size(); ++i) {
      if (i > 0) out += ',';
      out += Csv(f[i]);
    }
    out += '\n';
  }
  return out;
}

}  // namespace parity
