// SPDX-License-Identifier: Apache-2.0
// The device code of both GPU plugins: the kernels of bench/gpu/kernels.h instantiated and
// launched, the Philox fill and the tiled GEMM. nvcc compiles it for the cuda plugin, hipcc
// (with PARITY_GPU_HIP) for the hip plugin; it includes nothing that needs a host-only parser.
#include "bench/gpu/kernels.h"
#include "bench/gpu/launchers.h"

#if defined(PARITY_GPU_HIP)
#include <hip/hip_fp16.h>
// Random123 marks its functions for both sides through R123_CUDA_DEVICE; its SSE path is
// host-only.
#define R123_CUDA_DEVICE __host__ __device__
#define R123_USE_SSE 0
#include <Random123/philox.h>
#else
#include <cuda_fp16.h>
#include <curand_kernel.h>
#endif

namespace parity::bench::gpu {
namespace {

template <typename T, typename V>
gpuError_t Fill(gpuStream_t stream, const StreamPlan& plan, T* dst, T value) {
  FillKernel<T, V><<<plan.blocks, plan.threads, 0, stream>>>(plan, dst, value);
  return gpuGetLastError();
}

template <StreamOp kOp, typename T>
gpuError_t StreamOne(gpuStream_t stream, const StreamPlan& plan, T* a, T* b, T* c, T scalar) {
  if (plan.width > 1) {
    StreamKernel<kOp, T, Vec16<T>><<<plan.blocks, plan.threads, 0, stream>>>(plan, a, b, c, scalar);
  } else {
    StreamKernel<kOp, T, T><<<plan.blocks, plan.threads, 0, stream>>>(plan, a, b, c, scalar);
  }
  return gpuGetLastError();
}

template <typename T>
gpuError_t Stream(gpuStream_t stream, const StreamPlan& plan, StreamOp op, T* a, T* b, T* c,
                  T scalar) {
  if (plan.blocks == 0) return gpuSuccess;
  switch (op) {
    case StreamOp::kCopy:
      return StreamOne<StreamOp::kCopy>(stream, plan, a, b, c, scalar);
    case StreamOp::kMul:
      return StreamOne<StreamOp::kMul>(stream, plan, a, b, c, scalar);
    case StreamOp::kAdd:
      return StreamOne<StreamOp::kAdd>(stream, plan, a, b, c, scalar);
    case StreamOp::kTriad:
      return StreamOne<StreamOp::kTriad>(stream, plan, a, b, c, scalar);
    case StreamOp::kNstream:
      return StreamOne<StreamOp::kNstream>(stream, plan, a, b, c, scalar);
  }
  return gpuSuccess;
}

template <typename T>
gpuError_t Dot(gpuStream_t stream, const StreamPlan& plan, const T* a, const T* b, T* partial) {
  if (plan.blocks == 0) return gpuSuccess;
  if (plan.width > 1) {
    DotKernel<T, Vec16<T>><<<plan.blocks, plan.threads, 0, stream>>>(plan, a, b, partial);
  } else {
    DotKernel<T, T><<<plan.blocks, plan.threads, 0, stream>>>(plan, a, b, partial);
  }
  return gpuGetLastError();
}

/// A clock that runs while a kernel spins: %globaltimer (nanoseconds) on CUDA, clock64 on HIP.
__device__ inline uint64_t DeviceTicks() {
#if defined(PARITY_GPU_HIP)
  return static_cast<uint64_t>(clock64());
#else
  uint64_t ticks;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ticks));
  return ticks;
#endif
}

/// Spins until the host sets *latch, or marks *timed_out after `timeout_ticks`.
__global__ void SpinKernel(const int* latch, int* timed_out, uint64_t timeout_ticks) {
  const volatile int* flag = latch;
  const uint64_t start = DeviceTicks();
  while (*flag == 0) {
    if (DeviceTicks() - start > timeout_ticks) {
      *static_cast<volatile int*>(timed_out) = 1;
      return;
    }
  }
}

