// SPDX-License-Identifier: Apache-2.0
// The built-in CPU backend: OpenMP stream kernels, OpenBLAS GEMM (float32, float64), oneDNN
// matmul for bfloat16, Random123's Philox for the RNG fill, memcpy for transfers.
#ifndef PARITY_BENCH_BACKEND_CPU_H_
#define PARITY_BENCH_BACKEND_CPU_H_

#include <memory>

#include "bench/backend.h"

namespace parity::bench {

/// A new CPU backend; its one device is the host (all its cores, OpenMP threads as --threads).
std::unique_ptr<Backend> NewCpuBackend();

}  // namespace parity::bench

#endif  // PARITY_BENCH_BACKEND_CPU_H_
