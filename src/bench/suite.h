// SPDX-License-Identifier: Apache-2.0
// Benchmark suites: each runs its kernels on a Backend, validates their output, and returns
// one BenchResult per benchmark. The table of suites is explicit (Suites()).
#ifndef PARITY_BENCH_SUITE_H_
#define PARITY_BENCH_SUITE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/backend.h"
#include "bench/result.h"

namespace parity::bench {

/// One GEMM's operands and product as the device holds them (row-major, n×n, bits of `dtype`).
struct GemmOutput {
  std::string label;  ///< the result's dtype: "float32", "tf32", ...
  DType dtype = DType::kFloat32;
  int64_t n = 0;
  std::string implementation;
  std::vector<std::byte> a, b, c;
};

/// What the command line says about a run; a suite fills in its own defaults.
struct SuiteOptions {
  /// --n: stream array length, RNG fill length, peer message length (float32 elements).
  std::optional<std::size_t> n;
  std::optional<int> reps;  ///< --reps: timed repetitions (+ one warm-up)
  bool full = false;        ///< --full: the larger sweep
  uint64_t seed = 42;       ///< inputs and Philox key
  /// Restricts dtypes when not empty (--dtype).
  std::vector<std::string> dtypes;
  /// When set, the gemm suite hands it every product of order <= 1024 it validated (--gemm-dump).
  std::function<Status(const GemmOutput&)> gemm_output;
  /// Called with a line of progress for people (may be empty).
  std::function<void(std::string_view)> progress;
  /// A new instance of the backend run on, opened on device `index` (the peer suite opens one
  /// per device). Empty where the caller can't make one; the peer suite is then skipped.
  std::function<Result<std::unique_ptr<Backend>>(int index)> open_device;

  bool WantsDType(std::string_view dtype) const;
};

/// A suite: name, what `parity bench list` says of it, and how to run it.
struct Suite {
  std::string_view name;
  std::string_view description;
  /// Runs every benchmark of the suite on the opened backend. A benchmark that can't run here
  /// is a skipped result with the reason; a wrong output is an invalid one. The Status is for
  /// failures of the backend itself (a call that errs), which end the run.
  Result<std::vector<BenchResult>> (*run)(Backend& backend, const SuiteOptions& options);
  /// Whether it runs when --suite is not given. The peer suite does not: it takes every device
  /// of the node, not only --device.
  bool by_default = true;
};

/// Every suite, the ones run by default first, in the order `--suite` defaults to.
std::span<const Suite> Suites();
const Suite* FindSuite(std::string_view name);

// The suites, one file each.
Result<std::vector<BenchResult>> RunStreamSuite(Backend& backend, const SuiteOptions& options);
Result<std::vector<BenchResult>> RunGemmSuite(Backend& backend, const SuiteOptions& options);
Result<std::vector<BenchResult>> RunTransferSuite(Backend& backend, const SuiteOptions& options);
Result<std::vector<BenchResult>> RunRngSuite(Backend& backend, const SuiteOptions& options);
Result<std::vector<BenchResult>> RunLatencySuite(Backend& backend, const SuiteOptions& options);
Result<std::vector<BenchResult>> RunPeerSuite(Backend& backend, const SuiteOptions& options);

/// Device memory freed when it goes out of scope.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static Result<DeviceBuffer> Allocate(Backend& backend, std::size_t bytes, MemoryKind kind);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* get() const { return ptr_; }
  MemoryKind kind() const { return kind_; }

 private:
  Backend* backend_ = nullptr;
  void* ptr_ = nullptr;
  MemoryKind kind_ = MemoryKind::kDevice;
};

/// A skipped result for `benchmark` with `reason`.
BenchResult Skipped(std::string benchmark, std::string dtype, Json params, std::string unit,
                    std::string reason);

/// Fills `out` with bytes (xorshift64 from `seed`) that no stale, shifted or partial copy of
/// another seed's can match.
void FillCopyPattern(std::span<std::byte> out, uint64_t seed);

/// What a copy's destination, read back, showed against its source.
struct CopyCheck {
  std::size_t checked = 0;     ///< bytes compared
  std::size_t mismatches = 0;  ///< bytes that differ
  std::size_t first = 0;       ///< the first that differs, when any does
};
/// `got` against `want`, byte for byte (the shorter length of the two).
CopyCheck CompareCopy(std::span<const std::byte> got, std::span<const std::byte> want);
/// Records `check` in r.validation (method, bytes_checked, mismatches); any mismatch makes `r`
/// invalid, the reason naming the count and the first wrong byte.
void RecordCopyCheck(BenchResult& r, const CopyCheck& check);

}  // namespace parity::bench

#endif  // PARITY_BENCH_SUITE_H_
