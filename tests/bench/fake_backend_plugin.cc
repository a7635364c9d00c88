// SPDX-License-Identifier: Apache-2.0
// A backend plugin for tests, built as libparity_backend_fake.so (and, with
// PARITY_FAKE_ABI_VERSION, as libparity_backend_fakeabi.so): it includes only the Backend
// interface and core, as a GPU plugin does, and runs plain serial kernels on host memory. Its
// behaviour comes from $PARITY_FAKE_MODE:
//   ok (default)  correct kernels; two devices, "Fake Accelerator 0" and "NVIDIA H200"
//   refuse        parity_backend_create fails with "fake runtime: no driver loaded"
//   wrong-triad   triad writes b + scalar·c + 1e-3 into element n/2
//   wrong-gemm    GEMM rounds float32 inputs to 10 fraction bits (as TF32 tensor cores do)
// Its GEMM is a plain loop, up to n = 1024 (larger ones are unavailable).
//   wrong-rng     the Philox fill starts one block late
//   wrong-copy    copies leave the last byte out
//   no-peer       no device reaches another's memory directly (peer copies are staged)
//   wrong-peer    peer copies from device 1 leave the last byte out
//   short-dot     dot leaves out the last of its 64 blocks
//   zero-dot      dot returns 0
//   no-image      stream kernels fail as a launch without code for the device does (kUnavailable)
// $PARITY_FAKE_CLOCK=HOST_US,DEVICE_US times everything on a simulated clock instead: each call
// that queues work spends HOST_US on the host (selecting the device, a library's host code),
// then queues DEVICE_US of device work; held samples (Queuing::kHeld) go through the GPU
// plugins' own sequence (bench/gpu/held_timing.h), so a correct one counts DEVICE_US per call.
// $PARITY_FAKE_DEVICES (1 to 16, default 2) sets how many devices it has; a third and later are
// "Fake Accelerator i".
#include <Random123/philox.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bench/backend.h"
#include "bench/gpu/held_timing.h"

#ifndef PARITY_FAKE_ABI_VERSION
#define PARITY_FAKE_ABI_VERSION parity::bench::kBackendAbiVersion
#endif

namespace {

using parity::DType;
using parity::Json;
using parity::Result;
using parity::Status;
using parity::bench::DeviceInfo;
using parity::bench::GemmMath;
using parity::bench::MemoryKind;
using parity::bench::Queuing;
using parity::bench::StreamOp;

std::string Mode() {
  const char* mode = std::getenv("PARITY_FAKE_MODE");
  return mode != nullptr ? mode : "ok";
}

// The fake's compute loops stand in for a GPU's kernels: not instrumented in the sanitizer
// build, where they ran 50-80 times slower (parity's side of every call still is). What they
// call carries the same attribute, or it would not be inlined into them.
#if defined(__clang__)
#define FAKE_DEVICE_LOOP __attribute__((no_sanitize("address", "undefined")))
#else
#define FAKE_DEVICE_LOOP
#endif

FAKE_DEVICE_LOOP float Tf32(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits &= ~uint32_t{0x1FFF};  // keep 10 of 23 fraction bits (truncation)
  std::memcpy(&x, &bits, 4);
  return x;
}

template <typename T>
FAKE_DEVICE_LOOP void StreamKernel(StreamOp op, T* a, T* b, T* c, std::size_t n, T s,
                                   bool wrong_triad) {
  for (std::size_t i = 0; i < n; ++i) {
    switch (op) {
      case StreamOp::kCopy:
        c[i] = a[i];
        break;
      case StreamOp::kMul:
        b[i] = s * c[i];
        break;
      case StreamOp::kAdd:
        c[i] = a[i] + b[i];
        break;
      case StreamOp::kTriad:
        a[i] = b[i] + s * c[i];
        break;
      case StreamOp::kNstream:
        a[i] += b[i] + s * c[i];
        break;
    }
  }
  if (wrong_triad && op == StreamOp::kTriad && n > 0) a[n / 2] += T(1e-3);
}

template <typename T>
FAKE_DEVICE_LOOP T GemmInput(T x, bool tf32) {
  return sizeof(T) == 4 && tf32 ? static_cast<T>(Tf32(static_cast<float>(x))) : x;
}

// i-k-j order, so the inner loop runs along rows of B and C; `row` holds n elements.
template <typename T>
FAKE_DEVICE_LOOP void GemmLoops(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c,
                                bool tf32, T* row) {
  for (int64_t i = 0; i < m; ++i) {
    T* ci = c + i * n;
    for (int64_t j = 0; j < n; ++j) ci[j] = 0;
    for (int64_t p = 0; p < k; ++p) {
      const T x = GemmInput(a[i * k + p], tf32);
      const T* bp = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] = GemmInput(bp[j], tf32);
      for (int64_t j = 0; j < n; ++j) ci[j] += x * row[j];
    }
  }
}

