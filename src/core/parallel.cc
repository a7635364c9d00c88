// SPDX-License-Identifier: Apache-2.0
#include "core/parallel.h"

#include <omp.h>

#include <algorithm>
#include <atomic>

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

}  // namespace parity
