// SPDX-License-Identifier: Apache-2.0
#include "core/parallel.h"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <new>

namespace parity {
namespace {
std::atomic<int> g_threads{0};
}  // namespace

void SetThreadCount(int threads) { g_threads.store(std::max(threads, 0)); }

int ThreadCount() {
  const int requested = g_threads.load();
  return requested > 0 ? requested : std::max(1, omp_get_num_procs());
}

void ParallelFor(std::size_t chunks, const std::function<void(std::size_t)>& body) {
  if (chunks == 0) return;
  const int threads = static_cast<int>(std::min<std::size_t>(ThreadCount(), chunks));
  if (threads <= 1) {
    for (std::size_t i = 0; i < chunks; ++i) body(i);
    return;
  }
  const auto n = static_cast<long long>(chunks);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (long long i = 0; i < n; ++i) body(static_cast<std::size_t>(i));
}

int WorkerIndex() { return omp_get_thread_num(); }

std::byte* ThreadScratch(std::size_t bytes, int slot) {
  struct Buffer {
    std::byte* data = nullptr;
    std::size_t size = 0;
    ~Buffer() { std::free(data); }
  };
  thread_local std::array<Buffer, 4> buffers;
  Buffer& buffer = buffers.at(static_cast<std::size_t>(slot));
  if (buffer.size < bytes) {
    std::free(buffer.data);
    buffer.size = (bytes + 63) / 64 * 64;
    buffer.data = static_cast<std::byte*>(std::aligned_alloc(64, buffer.size));
    if (buffer.data == nullptr) throw std::bad_alloc();
  }
  return buffer.data;
}

}  // namespace parity