template <typename T>
void Gemm(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c, bool tf32) {
  std::vector<T> row(static_cast<std::size_t>(n));
  GemmLoops(m, n, k, a, b, c, tf32, row.data());
}

// One device queue on a simulated clock: the host's time, the time the device is busy until,
// and, while held, the work queued behind the spin kernel. Markers are stamped when the device
// reaches them.
class SimQueue {
 public:
  SimQueue(double host_seconds, double device_seconds)
      : host_gap_(host_seconds), device_work_(device_seconds) {}

  /// A call: the host's part, then its device work queued.
  void Call() {
    host_ += host_gap_;
    Enqueue({device_work_, nullptr});
  }
  void Synchronize() { host_ = std::max(host_, device_free_); }

  // TimeOnQueue's queue.
  Status Hold() {
    host_ += host_gap_;  // the spin kernel's launch
    held_ = true;
    return Status::Ok();
  }
  Status RecordStart() {
    Enqueue({0.0, &start_});
    return Status::Ok();
  }
  Status RecordStop() {
    Enqueue({0.0, &stop_});
    return Status::Ok();
  }
  Status Release() {
    held_ = false;
    double at = std::max(host_, device_free_);
    for (const Op& op : pending_) {
      Run(op, at);
      at = device_free_;
    }
    pending_.clear();
    return Status::Ok();
  }
  Result<double> WaitElapsed() {
    Synchronize();
    return stop_ - start_;
  }
  Status CheckHold() { return Status::Ok(); }

 private:
  struct Op {
    double seconds;
    double* stamp;  // a marker's time, or nullptr for work
  };
  void Enqueue(Op op) {
    if (held_) {
      pending_.push_back(op);
    } else {
      Run(op, std::max(host_, device_free_));
    }
  }
  void Run(const Op& op, double at) {
    if (op.stamp != nullptr) *op.stamp = at;
    device_free_ = at + op.seconds;
  }

  double host_gap_, device_work_;
  double host_ = 0.0, device_free_ = 0.0;
  double start_ = 0.0, stop_ = 0.0;
  bool held_ = false;
  std::vector<Op> pending_;
};

std::optional<SimQueue> ClockFromEnvironment() {
  const char* clock = std::getenv("PARITY_FAKE_CLOCK");
  if (clock == nullptr || *clock == '\0') return std::nullopt;
  double host_us = 0.0, device_us = 0.0;
  if (std::sscanf(clock, "%lf,%lf", &host_us, &device_us) != 2 || host_us < 0 || device_us <= 0) {
    return std::nullopt;
  }
  return SimQueue(host_us * 1e-6, device_us * 1e-6);
}

class FakeBackend final : public parity::bench::Backend {
 public:
  explicit FakeBackend(std::string mode) : mode_(std::move(mode)), clock_(ClockFromEnvironment()) {}

  std::string_view name() const override { return "fake"; }

