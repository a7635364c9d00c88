// SPDX-License-Identifier: Apache-2.0
// What the cuda and hip backends share, written once against bench/gpu/gpu_runtime.h: the
// runtime probe, devices and their properties, memory, copies, the stream, fill, dot and empty
// kernels (through bench/gpu/launchers.h), events for timing. Host code, included by exactly one
// translation unit of each plugin (backend_cuda.cc, backend_hip.cc); the vendor adds GEMM, the
// Philox fill and its properties. Every runtime call is checked, and the last error after every
// launch.
#ifndef PARITY_BENCH_GPU_BACKEND_GPU_H_
#define PARITY_BENCH_GPU_BACKEND_GPU_H_

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/backend.h"
#include "bench/gpu/gpu_runtime.h"
#include "bench/gpu/held_timing.h"
#include "bench/gpu/launch.h"
#include "bench/gpu/launchers.h"
#include "bench/gpu/runtime_errors.h"

namespace parity::bench::gpu {

/// "cudaErrorInsufficientDriver (35): CUDA driver version is insufficient for CUDA runtime
/// version": the runtime's name, number and text of an error.
inline std::string ErrorText(gpuError_t error) {
  return std::string(gpuGetErrorName(error)) + " (" + std::to_string(static_cast<int>(error)) +
         "): " + gpuGetErrorString(error);
}

// runtime_errors.h maps these by number; the runtime's headers must agree with it.
#if defined(PARITY_GPU_HIP)
static_assert(static_cast<int>(hipErrorOutOfMemory) == kGpuErrorOutOfMemory);
inline constexpr char kArchitectureHint[] =
    "rebuild the hip plugin with PARITY_HIP_ARCHITECTURES naming this GPU's gcnArchName";
#else
static_assert(static_cast<int>(cudaErrorMemoryAllocation) == kGpuErrorOutOfMemory);
inline constexpr char kArchitectureHint[] =
    "rebuild the cuda plugin with CMAKE_CUDA_ARCHITECTURES (or CUDAARCHS) naming this GPU's "
    "compute capability";
#endif
static_assert(static_cast<int>(gpuErrorNoKernelImage) == kGpuErrorNoKernelImage);

/// A failed runtime call as a Status: kUnavailable for out-of-memory and for a kernel with no
/// code for this GPU (the benchmark is skipped with the reason), kInternal otherwise.
inline Status RuntimeError(std::string_view call, gpuError_t error) {
  // The call as the runtime names it: gpuMalloc(...) is cudaMalloc(...) or hipMalloc(...).
  std::string name(call);
  if (name.rfind("gpu", 0) == 0) name = PARITY_GPU_API_PREFIX + name.substr(3);
  std::string message =
      std::string(PARITY_GPU_RUNTIME_NAME) + ": " + name + " failed: " + ErrorText(error);
  return RuntimeErrorStatus(static_cast<int>(error), std::move(message), kArchitectureHint);
}

#define PARITY_GPU_CHECK(call)                                             \
  do {                                                                     \
    const gpuError_t parity_gpu_error_ = (call);                           \
    if (parity_gpu_error_ != gpuSuccess) {                                 \
      return ::parity::bench::gpu::RuntimeError(#call, parity_gpu_error_); \
    }                                                                      \
  } while (0)

/// A launcher's answer (bad configuration, no kernel image for this device) as a Status.
inline Status CheckLaunch(std::string_view kernel, gpuError_t error) {
  if (error == gpuSuccess) return Status::Ok();
  return RuntimeError(std::string(kernel) + " launch", error);
}

/// "13.0" from the runtime's 13000, "6.2" from HIP's 60200000-style numbers (major·10^7).
inline std::string VersionText(int version) {
  if (version >= 10000000) {
    return std::to_string(version / 10000000) + "." + std::to_string(version / 100000 % 100);
  }
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

/// The devices, or why there are none: the reason names the runtime, the call and the error
/// (no driver: cudaErrorInsufficientDriver, 35; no GPU: cudaErrorNoDevice or hipErrorNoDevice).
inline Result<int> CountDevices() {
  int count = 0;
  const gpuError_t error = gpuGetDeviceCount(&count);
  if (error != gpuSuccess) {
    int runtime = 0;
    const std::string version =
        gpuRuntimeGetVersion(&runtime) == gpuSuccess ? " " + VersionText(runtime) : "";
    (void)gpuGetLastError();  // the error is reported here; clear it for later calls
    return Status::Unavailable(
        std::string(PARITY_GPU_RUNTIME_NAME) + " runtime" + version +
        ": no usable device: " PARITY_GPU_API_PREFIX "GetDeviceCount returned " + ErrorText(error));
  }
  if (count == 0) {
    return Status::Unavailable(std::string(PARITY_GPU_RUNTIME_NAME) + " runtime: no device");
  }
  return count;
}

class GpuBackendBase : public Backend {
 public:
  ~GpuBackendBase() override {
    if (device_ >= 0) (void)gpuSetDevice(device_);
    if (partial_host_ != nullptr) (void)gpuFreeHost(partial_host_);
    if (partial_ != nullptr) (void)gpuFree(partial_);
    if (latch_ != nullptr) (void)gpuFreeHost(latch_);
    if (start_ != nullptr) (void)gpuEventDestroy(start_);
    if (stop_ != nullptr) (void)gpuEventDestroy(stop_);
    if (marker_ != nullptr) (void)gpuEventDestroy(marker_);
    if (stream_ != nullptr) (void)gpuStreamDestroy(stream_);
  }

  Result<std::vector<DeviceInfo>> Devices() override {
    PARITY_ASSIGN_OR_RETURN(const int count, CountDevices());
    std::vector<DeviceInfo> devices;
    for (int i = 0; i < count; ++i) {
      gpuDeviceProp prop{};
      PARITY_GPU_CHECK(gpuGetDeviceProperties(&prop, i));
      DeviceInfo d;
      d.index = i;
      d.name = prop.name;
      d.vendor = vendor();
      Json& p = d.properties;
      p["memory_bytes"] = static_cast<uint64_t>(prop.totalGlobalMem);
      p["compute_units"] = prop.multiProcessorCount;
      auto attribute = [&](const char* key, auto attr, double scale) {
        int value = 0;
        if (gpuDeviceGetAttribute(&value, attr, i) == gpuSuccess && value > 0) {
          p[key] = scale == 1.0 ? Json(value) : Json(value * scale);
        } else {
          (void)gpuGetLastError();  // absent, never 0
        }
      };
      attribute("clock_sm_hz", gpuDevAttrClockRate, 1e3);
      attribute("clock_memory_hz", gpuDevAttrMemoryClockRate, 1e3);
      attribute("memory_bus_width_bits", gpuDevAttrGlobalMemoryBusWidth, 1.0);
      attribute("l2_cache_bytes", gpuDevAttrL2CacheSize, 1.0);
      attribute("max_threads_per_compute_unit", gpuDevAttrMaxThreadsPerMultiProcessor, 1.0);
      int ecc = 0;
      if (gpuDeviceGetAttribute(&ecc, gpuDevAttrEccEnabled, i) == gpuSuccess) {
        p["ecc_enabled"] = ecc != 0;
      } else {
        (void)gpuGetLastError();
      }
      char bus[32] = {};
      if (gpuDeviceGetPCIBusId(bus, sizeof bus, i) == gpuSuccess) {
        p["pci_bus_id"] = bus;
      } else {
        (void)gpuGetLastError();
      }
      int version = 0;
      if (gpuDriverGetVersion(&version) == gpuSuccess && version > 0) {
        p["driver_version"] = VersionText(version);
      }
      if (gpuRuntimeGetVersion(&version) == gpuSuccess && version > 0) {
        p["runtime_version"] = VersionText(version);
      }
      AddVendorProperties(i, prop, p);
      devices.push_back(std::move(d));
    }
    return devices;
  }

  Status Open(int index) override {
    PARITY_ASSIGN_OR_RETURN(const int count, CountDevices());
    if (index < 0 || index >= count) {
      return Status::Unavailable(std::string(name()) + " backend: no device " +
                                 std::to_string(index) + " (it has " + std::to_string(count) + ")");
    }
    PARITY_GPU_CHECK(gpuSetDevice(index));
    PARITY_GPU_CHECK(gpuStreamCreateWithFlags(&stream_, gpuStreamNonBlocking));
    PARITY_GPU_CHECK(gpuEventCreate(&start_));
    PARITY_GPU_CHECK(gpuEventCreate(&stop_));
    PARITY_GPU_CHECK(gpuEventCreateWithFlags(&marker_, gpuEventDisableTiming));
    // The held queue's flag ([0], set by the host) and its timed-out mark ([1], set by the
    // spin kernel), in pinned host memory the device reads while it spins.
    PARITY_GPU_CHECK(
        gpuHostAlloc(reinterpret_cast<void**>(&latch_), 2 * sizeof(int), gpuHostAllocLatch));
    PARITY_GPU_CHECK(gpuHostGetDevicePointer(reinterpret_cast<void**>(&latch_device_), latch_, 0));
    int value = 0;
    PARITY_GPU_CHECK(gpuDeviceGetAttribute(&value, gpuDevAttrMultiProcessorCount, index));
    shape_.multiprocessors = value;
    PARITY_GPU_CHECK(gpuDeviceGetAttribute(&value, gpuDevAttrMaxThreadsPerMultiProcessor, index));
    shape_.max_threads_per_multiprocessor = value;
    PARITY_GPU_CHECK(gpuMalloc(&partial_, kMaxDotBlocks * sizeof(double)));
    PARITY_GPU_CHECK(
        gpuHostAlloc(&partial_host_, kMaxDotBlocks * sizeof(double), gpuHostAllocDefault));
    device_ = index;
    return OpenVendor(index);
  }

  Result<void*> Allocate(std::size_t bytes, MemoryKind kind) override {
    PARITY_RETURN_IF_ERROR(Select());
    const std::size_t size = std::max<std::size_t>(bytes, 1);
    void* ptr = nullptr;
    switch (kind) {
      case MemoryKind::kDevice:
        PARITY_GPU_CHECK(gpuMalloc(&ptr, size));
        break;
      case MemoryKind::kHostPinned:
        PARITY_GPU_CHECK(gpuHostAlloc(&ptr, size, gpuHostAllocDefault));
        break;
      case MemoryKind::kHostPageable:
        ptr = std::aligned_alloc(64, (size + 63) / 64 * 64);
        if (ptr == nullptr) {
          return Status::Unavailable("cannot allocate " + std::to_string(bytes) +
                                     " bytes of host memory");
        }
        break;
    }
    return ptr;
  }

  void Free(void* ptr, MemoryKind kind) override {
    if (ptr == nullptr) return;
    // Queued work may still use the memory: wait for it first. Errors can't be returned here.
    if (device_ >= 0) (void)gpuSetDevice(device_);
    (void)gpuStreamSynchronize(stream_);
    switch (kind) {
      case MemoryKind::kDevice:
        (void)gpuFree(ptr);
        break;
      case MemoryKind::kHostPinned:
        (void)gpuFreeHost(ptr);
        break;
      case MemoryKind::kHostPageable:
        std::free(ptr);
        break;
    }
    (void)gpuGetLastError();
  }

  Status Copy(void* dst, MemoryKind, const void* src, MemoryKind, std::size_t bytes) override {
    if (bytes == 0) return Status::Ok();
    PARITY_RETURN_IF_ERROR(Select());
    PARITY_GPU_CHECK(gpuMemcpyAsync(dst, src, bytes, gpuMemcpyDefault, stream_));
    return Status::Ok();
  }

  Status Fill(void* dst, DType dtype, std::size_t n, double value) override {
    PARITY_RETURN_IF_ERROR(Select());
    if (dtype == DType::kFloat64) return LaunchFill(static_cast<double*>(dst), n, value);
    if (dtype == DType::kFloat32) {
      return LaunchFill(static_cast<float*>(dst), n, static_cast<float>(value));
    }
    return Unsupported("fill", dtype);
  }

  Status Stream(StreamOp op, DType dtype, void* a, void* b, void* c, std::size_t n,
                double scalar) override {
    PARITY_RETURN_IF_ERROR(Select());
    if (dtype == DType::kFloat64) {
      return LaunchStream(op, static_cast<double*>(a), static_cast<double*>(b),
                          static_cast<double*>(c), n, scalar);
    }
    if (dtype == DType::kFloat32) {
      return LaunchStream(op, static_cast<float*>(a), static_cast<float*>(b),
                          static_cast<float*>(c), n, static_cast<float>(scalar));
    }
    return Unsupported("stream kernels", dtype);
  }

  Result<double> Dot(DType dtype, const void* a, const void* b, std::size_t n) override {
    PARITY_RETURN_IF_ERROR(Select());
    if (dtype == DType::kFloat64) {
      return LaunchDot(static_cast<const double*>(a), static_cast<const double*>(b), n);
    }
    if (dtype == DType::kFloat32) {
      return LaunchDot(static_cast<const float*>(a), static_cast<const float*>(b), n);
    }
    return Unsupported("dot", dtype);
  }

  Status EmptyKernel() override {
    PARITY_RETURN_IF_ERROR(Select());
    return CheckLaunch("EmptyGpuKernel", LaunchEmpty(stream_));
  }

  Status Synchronize() override {
    PARITY_RETURN_IF_ERROR(Select());
    PARITY_GPU_CHECK(gpuStreamSynchronize(stream_));
    return Status::Ok();
  }

  Result<double> Time(const std::function<Status()>& work, Queuing queuing) override {
    PARITY_RETURN_IF_ERROR(Select());
    StreamQueue queue{*this};
    PARITY_ASSIGN_OR_RETURN(const double seconds, TimeOnQueue(queue, work, queuing));
    // Events resolve about half a microsecond; a zero would make rates infinite.
    return std::max(seconds, 1e-7);
  }

  Status WaitFor(Backend& other) override {
    auto* peer = dynamic_cast<GpuBackendBase*>(&other);
    if (peer == nullptr || peer->device_ < 0) return Backend::WaitFor(other);
    PARITY_RETURN_IF_ERROR(peer->Select());
    PARITY_GPU_CHECK(gpuEventRecord(peer->marker_, peer->stream_));
    PARITY_RETURN_IF_ERROR(Select());
    PARITY_GPU_CHECK(gpuStreamWaitEvent(stream_, peer->marker_, 0));
    return Status::Ok();
  }

  Result<bool> PeerAccess(int peer, bool enable) override {
    PARITY_ASSIGN_OR_RETURN(const int count, CountDevices());
    if (device_ < 0 || peer < 0 || peer >= count || peer == device_) {
      return Status::Unavailable(std::string(name()) + " backend: device " + std::to_string(peer) +
                                 " is not a peer of device " + std::to_string(device_) +
                                 " (it has " + std::to_string(count) + ")");
    }
    PARITY_RETURN_IF_ERROR(Select());
    int can = 0;
    PARITY_GPU_CHECK(gpuDeviceCanAccessPeer(&can, device_, peer));
    if (can == 0) return false;
    const gpuError_t error =
        enable ? gpuDeviceEnablePeerAccess(peer, 0) : gpuDeviceDisablePeerAccess(peer);
    // Turning on what is on (or off what is off) is no failure here.
    if (error == gpuErrorPeerAccessAlreadyEnabled || error == gpuErrorPeerAccessNotEnabled) {
      (void)gpuGetLastError();
    } else if (error != gpuSuccess) {
      return RuntimeError(enable ? "gpuDeviceEnablePeerAccess" : "gpuDeviceDisablePeerAccess",
                          error);
    }
    return true;
  }

  Status CopyToPeer(void* dst, int peer, const void* src, std::size_t bytes) override {
    if (bytes == 0) return Status::Ok();
    PARITY_RETURN_IF_ERROR(Select());
    PARITY_GPU_CHECK(gpuMemcpyPeerAsync(dst, peer, src, device_, bytes, stream_));
    return Status::Ok();
  }

 protected:
  /// "NVIDIA", "AMD".
  virtual const char* vendor() const = 0;
  /// Properties only this vendor's runtime or libraries have.
  virtual void AddVendorProperties(int index, const gpuDeviceProp& prop, Json& properties) = 0;
  /// Called at the end of Open(): libraries bound to stream_ (cuBLAS, rocBLAS handles).
  virtual Status OpenVendor(int index) = 0;

  /// Makes the opened device the calling thread's current one: several instances, each opened
  /// on its own device, may be used from one thread (the peer suite).
  Status Select() const {
    if (device_ >= 0) PARITY_GPU_CHECK(gpuSetDevice(device_));
    return Status::Ok();
  }

  Status Unsupported(std::string_view what, DType dtype) const {
    return Status::Unavailable(std::string(name()) + " backend: no " + std::string(what) + " for " +
                               std::string(Name(dtype)));
  }

  gpuStream_t stream_ = nullptr;
  DeviceShape shape_;
  int device_ = -1;

 private:
  template <typename T>
  Status LaunchFill(T* dst, std::size_t n, T value) {
    const StreamPlan plan = PlanStream(n, sizeof(T), {dst}, shape_);
    return CheckLaunch("FillKernel", gpu::LaunchFill(stream_, plan, dst, value));
  }

  template <typename T>
  Status LaunchStream(StreamOp op, T* a, T* b, T* c, std::size_t n, T scalar) {
    const StreamPlan plan = PlanStream(n, sizeof(T), {a, b, c}, shape_);
    return CheckLaunch("StreamKernel", gpu::LaunchStream(stream_, plan, op, a, b, c, scalar));
  }

  template <typename T>
  Result<double> LaunchDot(const T* a, const T* b, std::size_t n) {
    const StreamPlan plan = PlanDot(n, sizeof(T), a, b, shape_);
    if (plan.blocks == 0) return 0.0;
    PARITY_RETURN_IF_ERROR(
        CheckLaunch("DotKernel", gpu::LaunchDot(stream_, plan, a, b, static_cast<T*>(partial_))));
    PARITY_GPU_CHECK(gpuMemcpyAsync(partial_host_, partial_, plan.blocks * sizeof(T),
                                    gpuMemcpyDefault, stream_));
    PARITY_GPU_CHECK(gpuStreamSynchronize(stream_));
    // BabelStream sums the blocks' partial sums on the host, in T.
    T sum = 0;
    const T* host = static_cast<const T*>(partial_host_);
    for (uint32_t i = 0; i < plan.blocks; ++i) sum += host[i];
    return static_cast<double>(sum);
  }

  /// TimeOnQueue's queue (held_timing.h) on this instance's stream and events.
  struct StreamQueue {
    GpuBackendBase& b;

    Status Hold() {
      b.latch_[0] = 0;
      b.latch_[1] = 0;
      return CheckLaunch("SpinKernel",
                         LaunchSpin(b.stream_, b.latch_device_, b.latch_device_ + 1, kHoldTimeout));
    }
    Status RecordStart() {
      PARITY_GPU_CHECK(gpuEventRecord(b.start_, b.stream_));
      return Status::Ok();
    }
    Status RecordStop() {
      // `work` may have queued on another device's instance (the peer suite's both-ways copies).
      PARITY_RETURN_IF_ERROR(b.Select());
      PARITY_GPU_CHECK(gpuEventRecord(b.stop_, b.stream_));
      return Status::Ok();
    }
    Status Release() {
      __atomic_store_n(&b.latch_[0], 1, __ATOMIC_RELEASE);
      return Status::Ok();
    }
    Result<double> WaitElapsed() {
      PARITY_GPU_CHECK(gpuEventSynchronize(b.stop_));
      float ms = 0.0f;
      PARITY_GPU_CHECK(gpuEventElapsedTime(&ms, b.start_, b.stop_));
      return static_cast<double>(ms) * 1e-3;
    }
    Status CheckHold() {
      if (__atomic_load_n(&b.latch_[1], __ATOMIC_ACQUIRE) == 0) return Status::Ok();
      return Status::Internal(
          std::string(b.name()) + " backend: the queue was held for " +
          std::to_string(static_cast<int>(kHoldTimeout)) +
          " s without being released: the host blocked while it queued the timed work (a "
          "full queue, or a call that waits for the device), so the sample is not the device's");
    }
  };

  /// How long the spin kernel waits for the host before it gives up (nvbandwidth: 10 s).
  static constexpr double kHoldTimeout = 10.0;

  gpuEvent_t start_ = nullptr, stop_ = nullptr, marker_ = nullptr;
  int* latch_ = nullptr;
  int* latch_device_ = nullptr;
  void* partial_ = nullptr;
  void* partial_host_ = nullptr;
};

}  // namespace parity::bench::gpu

#endif  // PARITY_BENCH_GPU_BACKEND_GPU_H_
