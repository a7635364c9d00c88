// SPDX-License-Identifier: Apache-2.0
// The peer suite: copies between every ordered pair of a backend's devices, each device opened
// by its own instance of the backend (SuiteOptions::open_device). For each pair, with direct
// peer access on (where the devices have it) and off: one-way bandwidth, the latency of an
// 8-byte copy, and, once per unordered pair, both directions at once — the matrices of CUDA's
// p2pBandwidthLatencyTest. GB/s = 10^9 bytes/s.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "bench/stats.h"
#include "bench/suite.h"

namespace parity::bench {
namespace {

constexpr std::size_t kDefaultElements = std::size_t{1} << 24;  // 64 MiB of float32
constexpr int kDefaultReps = 10;
// Each bandwidth sample moves at least this much, so per-copy overhead doesn't decide it; a
// held sample (Queuing::kHeld) queues at most kMaxHeldCalls copies per device.
constexpr std::size_t kBatchBytes = std::size_t{256} << 20;
constexpr std::size_t kMaxBatch = kMaxHeldCalls;
constexpr int kLatencyCopies = 100;
constexpr std::size_t kLatencyBytes = 8;

// One device of the node: its own backend instance and a source and a destination buffer.
struct Device {
  int index = 0;
  std::unique_ptr<Backend> backend;
  DeviceBuffer send, recv;
};

// The bytes device `index` sends: the start values of two devices differ by a multiple of 2,
// so FillCopyPattern's low bit can't make them equal.
void Pattern(std::vector<std::byte>& out, uint64_t seed, int index) {
  FillCopyPattern(out, seed * 0x9E3779B97F4A7C15ull + 2 * static_cast<uint64_t>(index));
}

// What the suite needs across pairs: the devices, the message, host scratch.
struct PeerRun {
  std::vector<Device> devices;
  std::size_t bytes = 0;
  std::size_t batch = 1;
  int reps = kDefaultReps;
  uint64_t seed = 42;
  std::vector<std::byte> expected, got;

  // Sets `to`'s receive buffer to the complement of what `from` sends, so every byte a copy
  // fails to write differs from the source.
  Status Clear(const Device& to, const Device& from) {
    Pattern(expected, seed, from.index);
    for (std::byte& b : expected) b = ~b;
    PARITY_RETURN_IF_ERROR(to.backend->Copy(to.recv.get(), MemoryKind::kDevice, expected.data(),
                                            MemoryKind::kHostPageable, bytes));
    return to.backend->Synchronize();
  }