  Result<std::vector<DeviceInfo>> Devices() override {
    DeviceInfo first{0, "Fake Accelerator 0", "Fake", Json{{"memory_bytes", 1 << 30}}};
    DeviceInfo second{1, "NVIDIA H200", "NVIDIA", Json{{"driver", "fake 1.0"}}};
    std::vector<DeviceInfo> devices{first, second};
    for (int i = 2; i < DeviceCount(); ++i) {
      devices.push_back({i, "Fake Accelerator " + std::to_string(i), "Fake", Json::object()});
    }
    devices.resize(static_cast<std::size_t>(DeviceCount()));
    return devices;
  }

  Status Open(int index) override {
    if (index < 0 || index >= DeviceCount()) {
      return Status::Unavailable("fake backend: no such device");
    }
    index_ = index;
    return Status::Ok();
  }

  Result<void*> Allocate(std::size_t bytes, MemoryKind) override {
    void* p = std::aligned_alloc(64, (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64);
    if (p == nullptr) return Status::Unavailable("fake backend: out of memory");
    return p;
  }
  void Free(void* ptr, MemoryKind) override {
    last_gemm_.reset();
    std::free(ptr);
  }

  Status Copy(void* dst, MemoryKind, const void* src, MemoryKind, std::size_t bytes) override {
    Charge();
    last_gemm_.reset();
    const bool drop_last = mode_ == "wrong-copy" && bytes > 4096;
    std::memcpy(dst, src, drop_last ? bytes - 1 : bytes);
    return Status::Ok();
  }

  Status Fill(void* dst, DType dtype, std::size_t n, double value) override {
    Charge();
    last_gemm_.reset();
    for (std::size_t i = 0; i < n; ++i) {
      if (dtype == DType::kFloat64) {
        static_cast<double*>(dst)[i] = value;
      } else {
        static_cast<float*>(dst)[i] = static_cast<float>(value);
      }
    }
    return Status::Ok();
  }

  Status Stream(StreamOp op, DType dtype, void* a, void* b, void* c, std::size_t n,
                double scalar) override {
    if (mode_ == "no-image") {
      return Status::Unavailable(
          "CUDA: StreamKernel launch failed: cudaErrorNoKernelImageForDevice (209): no kernel "
          "image is available for execution on the device (this build has no code for this "
          "GPU's architecture)");
    }
    Charge();
    const bool wrong = mode_ == "wrong-triad";
    if (dtype == DType::kFloat64) {
      StreamKernel(op, static_cast<double*>(a), static_cast<double*>(b), static_cast<double*>(c), n,
                   scalar, wrong);
    } else {
      StreamKernel(op, static_cast<float*>(a), static_cast<float*>(b), static_cast<float*>(c), n,
                   static_cast<float>(scalar), wrong);
    }
    return Status::Ok();
  }

  Result<double> Dot(DType dtype, const void* a, const void* b, std::size_t n) override {
    Charge();
    if (clock_) clock_->Synchronize();  // the block sums are read back
    if (mode_ == "zero-dot") return 0.0;
    // Blocks of n / 64 elements; short-dot leaves the last one out.
    if (mode_ == "short-dot") n -= n / 64;
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      sum += dtype == DType::kFloat64
                 ? static_cast<const double*>(a)[i] * static_cast<const double*>(b)[i]
                 : static_cast<double>(static_cast<const float*>(a)[i]) *
                       static_cast<const float*>(b)[i];
    }
    return sum;
  }

