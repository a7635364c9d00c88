// SPDX-License-Identifier: Apache-2.0
// Which CUDA and HIP runtime errors mean "this device can't do that here" (the benchmark is
// skipped with the reason, Status kUnavailable) rather than a failure (kInternal). Plain C++ on
// the errors' numbers, which both runtimes share for these two; backend_gpu.h checks the numbers
// against the runtime's own headers at compile time, and the tests check the mapping.
#ifndef PARITY_BENCH_GPU_RUNTIME_ERRORS_H_
#define PARITY_BENCH_GPU_RUNTIME_ERRORS_H_

#include <string>
#include <utility>

#include "core/status.h"

namespace parity::bench::gpu {

/// cudaErrorMemoryAllocation and hipErrorOutOfMemory.
inline constexpr int kGpuErrorOutOfMemory = 2;
/// cudaErrorNoKernelImageForDevice and hipErrorNoBinaryForGpu: the plugin was built without
/// code for this GPU's architecture.
inline constexpr int kGpuErrorNoKernelImage = 209;

/// `message` (the runtime's call and error) as a Status: kUnavailable for out-of-memory and for
/// a missing kernel image (with how to build one: `architecture_hint`, e.g. "rebuild with
/// CMAKE_CUDA_ARCHITECTURES naming it"), kInternal for every other error.
inline Status RuntimeErrorStatus(int error, std::string message,
                                 const std::string& architecture_hint) {
  if (error == kGpuErrorOutOfMemory) return Status::Unavailable(std::move(message));
  if (error == kGpuErrorNoKernelImage) {
    return Status::Unavailable(
        std::move(message) +
        " (this build has no code for this GPU's architecture: " + architecture_hint + ")");
  }
  return Status::Internal(std::move(message));
}

}  // namespace parity::bench::gpu

#endif  // PARITY_BENCH_GPU_RUNTIME_ERRORS_H_
