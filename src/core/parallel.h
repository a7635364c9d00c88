// SPDX-License-Identifier: Apache-2.0
// The thread budget (--threads) and a parallel loop over contiguous ranges.
#ifndef PARITY_CORE_PARALLEL_H_
#define PARITY_CORE_PARALLEL_H_

#include <cstddef>
#include <functional>

namespace parity {

/// Sets the number of worker threads parity uses; 0 means one per online CPU.
void SetThreadCount(int threads);

/// The number of worker threads parallel loops use (at least 1).
int ThreadCount();

/// Calls `body(chunk_index)` for every chunk in [0, chunks), spreading chunks over the
/// worker threads; returns when all calls are done. `body` must be safe to run concurrently
/// for different chunks. Chunks are handed out in contiguous runs per thread, which keeps
/// streaming reads sequential.
void ParallelFor(std::size_t chunks, const std::function<void(std::size_t)>& body);

/// Inside a ParallelFor body: the calling worker's index, 0 .. ThreadCount() - 1; else 0.
int WorkerIndex();

/// A 64-byte aligned buffer of at least `bytes` bytes owned by the calling thread, one per
/// `slot` (0..3), reused across calls: scratch space for streaming kernels. Valid until the
/// same thread asks again for the same slot.
std::byte* ThreadScratch(std::size_t bytes, int slot = 0);

}  // namespace parity

#endif  // PARITY_CORE_PARALLEL_H_
