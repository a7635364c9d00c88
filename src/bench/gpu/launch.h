// SPDX-License-Identifier: Apache-2.0
// Launch arithmetic of the GPU backends' kernels, on the host: how many blocks of how many
// threads, whether 16-byte vector accesses apply, where the scalar tail starts. Plain C++, so
// the unit tests check it on the CPU, and the kernels (bench/gpu/kernels.h) read the plans.
#ifndef PARITY_BENCH_GPU_LAUNCH_H_
#define PARITY_BENCH_GPU_LAUNCH_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>

/// Marks what both the host (tests, launch planning) and the kernels call.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define PARITY_HD __host__ __device__
#else
#define PARITY_HD
#endif

namespace parity::bench::gpu {

/// Threads per block of the stream, fill, dot and Philox kernels. A power of two (the dot
/// kernel's tree reduction halves it).
inline constexpr uint32_t kThreadsPerBlock = 256;
/// Bytes of one vector access (float4, double2).
inline constexpr std::size_t kVectorBytes = 16;
/// The most blocks of a launch when the device's shape is unknown.
inline constexpr uint32_t kFallbackBlocks = 65535;
/// The most blocks of a dot launch: their partial sums are copied back and summed on the host.
inline constexpr uint32_t kMaxDotBlocks = 4096;

/// What the launch arithmetic needs to know of the device.
struct DeviceShape {
  int multiprocessors = 0;                 ///< SMs (CUDA) or CUs (HIP); 0 when unknown
  int max_threads_per_multiprocessor = 0;  ///< resident threads per SM/CU; 0 when unknown
};

/// How a grid covers `n` elements: `vectors` accesses of `width` elements (16-byte vectors when
/// every array starts on a 16-byte boundary, else width 1), in a grid-stride loop, then the
/// elements [tail_begin, n) one each by the first threads of the grid.
struct StreamPlan {
  uint64_t n = 0;
  uint32_t width = 1;
  uint64_t vectors = 0;
  uint64_t tail_begin = 0;
  uint32_t threads = kThreadsPerBlock;
  uint32_t blocks = 0;  ///< 0 when there is nothing to do (n = 0): no launch

  PARITY_HD uint64_t stride() const { return uint64_t{blocks} * threads; }
};

/// Blocks for `work` independent items: enough for one item per thread, at most one full wave
/// of resident blocks (the grid-stride loop does the rest), at least 1 when work > 0.
inline uint32_t GridBlocks(uint64_t work, uint32_t threads, const DeviceShape& shape) {
  if (work == 0) return 0;
  uint64_t cap = kFallbackBlocks;
  if (shape.multiprocessors > 0 && shape.max_threads_per_multiprocessor >= int(threads)) {
    cap =
        uint64_t(shape.multiprocessors) * uint64_t(shape.max_threads_per_multiprocessor / threads);
  }
  const uint64_t wanted = (work + threads - 1) / threads;
  return static_cast<uint32_t>(wanted < cap ? wanted : cap);
}

/// The plan for `n` elements of `item_size` bytes in the given arrays.
inline StreamPlan PlanStream(uint64_t n, std::size_t item_size,
                             std::initializer_list<const void*> arrays, const DeviceShape& shape) {
  StreamPlan plan;
  plan.n = n;
  bool aligned = item_size > 0 && item_size < kVectorBytes && kVectorBytes % item_size == 0;
  for (const void* p : arrays)
    aligned = aligned && reinterpret_cast<uintptr_t>(p) % kVectorBytes == 0;
  plan.width = aligned ? static_cast<uint32_t>(kVectorBytes / item_size) : 1;
  plan.vectors = n / plan.width;
  plan.tail_begin = plan.vectors * plan.width;
  // The tail (fewer than `width` elements) is done by threads 0..tail-1 of the grid.
  const uint64_t work = plan.vectors > 0 ? plan.vectors : n - plan.tail_begin;
  plan.blocks = GridBlocks(work, plan.threads, shape);
  return plan;
}

/// The dot kernel's plan: a stream plan with at most kMaxDotBlocks blocks, one partial sum each.
inline StreamPlan PlanDot(uint64_t n, std::size_t item_size, const void* a, const void* b,
                          const DeviceShape& shape) {
  StreamPlan plan = PlanStream(n, item_size, {a, b}, shape);
  if (plan.blocks > kMaxDotBlocks) plan.blocks = kMaxDotBlocks;
  return plan;
}

/// How the Philox kernel covers n outputs: `groups` Philox blocks of four values from counter
/// `first_counter` on, one per thread in a grid-stride loop; a group is stored as one float4
/// when `out` is 16-byte aligned and the group is whole, else value by value.
struct PhiloxPlan {
  uint64_t n = 0;
  uint64_t groups = 0;  ///< ceil(n / 4)
  uint64_t first_counter = 0;
  bool vector_store = false;
  uint32_t threads = kThreadsPerBlock;
  uint32_t blocks = 0;

  PARITY_HD uint64_t stride() const { return uint64_t{blocks} * threads; }
};

/// The plan for n outputs of curand_init(seed, 0, offset), offset a multiple of 4.
inline PhiloxPlan PlanPhilox(uint64_t n, uint64_t offset, const float* out,
                             const DeviceShape& shape) {
  PhiloxPlan plan;
  plan.n = n;
  plan.groups = n / 4 + (n % 4 != 0 ? 1 : 0);
  plan.first_counter = offset / 4;
  plan.vector_store = reinterpret_cast<uintptr_t>(out) % kVectorBytes == 0;
  plan.blocks = GridBlocks(plan.groups, plan.threads, shape);
  return plan;
}

/// Tiles of the fallback GEMM kernel (HIP without rocBLAS): kGemmTile×kGemmTile blocks of C, one
/// thread per element, operands staged through shared memory kGemmTile columns at a time.
inline constexpr uint32_t kGemmTile = 16;

/// Blocks of the fallback GEMM for C m×n: (ceil(n / tile), ceil(m / tile)).
struct GemmGrid {
  uint32_t x = 0, y = 0;
};
inline GemmGrid PlanTiledGemm(int64_t m, int64_t n) {
  return {static_cast<uint32_t>((n + kGemmTile - 1) / kGemmTile),
          static_cast<uint32_t>((m + kGemmTile - 1) / kGemmTile)};
}

}  // namespace parity::bench::gpu

#endif  // PARITY_BENCH_GPU_LAUNCH_H_
