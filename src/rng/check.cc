// SPDX-License-Identifier: Apache-2.0
#include "rng/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/normal.hpp>
#include <cmath>

#include "io/values.h"
#include "rng/ks.h"

namespace parity {

Moments ComputeMoments(const std::vector<double>& values) {
  Moments m;
  m.n = static_cast<int64_t>(values.size());
  if (values.empty()) return m;
  const double n = static_cast<double>(values.size());
  double sum = 0.0;
  for (double v : values) sum += v;
  m.mean = sum / n;
  double m2 = 0.0, m3 = 0.0, m4 = 0.0;
  for (double v : values) {
    const double d = v - m.mean, d2 = d * d;
    m2 += d2;
    m3 += d2 * d;
    m4 += d2 * d2;
  }
  m2 /= n;
  m3 /= n;
  m4 /= n;
  m.variance = values.size() > 1 ? m2 * n / (n - 1.0) : 0.0;
  m.skewness = m2 > 0 ? m3 / std::pow(m2, 1.5) : 0.0;
  m.kurtosis = m2 > 0 ? m4 / (m2 * m2) - 3.0 : 0.0;
  return m;
}

ChiSquare ChiSquareFit(const std::vector<double>& values, const std::string& dist, int64_t bins) {
  ChiSquare c;
  c.dist = dist;
  c.bins = std::max<int64_t>(bins, 2);
  std::vector<int64_t> observed(static_cast<std::size_t>(c.bins), 0);
  const boost::math::normal_distribution<double> normal;
  for (double v : values) {
    // The value's probability under the reference distribution picks its bin.
    double u = dist == "normal" ? boost::math::cdf(normal, v) : v;
    u = std::clamp(u, 0.0, std::nextafter(1.0, 0.0));
    ++observed[static_cast<std::size_t>(u * static_cast<double>(c.bins))];
  }
  const double expected = static_cast<double>(values.size()) / static_cast<double>(c.bins);
  for (int64_t o : observed) {
    const double d = static_cast<double>(o) - expected;
    c.statistic += d * d / expected;
  }
  c.df = static_cast<double>(c.bins - 1);
  c.p_value =
      boost::math::cdf(boost::math::complement(boost::math::chi_squared(c.df), c.statistic));
  return c;
}

namespace {

Result<std::vector<double>> ReadFinite(const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(std::vector<double> values, ReadValues(path, std::nullopt));
  if (values.empty()) return Status::Invalid(path, "holds no values");
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      return Status::Invalid(path, fmt::format("value {} at index {} is not finite", values[i], i));
    }
  }
  return values;
}

// Bins with at least five expected values each, at most 100.
int64_t BinsFor(std::size_t n) { return std::clamp<int64_t>(static_cast<int64_t>(n / 5), 2, 100); }

std::string G(double x) { return fmt::format("{:.4g}", x); }

}  // namespace

Result<RngCheckReport> RunRngCheck(const RngCheckOptions& options) {
  if (options.dist != "auto" && options.dist != "uniform" && options.dist != "normal") {
    return Status::Invalid("--dist",
                           fmt::format("'{}' is not uniform, normal or auto", options.dist));
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<double> a, ReadFinite(options.a));
  PARITY_ASSIGN_OR_RETURN(std::vector<double> b, ReadFinite(options.b));
  RngCheckReport r;
  r.a = options.a;
  r.b = options.b;
  r.alpha = options.alpha;
  r.n_a = static_cast<int64_t>(a.size());
  r.n_b = static_cast<int64_t>(b.size());
  if (a.size() == b.size()) {
    int64_t same = 0;
    double max_abs = 0.0, sum_abs = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      same += std::bit_cast<uint64_t>(a[i]) == std::bit_cast<uint64_t>(b[i]);
      const double d = std::fabs(a[i] - b[i]);
      max_abs = std::max(max_abs, d);
      sum_abs += d;
    }
    r.identical = static_cast<double>(same) / static_cast<double>(a.size());
    r.max_abs = max_abs;
    r.mean_abs = sum_abs / static_cast<double>(a.size());
  }
  const KsTwoSample ks = KsTwoSampleTest(a, b);
  r.ks_statistic = ks.statistic;
  r.ks_p_value = ks.p_value;
  r.ks_method = ks.method;
  std::string dist = options.dist;
  if (dist == "auto") {
    auto unit = [](const std::vector<double>& v) {
      return std::all_of(v.begin(), v.end(), [](double x) { return x >= 0.0 && x <= 1.0; });
    };
    dist = unit(a) && unit(b) ? "uniform" : "normal";
  }
  r.chi2_a = ChiSquareFit(a, dist, BinsFor(a.size()));
  r.chi2_b = ChiSquareFit(b, dist, BinsFor(b.size()));
  r.moments_a = ComputeMoments(a);
  r.moments_b = ComputeMoments(b);
  const std::string fit = fmt::format("chi-square against {}: A p = {}, B p = {}", dist,
                                      G(r.chi2_a.p_value), G(r.chi2_b.p_value));
  if (r.identical && *r.identical == 1.0) {
    r.verdict = "same-stream";
    r.reason = fmt::format("all {} values bit-identical", r.n_a);
  } else if (r.ks_p_value >= options.alpha) {
    r.verdict = "same-distribution";
    r.reason = fmt::format(
        "{}two-sample KS D = {}, p = {} ({}) ≥ α = {}: no evidence the distributions differ; "
        "{}",
        r.identical ? fmt::format("{:.2f}% bit-identical; ", 100.0 * *r.identical) : "",
        G(r.ks_statistic), G(r.ks_p_value), r.ks_method, G(options.alpha), fit);
  } else {
    r.verdict = "different-distribution";
    r.reason = fmt::format("two-sample KS D = {}, p = {} ({}) < α = {}; {}", G(r.ks_statistic),
                           G(r.ks_p_value), r.ks_method, G(options.alpha), fit);
  }
  return r;
}

