// SPDX-License-Identifier: Apache-2.0
// Which Philox thread, subsequence and offset PyTorch's CUDA/ROCm `uniform_` kernel uses for
// each element: its launch policy (calc_execution_policy) and grid-stride loop
// (distribution_elementwise_grid_stride_kernel) in aten/src/ATen/native/cuda/
// DistributionTemplates.h (pytorch/pytorch 996948e6).
#ifndef PARITY_RNG_LAYOUT_H_
#define PARITY_RNG_LAYOUT_H_

#include <cstdint>

namespace parity {

/// A launch of the grid-stride distribution kernel.
struct LaunchPolicy {
  int64_t numel = 0;
  uint32_t block = 256;         ///< block_size_bound
  uint32_t grid = 0;            ///< min(ceil(numel / block), sm_count · threads_per_sm / block)
  uint32_t unroll = 4;          ///< values per curand call: 4 (curand_uniform4), 2 for double
  uint64_t counter_offset = 0;  ///< how far the generator's Philox offset advances
  uint32_t threads() const { return block * grid; }
};

/// calc_execution_policy(numel) on a device with `sm_count` multiprocessors of
/// `threads_per_sm` threads (maxThreadsPerMultiProcessor).
LaunchPolicy TorchLaunchPolicy(int64_t numel, uint32_t sm_count, uint32_t threads_per_sm,
                               uint32_t block, uint32_t unroll);

/// Where element `index` comes from: thread `thread` runs curand_init(seed, thread, offset)
/// (the subsequence is the thread index), and the element is lane `lane` of its `call`-th
/// curand_uniform4 (or curand_uniform2_double).
struct ElementSource {
  uint32_t thread = 0;
  uint64_t call = 0;
  uint32_t lane = 0;
};
ElementSource SourceOf(const LaunchPolicy& policy, int64_t index);

/// The value torch.rand (uniform_(0, 1)) writes at that element for `seed` and the
/// generator's Philox `offset`: curand_uniform4 (float32) or curand_uniform2_double
/// (float64), with 1 mapped to 0 as uniform_kernel does.
double TorchUniformValue(const LaunchPolicy& policy, const ElementSource& source, uint64_t seed,
                         uint64_t offset);

}  // namespace parity

#endif  // PARITY_RNG_LAYOUT_H_
