// SPDX-License-Identifier: Apache-2.0
// The rounding-error model shared by `parity compare`'s `auto` policy and the GEMM validation
// of `parity bench`: the probabilistic bound λ·√K·u on the relative error of a length-K dot
// product (Higham & Mary, "A new approach to probabilistic rounding error analysis", SIAM J.
// Sci. Comput. 41(5), 2019).
#ifndef PARITY_CORE_ERROR_BOUND_H_
#define PARITY_CORE_ERROR_BOUND_H_

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace parity {

/// The λ `auto` uses unless told otherwise. Higham & Mary's theorem bounds the probability
/// that the bound fails by 2K·exp(-λ²(1-u)²/2), 3e-8·K for λ = 6, under their model of
/// independent rounding errors; in practice errors stay far inside it.
inline constexpr double kDefaultLambda = 6.0;

/// λ·√K·u: the relative growth of rounding errors in a sum of K products computed with unit
/// roundoff `u` (K below 1 counts as 1).
inline double DotProductGrowth(int64_t k, double u, double lambda = kDefaultLambda) {
  return lambda * std::sqrt(static_cast<double>(std::max<int64_t>(k, 1))) * u;
}

}  // namespace parity

#endif  // PARITY_CORE_ERROR_BOUND_H_
