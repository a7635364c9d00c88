// SPDX-License-Identifier: Apache-2.0
// The tests `parity quality` judges with: Welch's t-test, two one-sided tests (TOST) of
// equivalence within a margin, and the normal approximations for paired statistics.
#ifndef PARITY_QUALITY_INFERENCE_H_
#define PARITY_QUALITY_INFERENCE_H_

#include <cstdint>
#include <optional>
#include <span>

namespace parity {

/// Mean and sample standard deviation (n - 1).
struct Summary {
  int64_t n = 0;
  double mean = 0.0, sd = 0.0;
};
Summary Summarize(std::span<const double> values);

/// Welch's unequal-variance t-test of mean(b) - mean(a), as scipy.stats.ttest_ind(b, a,
/// equal_var=False): t, the Welch–Satterthwaite degrees of freedom, and the two-sided p.
struct WelchTest {
  double delta = 0.0, se = 0.0, t = 0.0, df = 0.0, p_value = 1.0;
};
WelchTest Welch(const Summary& a, const Summary& b);

/// Two one-sided tests of |delta| < margin: p = max of the two one-sided p-values, with a t
/// distribution of `df` degrees of freedom (or the normal when df is absent). Equivalent at
/// level alpha when p < alpha, i.e. when the (1 - 2·alpha) interval lies inside ±margin.
struct EquivalenceTest {
  double margin = 0.0;
  double p_lower = 1.0, p_upper = 1.0, p_value = 1.0;
  double ci90_lo = 0.0, ci90_hi = 0.0;
  /// The mirror test: is |delta| beyond the margin? One-sided p that delta lies outside
  /// ±margin on the side it falls.
  double p_beyond = 1.0;
};
EquivalenceTest Tost(double delta, double se, double margin, std::optional<double> df);

/// Two-sided p of z under the standard normal, and its quantile.
double NormalTwoSidedP(double z);
double NormalQuantile(double p);

}  // namespace parity

#endif  // PARITY_QUALITY_INFERENCE_H_
