// SPDX-License-Identifier: Apache-2.0
#include "bench/suite.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

namespace parity::bench {
namespace {

constexpr std::array<Suite, 6> kSuites = {{
    {"stream",
     "BabelStream's kernels on three arrays of n elements (default 2^25) in float64 and "
     "float32: copy, mul, add, triad, dot in its Classic order, reps times (default 100), then "
     "nstream on its own (as --only Nstream); GB/s (10^9 bytes) from BabelStream's byte counts "
     "(copy, mul, dot 2n; add, triad 3n; nstream 4n elements); 'best' from the fastest "
     "repetition, the first dropped, as BabelStream reports; validated as BabelStream's "
     "check_solution (every element within 100 eps, the dot within 1e7 eps, relative)",
     RunStreamSuite},
    {"gemm",
     "square C = A*B, row-major, in float64, float32, tf32 (float32 operands rounded to TF32 "
     "on tensor cores), float16 and bfloat16 (float32 sums); cpu: OpenBLAS for float64 and "
     "float32, oneDNN for bfloat16 where the CPU has it; cuda: cuBLAS (tensor-op math for tf32, "
     "float16, bfloat16); hip: rocBLAS when found, else parity's tiled kernel; each result "
     "names its implementation. n = 256, 1024, 2048 (--full adds 512 and 4096); "
     "GFLOP/s = 2n^3/t, "
     "timed after 0.25 s of warm-up calls; validated "
     "against a float64 product on 16 sampled rows x 16 columns with parity compare's auto "
     "bound (6 sqrt(n) u)",
     RunGemmSuite},
    {"transfer",
     "host-to-device and device-to-host copies, pageable and pinned host memory, 4 KiB to "
     "256 MiB (--full: 1 GiB); GB/s; every copy's destination checked byte for byte. On the "
     "cpu backend a transfer is a memcpy and pinned memory does not apply (skipped)",
     RunTransferSuite},
    {"rng",
     "Philox4x32-10 uniform float fill (cuRAND's curand_uniform of curand_init(seed, 0, 0)), "
     "2^26 values (--n); GB/s of output; validated against parity's cuRAND device-state "
     "model at sampled positions, bit for bit",
     RunRngSuite},
    {"latency",
     "launch of an empty kernel (queued, timed per launch over 1000 launches) and launch plus "
     "synchronisation (round trip); microseconds; on the cpu backend an empty OpenMP parallel "
     "region",
     RunLatencySuite},
    {"peer",
     "copies between every ordered pair of the backend's devices (not run by default: it "
     "takes every device, not only --device): one way and both ways at once, with direct "
     "peer access on where the devices have it (NVLink, xGMI, PCIe peer-to-peer) and off "
     "(the runtime stages the copy through host memory), as CUDA's p2pBandwidthLatencyTest "
     "measures them; messages of n float32 elements (default 2^24, 64 MiB), batches of at least "
     "256 MiB per sample; GB/s, both directions summed for 'bi'; latency of an 8-byte copy in "
     "microseconds (mean of 100); every destination read back and compared with its source "
     "byte for byte. Skipped on a backend with one device (cpu)",
     RunPeerSuite, false},
}};

}  // namespace

bool SuiteOptions::WantsDType(std::string_view dtype) const {
  return dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

std::span<const Suite> Suites() { return kSuites; }

const Suite* FindSuite(std::string_view name) {
  for (const Suite& suite : kSuites) {
    if (suite.name == name) return &suite;
  }
  return nullptr;
}

Result<DeviceBuffer> DeviceBuffer::Allocate(Backend& backend, std::size_t bytes, MemoryKind kind) {
  PARITY_ASSIGN_OR_RETURN(void* ptr, backend.Allocate(bytes, kind));
  DeviceBuffer buffer;
  buffer.backend_ = &backend;
  buffer.ptr_ = ptr;
  buffer.kind_ = kind;
  return buffer;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : backend_(std::exchange(other.backend_, nullptr)),
      ptr_(std::exchange(other.ptr_, nullptr)),
      kind_(other.kind_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (ptr_ != nullptr) backend_->Free(ptr_, kind_);
    backend_ = std::exchange(other.backend_, nullptr);
    ptr_ = std::exchange(other.ptr_, nullptr);
    kind_ = other.kind_;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) backend_->Free(ptr_, kind_);
}

void FillCopyPattern(std::span<std::byte> out, uint64_t seed) {
  uint64_t x = seed | 1;
  for (std::size_t i = 0; i < out.size(); i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    std::memcpy(out.data() + i, &x, std::min<std::size_t>(8, out.size() - i));
  }
}

CopyCheck CompareCopy(std::span<const std::byte> got, std::span<const std::byte> want) {
  CopyCheck check;
  check.checked = std::min(got.size(), want.size());
  // Equal blocks (nearly all of them) are passed by memcmp; only a block that differs is
  // looked at byte by byte.
  constexpr std::size_t kBlock = 4096;
  for (std::size_t start = 0; start < check.checked; start += kBlock) {
    const std::size_t end = std::min(check.checked, start + kBlock);
    if (std::memcmp(got.data() + start, want.data() + start, end - start) == 0) continue;
    for (std::size_t i = start; i < end; ++i) {
      if (got[i] != want[i] && check.mismatches++ == 0) check.first = i;
    }
  }
  return check;
}

void RecordCopyCheck(BenchResult& r, const CopyCheck& check) {
  r.validation = {{"method", "destination read back and compared with the source, byte for byte"},
                  {"bytes_checked", check.checked},
                  {"mismatches", check.mismatches}};
  if (check.mismatches > 0) {
    r.outcome = Outcome::kInvalid;
    r.reason = fmt::format(
        "{} of {} bytes differ from the source after the copies (first at "
        "byte {})",
        check.mismatches, check.checked, check.first);
  }
}

BenchResult Skipped(std::string benchmark, std::string dtype, Json params, std::string unit,
                    std::string reason) {
  BenchResult r;
  r.benchmark = std::move(benchmark);
  r.dtype = std::move(dtype);
  r.params = std::move(params);
  r.unit = std::move(unit);
  r.outcome = Outcome::kSkipped;
  r.reason = std::move(reason);
  return r;
}

}  // namespace parity::bench