  // `to`'s receive buffer, read back, against what `from` sends.
  Result<CopyCheck> Check(const Device& to, const Device& from) {
    PARITY_RETURN_IF_ERROR(to.backend->Copy(got.data(), MemoryKind::kHostPageable, to.recv.get(),
                                            MemoryKind::kDevice, bytes));
    PARITY_RETURN_IF_ERROR(to.backend->Synchronize());
    Pattern(expected, seed, from.index);
    return CompareCopy(got, expected);
  }
};

BenchResult Make(std::string benchmark, std::string unit, int src, int dst, std::size_t bytes,
                 std::string_view direction, bool access, const PeerRun& run) {
  BenchResult r;
  r.benchmark = std::move(benchmark);
  r.unit = std::move(unit);
  r.higher_is_better = r.unit != "us";
  const std::string_view path = access ? "p2p" : "staged";
  r.params = {{"size", fmt::format("{}->{} {} {} {}", src, dst, bytes, direction, path)},
              {"src", src},
              {"dst", dst},
              {"bytes", bytes},
              {"direction", std::string(direction)},
              {"peer_access", access},
              {"reps", run.reps}};
  if (r.unit == "GB/s") r.params["batch"] = run.batch;
  r.implementation =
      fmt::format("{} backend CopyToPeer, {}", run.devices.front().backend->name(),
                  access ? "peer access on" : "peer access off (staged through host memory)");
  return r;
}

// Samples of `seconds` per batch turned into GB/s of `bytes` per copy (both directions summed
// for "bi"); the best figure; time_us, the median time of one copy.
void SetBandwidth(BenchResult& r, const std::vector<double>& seconds, double bytes,
                  std::size_t batch) {
  const double moved = bytes * static_cast<double>(batch);
  double fastest = std::numeric_limits<double>::infinity();
  for (double t : seconds) {
    r.samples.push_back(moved / t / 1e9);
    fastest = std::min(fastest, t);
  }
  r.best = moved / fastest / 1e9;
  r.extra = {{"time_us", Median(seconds) * 1e6 / static_cast<double>(batch)}};
}

// The results MeasurePair would give for s -> d, skipped with `reason`.
std::vector<BenchResult> SkippedPair(const PeerRun& run, const Device& s, const Device& d,
                                     bool access, const std::string& reason) {
  std::vector<BenchResult> out;
  out.push_back(Make("peer.bandwidth", "GB/s", s.index, d.index, run.bytes, "uni", access, run));
  out.push_back(Make("peer.latency", "us", s.index, d.index, kLatencyBytes, "uni", access, run));
  if (s.index < d.index) {
    out.push_back(Make("peer.bandwidth", "GB/s", s.index, d.index, run.bytes, "bi", access, run));
  }
  for (BenchResult& r : out) {
    r.outcome = Outcome::kSkipped;
    r.reason = reason;
  }
  return out;
}

Result<std::vector<BenchResult>> MeasurePair(PeerRun& run, Device& s, Device& d, bool access) {
  std::vector<BenchResult> out;
  Backend& src = *s.backend;
  Backend& dst = *d.backend;
  const double bytes = static_cast<double>(run.bytes);
  // With peer access on, a copy only queues work: the samples after the warm-up (repetition 0)
  // hold the queue until all of it is queued, so the host's submission is not counted (as
  // nvbandwidth and p2pBandwidthLatencyTest do). Staged copies (access off) involve the host.
  auto queuing = [&](int rep) { return access && rep > 0 ? Queuing::kHeld : Queuing::kDirect; };

  // One way.
  BenchResult uni = Make("peer.bandwidth", "GB/s", s.index, d.index, run.bytes, "uni", access, run);
  PARITY_RETURN_IF_ERROR(run.Clear(d, s));
  std::vector<double> seconds;
  for (int rep = 0; rep <= run.reps; ++rep) {
    PARITY_ASSIGN_OR_RETURN(
        const double t, src.Time(
                            [&]() -> Status {
                              for (std::size_t i = 0; i < run.batch; ++i) {
                                PARITY_RETURN_IF_ERROR(
                                    src.CopyToPeer(d.recv.get(), d.index, s.send.get(), run.bytes));
                              }
                              return Status::Ok();
                            },
                            queuing(rep)));
    if (rep > 0) seconds.push_back(t);  // rep 0 warms up: mappings, the copy engines' queues
  }
  SetBandwidth(uni, seconds, bytes, run.batch);
  PARITY_ASSIGN_OR_RETURN(const CopyCheck uni_check, run.Check(d, s));
  RecordCopyCheck(uni, uni_check);
  out.push_back(std::move(uni));

  // Latency: the mean of 100 queued 8-byte copies.
  BenchResult lat = Make("peer.latency", "us", s.index, d.index, kLatencyBytes, "uni", access, run);
  for (int rep = 0; rep <= run.reps; ++rep) {
    PARITY_ASSIGN_OR_RETURN(const double t,
                            src.Time(
                                [&]() -> Status {
                                  for (int i = 0; i < kLatencyCopies; ++i) {
                                    PARITY_RETURN_IF_ERROR(src.CopyToPeer(
                                        d.recv.get(), d.index, s.send.get(), kLatencyBytes));
                                  }
                                  return Status::Ok();
                                },
                                queuing(rep)));
    if (rep > 0) lat.samples.push_back(t / kLatencyCopies * 1e6);
  }
  lat.best = *std::min_element(lat.samples.begin(), lat.samples.end());
  lat.extra = {{"time_us", Median(lat.samples)}};
  lat.validation = {{"method", "timing only: the bandwidth copies of this pair are checked"}};
  out.push_back(std::move(lat));

  // Both ways at once, once per unordered pair: each device's queue copies to the other. As in
  // p2pBandwidthLatencyTest, the destination's queue waits on the device for the source's start
  // and the source's queue for the destination's copies, so the source's events span both
  // directions, with no host wait inside the sample.
  if (s.index > d.index) return out;
  BenchResult bi = Make("peer.bandwidth", "GB/s", s.index, d.index, run.bytes, "bi", access, run);
  PARITY_RETURN_IF_ERROR(run.Clear(d, s));
  PARITY_RETURN_IF_ERROR(run.Clear(s, d));
  seconds.clear();
  for (int rep = 0; rep <= run.reps; ++rep) {
    PARITY_ASSIGN_OR_RETURN(
        const double t, src.Time(
                            [&]() -> Status {
                              PARITY_RETURN_IF_ERROR(dst.WaitFor(src));
                              for (std::size_t i = 0; i < run.batch; ++i) {
                                PARITY_RETURN_IF_ERROR(
                                    src.CopyToPeer(d.recv.get(), d.index, s.send.get(), run.bytes));
                                PARITY_RETURN_IF_ERROR(
                                    dst.CopyToPeer(s.recv.get(), s.index, d.send.get(), run.bytes));
                              }
                              return src.WaitFor(dst);
                            },
                            queuing(rep)));
    if (rep > 0) seconds.push_back(t);
  }
  SetBandwidth(bi, seconds, 2 * bytes, run.batch);
  PARITY_ASSIGN_OR_RETURN(const CopyCheck there, run.Check(d, s));
  PARITY_ASSIGN_OR_RETURN(const CopyCheck back, run.Check(s, d));
  // Both halves as one check; the first wrong byte counted within its own half.
  RecordCopyCheck(bi, {there.checked + back.checked, there.mismatches + back.mismatches,
                       there.mismatches > 0 ? there.first : back.first});
  out.push_back(std::move(bi));
  return out;
}

// Turns direct access between `a` and `b` on or off both ways; whether both have it.
Result<bool> SetAccess(Device& a, Device& b, bool on) {
  PARITY_ASSIGN_OR_RETURN(const bool ab, a.backend->PeerAccess(b.index, on));
  PARITY_ASSIGN_OR_RETURN(const bool ba, b.backend->PeerAccess(a.index, on));
  return ab && ba;
}

}  // namespace

Result<std::vector<BenchResult>> RunPeerSuite(Backend& backend, const SuiteOptions& options) {
  PeerRun run;
  run.bytes = options.n.value_or(kDefaultElements) * sizeof(float);
  run.batch = std::clamp<std::size_t>(kBatchBytes / run.bytes, 1, kMaxBatch);
  run.reps = options.reps.value_or(kDefaultReps);
  run.seed = options.seed;
  auto skip_all = [&](std::string reason) {
    return std::vector<BenchResult>{
        Skipped("peer.bandwidth", "", {{"bytes", run.bytes}}, "GB/s", std::move(reason))};
  };

  PARITY_ASSIGN_OR_RETURN(const std::vector<DeviceInfo> infos, backend.Devices());
  if (infos.size() < 2) {
    return skip_all(fmt::format("the {} backend has {} device here: no pair to copy between",
                                backend.name(), infos.size()));
  }
  if (!options.open_device) {
    return skip_all("no way to open the backend's other devices was given to the suite");
  }
  for (const DeviceInfo& info : infos) {
    Result<std::unique_ptr<Backend>> opened = options.open_device(info.index);
    if (!opened.ok()) {
      if (opened.status().code() != StatusCode::kUnavailable) return opened.status();
      return skip_all(fmt::format("device {}: {}", info.index, opened.status().message()));
    }
    Device d;
    d.index = info.index;
    d.backend = std::move(opened).value();
    run.devices.push_back(std::move(d));
  }
  for (Device& d : run.devices) {
    Result<DeviceBuffer> send = DeviceBuffer::Allocate(*d.backend, run.bytes, MemoryKind::kDevice);
    Result<DeviceBuffer> recv = DeviceBuffer::Allocate(*d.backend, run.bytes, MemoryKind::kDevice);
    for (const Result<DeviceBuffer>* r : {&send, &recv}) {
      if (r->ok()) continue;
      if (r->status().code() != StatusCode::kUnavailable) return r->status();
      return skip_all(fmt::format("device {}: {}", d.index, r->status().message()));
    }
    d.send = std::move(send).value();
    d.recv = std::move(recv).value();
    run.expected.resize(run.bytes);
    Pattern(run.expected, run.seed, d.index);
    PARITY_RETURN_IF_ERROR(d.backend->Copy(d.send.get(), MemoryKind::kDevice, run.expected.data(),
                                           MemoryKind::kHostPageable, run.bytes));
    PARITY_RETURN_IF_ERROR(d.backend->Synchronize());
  }
  run.got.resize(run.bytes);

  std::vector<BenchResult> all;
  for (Device& s : run.devices) {
    for (Device& d : run.devices) {
      if (s.index == d.index) continue;
      // Direct access first, where both devices have it; then off, as it is left.
      PARITY_ASSIGN_OR_RETURN(const bool direct, SetAccess(s, d, true));
      for (const bool access : {true, false}) {
        if (options.progress) {
          options.progress(fmt::format("peer {} -> {}, peer access {}", s.index, d.index,
                                       access ? "on" : "off"));
        }
        if (access && !direct) {
          std::vector<BenchResult> skipped = SkippedPair(
              run, s, d, true,
              fmt::format("devices {} and {} cannot reach each other's memory directly (the "
                          "runtime says no peer access)",
                          s.index, d.index));
          all.insert(all.end(), skipped.begin(), skipped.end());
          continue;
        }
        if (!access) PARITY_RETURN_IF_ERROR(SetAccess(s, d, false).status());
        PARITY_ASSIGN_OR_RETURN(std::vector<BenchResult> pair, MeasurePair(run, s, d, access));
        all.insert(all.end(), pair.begin(), pair.end());
      }
    }
  }
  return all;
}

}  // namespace parity::bench
