// SPDX-License-Identifier: Apache-2.0
// The order of one timed sample on a device queue (Backend::Time), written once for the GPU
// plugins (backend_gpu.h, on CUDA or HIP streams and events) and for the fake plugin's simulated
// device (tests/bench/fake_backend_plugin.cc), so the tests check the sequence the plugins run.
//
// Held (Queuing::kHeld), as nvbandwidth times its copies: a spin kernel that waits on a host
// flag is queued first, then the start marker, the work and the stop marker; only then does the
// host set the flag. The start marker is stamped when the device leaves the spin kernel, with
// all of the work already queued behind it, so whatever the host spent selecting the device,
// in the library's host code or between calls falls before the start and is not counted.
// Direct (Queuing::kDirect): start marker, work, stop marker; the sample is the device's time
// from the start marker on, including the host's part of the work (a read-back, staging).
#ifndef PARITY_BENCH_GPU_HELD_TIMING_H_
#define PARITY_BENCH_GPU_HELD_TIMING_H_

#include <functional>

#include "bench/backend.h"
#include "core/status.h"

namespace parity::bench::gpu {

/// Times `work` on `queue`, which provides:
///   Status Hold()              queue a spin kernel that waits until Release()
///   Status RecordStart()       queue the start marker (an event)
///   Status RecordStop()        queue the stop marker; `work` may have changed the current device
///   Status Release()           let a held queue run (the host sets the spin kernel's flag)
///   Result<double> WaitElapsed()  wait for the stop marker; seconds from start to stop
///   Status CheckHold()         the spin kernel was released, not timed out
/// A held queue is always released, also when `work` fails.
template <typename Queue>
Result<double> TimeOnQueue(Queue& queue, const std::function<Status()>& work, Queuing queuing) {
  const bool hold = queuing == Queuing::kHeld;
  if (hold) PARITY_RETURN_IF_ERROR(queue.Hold());
  Status status = queue.RecordStart();
  if (status.ok()) status = work();
  if (status.ok()) status = queue.RecordStop();
  if (hold) {
    Status released = queue.Release();
    if (status.ok()) status = std::move(released);
  }
  PARITY_RETURN_IF_ERROR(status);
  PARITY_ASSIGN_OR_RETURN(const double seconds, queue.WaitElapsed());
  if (hold) PARITY_RETURN_IF_ERROR(queue.CheckHold());
  return seconds;
}

}  // namespace parity::bench::gpu

#endif  // PARITY_BENCH_GPU_HELD_TIMING_H_