Json RngCheckJson(const RngCheckReport& r) {
  Json doc = Document("parity-rng-check", 1);
  doc["a"] = r.a;
  doc["b"] = r.b;
  doc["n_a"] = r.n_a;
  doc["n_b"] = r.n_b;
  auto optional = [&](const char* key, const std::optional<double>& v) {
    if (v) {
      SetNumber(doc, key, *v);
    } else {
      doc[key] = nullptr;
    }
  };
  optional("identical", r.identical);
  optional("max_abs", r.max_abs);
  optional("mean_abs", r.mean_abs);
  doc["ks"] = {{"statistic", r.ks_statistic}, {"p_value", r.ks_p_value}, {"method", r.ks_method}};
  auto chi = [](const ChiSquare& c) {
    return Json{{"dist", c.dist},
                {"bins", c.bins},
                {"statistic", c.statistic},
                {"df", c.df},
                {"p_value", c.p_value}};
  };
  doc["chi2"] = {{"a", chi(r.chi2_a)}, {"b", chi(r.chi2_b)}};
  auto moments = [](const Moments& m) {
    return Json{{"n", m.n},
                {"mean", m.mean},
                {"variance", m.variance},
                {"skewness", m.skewness},
                {"kurtosis", m.kurtosis}};
  };
  doc["moments"] = {{"a", moments(r.moments_a)}, {"b", moments(r.moments_b)}};
  doc["alpha"] = r.alpha;
  doc["verdict"] = r.verdict;
  doc["reason"] = r.reason;
  return doc;
}

std::string RngCheckText(const RngCheckReport& r) {
  std::string out =
      fmt::format("parity rng check {} ({} values) {} ({} values)\n", r.a, r.n_a, r.b, r.n_b);
  if (r.identical) {
    out += fmt::format("  bit-identical: {:.4f}%   max |a-b| {:.4g}   mean |a-b| {:.4g}\n",
                       100.0 * *r.identical, *r.max_abs, *r.mean_abs);
  }
  out += fmt::format("  KS two-sample: D {:.4g}, p {:.4g} ({})\n", r.ks_statistic, r.ks_p_value,
                     r.ks_method);
  out += fmt::format("  chi-square vs {} ({} bins): A {:.4g} (p {:.4g}), B {:.4g} (p {:.4g})\n",
                     r.chi2_a.dist, r.chi2_a.bins, r.chi2_a.statistic, r.chi2_a.p_value,
                     r.chi2_b.statistic, r.chi2_b.p_value);
  out +=
      fmt::format("  moments A: mean {:.5g} var {:.5g} skew {:.4g} kurt {:.4g}\n", r.moments_a.mean,
                  r.moments_a.variance, r.moments_a.skewness, r.moments_a.kurtosis);
  out +=
      fmt::format("  moments B: mean {:.5g} var {:.5g} skew {:.4g} kurt {:.4g}\n", r.moments_b.mean,
                  r.moments_b.variance, r.moments_b.skewness, r.moments_b.kurtosis);
  out += fmt::format("\nVerdict: {}: {}\n", r.verdict, r.reason);
  return out;
}

}  // namespace parity
