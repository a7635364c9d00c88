// SPDX-License-Identifier: Apache-2.0
// Summary statistics of a tensor in one streaming pass (parity inspect).
#ifndef PARITY_IO_TENSOR_STATS_H_
#define PARITY_IO_TENSOR_STATS_H_

#include <cstdint>
#include <optional>
#include <variant>

#include "io/tensor.h"

namespace parity {

/// A min or max: exact integers for integer and bool dtypes, float64 for floats.
using StatValue = std::variant<double, int64_t, uint64_t>;

/// Statistics over a tensor. min, max, mean and std are over the finite elements only and are
/// absent when there is none (e.g. an empty tensor); std is the population standard deviation
/// (ddof = 0, as numpy's std).
struct TensorStats {
  int64_t count = 0;
  int64_t finite = 0;
  int64_t nan = 0;
  int64_t inf = 0;
  int64_t zeros = 0;  ///< elements equal to zero (+0 and -0)
  std::optional<StatValue> min;
  std::optional<StatValue> max;
  std::optional<double> mean;
  std::optional<double> std;
};

/// Computes TensorStats in one streaming pass, on ThreadCount() threads, accumulating in
/// float64 with per-block means combined pairwise (Chan et al.) in a fixed order, so the result
/// does not depend on the number of threads. The error of mean and std is that of a float64
/// sum: about n·2^-53 times the mean magnitude of the elements. Fails only when a mapped file
/// can't be read (it shrank underneath).
Result<TensorStats> ComputeStats(const Tensor& tensor);

}  // namespace parity

#endif  // PARITY_IO_TENSOR_STATS_H_
