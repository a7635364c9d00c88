// SPDX-License-Identifier: Apache-2.0
#include "quality/quality.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>

#include "io/values.h"

namespace parity {
namespace {

// One run's scores, with what each metric needs of them.
struct Run {
  std::string path;
  std::vector<double> scores;
  std::optional<Placements> placements;  // auc
  std::vector<double> per_sample;        // logloss terms, correctness
  double value = 0.0;
};

// A metric of the registry: how one run's value is computed, per sample where it is a mean.
struct MetricDef {
  std::string_view name;
  bool higher_is_better;
  bool needs_both_classes;
  // Fills run->value (and placements or per_sample); fails naming the file on bad scores.
  Status (*evaluate)(const Classes& classes, const QualityOptions& options, Run* run);
};

Status EvaluateAuc(const Classes& classes, const QualityOptions&, Run* run) {
  run->placements = ComputePlacements(classes, run->scores);
  run->value = run->placements->auc;
  return Status::Ok();
}

// sklearn.metrics.log_loss's clipping (eps="auto": float64's machine epsilon).
constexpr double kLogLossEps = std::numeric_limits<double>::epsilon();

Status EvaluateLogLoss(const Classes& classes, const QualityOptions&, Run* run) {
  run->per_sample.resize(run->scores.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < run->scores.size(); ++i) {
    const double p = run->scores[i];
    if (!(p >= 0.0 && p <= 1.0)) {
      return Status::Invalid(run->path, fmt::format("value {} at index {} is not a probability "
                                                    "in [0, 1] (logloss needs probabilities)",
                                                    p, i));
    }
    const double q = std::clamp(p, kLogLossEps, 1.0 - kLogLossEps);
    const double loss = classes.labels[i] != 0 ? -std::log(q) : -std::log1p(-q);
    run->per_sample[i] = loss;
    sum += loss;
  }
  run->value = sum / static_cast<double>(run->scores.size());
  return Status::Ok();
}

Status EvaluateAccuracy(const Classes& classes, const QualityOptions& options, Run* run) {
  run->per_sample.resize(run->scores.size());
  double correct = 0.0;
  for (std::size_t i = 0; i < run->scores.size(); ++i) {
    const bool predicted = run->scores[i] >= options.threshold;
    run->per_sample[i] = predicted == (classes.labels[i] != 0) ? 1.0 : 0.0;
    correct += run->per_sample[i];
  }
  run->value = correct / static_cast<double>(run->scores.size());
  return Status::Ok();
}

constexpr std::array<MetricDef, 3> kMetrics = {{
    {"auc", true, true, EvaluateAuc},
    {"logloss", false, false, EvaluateLogLoss},
    {"accuracy", true, false, EvaluateAccuracy},
}};

const MetricDef* FindMetric(std::string_view name) {
  for (const MetricDef& m : kMetrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

PairedDifference Paired(const std::vector<double>& a, const std::vector<double>& b) {
  PairedDifference p;
  p.n = static_cast<int64_t>(a.size());
  std::vector<double> d(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) d[i] = b[i] - a[i];
  const Summary s = Summarize(d);
  p.delta = s.mean;
  p.se = s.sd / std::sqrt(static_cast<double>(std::max<int64_t>(p.n, 1)));
  p.z = p.se > 0 ? p.delta / p.se : 0.0;
  p.p_value = p.se > 0 ? NormalTwoSidedP(p.z) : (p.delta == 0.0 ? 1.0 : 0.0);
  const double q = NormalQuantile(0.975);
  p.ci95_lo = p.delta - q * p.se;
  p.ci95_hi = p.delta + q * p.se;
  return p;
}

// The metric of a resample given by per-sample multiplicities.
double Resampled(const MetricDef& metric, const Classes& classes, const Run& run,
                 std::span<const uint32_t> order, std::span<const uint32_t> weight) {
  if (metric.name == "auc") return WeightedAuc(classes.labels, run.scores, order, weight);
  double sum = 0.0, total = 0.0;
  for (std::size_t i = 0; i < weight.size(); ++i) {
    sum += weight[i] * run.per_sample[i];
    total += weight[i];
  }
  return sum / total;
}

// Stratified bootstrap of mean(B runs) - mean(A runs): positives and negatives resampled
// separately, the same resample for every run of both sides.
BootstrapResult Bootstrap(const MetricDef& metric, const Classes& classes,
                          const std::vector<Run>& a, const std::vector<Run>& b, int64_t replicates,
                          uint64_t seed) {
  BootstrapResult r;
  r.replicates = replicates;
  r.seed = seed;
  std::vector<uint32_t> positives, negatives;
  for (std::size_t i = 0; i < classes.labels.size(); ++i) {
    (classes.labels[i] != 0 ? positives : negatives).push_back(static_cast<uint32_t>(i));
  }
  std::vector<std::vector<uint32_t>> orders_a, orders_b;
  if (metric.name == "auc") {
    for (const Run& run : a) orders_a.push_back(SortedOrder(run.scores));
    for (const Run& run : b) orders_b.push_back(SortedOrder(run.scores));
  }
  std::mt19937_64 gen(seed);
  std::vector<uint32_t> weight(classes.labels.size());
  std::vector<double> deltas;
  deltas.reserve(static_cast<std::size_t>(replicates));
  auto draw = [&](const std::vector<uint32_t>& from) {
    if (from.empty()) return;
    std::uniform_int_distribution<std::size_t> pick(0, from.size() - 1);
    for (std::size_t k = 0; k < from.size(); ++k) ++weight[from[pick(gen)]];
  };
  for (int64_t rep = 0; rep < replicates; ++rep) {
    std::fill(weight.begin(), weight.end(), 0);
    draw(positives);
    draw(negatives);
    auto side_mean = [&](const std::vector<Run>& runs,
                         const std::vector<std::vector<uint32_t>>& orders) {
      double sum = 0.0;
      for (std::size_t k = 0; k < runs.size(); ++k) {
        sum += Resampled(metric, classes, runs[k],
                         orders.empty() ? std::span<const uint32_t>() : orders[k], weight);
      }
      return sum / static_cast<double>(runs.size());
    };
    deltas.push_back(side_mean(b, orders_b) - side_mean(a, orders_a));
  }
  std::sort(deltas.begin(), deltas.end());
  const Summary s = Summarize(deltas);
  r.se = s.sd;
  // Percentile interval (linear interpolation between order statistics, numpy's default).
  auto percentile = [&](double q) {
    const double pos = q * static_cast<double>(deltas.size() - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, deltas.size() - 1);
    return deltas[lo] + (pos - static_cast<double>(lo)) * (deltas[hi] - deltas[lo]);
  };
  r.ci95_lo = percentile(0.025);
  r.ci95_hi = percentile(0.975);
  return r;
}

// Entropy of the base rate: normalised entropy = logloss / this.
double BaseEntropy(const Classes& c) {
  const double p =
      static_cast<double>(c.positives) / static_cast<double>(c.positives + c.negatives);
  if (p <= 0.0 || p >= 1.0) return 0.0;
  return -(p * std::log(p) + (1.0 - p) * std::log1p(-p));
}

std::string G(double x) { return fmt::format("{:.4g}", x); }

void Judge(QualityReport* r) {
  const EquivalenceTest& t = r->tost;
  const std::string band = fmt::format("±{} ({})", G(r->margin), r->margin_text);
  std::string evidence;
  if (r->delong) {
    evidence = fmt::format("DeLong se {}, p = {} for a difference", G(r->delong->se),
                           G(r->delong->p_value));
  } else if (r->paired) {
    evidence = fmt::format("paired se {}, p = {} for a difference", G(r->paired->se),
                           G(r->paired->p_value));
  } else if (r->welch) {
    evidence = fmt::format("seed-to-seed sd {} on A, {} on B ({} and {} runs); Welch p = {}",
                           G(r->seeds_a->sd), G(r->seeds_b->sd), r->seeds_a->n, r->seeds_b->n,
                           G(r->welch->p_value));
  }
  const std::string head = fmt::format("Δ = {} (B − A), {}; 90% CI [{}, {}]", G(r->delta), evidence,
                                       G(t.ci90_lo), G(t.ci90_hi));
  if (t.p_value < 0.05) {
    r->verdict = "pass";
    r->reason = fmt::format("{} inside {}: equivalent (TOST p = {})", head, band, G(t.p_value));
  } else if (t.p_beyond < 0.05) {
    r->verdict = "fail";
    r->reason = fmt::format("{} beyond {}: different beyond the margin (p = {})", head, band,
                            G(t.p_beyond));
  } else {
    r->verdict = "inconclusive";
    r->reason = fmt::format(
        "{} overlaps the edge of {}: neither equivalent (TOST p = {}) nor "
        "beyond the margin (p = {}); more samples or seeds are needed",
        head, band, G(t.p_value), G(t.p_beyond));
  }
}

}  // namespace

std::vector<std::string_view> QualityMetrics() {
  std::vector<std::string_view> names;
  for (const MetricDef& m : kMetrics) names.push_back(m.name);
  return names;
}

Result<QualityReport> RunQuality(const QualityOptions& options) {
  const MetricDef* metric = FindMetric(options.metric);
  if (metric == nullptr) return Status::Invalid(options.metric, "unknown quality metric");
  if (options.a.empty() || options.b.empty()) {
    return Status::Invalid("--a/--b", "give at least one score file per side");
  }
  if ((options.a.size() == 1) != (options.b.size() == 1)) {
    return Status::Invalid("--a/--b", fmt::format("{} run(s) on A and {} on B: give one run per "
                                                  "side (paired test) or several on both "
                                                  "(seed spread)",
                                                  options.a.size(), options.b.size()));
  }
  auto read = [&](const std::string& path) -> Result<std::vector<double>> {
    auto it = options.values.find(path);
    if (it != options.values.end()) return it->second;
    return ReadValues(path, options.column);
  };
  PARITY_ASSIGN_OR_RETURN(std::vector<double> label_values, read(options.labels));
  if (label_values.empty()) return Status::Invalid(options.labels, "holds no labels");
  if (label_values.size() >= (std::size_t{1} << 31)) {
    return Status::Invalid(options.labels, "holds 2^31 labels or more; parity takes fewer");
  }
  std::vector<uint8_t> labels(label_values.size());
  for (std::size_t i = 0; i < label_values.size(); ++i) {
    const double y = label_values[i];
    if (y != 0.0 && y != 1.0) {
      return Status::Invalid(options.labels,
                             fmt::format("label {} at index {} is not 0 or 1", y, i));
    }
    labels[i] = y != 0.0 ? 1 : 0;
  }
  const Classes classes = ClassesOf(labels);
  if (metric->needs_both_classes && (classes.positives == 0 || classes.negatives == 0)) {
    return Status::Invalid(
        options.labels,
        fmt::format("has no {} samples: {} needs both classes",
                    classes.positives == 0 ? "positive" : "negative", metric->name));
  }
  auto load = [&](const std::vector<std::string>& paths) -> Result<std::vector<Run>> {
    std::vector<Run> runs;
    for (const std::string& path : paths) {
      Run run;
      run.path = path;
      PARITY_ASSIGN_OR_RETURN(run.scores, read(path));
      if (run.scores.size() != labels.size()) {
        return Status::Invalid(path, fmt::format("has {} scores for {} labels ({})",
                                                 run.scores.size(), labels.size(), options.labels));
      }
      for (std::size_t i = 0; i < run.scores.size(); ++i) {
        if (!std::isfinite(run.scores[i])) {
          return Status::Invalid(
              path, fmt::format("score {} at index {} is not finite", run.scores[i], i));
        }
      }
      PARITY_RETURN_IF_ERROR(metric->evaluate(classes, options, &run));
      runs.push_back(std::move(run));
    }
    return runs;
  };
  PARITY_ASSIGN_OR_RETURN(std::vector<Run> a, load(options.a));
  PARITY_ASSIGN_OR_RETURN(std::vector<Run> b, load(options.b));

  QualityReport r;
  r.metric = std::string(metric->name);
  r.higher_is_better = metric->higher_is_better;
  r.samples = static_cast<int64_t>(labels.size());
  r.positives = classes.positives;
  for (const Run& run : a) r.runs_a.push_back(run.value);
  for (const Run& run : b) r.runs_b.push_back(run.value);
  const Summary sa = Summarize(r.runs_a), sb = Summarize(r.runs_b);
  r.value_a = sa.mean;
  r.value_b = sb.mean;
  r.delta = r.value_b - r.value_a;
  r.margin = options.relative ? options.margin * std::fabs(r.value_a) : options.margin;
  r.margin_text = options.relative
                      ? fmt::format("{}% of A's {}", G(100.0 * options.margin), metric->name)
                      : fmt::format("{} in {} units", G(options.margin), metric->name);
  if (a.size() == 1) {
    double se = 0.0;
    if (metric->name == "auc") {
      r.delong = DeLongPaired(*a[0].placements, *b[0].placements);
      se = r.delong->se;
    } else {
      r.paired = Paired(a[0].per_sample, b[0].per_sample);
      se = r.paired->se;
    }
    r.tost = Tost(r.delta, se, r.margin, std::nullopt);
  } else {
    r.seeds_a = sa;
    r.seeds_b = sb;
    r.welch = Welch(sa, sb);
    r.tost = Tost(r.delta, r.welch->se, r.margin, r.welch->df);
  }
  if (metric->name == "logloss") {
    const double h = BaseEntropy(classes);
    if (h > 0) {
      r.normalized_entropy_a = r.value_a / h;
      r.normalized_entropy_b = r.value_b / h;
    }
  }
  if (options.bootstrap > 0) {
    r.bootstrap = Bootstrap(*metric, classes, a, b, options.bootstrap, options.seed);
  }
  Judge(&r);
  return r;
}

Json QualityReportJson(const QualityReport& r) {
  Json doc = Document("parity-quality", 1);
  doc["metric"] = r.metric;
  SetNumber(doc, r.metric + "_a", r.value_a);
  SetNumber(doc, r.metric + "_b", r.value_b);
  SetNumber(doc, "delta", r.delta);
  doc["samples"] = r.samples;
  doc["positives"] = r.positives;
  doc["runs_a"] = r.runs_a;
  doc["runs_b"] = r.runs_b;
  doc["margin"] = {{"value", r.margin}, {"how", r.margin_text}};
  if (r.delong) {
    const DeLongTest& d = *r.delong;
    doc["delong"] = {{"se", d.se},
                     {"z", d.z},
                     {"p_value", d.p_value},
                     {"ci95", {d.ci95_lo, d.ci95_hi}},
                     {"var_a", d.var_a},
                     {"var_b", d.var_b},
                     {"covariance", d.covariance}};
  } else {
    doc["delong"] = nullptr;
  }
  if (r.paired) {
    const PairedDifference& p = *r.paired;
    doc["paired"] = {{"n", p.n},
                     {"se", p.se},
                     {"z", p.z},
                     {"p_value", p.p_value},
                     {"ci95", {p.ci95_lo, p.ci95_hi}}};
  } else {
    doc["paired"] = nullptr;
  }
  if (r.welch) {
    doc["seeds"] = {{"a", {{"n", r.seeds_a->n}, {"mean", r.seeds_a->mean}, {"sd", r.seeds_a->sd}}},
                    {"b", {{"n", r.seeds_b->n}, {"mean", r.seeds_b->mean}, {"sd", r.seeds_b->sd}}},
                    {"welch",
                     {{"t", r.welch->t},
                      {"df", r.welch->df},
                      {"se", r.welch->se},
                      {"p_value", r.welch->p_value}}}};
  } else {
    doc["seeds"] = nullptr;
  }
  doc["tost"] = {{"margin", r.tost.margin},
                 {"p_lower", r.tost.p_lower},
                 {"p_upper", r.tost.p_upper},
                 {"p_value", r.tost.p_value},
                 {"ci90", {r.tost.ci90_lo, r.tost.ci90_hi}},
                 {"p_beyond_margin", r.tost.p_beyond}};
  if (r.bootstrap) {
    doc["bootstrap"] = {{"replicates", r.bootstrap->replicates},
                        {"seed", r.bootstrap->seed},
                        {"se", r.bootstrap->se},
                        {"ci95", {r.bootstrap->ci95_lo, r.bootstrap->ci95_hi}}};
  } else {
    doc["bootstrap"] = nullptr;
  }
  if (r.normalized_entropy_a) {
    doc["normalized_entropy_a"] = *r.normalized_entropy_a;
    doc["normalized_entropy_b"] = *r.normalized_entropy_b;
  }
  doc["verdict"] = r.verdict;
  doc["reason"] = r.reason;
  return doc;
}

std::string QualityReportText(const QualityReport& r) {
  std::string out = fmt::format("parity quality {}: {} samples ({} positive)\n", r.metric,
                                r.samples, r.positives);
  auto runs = [](const std::vector<double>& v) {
    std::string s;
    for (double x : v) s += (s.empty() ? "" : ", ") + fmt::format("{:.6f}", x);
    return s;
  };
  out += fmt::format(
      "  A: {} {:.6f}{}\n", r.metric, r.value_a,
      r.runs_a.size() > 1 ? fmt::format(" (mean of {}: {})", r.runs_a.size(), runs(r.runs_a)) : "");
  out += fmt::format(
      "  B: {} {:.6f}{}\n", r.metric, r.value_b,
      r.runs_b.size() > 1 ? fmt::format(" (mean of {}: {})", r.runs_b.size(), runs(r.runs_b)) : "");
  if (r.normalized_entropy_a) {
    out += fmt::format("  normalized entropy: A {:.6f}, B {:.6f}\n", *r.normalized_entropy_a,
                       *r.normalized_entropy_b);
  }
  out += fmt::format("  delta (B - A): {:+.6g} ({:+.3f}% of A)\n", r.delta,
                     r.value_a != 0 ? 100.0 * r.delta / r.value_a : 0.0);
  if (r.delong) {
    out += fmt::format(
        "  DeLong (paired): se {:.4g}, z {:.4g}, p {:.4g}, 95% CI [{:.4g}, {:.4g}]\n", r.delong->se,
        r.delong->z, r.delong->p_value, r.delong->ci95_lo, r.delong->ci95_hi);
  }
  if (r.paired) {
    out += fmt::format(
        "  paired differences: se {:.4g}, z {:.4g}, p {:.4g}, 95% CI [{:.4g}, "
        "{:.4g}]\n",
        r.paired->se, r.paired->z, r.paired->p_value, r.paired->ci95_lo, r.paired->ci95_hi);
  }
  if (r.welch) {
    out += fmt::format("  seeds: A sd {:.4g}, B sd {:.4g}; Welch t {:.4g}, df {:.4g}, p {:.4g}\n",
                       r.seeds_a->sd, r.seeds_b->sd, r.welch->t, r.welch->df, r.welch->p_value);
  }
  out +=
      fmt::format("  equivalence (TOST) within ±{:.4g} ({}): p {:.4g}, 90% CI [{:.4g}, {:.4g}]\n",
                  r.margin, r.margin_text, r.tost.p_value, r.tost.ci90_lo, r.tost.ci90_hi);
  if (r.bootstrap) {
    out += fmt::format(
        "  bootstrap ({} stratified replicates, seed {}): se {:.4g}, 95% CI "
        "[{:.4g}, {:.4g}]\n",
        r.bootstrap->replicates, r.bootstrap->seed, r.bootstrap->se, r.bootstrap->ci95_lo,
        r.bootstrap->ci95_hi);
  }
  out += fmt::format("\nVerdict: {}: {}\n", r.verdict, r.reason);
  return out;
}

}  // namespace parity
