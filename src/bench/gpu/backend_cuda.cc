// SPDX-License-Identifier: Apache-2.0
// The cuda backend plugin (libparity_backend_cuda.so): the shared GPU backend
// (bench/gpu/backend_gpu.h) on the CUDA runtime, GEMM through cuBLAS (cublasGemmEx; tensor-op
// math for tf32, float16 and bfloat16), the Philox fill through cuRAND's own Philox4x32-10
// bijection (curand_Philox4x32_10, in launchers.cu). Host code; the CUDA runtime is linked
// statically, so the plugin needs only the driver (libcuda.so.1) and cuBLAS at run time.
#include <cublas_v2.h>

#include <string>

#include "bench/gpu/backend_gpu.h"
#include "bench/gpu/gemm_args.h"

namespace parity::bench::gpu {
namespace {

const char* CublasStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "CUBLAS_STATUS_LICENSE_ERROR";
    default:
      return "cublasStatus_t (unknown)";
  }
}

Status CublasCheck(cublasStatus_t status, std::string_view call) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  std::string message = "cuBLAS: " + std::string(call) + " failed: " + CublasStatusName(status) +
                        " (" + std::to_string(static_cast<int>(status)) + ")";
  if (status == CUBLAS_STATUS_NOT_SUPPORTED || status == CUBLAS_STATUS_ARCH_MISMATCH) {
    return Status::Unavailable(std::move(message));
  }
  return Status::Internal(std::move(message));
}

/// cublasGemmEx's types for a dtype and math: storage type of A, B, C and the compute type.
struct CublasTypes {
  cudaDataType_t storage;
  cublasComputeType_t compute;
  const char* compute_name;
};

bool TypesFor(DType dtype, GemmMath math, CublasTypes* out) {
  if (math == GemmMath::kTf32) {
    if (dtype != DType::kFloat32) return false;
    *out = {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, "CUBLAS_COMPUTE_32F_FAST_TF32"};
    return true;
  }
  switch (dtype) {
    case DType::kFloat64:
      *out = {CUDA_R_64F, CUBLAS_COMPUTE_64F, "CUBLAS_COMPUTE_64F"};
      return true;
    case DType::kFloat32:
      // CUBLAS_COMPUTE_32F is true float32 (no TF32 down-conversion).
      *out = {CUDA_R_32F, CUBLAS_COMPUTE_32F, "CUBLAS_COMPUTE_32F"};
      return true;
    case DType::kFloat16:
      *out = {CUDA_R_16F, CUBLAS_COMPUTE_32F, "CUDA_R_16F, CUBLAS_COMPUTE_32F"};
      return true;
    case DType::kBFloat16:
      *out = {CUDA_R_16BF, CUBLAS_COMPUTE_32F, "CUDA_R_16BF, CUBLAS_COMPUTE_32F"};
      return true;
    default:
      return false;
  }
}

class CudaBackend final : public GpuBackendBase {
 public:
  ~CudaBackend() override {
    if (cublas_ == nullptr) return;
    // The handle belongs to this instance's device; another instance may have made its own
    // device current since (the peer suite opens one per device).
    (void)Select();
    cublasDestroy(cublas_);
  }

  std::string_view name() const override { return "cuda"; }

  Status Gemm(DType dtype, GemmMath math, int64_t m, int64_t n, int64_t k, const void* a,
              const void* b, void* c) override {
    PARITY_RETURN_IF_ERROR(Select());
    CublasTypes types;
    if (!TypesFor(dtype, math, &types)) {
      return Status::Unavailable(std::string("cuda backend: no GEMM for ") +
                                 (math == GemmMath::kTf32 ? "tf32 on " : "") +
                                 std::string(Name(dtype)));
    }
    const ColumnMajorGemm g = FromRowMajor(m, n, k, a, b, c);
    if (!g.FitsInt32()) {
      return Status::Unavailable("cublasGemmEx takes 32-bit dimensions; this GEMM has more");
    }
    // alpha and beta in the compute type's scalar type.
    const double one64 = 1.0, zero64 = 0.0;
    const float one32 = 1.0f, zero32 = 0.0f;
    const bool f64 = dtype == DType::kFloat64;
    PARITY_RETURN_IF_ERROR(CublasCheck(
        cublasGemmEx(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(g.m),
                     static_cast<int>(g.n), static_cast<int>(g.k),
                     f64 ? static_cast<const void*>(&one64) : &one32, g.a, types.storage,
                     static_cast<int>(g.lda), g.b, types.storage, static_cast<int>(g.ldb),
                     f64 ? static_cast<const void*>(&zero64) : &zero32, g.c, types.storage,
                     static_cast<int>(g.ldc), types.compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx"));
    return CheckLaunch("cublasGemmEx", gpuGetLastError());
  }

  std::string GemmImplementation(DType dtype, GemmMath math) override {
    CublasTypes types;
    if (!TypesFor(dtype, math, &types)) return "";
    return "cuBLAS " + cublas_version_ + " cublasGemmEx " + types.compute_name;
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
  const char* vendor() const override { return "NVIDIA"; }

  void AddVendorProperties(int, const gpuDeviceProp& prop, Json& p) override {
    p["compute_capability"] = std::to_string(prop.major) + "." + std::to_string(prop.minor);
    char uuid[64];
    const auto* u = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
    std::snprintf(uuid, sizeof uuid,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                  u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                  u[14], u[15]);
    p["uuid"] = uuid;
    int version = 0;
    if (cublasGetProperty(MAJOR_VERSION, &version) == CUBLAS_STATUS_SUCCESS) {
      int minor = 0, patch = 0;
      cublasGetProperty(MINOR_VERSION, &minor);
      cublasGetProperty(PATCH_LEVEL, &patch);
      p["blas"] = {{"name", "cuBLAS"},
                   {"version", std::to_string(version) + "." + std::to_string(minor) + "." +
                                   std::to_string(patch)}};
    }
    p["rng"] = "cuRAND Philox4x32-10 (curand_Philox4x32_10 of CUDA " +
               std::to_string(CUDART_VERSION / 1000) + "." +
               std::to_string(CUDART_VERSION % 1000 / 10) + "'s curand_kernel.h)";
  }

  Status OpenVendor(int) override {
    PARITY_RETURN_IF_ERROR(CublasCheck(cublasCreate(&cublas_), "cublasCreate"));
    PARITY_RETURN_IF_ERROR(CublasCheck(cublasSetStream(cublas_, stream_), "cublasSetStream"));
    int major = 0, minor = 0, patch = 0;
    cublasGetProperty(MAJOR_VERSION, &major);
    cublasGetProperty(MINOR_VERSION, &minor);
    cublasGetProperty(PATCH_LEVEL, &patch);
    cublas_version_ =
        std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    return Status::Ok();
  }

 private:
  cublasHandle_t cublas_ = nullptr;
  std::string cublas_version_;
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
    if (count.status().message().find("(35)") != std::string::npos) {
      *error += " (no NVIDIA driver is loaded here, or it is older than this CUDA runtime needs)";
    }
    return nullptr;
  }
  return new parity::bench::gpu::CudaBackend();
}
