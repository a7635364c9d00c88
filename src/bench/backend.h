// SPDX-License-Identifier: Apache-2.0
// The Backend interface: what a benchmark needs from a platform (devices, memory, copies, the
// kernels of the suites, synchronisation, a timer). The CPU backend is built into parity; GPU
// backends are shared libraries that include only this header and core, export the two C
// functions at the end, and are loaded with dlopen by the registry (bench/registry.h).
#ifndef PARITY_BENCH_BACKEND_H_
#define PARITY_BENCH_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/stream_op.h"
#include "core/dtype.h"
#include "core/json_util.h"
#include "core/status.h"

namespace parity::bench {

/// Where an allocation lives. On the CPU backend all three are host memory.
enum class MemoryKind { kDevice, kHostPageable, kHostPinned };

/// How a GEMM computes its products.
enum class GemmMath {
  kNative,  ///< in the precision of its dtype (float16 and bfloat16 accumulate in float32)
  kTf32,    ///< float32 operands rounded to TF32 (10 fraction bits) on tensor cores, float32 sums
};

/// One device of a backend, as `parity devices` and the results' "device" show it.
struct DeviceInfo {
  int index = 0;
  std::string name;    ///< the name the runtime reports ("NVIDIA H200", the CPU model)
  std::string vendor;  ///< "NVIDIA", "AMD", "Intel", ...
  /// Everything else the runtime says: memory_bytes, compute_units, clocks, driver and runtime
  /// versions, libraries (BLAS, RNG) with versions. Values it can't read are absent.
  Json properties = Json::object();
};

/// How Backend::Time may run the work it times.
enum class Queuing {
  /// `work` only queues work on the device (kernels, library calls such as GEMMs, copies
  /// between device memory or from pinned host memory, peer copies with peer access on) and
  /// never waits for it. The backend holds its queue (a spin kernel waiting on a host flag, as
  /// nvbandwidth does) from before the start of the sample until `work` has returned, so the
  /// sample is the device's time for the queued work alone, however long the host took to
  /// queue it. At most kMaxHeldCalls calls (a held queue that fills would block the host), and
  /// each of them made once before without holding (lazily loaded kernels and library
  /// workspaces must not be set up while the queue is held).
  kHeld,
  /// `work` may wait for the device or do part of the work on the host (dot's read-back and
  /// host sum, pageable copies the runtime stages through host buffers, staged peer copies):
  /// the sample runs from when Time() starts `work` until the device has finished it.
  kDirect,
};

/// The most calls one held sample may queue (Queuing::kHeld). CUDA blocks the host when a
/// stream's queue holds about 1000 launches; a GEMM may be two.
inline constexpr int kMaxHeldCalls = 128;

/// A platform to benchmark. Calls after Open() go to the opened device and may be
/// asynchronous (queued on one stream); Synchronize() waits for all of them. Every call that
/// can fail returns a Status: kUnavailable when the backend or device can't do it here (the
/// benchmark is then skipped with that reason), kInternal when a call failed.
class Backend {
 public:
  virtual ~Backend() = default;

  /// "cpu", "cuda", "hip".
  virtual std::string_view name() const = 0;
  /// The devices present; an empty list, or kUnavailable with the reason, when there are none.
  virtual Result<std::vector<DeviceInfo>> Devices() = 0;
  /// Selects device `index` (0-based) for every later call.
  virtual Status Open(int index) = 0;

  /// `bytes` of memory of `kind`, aligned to at least 64 bytes; never zero-length.
  virtual Result<void*> Allocate(std::size_t bytes, MemoryKind kind) = 0;
  virtual void Free(void* ptr, MemoryKind kind) = 0;
  /// Copies `bytes` from `src` to `dst` (any kinds, as the pointers were allocated).
  virtual Status Copy(void* dst, MemoryKind dst_kind, const void* src, MemoryKind src_kind,
                      std::size_t bytes) = 0;
  /// Sets n elements of `dtype` (float32 or float64) at device memory `dst` to `value`, in
  /// the same parallel layout the stream kernels use (first touch on NUMA hosts).
  virtual Status Fill(void* dst, DType dtype, std::size_t n, double value) = 0;

