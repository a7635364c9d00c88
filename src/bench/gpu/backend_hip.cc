// SPDX-License-Identifier: Apache-2.0
// The hip backend plugin (libparity_backend_hip.so), compiled by hipcc: the shared GPU backend
// (bench/gpu/backend_gpu.h) on the HIP runtime; GEMM through rocBLAS, loaded with dlopen when
// present (bench/gpu/rocblas_loader.h), otherwise parity's tiled kernel, and the result names
// which; the Philox fill with Random123's Philox4x32-10, the bijection cuRAND and rocRAND share
// (both kernels in launchers.cu). Host code, compiled by the host compiler.
#include <memory>
#include <string>

#include "bench/gpu/backend_gpu.h"
#include "bench/gpu/rocblas_loader.h"

namespace parity::bench::gpu {
namespace {

class HipBackend final : public GpuBackendBase {
 public:
  HipBackend() {
    Result<std::shared_ptr<RocblasLibrary>> library = RocblasLibrary::Load();
    if (library.ok()) {
      rocblas_ = std::move(library).value();
    } else {
      rocblas_missing_ = library.status().message();
    }
  }

  ~HipBackend() override {
    if (!handle_) return;
    // rocblas_destroy_handle on this instance's device, which another instance may have left
    // current (the peer suite opens one per device).
    (void)Select();
    handle_.reset();
  }

  std::string_view name() const override { return "hip"; }

  Status Gemm(DType dtype, GemmMath math, int64_t m, int64_t n, int64_t k, const void* a,
              const void* b, void* c) override {
    PARITY_RETURN_IF_ERROR(Select());
    if (math == GemmMath::kTf32) {
      return Status::Unavailable(
          "hip backend: no TF32 GEMM (TF32 is NVIDIA's tensor-core format; MI300's XF32 is "
          "reached through hipBLASLt, which parity does not call)");
    }
    if (handle_) {
      PARITY_RETURN_IF_ERROR(rocblas_->Gemm(handle_.get(), dtype, m, n, k, a, b, c));
      return CheckLaunch("rocBLAS GEMM", gpuGetLastError());
    }
    TiledGemmType type;
    switch (dtype) {
      case DType::kFloat64:
        type = TiledGemmType::kFloat64;
        break;
      case DType::kFloat32:
        type = TiledGemmType::kFloat32;
        break;
      case DType::kFloat16:
        type = TiledGemmType::kFloat16;
        break;
      case DType::kBFloat16:
        type = TiledGemmType::kBFloat16;
        break;
      default:
        return Unsupported("GEMM", dtype);
    }
    if (PlanTiledGemm(m, n).y > 65535) {
      return Status::Unavailable("tiled GEMM: more than 65535 row tiles");
    }
    return CheckLaunch("TiledGemmKernel", LaunchTiledGemm(stream_, type, m, n, k, a, b, c));
  }

  std::string GemmImplementation(DType dtype, GemmMath math) override {
    if (math == GemmMath::kTf32) return "";
    if (rocblas_ != nullptr) return rocblas_->Describe(dtype);
    return "parity tiled HIP kernel (" + std::to_string(kGemmTile) + "x" +
           std::to_string(kGemmTile) + " tiles, float32 sums for 16-bit types; " +
           rocblas_missing_ + ")";
  }

  Status PhiloxUniform(float* out, std::size_t n, uint64_t seed, uint64_t offset) override {
    if (offset % 4 != 0) {
      return Status::Internal("Philox offset " + std::to_string(offset) +
                              " is not a multiple of 4");
    }
    PARITY_RETURN_IF_ERROR(Select());
    const PhiloxPlan plan = PlanPhilox(n, offset, out, shape_);
    return CheckLaunch("PhiloxKernel", LaunchPhilox(stream_, plan, out, seed));
  }

 protected:
  const char* vendor() const override { return "AMD"; }

  void AddVendorProperties(int, const gpuDeviceProp& prop, Json& p) override {
    p["gcn_arch"] = prop.gcnArchName;
    if (rocblas_ != nullptr) {
      p["blas"] = {
          {"name", "rocBLAS"}, {"version", rocblas_->version()}, {"path", rocblas_->path()}};
    } else {
      p["blas"] = {{"name", "parity tiled HIP kernel"}, {"why", rocblas_missing_}};
    }
    p["rng"] = "Random123 Philox4x32-10 (cuRAND's stream layout)";
  }

  Status OpenVendor(int) override {
    if (rocblas_ == nullptr) return Status::Ok();
    PARITY_ASSIGN_OR_RETURN(handle_, rocblas_->CreateHandle(stream_));
    return Status::Ok();
  }

 private:
  std::shared_ptr<RocblasLibrary> rocblas_;
  std::string rocblas_missing_;
  std::shared_ptr<void> handle_;
};

}  // namespace
}  // namespace parity::bench::gpu

extern "C" __attribute__((visibility("default"))) int parity_backend_abi_version() {
  return parity::bench::kBackendAbiVersion;
}

extern "C" __attribute__((visibility("default"))) parity::bench::Backend* parity_backend_create(
    std::string* error) {
  parity::Result<int> count = parity::bench::gpu::CountDevices();
  if (!count.ok()) {
    *error = count.status().message();
    if (count.status().message().find("hipErrorNoDevice") != std::string::npos) {
      *error += " (no AMD GPU is visible here: /dev/kfd is missing or not accessible)";
    }
    return nullptr;
  }
  return new parity::bench::gpu::HipBackend();
}
