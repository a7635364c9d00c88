// SPDX-License-Identifier: Apache-2.0
// Trends: how each metric series in the results store moved between its first and last run.
#ifndef PARITY_STORE_TREND_H_
#define PARITY_STORE_TREND_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace parity::store {

/// A metric series on one node, and how it moved. Values are of the valid points only.
struct Trend {
  std::string node, name, dtype, params;  ///< the series' key
  std::string unit;                       ///< the last point's
  std::string better;                     ///< "higher", "lower" or "" (unknown)
  std::size_t points = 0;                 ///< valid points
  double first = 0.0, last = 0.0, min = 0.0, max = 0.0;
  double first_started = 0.0, last_started = 0.0;  ///< Unix seconds
  /// (last - first) / |first|; none when first == 0 or there is a single point.
  std::optional<double> change;
  /// (last - previous) / |previous| for the point before the last; none when there is none or
  /// it is 0.
  std::optional<double> vs_previous;
  /// "regressed", "improved", "steady", "changed" (beyond the threshold in an unknown
  /// direction) or "single" (one point).
  std::string verdict;
};

/// Groups points (as Store::Series orders them; other orders are sorted) by (node, name,
/// dtype, params) and computes each Trend, in key order. Invalid points are left out of the
/// values, and so are non-finite ones; a series with no valid point gives no Trend. A series
/// regressed when its last value is worse than its first (by `better`) by more than
/// `threshold` as a share of |first|, and by more than the noise: 3 * the larger cv of the
/// first and last point, compared with |ln(last / first)| when both have one sign (else with
/// the share); improved symmetrically; otherwise steady. With `better` unknown a move beyond that bound
/// either way is "changed". A first value of 0 has no relative change: any other last value is
/// beyond every bound.
std::vector<Trend> ComputeTrends(const std::vector<SeriesPoint>& points, double threshold);

}  // namespace parity::store

#endif  // PARITY_STORE_TREND_H_