/// Outputs 4g..4g+3 are the Philox4x32-10 block at counter (c, 0) under key (seed lo, seed hi).
__global__ void __launch_bounds__(kThreadsPerBlock)
    PhiloxKernel(PhiloxPlan plan, float* out, uint64_t seed) {
  const uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  PhiloxThread(plan, out, GlobalThread(), [k0, k1](uint64_t counter, uint32_t r[4]) {
    const uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
#if defined(PARITY_GPU_HIP)
    using Philox = r123::Philox4x32_R<10>;
    const Philox::ctr_type v = Philox()({{c0, c1, 0, 0}}, {{k0, k1}});
    for (int j = 0; j < 4; ++j) r[j] = v.v[j];
#else
    const uint4 v = curand_Philox4x32_10(make_uint4(c0, c1, 0, 0), make_uint2(k0, k1));
    r[0] = v.x;
    r[1] = v.y;
    r[2] = v.z;
    r[3] = v.w;
#endif
  });
}

// Storage and accumulation of the tiled GEMM per type.
struct TiledF64 {
  using Storage = double;
  using Acc = double;
  static __device__ Acc Load(Storage x) { return x; }
  static __device__ Storage Store(Acc x) { return x; }
};
struct TiledF32 {
  using Storage = float;
  using Acc = float;
  static __device__ Acc Load(Storage x) { return x; }
  static __device__ Storage Store(Acc x) { return x; }
};
struct TiledF16 {
  using Storage = uint16_t;
  using Acc = float;
  static __device__ Acc Load(Storage x) { return __half2float(__ushort_as_half(x)); }
  static __device__ Storage Store(Acc x) { return __half_as_ushort(__float2half_rn(x)); }
};
struct TiledBF16 {
  using Storage = uint16_t;
  using Acc = float;
  static __device__ Acc Load(Storage x) { return __uint_as_float(uint32_t{x} << 16); }
  static __device__ Storage Store(Acc x) {
    const uint32_t bits = __float_as_uint(x);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<Storage>((bits >> 16) | 0x40);
    return static_cast<Storage>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);  // nearest even
  }
};

/// One thread per element of a kGemmTile² block of C; A and B staged through shared memory a
/// tile at a time.
template <typename Tr>
__global__ void __launch_bounds__(kGemmTile* kGemmTile)
    TiledGemmKernel(int64_t m, int64_t n, int64_t k, const typename Tr::Storage* a,
                    const typename Tr::Storage* b, typename Tr::Storage* c) {
  using Acc = typename Tr::Acc;
  __shared__ Acc tile_a[kGemmTile][kGemmTile];
  __shared__ Acc tile_b[kGemmTile][kGemmTile + 1];
  const int64_t row = int64_t{blockIdx.y} * kGemmTile + threadIdx.y;
  const int64_t col = int64_t{blockIdx.x} * kGemmTile + threadIdx.x;
  Acc sum = 0;
  for (int64_t t = 0; t < k; t += kGemmTile) {
    const int64_t ka = t + threadIdx.x, kb = t + threadIdx.y;
    tile_a[threadIdx.y][threadIdx.x] = row < m && ka < k ? Tr::Load(a[row * k + ka]) : Acc(0);
    tile_b[threadIdx.y][threadIdx.x] = kb < k && col < n ? Tr::Load(b[kb * n + col]) : Acc(0);
    __syncthreads();
    for (uint32_t p = 0; p < kGemmTile; ++p) sum += tile_a[threadIdx.y][p] * tile_b[p][threadIdx.x];
    __syncthreads();
  }
  if (row < m && col < n) c[row * n + col] = Tr::Store(sum);
}

template <typename Tr>
gpuError_t Tiled(gpuStream_t stream, int64_t m, int64_t n, int64_t k, const void* a, const void* b,
                 void* c) {
  const GemmGrid grid = PlanTiledGemm(m, n);
  if (grid.x == 0 || grid.y == 0) return gpuSuccess;
  using S = typename Tr::Storage;
  TiledGemmKernel<Tr><<<dim3(grid.x, grid.y), dim3(kGemmTile, kGemmTile), 0, stream>>>(
      m, n, k, static_cast<const S*>(a), static_cast<const S*>(b), static_cast<S*>(c));
  return gpuGetLastError();
}

}  // namespace

