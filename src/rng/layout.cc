// SPDX-License-Identifier: Apache-2.0
#include "rng/layout.h"

#include <algorithm>

#include "rng/philox.h"

namespace parity {

LaunchPolicy TorchLaunchPolicy(int64_t numel, uint32_t sm_count, uint32_t threads_per_sm,
                               uint32_t block, uint32_t unroll) {
  LaunchPolicy p;
  p.numel = numel;
  p.block = std::max<uint32_t>(block, 1);
  p.unroll = std::max<uint32_t>(unroll, 1);
  const auto n = static_cast<uint64_t>(std::max<int64_t>(numel, 1));
  const uint64_t blocks = (n + p.block - 1) / p.block;
  const uint64_t blocks_per_sm = threads_per_sm / p.block;
  p.grid = static_cast<uint32_t>(std::max<uint64_t>(
      std::min<uint64_t>(static_cast<uint64_t>(sm_count) * blocks_per_sm, blocks), 1));
  // The offset advances by curand4_engine_calls (4) per grid-stride iteration, whatever the
  // unroll: curand_uniform2_double consumes one curand4 block too.
  p.counter_offset = ((n - 1) / (static_cast<uint64_t>(p.block) * p.grid * p.unroll) + 1) * 4;
  return p;
}

ElementSource SourceOf(const LaunchPolicy& policy, int64_t index) {
  const uint64_t threads = policy.threads();
  const uint64_t stride = threads * policy.unroll;
  const auto i = static_cast<uint64_t>(index);
  ElementSource s;
  s.call = i / stride;
  const uint64_t r = i % stride;
  s.lane = static_cast<uint32_t>(r / threads);
  s.thread = static_cast<uint32_t>(r % threads);
  return s;
}

double TorchUniformValue(const LaunchPolicy& policy, const ElementSource& source, uint64_t seed,
                         uint64_t offset) {
  CurandPhilox state(seed, source.thread, offset);
  // Each call takes one curand4 block (four 32-bit values).
  state.Skipahead(4 * source.call);
  const std::array<uint32_t, 4> x = state.Next4();
  if (policy.unroll == 2) {
    // curand_uniform2_double: two 53-bit doubles from the block's halves.
    const uint32_t lo = x[2 * source.lane], hi = x[2 * source.lane + 1];
    const uint64_t z = static_cast<uint64_t>(lo) ^ (static_cast<uint64_t>(hi) << (53 - 32));
    const double u = static_cast<double>(z) * 1.1102230246251565e-16 + 1.1102230246251565e-16 / 2.0;
    return u == 1.0 ? 0.0 : u;
  }
  const float u = CurandUniform(x[source.lane]);
  return u == 1.0f ? 0.0 : static_cast<double>(u);
}

}  // namespace parity
