// SPDX-License-Identifier: Apache-2.0
// ComputePairMetrics's kernels at x86-64-v3 (AVX2, FMA), in a file of their own so that the levels
// compile in parallel.
#include "compare/metrics_kernels.h"

namespace parity::metrics_internal {

PARITY_TARGET_V3 void ChunkMetricsV3(DType dtype, const std::byte* a, const std::byte* b,
                                     std::size_t n, int64_t base, const Knobs& knobs,
                                     PairMetrics* acc) {
  ChunkMetricsImpl(dtype, a, b, n, base, knobs, acc);
}

}  // namespace parity::metrics_internal
