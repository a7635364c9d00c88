// SPDX-License-Identifier: Apache-2.0
#include "bench/stats.h"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <numeric>

namespace parity::bench {
namespace {

// SplitMix64 (Steele, Lea & Flood 2014): a small, well-mixed generator for resampling indices.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n) (Lemire's multiply-shift; the bias is below 2^-32 for the n used here).
  std::size_t Below(std::size_t n) {
    return static_cast<std::size_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

 private:
  uint64_t state_;
};

// The median of a non-empty vector, reordering it.
double MedianInPlace(std::vector<double>& values) {
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  if (values.size() % 2 == 1) return values[mid];
  const double upper = values[mid];
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + upper);
}

double ResampledMedian(std::span<const double> values, SplitMix64& rng,
                       std::vector<double>& scratch) {
  scratch.resize(values.size());
  for (double& v : scratch) v = values[rng.Below(values.size())];
  return MedianInPlace(scratch);
}

// The q-quantile of sorted values, linearly interpolated (numpy's default method).
double Quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

double Median(std::vector<double> values) { return MedianInPlace(values); }

Summary Summarize(std::span<const double> samples) {
  Summary s;
  s.median = Median({samples.begin(), samples.end()});
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  s.min = *lo;
  s.max = *hi;
  const double n = static_cast<double>(samples.size());
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
  if (samples.size() > 1 && s.mean != 0.0) {
    double ss = 0.0;
    for (double v : samples) ss += (v - s.mean) * (v - s.mean);
    s.cv = std::sqrt(ss / (n - 1.0)) / std::abs(s.mean);
  }
  return s;
}

Interval BootstrapMedianRatio(std::span<const double> base, std::span<const double> cand,
                              double confidence, int resamples, uint64_t seed) {
  SplitMix64 rng(seed);
  // Log ratios, so that samples far apart in magnitude can't overflow to inf - inf.
  std::vector<double> log_ratios;
  log_ratios.reserve(static_cast<std::size_t>(resamples));
  std::vector<double> scratch;
  for (int r = 0; r < resamples; ++r) {
    const double b = ResampledMedian(base, rng, scratch);
    const double c = ResampledMedian(cand, rng, scratch);
    log_ratios.push_back(std::log(c) - std::log(b));
  }
  std::sort(log_ratios.begin(), log_ratios.end());
  const double alpha = 1.0 - confidence;
  return {std::exp(Quantile(log_ratios, alpha / 2.0)),
          std::exp(Quantile(log_ratios, 1.0 - alpha / 2.0))};
}

Interval LogRatioInterval(std::span<const double> base_runs, std::span<const double> cand_runs,
                          double confidence) {
  auto moments = [](std::span<const double> values) {
    double mean = 0.0;
    for (double v : values) mean += std::log(v);
    mean /= static_cast<double>(values.size());
    double ss = 0.0;
    for (double v : values) ss += (std::log(v) - mean) * (std::log(v) - mean);
    return std::pair{mean, ss / static_cast<double>(values.size() - 1)};
  };
  const auto [mb, vb] = moments(base_runs);
  const auto [mc, vc] = moments(cand_runs);
  const double nb = static_cast<double>(base_runs.size());
  const double nc = static_cast<double>(cand_runs.size());
  const double diff = mc - mb;
  const double se2 = vb / nb + vc / nc;
  if (se2 <= 0.0) return {std::exp(diff), std::exp(diff)};
  // Welch–Satterthwaite degrees of freedom.
  const double df =
      se2 * se2 / ((vb / nb) * (vb / nb) / (nb - 1.0) + (vc / nc) * (vc / nc) / (nc - 1.0));
  const double t =
      boost::math::quantile(boost::math::students_t(df), 1.0 - (1.0 - confidence) / 2.0);
  const double half = t * std::sqrt(se2);
  return {std::exp(diff - half), std::exp(diff + half)};
}

double GeometricMean(std::span<const double> values) {
  double sum = 0.0;
  for (double v : values) sum += std::log(v);
  return std::exp(sum / static_cast<double>(values.size()));
}

}  // namespace parity::bench
