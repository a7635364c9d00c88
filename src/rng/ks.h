// SPDX-License-Identifier: Apache-2.0
// Kolmogorov–Smirnov distributions and tests: the exact distribution of the one-sample
// two-sided statistic D_n (Simard & L'Ecuyer 2011), and the two-sample two-sided test with the
// p-value scipy.stats.ks_2samp (scipy 1.10) reports under its defaults.
#ifndef PARITY_RNG_KS_H_
#define PARITY_RNG_KS_H_

#include <cstdint>
#include <span>
#include <string>

namespace parity {

/// P(D_n >= d) for D_n = sup_x |F_n(x) - F(x)|, the two-sided one-sample Kolmogorov–Smirnov
/// statistic of n observations from a continuous F: what scipy.stats.kstwo.sf(d, n) computes,
/// by the same choice of method per region (R. Simard and P. L'Ecuyer, "Computing the
/// Two-Sided Kolmogorov-Smirnov Distribution", J. Stat. Softw. 39(11), 2011). Accurate to
/// about 1e-10 relative where the methods are exact; where that paper uses an approximation
/// (Pelz–Good for large n, twice the one-sided tail for larger d) the value is that
/// approximation's. Returns 1 for d <= 1/(2n), 0 for d >= 1, NaN for NaN d or n < 1.
/// Takes O(n) time at most (O(1) for n > 1e6) and memory independent of n.
double KolmogorovSf(double d, int64_t n);

/// P(D_n <= d), the distribution function (scipy.stats.kstwo.cdf(d, n)); see KolmogorovSf.
/// Computed directly, not as 1 - KolmogorovSf, where the sf is near 1.
double KolmogorovCdf(double d, int64_t n);

/// Result of KsTwoSampleTest.
struct KsTwoSample {
  double statistic = 0.0;  ///< max_x |F_a(x) - F_b(x)| of the two empirical distributions
  double p_value = 1.0;    ///< two-sided
  std::string method;      ///< "exact" or "asymp", as scipy's method='auto' chooses
};

/// The two-sided two-sample Kolmogorov–Smirnov test of `a` against `b`, as
/// scipy.stats.ks_2samp(a, b) (alternative='two-sided', method='auto') in scipy 1.10:
///  - "exact" when max(|a|, |b|) <= 10000: the lattice-path probability (Hodges 1958) that
///    |F_a - F_b| reaches the observed value, with the statistic rounded to the lattice
///    (h / lcm(|a|, |b|)) as scipy reports it;
///  - "asymp" otherwise: KolmogorovSf(statistic, round(m n / (m + n))).
/// Ties are allowed (the empirical distributions are right-continuous step functions). Every
/// value must be finite; both samples must be non-empty (else std::invalid_argument).
/// Copies and sorts the samples; the exact method takes O(|a| |b|) time and O(max) memory.
KsTwoSample KsTwoSampleTest(std::span<const double> a, std::span<const double> b);

}  // namespace parity

#endif  // PARITY_RNG_KS_H_
