// SPDX-License-Identifier: Apache-2.0
// The GPU backends' kernels, one source for CUDA and HIP. Each kernel is a thin __global__
// wrapper around a per-thread body that is plain C++ as well (PARITY_HD), so the unit tests run
// the bodies for every thread of a grid on the CPU and check that each element is done exactly
// once: vector accesses, the grid-stride loop, the scalar tail, the Philox groups.
#ifndef PARITY_BENCH_GPU_KERNELS_H_
#define PARITY_BENCH_GPU_KERNELS_H_

#include <cstdint>

#include "bench/gpu/launch.h"
#include "bench/stream_op.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define PARITY_GPU_DEVICE_CODE 1
#include "bench/gpu/gpu_runtime.h"
#endif

namespace parity::bench::gpu {

/// 16 bytes of T, loaded and stored as one access (float4 or double2 on the GPU).
template <typename T>
struct alignas(16) Vec16 {
  T lane[16 / sizeof(T)];
};

/// Which of a, b, c kernel `op` reads and writes (BabelStream's definitions).
PARITY_HD constexpr bool Reads(StreamOp op, int array) {
  switch (op) {
    case StreamOp::kCopy:
      return array == 0;
    case StreamOp::kMul:
      return array == 2;
    case StreamOp::kAdd:
      return array != 2;
    case StreamOp::kTriad:
      return array != 0;
    case StreamOp::kNstream:
      return true;
  }
  return false;
}
PARITY_HD constexpr bool Writes(StreamOp op, int array) {
  switch (op) {
    case StreamOp::kCopy:
    case StreamOp::kAdd:
      return array == 2;
    case StreamOp::kMul:
      return array == 1;
    case StreamOp::kTriad:
    case StreamOp::kNstream:
      return array == 0;
  }
  return false;
}

template <StreamOp kOp, typename T>
PARITY_HD inline void StreamElement(T& a, T& b, T& c, T scalar) {
  if constexpr (kOp == StreamOp::kCopy) {
    c = a;
  } else if constexpr (kOp == StreamOp::kMul) {
    b = scalar * c;
  } else if constexpr (kOp == StreamOp::kAdd) {
    c = a + b;
  } else if constexpr (kOp == StreamOp::kTriad) {
    a = b + scalar * c;
  } else {
    a += b + scalar * c;
  }
}

/// Loads `count` consecutive elements of each array kOp reads, applies kOp, stores the ones it
/// writes. V is T (one element) or Vec16<T>.
template <StreamOp kOp, typename T, typename V>
PARITY_HD inline void StreamAccess(T* a, T* b, T* c, uint64_t index, T scalar) {
  constexpr int kLanes = sizeof(V) / sizeof(T);
  T* arrays[3] = {a, b, c};
  V v[3] = {};
  for (int x = 0; x < 3; ++x) {
    if (Reads(kOp, x)) v[x] = reinterpret_cast<const V*>(arrays[x])[index];
  }
  T* lanes[3] = {reinterpret_cast<T*>(&v[0]), reinterpret_cast<T*>(&v[1]),
                 reinterpret_cast<T*>(&v[2])};
  for (int j = 0; j < kLanes; ++j)
    StreamElement<kOp, T>(lanes[0][j], lanes[1][j], lanes[2][j], scalar);
  for (int x = 0; x < 3; ++x) {
    if (Writes(kOp, x)) reinterpret_cast<V*>(arrays[x])[index] = v[x];
  }
}

/// Thread `tid`'s share of a stream kernel under `plan` (V = Vec16<T> when plan.width > 1).
template <StreamOp kOp, typename T, typename V>
PARITY_HD inline void StreamThread(const StreamPlan& plan, T* a, T* b, T* c, T scalar,
                                   uint64_t tid) {
  const uint64_t stride = plan.stride();
  for (uint64_t i = tid; i < plan.vectors; i += stride) StreamAccess<kOp, T, V>(a, b, c, i, scalar);
  if (const uint64_t i = plan.tail_begin + tid; i < plan.n)
    StreamAccess<kOp, T, T>(a, b, c, i, scalar);
}

/// Thread `tid`'s share of setting every element to `value`.
template <typename T, typename V>
PARITY_HD inline void FillThread(const StreamPlan& plan, T* dst, T value, uint64_t tid) {
  V v;
  for (int j = 0; j < int(sizeof(V) / sizeof(T)); ++j) reinterpret_cast<T*>(&v)[j] = value;
  const uint64_t stride = plan.stride();
  for (uint64_t i = tid; i < plan.vectors; i += stride) reinterpret_cast<V*>(dst)[i] = v;
  if (const uint64_t i = plan.tail_begin + tid; i < plan.n) dst[i] = value;
}

/// Thread `tid`'s partial sum of a[i]·b[i], accumulated in T as BabelStream does.
template <typename T, typename V>
PARITY_HD inline T DotThread(const StreamPlan& plan, const T* a, const T* b, uint64_t tid) {
  T sum = 0;
  const uint64_t stride = plan.stride();
  for (uint64_t i = tid; i < plan.vectors; i += stride) {
    const V x = reinterpret_cast<const V*>(a)[i];
    const V y = reinterpret_cast<const V*>(b)[i];
    for (int j = 0; j < int(sizeof(V) / sizeof(T)); ++j) {
      sum += reinterpret_cast<const T*>(&x)[j] * reinterpret_cast<const T*>(&y)[j];
    }
  }
  if (const uint64_t i = plan.tail_begin + tid; i < plan.n) sum += a[i] * b[i];
  return sum;
}

/// cuRAND's _curand_uniform: x·2^-32 + 2^-33 in float, in (0, 1].
PARITY_HD inline float CurandUniform(uint32_t x) {
  return static_cast<float>(x) * 2.3283064365386963e-10f + 1.1641532182693481e-10f;
}

/// Thread `tid`'s share of the Philox fill: for each of its groups g, `philox(counter)` gives
/// the four 32-bit words of Philox block first_counter + g, stored as outputs 4g..4g+3 (< n).
template <typename Philox>
PARITY_HD inline void PhiloxThread(const PhiloxPlan& plan, float* out, uint64_t tid,
                                   Philox philox) {
  const uint64_t stride = plan.stride();
  for (uint64_t g = tid; g < plan.groups; g += stride) {
    uint32_t r[4];
    philox(plan.first_counter + g, r);
    const uint64_t first = 4 * g;
    if (plan.vector_store && first + 4 <= plan.n) {
      Vec16<float> v;
      for (int j = 0; j < 4; ++j) v.lane[j] = CurandUniform(r[j]);
      reinterpret_cast<Vec16<float>*>(out)[g] = v;
    } else {
      for (uint64_t j = 0; j < 4 && first + j < plan.n; ++j) out[first + j] = CurandUniform(r[j]);
    }
  }
}

#if defined(PARITY_GPU_DEVICE_CODE)

inline __device__ uint64_t GlobalThread() {
  return uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
}

template <StreamOp kOp, typename T, typename V>
__global__ void __launch_bounds__(kThreadsPerBlock)
    StreamKernel(StreamPlan plan, T* a, T* b, T* c, T scalar) {
  StreamThread<kOp, T, V>(plan, a, b, c, scalar, GlobalThread());
}

template <typename T, typename V>
__global__ void __launch_bounds__(kThreadsPerBlock) FillKernel(StreamPlan plan, T* dst, T value) {
  FillThread<T, V>(plan, dst, value, GlobalThread());
}

/// One partial sum per block into partial[blockIdx.x], by a tree reduction in shared memory.
template <typename T, typename V>
__global__ void __launch_bounds__(kThreadsPerBlock)
    DotKernel(StreamPlan plan, const T* a, const T* b, T* partial) {
  __shared__ T sums[kThreadsPerBlock];
  sums[threadIdx.x] = DotThread<T, V>(plan, a, b, GlobalThread());
  for (uint32_t half = kThreadsPerBlock / 2; half > 0; half /= 2) {
    __syncthreads();
    if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
}

__global__ void __launch_bounds__(kThreadsPerBlock) EmptyGpuKernel() {}

#endif  // PARITY_GPU_DEVICE_CODE

}  // namespace parity::bench::gpu

#endif  // PARITY_BENCH_GPU_KERNELS_H_
