// SPDX-License-Identifier: Apache-2.0
// ROC AUC as the Mann–Whitney statistic, and DeLong's paired test of two AUCs on the same
// evaluation set, by the O(n log n) algorithm of Sun & Xu (2014).
#ifndef PARITY_QUALITY_AUC_H_
#define PARITY_QUALITY_AUC_H_

#include <cstdint>
#include <span>
#include <vector>

namespace parity {

/// Which samples are positive, and where each positive and negative sits among its class.
struct Classes {
  int64_t positives = 0, negatives = 0;
  /// For each sample: its index among the positives, or among the negatives.
  std::vector<uint32_t> class_index;
  std::span<const uint8_t> labels;  ///< 1 positive, 0 negative
};

/// Counts the classes of `labels` (each 0 or 1).
Classes ClassesOf(std::span<const uint8_t> labels);

/// DeLong's placement values of one score vector: for each positive, the share of negatives
/// it scores above (ties count half); for each negative, the share of positives scoring above
/// it. Their means are the AUC. Positives and negatives keep their order in the data.
struct Placements {
  double auc = 0.0;
  std::vector<double> v10;  ///< one per positive
  std::vector<double> v01;  ///< one per negative
};

/// The placements of `scores` (finite, one per label; both classes present), from one sort
/// of the scores: S. Sun and W. Xu, "Fast implementation of DeLong's algorithm for comparing
/// the areas under correlated receiver operating characteristic curves", IEEE Signal
/// Processing Letters 21(11), 2014, with ties at midranks.
Placements ComputePlacements(const Classes& classes, std::span<const double> scores);

/// DeLong's paired comparison of B's AUC with A's on the same samples.
struct DeLongTest {
  double auc_a = 0.0, auc_b = 0.0;
  double delta = 0.0;  ///< auc_b - auc_a
  double var_a = 0.0, var_b = 0.0, covariance = 0.0;
  double se = 0.0;  ///< standard error of delta
  double z = 0.0;   ///< delta / se (0 when both are 0)
  double p_value = 1.0;
  double ci95_lo = 0.0, ci95_hi = 0.0;
};

/// E. R. DeLong, D. M. DeLong and D. L. Clarke-Pearson, Biometrics 44(3), 1988: the variance
/// of each AUC and their covariance from the placements' sample covariances (denominators
/// m - 1 and n - 1), as R's pROC computes them.
DeLongTest DeLongPaired(const Placements& a, const Placements& b);

/// The AUC of a bootstrap resample given each sample's multiplicity `weight`, for scores
/// sorted by `order` (ascending): O(n), no sort.
double WeightedAuc(std::span<const uint8_t> labels, std::span<const double> scores,
                   std::span<const uint32_t> order, std::span<const uint32_t> weight);

/// The indices of `scores` in ascending order of score (stable; -0 and +0 tie). At most 2^31
/// scores.
std::vector<uint32_t> SortedOrder(std::span<const double> scores);

}  // namespace parity

#endif  // PARITY_QUALITY_AUC_H_
