// SPDX-License-Identifier: Apache-2.0
// The kernels' launchers: host functions, defined in launchers.cu (the one device-code source
// of both GPU plugins, compiled by nvcc or by hipcc), declared here for the backend classes,
// which the host compiler builds. Each launches on `stream` and returns the launch's error
// (gpuGetLastError right after it), gpuSuccess when the plan has nothing to do.
#ifndef PARITY_BENCH_GPU_LAUNCHERS_H_
#define PARITY_BENCH_GPU_LAUNCHERS_H_

#include <cstdint>

#include "bench/gpu/gpu_runtime.h"
#include "bench/gpu/launch.h"
#include "bench/stream_op.h"

namespace parity::bench::gpu {

gpuError_t LaunchFill(gpuStream_t stream, const StreamPlan& plan, float* dst, float value);
gpuError_t LaunchFill(gpuStream_t stream, const StreamPlan& plan, double* dst, double value);

gpuError_t LaunchStream(gpuStream_t stream, const StreamPlan& plan, StreamOp op, float* a, float* b,
                        float* c, float scalar);
gpuError_t LaunchStream(gpuStream_t stream, const StreamPlan& plan, StreamOp op, double* a,
                        double* b, double* c, double scalar);

/// One partial sum per block of the plan into partial[0 .. plan.blocks).
gpuError_t LaunchDot(gpuStream_t stream, const StreamPlan& plan, const float* a, const float* b,
                     float* partial);
gpuError_t LaunchDot(gpuStream_t stream, const StreamPlan& plan, const double* a, const double* b,
                     double* partial);

/// A kernel of one thread that does nothing.
gpuError_t LaunchEmpty(gpuStream_t stream);

/// A kernel of one thread that holds `stream` until the host sets *latch to non-zero (device
/// pointers to mapped pinned host memory), or until `timeout_seconds` have passed on the
/// device's clock, when it sets *timed_out to 1 and ends (nvbandwidth's spin kernel).
gpuError_t LaunchSpin(gpuStream_t stream, const int* latch, int* timed_out, double timeout_seconds);

/// cuRAND's curand_uniform stream: on CUDA with cuRAND's own curand_Philox4x32_10, on HIP with
/// Random123's Philox4x32-10 (the same bijection).
gpuError_t LaunchPhilox(gpuStream_t stream, const PhiloxPlan& plan, float* out, uint64_t seed);

/// Storage of the tiled GEMM's operands; 16-bit types sum in float32.
enum class TiledGemmType { kFloat64, kFloat32, kFloat16, kBFloat16 };
/// C = A·B row-major (A m×k, B k×n) by parity's tiled kernel (the hip plugin without rocBLAS).
gpuError_t LaunchTiledGemm(gpuStream_t stream, TiledGemmType type, int64_t m, int64_t n, int64_t k,
                           const void* a, const void* b, void* c);

}  // namespace parity::bench::gpu

#endif  // PARITY_BENCH_GPU_LAUNCHERS_H_
