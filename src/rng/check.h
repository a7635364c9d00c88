// SPDX-License-Identifier: Apache-2.0
// `parity rng check A B`: are two tensors of random numbers from two platforms the same
// stream, the same distribution, or different?
#ifndef PARITY_RNG_CHECK_H_
#define PARITY_RNG_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_util.h"
#include "core/status.h"

namespace parity {

/// Mean, variance (n - 1), skewness and excess kurtosis (population moments, as
/// scipy.stats.skew and kurtosis with their defaults).
struct Moments {
  int64_t n = 0;
  double mean = 0.0, variance = 0.0, skewness = 0.0, kurtosis = 0.0;
};
Moments ComputeMoments(const std::vector<double>& values);

/// Pearson's chi-square goodness-of-fit of `values` against `dist` ("uniform": U(0, 1);
/// "normal": N(0, 1)) over `bins` bins of equal probability.
struct ChiSquare {
  std::string dist;
  int64_t bins = 0;
  double statistic = 0.0, df = 0.0, p_value = 1.0;
};
ChiSquare ChiSquareFit(const std::vector<double>& values, const std::string& dist, int64_t bins);

struct RngCheckOptions {
  std::string a, b;
  std::string dist = "auto";  ///< uniform, normal, or auto (uniform when all in [0, 1])
  double alpha = 0.01;
};

struct RngCheckReport {
  std::string a, b;
  int64_t n_a = 0, n_b = 0;
  std::optional<double> identical;  ///< share of bit-identical values (same length only)
  std::optional<double> max_abs, mean_abs;
  double ks_statistic = 0.0, ks_p_value = 1.0;
  std::string ks_method;
  ChiSquare chi2_a, chi2_b;
  Moments moments_a, moments_b;
  double alpha = 0.01;
  std::string verdict;  ///< same-stream, same-distribution or different-distribution
  std::string reason;
};

/// Reads both files (any tensor file of one tensor, or text with one value per line) and
/// compares them. Fails (exit 2) on unreadable input, an empty tensor or non-finite values.
Result<RngCheckReport> RunRngCheck(const RngCheckOptions& options);

/// {"format":"parity-rng-check","version":1,"identical":..,"max_abs":..,"mean_abs":..,
///  "ks":{..},"chi2":{"a":{..},"b":{..}},"moments":{..},"verdict":..}.
Json RngCheckJson(const RngCheckReport& report);
std::string RngCheckText(const RngCheckReport& report);

}  // namespace parity

#endif  // PARITY_RNG_CHECK_H_
