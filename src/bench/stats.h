// SPDX-License-Identifier: Apache-2.0
// Statistics of benchmark samples: the summary every result carries, and the confidence
// interval of the ratio of two platforms' medians.
#ifndef PARITY_BENCH_STATS_H_
#define PARITY_BENCH_STATS_H_

#include <cstdint>
#include <span>
#include <vector>

namespace parity::bench {

/// median, min, max and the coefficient of variation (sample standard deviation / mean) of a
/// non-empty set of samples; cv is 0 for a single sample.
struct Summary {
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  double mean = 0.0;
  double cv = 0.0;
};
Summary Summarize(std::span<const double> samples);

/// The median (mean of the two middle values for an even count) of a non-empty set.
double Median(std::vector<double> values);

/// A two-sided confidence interval.
struct Interval {
  double low = 0.0;
  double high = 0.0;
};

/// Percentile-bootstrap interval of median(cand) / median(base) at `confidence` (e.g. 0.95):
/// `resamples` resamples of each side with replacement, from a generator seeded with `seed`
/// (the same inputs give the same interval). Both sides non-empty and positive.
Interval BootstrapMedianRatio(std::span<const double> base, std::span<const double> cand,
                              double confidence, int resamples, uint64_t seed);

/// Welch's t interval of exp(mean log cand - mean log base) at `confidence`: the ratio of the
/// geometric means of run-level figures (one per run), each side with at least two runs, all
/// positive. Equal logs on both sides give a zero-width interval.
Interval LogRatioInterval(std::span<const double> base_runs, std::span<const double> cand_runs,
                          double confidence);

/// The geometric mean of positive values (nothing for an empty set is the caller's business:
/// the set must not be empty).
double GeometricMean(std::span<const double> values);

}  // namespace parity::bench

#endif  // PARITY_BENCH_STATS_H_
