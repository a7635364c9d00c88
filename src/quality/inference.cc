// SPDX-License-Identifier: Apache-2.0
#include "quality/inference.h"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>

namespace parity {
namespace {

// Upper-tail probability P(X > x) of the t (df) or normal distribution.
double Upper(double x, std::optional<double> df) {
  if (std::isinf(x)) return x > 0 ? 0.0 : 1.0;
  if (df && std::isfinite(*df) && *df > 0) {
    return boost::math::cdf(boost::math::complement(boost::math::students_t(*df), x));
  }
  return boost::math::cdf(boost::math::complement(boost::math::normal(), x));
}

double UpperQuantile(double p, std::optional<double> df) {
  if (df && std::isfinite(*df) && *df > 0) {
    return boost::math::quantile(boost::math::complement(boost::math::students_t(*df), p));
  }
  return boost::math::quantile(boost::math::complement(boost::math::normal(), p));
}

}  // namespace

Summary Summarize(std::span<const double> values) {
  Summary s;
  s.n = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  for (double v : values) s.mean += v;
  s.mean /= static_cast<double>(values.size());
  if (values.size() > 1) {
    double sq = 0.0;
    for (double v : values) sq += (v - s.mean) * (v - s.mean);
    s.sd = std::sqrt(sq / static_cast<double>(values.size() - 1));
  }
  return s;
}

WelchTest Welch(const Summary& a, const Summary& b) {
  WelchTest w;
  w.delta = b.mean - a.mean;
  const double va = a.sd * a.sd / static_cast<double>(a.n);
  const double vb = b.sd * b.sd / static_cast<double>(b.n);
  w.se = std::sqrt(va + vb);
  const double denominator =
      va * va / static_cast<double>(a.n - 1) + vb * vb / static_cast<double>(b.n - 1);
  w.df = denominator > 0 ? (va + vb) * (va + vb) / denominator : INFINITY;
  if (w.se > 0) {
    w.t = w.delta / w.se;
    w.p_value = 2.0 * Upper(std::fabs(w.t), w.df);
  } else {
    w.t = 0.0;
    w.p_value = w.delta == 0.0 ? 1.0 : 0.0;
  }
  return w;
}

EquivalenceTest Tost(double delta, double se, double margin, std::optional<double> df) {
  EquivalenceTest e;
  e.margin = margin;
  if (se > 0) {
    e.p_lower = Upper((delta + margin) / se, df);              // H0: delta <= -margin
    e.p_upper = Upper((margin - delta) / se, df);              // H0: delta >= +margin
    e.p_beyond = Upper((std::fabs(delta) - margin) / se, df);  // H0: |delta| <= margin
  } else {
    e.p_lower = delta > -margin ? 0.0 : 1.0;
    e.p_upper = delta < margin ? 0.0 : 1.0;
    e.p_beyond = std::fabs(delta) > margin ? 0.0 : 1.0;
  }
  e.p_value = std::max(e.p_lower, e.p_upper);
  const double q = UpperQuantile(0.05, df);
  e.ci90_lo = delta - q * se;
  e.ci90_hi = delta + q * se;
  return e;
}

double NormalTwoSidedP(double z) { return 2.0 * Upper(std::fabs(z), std::nullopt); }

double NormalQuantile(double p) { return boost::math::quantile(boost::math::normal(), p); }

}  // namespace parity
