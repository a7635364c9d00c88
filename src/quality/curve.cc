// SPDX-License-Identifier: Apache-2.0
#include "quality/curve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "io/values.h"

namespace parity {
namespace {

using Curve = std::map<double, double>;  // step -> value

Result<Curve> ReadCurve(const std::string& path, const CurveOptions& options) {
  PARITY_ASSIGN_OR_RETURN(auto columns,
                          ReadColumns(path, {options.step_column, options.value_column}));
  Curve curve;
  for (std::size_t i = 0; i < columns[0].size(); ++i) {
    const double step = columns[0][i], value = columns[1][i];
    if (!std::isfinite(step) || !std::isfinite(value)) {
      return Status::Invalid(
          path, fmt::format("row {}: step {} value {} is not finite", i + 1, step, value));
    }
    if (!curve.emplace(step, value).second) {
      return Status::Invalid(path, fmt::format("row {}: step {} appears twice", i + 1, step));
    }
  }
  if (curve.empty()) return Status::Invalid(path, "holds no rows");
  return curve;
}

std::string G(double x) { return fmt::format("{:.4g}", x); }

}  // namespace

Result<CurveReport> RunCurve(const CurveOptions& options) {
  if (options.a.empty() || options.b.empty()) {
    return Status::Invalid("--a/--b", "give at least one curve file per side");
  }
  std::vector<Curve> a, b;
  for (const std::string& path : options.a) {
    PARITY_ASSIGN_OR_RETURN(Curve c, ReadCurve(path, options));
    a.push_back(std::move(c));
  }
  for (const std::string& path : options.b) {
    PARITY_ASSIGN_OR_RETURN(Curve c, ReadCurve(path, options));
    b.push_back(std::move(c));
  }
  CurveReport r;
  r.runs_a = static_cast<int64_t>(a.size());
  r.runs_b = static_cast<int64_t>(b.size());
  r.patience = std::max<int64_t>(options.patience, 1);
  // Steps every run has.
  for (const auto& entry : a[0]) {
    const double step = entry.first;
    auto in = [&](const Curve& c) { return c.count(step) > 0; };
    if (!std::all_of(a.begin(), a.end(), in) || !std::all_of(b.begin(), b.end(), in)) continue;
    CurvePoint p;
    p.step = step;
    p.a_min = INFINITY;
    p.a_max = -INFINITY;
    for (const Curve& c : a) {
      const double v = c.at(step);
      p.a_mean += v;
      p.a_min = std::min(p.a_min, v);
      p.a_max = std::max(p.a_max, v);
    }
    p.a_mean /= static_cast<double>(a.size());
    for (const Curve& c : b) p.b_mean += c.at(step);
    p.b_mean /= static_cast<double>(b.size());
    p.outside = p.b_mean < p.a_min || p.b_mean > p.a_max;
    r.points.push_back(p);
  }
  if (r.points.empty()) {
    return Status::Invalid(options.a[0], "no step is present in every curve file");
  }
  int64_t run = 0;
  for (const CurvePoint& p : r.points) {
    r.steps_outside += p.outside;
    run = p.outside ? run + 1 : 0;
    if (a.size() > 1 && !r.first_departure && run == r.patience) {
      r.first_departure = r.points[static_cast<std::size_t>(&p - r.points.data()) + 1 - run].step;
    }
  }
  const double last = r.points.back().step;
  for (const Curve& c : a) r.final_a.push_back(c.at(last));
  for (const Curve& c : b) r.final_b.push_back(c.at(last));
  const Summary sa = Summarize(r.final_a), sb = Summarize(r.final_b);
  r.margin = options.relative ? options.margin * std::fabs(sa.mean) : options.margin;
  r.margin_text = options.relative ? fmt::format("{}% of A's final value", G(100 * options.margin))
                                   : fmt::format("{} absolute", G(options.margin));
  const std::string envelope =
      a.size() < 2 ? "one run on A: no seed envelope"
      : r.first_departure
          ? fmt::format(
                "B leaves A's seed envelope at step {} (for {}+ steps; {} of {} steps "
                "outside)",
                G(*r.first_departure), r.patience, r.steps_outside, r.points.size())
          : fmt::format(
                "B stays within A's seed envelope ({} of {} steps outside, never {} in a "
                "row)",
                r.steps_outside, r.points.size(), r.patience);
  if (a.size() >= 2 && b.size() >= 2) {
    r.welch = Welch(sa, sb);
    r.tost = Tost(r.welch->delta, r.welch->se, r.margin, r.welch->df);
    const std::string head = fmt::format("final Δ = {} at step {} (Welch p = {}); {}",
                                         G(r.welch->delta), G(last), G(r.welch->p_value), envelope);
    if (r.tost->p_value < 0.05) {
      r.verdict = "pass";
      r.reason = fmt::format("{}; equivalent within ±{} ({}), TOST p = {}", head, G(r.margin),
                             r.margin_text, G(r.tost->p_value));
    } else if (r.tost->p_beyond < 0.05) {
      r.verdict = "fail";
      r.reason = fmt::format("{}; different beyond ±{} ({}), p = {}", head, G(r.margin),
                             r.margin_text, G(r.tost->p_beyond));
    } else {
      r.verdict = "inconclusive";
      r.reason = fmt::format(
          "{}; neither equivalent within ±{} ({}) nor beyond it (TOST p = "
          "{}): more seeds are needed",
          head, G(r.margin), r.margin_text, G(r.tost->p_value));
    }
  } else {
    r.verdict = "inconclusive";
    r.reason = fmt::format(
        "final Δ = {} at step {}; {}; a final-value test needs two or more "
        "runs per side",
        G(sb.mean - sa.mean), G(last), envelope);
  }
  return r;
}

Json CurveReportJson(const CurveReport& r) {
  Json doc = Document("parity-quality", 1);
  doc["metric"] = "curve";
  doc["runs_a"] = r.runs_a;
  doc["runs_b"] = r.runs_b;
  doc["steps"] = r.points.size();
  doc["patience"] = r.patience;
  doc["first_departure"] = r.first_departure ? Json(*r.first_departure) : Json(nullptr);
  doc["steps_outside"] = r.steps_outside;
  Json final = {{"step", r.points.back().step}, {"a", r.final_a}, {"b", r.final_b}};
  if (r.welch) {
    final["welch"] = {{"delta", r.welch->delta},
                      {"t", r.welch->t},
                      {"df", r.welch->df},
                      {"p_value", r.welch->p_value}};
    final["tost"] = {{"margin", r.tost->margin},
                     {"p_value", r.tost->p_value},
                     {"ci90", {r.tost->ci90_lo, r.tost->ci90_hi}},
                     {"p_beyond_margin", r.tost->p_beyond}};
  }
  doc["final"] = std::move(final);
  Json points = Json::array();
  for (const CurvePoint& p : r.points) {
    points.push_back({{"step", p.step},
                      {"a_mean", p.a_mean},
                      {"a_min", p.a_min},
                      {"a_max", p.a_max},
                      {"b_mean", p.b_mean},
                      {"outside", p.outside}});
  }
  doc["points"] = std::move(points);
  doc["verdict"] = r.verdict;
  doc["reason"] = r.reason;
  return doc;
}

std::string CurveReportText(const CurveReport& r) {
  std::string out = fmt::format("parity quality curve: {} runs on A, {} on B, {} common steps\n",
                                r.runs_a, r.runs_b, r.points.size());
  out += fmt::format("  first departure from A's envelope: {}\n",
                     r.first_departure ? G(*r.first_departure) : std::string("none"));
  out += fmt::format("  final step {}: A mean {:.6g}, B mean {:.6g}\n", G(r.points.back().step),
                     Summarize(r.final_a).mean, Summarize(r.final_b).mean);
  out += fmt::format("\nVerdict: {}: {}\n", r.verdict, r.reason);
  return out;
}

}  // namespace parity