  Status Gemm(DType dtype, GemmMath math, int64_t m, int64_t n, int64_t k, const void* a,
              const void* b, void* c) override {
    if (math == GemmMath::kTf32) return Status::Unavailable("fake backend: no TF32 GEMM");
    Charge();
    // On the simulated clock a call repeating the last one on the same operands (no copy or
    // fill since) is not computed again: its product is already in C.
    const GemmCall call{dtype, m, n, k, a, b, c};
    if (clock_ && last_gemm_ == call) return Status::Ok();
    last_gemm_ = call;
    if (m > 1024 || n > 1024 || k > 1024) {
      return Status::Unavailable("fake backend: GEMM only up to n = 1024");
    }
    if (dtype == DType::kFloat64) {
      ::Gemm(m, n, k, static_cast<const double*>(a), static_cast<const double*>(b),
             static_cast<double*>(c), false);
    } else if (dtype == DType::kFloat32) {
      ::Gemm(m, n, k, static_cast<const float*>(a), static_cast<const float*>(b),
             static_cast<float*>(c), mode_ == "wrong-gemm");
    } else {
      return Status::Unavailable("fake backend: no 16-bit GEMM");
    }
    return Status::Ok();
  }
  std::string GemmImplementation(DType dtype, GemmMath) override {
    return dtype == DType::kFloat64 || dtype == DType::kFloat32 ? "fake plain loop" : "";
  }

  Status PhiloxUniform(float* out, std::size_t n, uint64_t seed, uint64_t offset) override {
    Charge();
    using Philox = r123::Philox4x32_R<10>;
    const Philox::key_type key = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
    const uint64_t skew = mode_ == "wrong-rng" ? 1 : 0;
    for (std::size_t i = 0; i < n; ++i) {
      const uint64_t block = offset / 4 + i / 4 + skew;
      const Philox::ctr_type ctr = {
          {static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0}};
      const uint32_t x = Philox()(ctr, key).v[i % 4];
      out[i] = static_cast<float>(x) * 2.3283064365386963e-10f + 1.1641532182693481e-10f;
    }
    return Status::Ok();
  }

  Status EmptyKernel() override {
    Charge();
    return Status::Ok();
  }
  Status Synchronize() override {
    if (clock_) clock_->Synchronize();
    return Status::Ok();
  }

  Result<bool> PeerAccess(int peer, bool) override {
    if (peer < 0 || peer >= DeviceCount() || peer == index_) {
      return Status::Unavailable("fake backend: no peer " + std::to_string(peer));
    }
    return mode_ != "no-peer";
  }

  Status CopyToPeer(void* dst, int peer, const void* src, std::size_t bytes) override {
    if (peer < 0 || peer >= DeviceCount() || peer == index_) {
      return Status::Internal("fake backend: copy to device " + std::to_string(peer) +
                              " from device " + std::to_string(index_));
    }
    Charge();
    const bool drop_last = mode_ == "wrong-peer" && index_ == 1 && bytes > 8;
    std::memcpy(dst, src, drop_last ? bytes - 1 : bytes);
    return Status::Ok();
  }

  Result<double> Time(const std::function<Status()>& work, Queuing queuing) override {
    if (clock_) return parity::bench::gpu::TimeOnQueue(*clock_, work, queuing);
    const auto start = std::chrono::steady_clock::now();
    PARITY_RETURN_IF_ERROR(work());
    // At least a microsecond, so rates stay finite whatever the clock's resolution.
    return std::max(
        1e-6, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }

 private:
  static int DeviceCount() {
    const char* count = std::getenv("PARITY_FAKE_DEVICES");
    return count != nullptr ? std::clamp(std::atoi(count), 1, 16) : 2;
  }

  void Charge() {
    if (clock_) clock_->Call();
  }

  struct GemmCall {
    DType dtype;
    int64_t m, n, k;
    const void *a, *b;
    void* c;
    bool operator==(const GemmCall&) const = default;
  };

  std::string mode_;
  std::optional<SimQueue> clock_;
  std::optional<GemmCall> last_gemm_;
  int index_ = 0;
};

}  // namespace

extern "C" int parity_backend_abi_version() { return PARITY_FAKE_ABI_VERSION; }

extern "C" parity::bench::Backend* parity_backend_create(std::string* error) {
  const std::string mode = Mode();
  if (mode == "refuse") {
    *error = "fake runtime: no driver loaded";
    return nullptr;
  }
  return new FakeBackend(mode);
}