gpuError_t LaunchFill(gpuStream_t stream, const StreamPlan& plan, float* dst, float value) {
  if (plan.blocks == 0) return gpuSuccess;
  return plan.width > 1 ? Fill<float, Vec16<float>>(stream, plan, dst, value)
                        : Fill<float, float>(stream, plan, dst, value);
}
gpuError_t LaunchFill(gpuStream_t stream, const StreamPlan& plan, double* dst, double value) {
  if (plan.blocks == 0) return gpuSuccess;
  return plan.width > 1 ? Fill<double, Vec16<double>>(stream, plan, dst, value)
                        : Fill<double, double>(stream, plan, dst, value);
}

gpuError_t LaunchStream(gpuStream_t stream, const StreamPlan& plan, StreamOp op, float* a, float* b,
                        float* c, float scalar) {
  return Stream(stream, plan, op, a, b, c, scalar);
}
gpuError_t LaunchStream(gpuStream_t stream, const StreamPlan& plan, StreamOp op, double* a,
                        double* b, double* c, double scalar) {
  return Stream(stream, plan, op, a, b, c, scalar);
}

gpuError_t LaunchDot(gpuStream_t stream, const StreamPlan& plan, const float* a, const float* b,
                     float* partial) {
  return Dot(stream, plan, a, b, partial);
}
gpuError_t LaunchDot(gpuStream_t stream, const StreamPlan& plan, const double* a, const double* b,
                     double* partial) {
  return Dot(stream, plan, a, b, partial);
}

gpuError_t LaunchEmpty(gpuStream_t stream) {
  EmptyGpuKernel<<<1, 1, 0, stream>>>();
  return gpuGetLastError();
}

gpuError_t LaunchSpin(gpuStream_t stream, const int* latch, int* timed_out,
                      double timeout_seconds) {
#if defined(PARITY_GPU_HIP)
  // clock64's rate (kHz); 100 MHz where the runtime doesn't say.
  int device = 0, khz = 0;
  if (hipGetDevice(&device) != hipSuccess ||
      hipDeviceGetAttribute(&khz, hipDeviceAttributeClockInstructionRate, device) != hipSuccess ||
      khz <= 0) {
    (void)hipGetLastError();
    khz = 100000;
  }
  const double ticks_per_second = khz * 1e3;
#else
  const double ticks_per_second = 1e9;  // %globaltimer counts nanoseconds
#endif
  SpinKernel<<<1, 1, 0, stream>>>(latch, timed_out,
                                  static_cast<uint64_t>(timeout_seconds * ticks_per_second));
  return gpuGetLastError();
}

gpuError_t LaunchPhilox(gpuStream_t stream, const PhiloxPlan& plan, float* out, uint64_t seed) {
  if (plan.blocks == 0) return gpuSuccess;
  PhiloxKernel<<<plan.blocks, plan.threads, 0, stream>>>(plan, out, seed);
  return gpuGetLastError();
}

gpuError_t LaunchTiledGemm(gpuStream_t stream, TiledGemmType type, int64_t m, int64_t n, int64_t k,
                           const void* a, const void* b, void* c) {
  switch (type) {
    case TiledGemmType::kFloat64:
      return Tiled<TiledF64>(stream, m, n, k, a, b, c);
    case TiledGemmType::kFloat32:
      return Tiled<TiledF32>(stream, m, n, k, a, b, c);
    case TiledGemmType::kFloat16:
      return Tiled<TiledF16>(stream, m, n, k, a, b, c);
    case TiledGemmType::kBFloat16:
      return Tiled<TiledBF16>(stream, m, n, k, a, b, c);
  }
  return gpuSuccess;
}

}  // namespace parity::bench::gpu