  /// One stream kernel on n elements of `dtype` (float32 or float64) in device memory.
  virtual Status Stream(StreamOp op, DType dtype, void* a, void* b, void* c, std::size_t n,
                        double scalar) = 0;
  /// sum a[i]·b[i], waited for and returned to the host (BabelStream's dot).
  virtual Result<double> Dot(DType dtype, const void* a, const void* b, std::size_t n) = 0;
  /// C = A·B, row-major, A m×k, B k×n, C m×n, all of `dtype` in device memory. float32 and
  /// float64 accumulate in their own precision; float16 and bfloat16 in float32 (C rounded to
  /// the dtype); `math` kTf32 (float32 only) rounds the operands to TF32 first.
  /// kUnavailable when the device or library has no such GEMM.
  virtual Status Gemm(DType dtype, GemmMath math, int64_t m, int64_t n, int64_t k, const void* a,
                      const void* b, void* c) = 0;
  /// What computes Gemm(dtype, math) here, for the result: library, version and call, e.g.
  /// "cuBLAS 13.0.2 cublasGemmEx CUBLAS_COMPUTE_32F_FAST_TF32" or "parity tiled HIP kernel
  /// (rocBLAS not found: ...)"; empty when nothing does.
  virtual std::string GemmImplementation(DType dtype, GemmMath math) = 0;
  /// out[i] for i < n: cuRAND's curand_uniform of Philox4x32-10 with key `seed`, element i
  /// being value i mod 4 of the block at counter (i / 4 + offset / 4, 0) — the stream of
  /// curand_init(seed, 0, offset) read four at a time (offset a multiple of 4).
  virtual Status PhiloxUniform(float* out, std::size_t n, uint64_t seed, uint64_t offset) = 0;
  /// Launches a kernel that does nothing (on the CPU: a parallel region with an empty body).
  virtual Status EmptyKernel() = 0;
  /// Waits until every queued call has finished.
  virtual Status Synchronize() = 0;
  /// Seconds that `work` took on the device's own clock (events around it on GPUs, then a
  /// wait), including everything it queued. With Queuing::kHeld (see there) the device's queue
  /// is held until `work` has returned, so the host's time to queue it is not counted; with
  /// kDirect the sample also counts the host's part of the work. Time() itself never adds the
  /// host's work before the first call of `work` to the sample when the work is held.
  virtual Result<double> Time(const std::function<Status()>& work, Queuing queuing) = 0;
  /// Makes this instance's queue wait, on the device and without blocking the host, until
  /// everything queued so far on `other` (another instance of the same backend, opened on any
  /// device) has finished (cudaStreamWaitEvent). Backends whose calls finish before they return
  /// keep this default, which waits on the host.
  virtual Status WaitFor(Backend& other) { return other.Synchronize(); }

  // Peer copies between two devices of this backend (the peer suite). Each device is opened by
  // its own instance of the backend; a backend with one device keeps these defaults.

  /// Whether the opened device can reach the memory of device `peer` directly (NVLink, xGMI or
  /// PCIe peer-to-peer: cudaDeviceCanAccessPeer, hipDeviceCanAccessPeer). When it can, `enable`
  /// turns that access on or off for the CopyToPeer calls that follow. kUnavailable when the
  /// backend has no device `peer` other than the opened one.
  virtual Result<bool> PeerAccess(int peer, bool enable) {
    (void)enable;
    return Status::Unavailable(std::string(name()) + " backend: one device, no peer " +
                               std::to_string(peer) + " to copy to");
  }
  /// Queues a copy of `bytes` from `src`, device memory of the opened device, to `dst`, device
  /// memory of device `peer` (allocated by an instance opened on it), on this instance's queue:
  /// direct where PeerAccess turned access on, else staged through host memory by the runtime.
  virtual Status CopyToPeer(void* dst, int peer, const void* src, std::size_t bytes) {
    (void)dst, (void)src, (void)bytes;
    return Status::Unavailable(std::string(name()) + " backend: one device, no peer " +
                               std::to_string(peer) + " to copy to");
  }
};

/// Bumped whenever Backend or DeviceInfo change; a plugin built for another version is refused.
inline constexpr int kBackendAbiVersion = 4;

}  // namespace parity::bench

extern "C" {
/// Exported by every backend plugin: the kBackendAbiVersion it was built with.
int parity_backend_abi_version();
/// Exported by every backend plugin: a new backend, or nullptr with the reason in `*error`
/// (a runtime library missing, a driver too old). The caller owns the result.
parity::bench::Backend* parity_backend_create(std::string* error);
}

#endif  // PARITY_BENCH_BACKEND_H_
