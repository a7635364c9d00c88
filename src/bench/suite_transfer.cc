// SPDX-License-Identifier: Apache-2.0
// The transfer suite: host-to-device and device-to-host copies from pageable and pinned host
// memory over a sweep of sizes (nvbandwidth's and BabelStream-style GB/s = 10^9 bytes/s).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "bench/suite.h"

namespace parity::bench {
namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * kKiB;
constexpr int kDefaultReps = 20;
// Small copies are timed in batches of about this many bytes, so the timer's resolution and
// the per-call overhead don't decide the figure alone.
constexpr std::size_t kBatchBytes = 64 * kMiB;
constexpr std::size_t kMaxBatch = 4096;

// Copies per sample. Pinned copies are held (Queuing::kHeld: the device's queue waits until the
// batch is queued, so the host's submission is not counted), at most kMaxHeldCalls of them.
// Pageable copies are staged through host buffers by the runtime, the host's work being part of
// the copy: direct, in batches of up to kMaxBatch, the host's start-up spread over all of them.
std::size_t Batch(std::size_t size, MemoryKind host_kind) {
  const std::size_t most =
      host_kind == MemoryKind::kHostPinned ? static_cast<std::size_t>(kMaxHeldCalls) : kMaxBatch;
  return std::clamp<std::size_t>(kBatchBytes / size, 1, most);
}

std::vector<std::size_t> Sizes(bool full) {
  std::vector<std::size_t> sizes;
  const std::size_t last = full ? 1024 * kMiB : 256 * kMiB;
  for (std::size_t s = 4 * kKiB; s <= last; s *= (full ? 4 : 16)) sizes.push_back(s);
  if (sizes.back() != last) sizes.push_back(last);
  return sizes;
}

std::string SizeName(std::size_t bytes) {
  if (bytes >= kMiB) return fmt::format("{} MiB", bytes / kMiB);
  return fmt::format("{} KiB", bytes / kKiB);
}

struct Direction {
  std::string_view name;  // "h2d", "d2h"
  bool to_device;
};

Result<BenchResult> RunOne(Backend& backend, const SuiteOptions& options, Direction dir,
                           MemoryKind host_kind, std::size_t size, DeviceBuffer& device,
                           DeviceBuffer& host, std::vector<std::byte>& pattern,
                           std::vector<std::byte>& check) {
  const int reps = options.reps.value_or(kDefaultReps);
  const std::size_t batch = Batch(size, host_kind);
  const std::string memory = host_kind == MemoryKind::kHostPinned ? "pinned" : "pageable";
  BenchResult r;
  r.benchmark = fmt::format("transfer.{}_{}", dir.name, memory);
  r.params = {{"size", size}, {"reps", reps}, {"batch", batch}};
  r.unit = "GB/s";

  // The source holds the pattern; the destination is cleared so a copy that did nothing fails.
  FillCopyPattern(std::span(pattern).first(size), options.seed + size);
  void* src = dir.to_device ? host.get() : device.get();
  void* dst = dir.to_device ? device.get() : host.get();
  const MemoryKind src_kind = dir.to_device ? host_kind : MemoryKind::kDevice;
  const MemoryKind dst_kind = dir.to_device ? MemoryKind::kDevice : host_kind;
  std::fill(check.begin(), check.begin() + static_cast<std::ptrdiff_t>(size), std::byte{0});
  if (dir.to_device) {
    std::memcpy(host.get(), pattern.data(), size);
    PARITY_RETURN_IF_ERROR(backend.Copy(device.get(), MemoryKind::kDevice, check.data(),
                                        MemoryKind::kHostPageable, size));
  } else {
    PARITY_RETURN_IF_ERROR(backend.Copy(device.get(), MemoryKind::kDevice, pattern.data(),
                                        MemoryKind::kHostPageable, size));
    std::memset(host.get(), 0, size);
  }
  PARITY_RETURN_IF_ERROR(backend.Synchronize());

  double fastest = std::numeric_limits<double>::infinity();
  const double bytes = static_cast<double>(size) * static_cast<double>(batch);
  for (int rep = 0; rep <= reps; ++rep) {
    const Queuing queuing =
        rep > 0 && host_kind == MemoryKind::kHostPinned ? Queuing::kHeld : Queuing::kDirect;
    PARITY_ASSIGN_OR_RETURN(
        double t, backend.Time(
                      [&]() -> Status {
                        for (std::size_t i = 0; i < batch; ++i) {
                          PARITY_RETURN_IF_ERROR(backend.Copy(dst, dst_kind, src, src_kind, size));
                        }
                        return Status::Ok();
                      },
                      queuing));
    if (rep == 0) continue;  // warm-up: first-touch page faults, lazy mappings
    r.samples.push_back(bytes / t / 1e9);
    fastest = std::min(fastest, t);
  }
  r.best = bytes / fastest / 1e9;

  // The destination, read back, must equal the pattern byte for byte.
  if (dir.to_device) {
    PARITY_RETURN_IF_ERROR(backend.Copy(check.data(), MemoryKind::kHostPageable, device.get(),
                                        MemoryKind::kDevice, size));
    PARITY_RETURN_IF_ERROR(backend.Synchronize());
  } else {
    std::memcpy(check.data(), host.get(), size);
  }
  RecordCopyCheck(r, CompareCopy(std::span(check).first(size), std::span(pattern).first(size)));
  return r;
}

}  // namespace

Result<std::vector<BenchResult>> RunTransferSuite(Backend& backend, const SuiteOptions& options) {
  const std::vector<std::size_t> sizes = Sizes(options.full);
  const std::size_t largest = sizes.back();
  std::vector<BenchResult> all;
  PARITY_ASSIGN_OR_RETURN(DeviceBuffer device,
                          DeviceBuffer::Allocate(backend, largest, MemoryKind::kDevice));
  std::vector<std::byte> pattern(largest), check(largest);
  for (MemoryKind host_kind : {MemoryKind::kHostPageable, MemoryKind::kHostPinned}) {
    const std::string memory = host_kind == MemoryKind::kHostPinned ? "pinned" : "pageable";
    Result<DeviceBuffer> host = DeviceBuffer::Allocate(backend, largest, host_kind);
    for (Direction dir : {Direction{"h2d", true}, Direction{"d2h", false}}) {
      for (std::size_t size : sizes) {
        if (!host.ok()) {
          if (host.status().code() != StatusCode::kUnavailable) return host.status();
          const int reps = options.reps.value_or(kDefaultReps);
          const std::size_t batch = Batch(size, host_kind);
          all.push_back(Skipped(fmt::format("transfer.{}_{}", dir.name, memory), "",
                                {{"size", size}, {"reps", reps}, {"batch", batch}}, "GB/s",
                                host.status().message()));
          continue;
        }
        if (options.progress) {
          options.progress(fmt::format("transfer {} {} {}", dir.name, memory, SizeName(size)));
        }
        PARITY_ASSIGN_OR_RETURN(BenchResult r, RunOne(backend, options, dir, host_kind, size,
                                                      device, *host, pattern, check));
        all.push_back(std::move(r));
      }
    }
  }
  return all;
}

}  // namespace parity::bench
