// SPDX-License-Identifier: Apache-2.0
// rocBLAS loaded with dlopen: its C API declared here (rocblas-types.h's values), so the hip
// plugin builds without rocBLAS's headers and runs where the library is missing (GEMM then falls
// back to parity's tiled kernel, and the result says so). Plain C++: tests load a fake rocBLAS.
#ifndef PARITY_BENCH_GPU_ROCBLAS_LOADER_H_
#define PARITY_BENCH_GPU_ROCBLAS_LOADER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bench/backend.h"
#include "core/status.h"

namespace parity::bench::gpu {

/// rocblas-types.h's values (rocBLAS 2.x through 4.x; the numbering follows CBLAS).
namespace rocblas {
using Handle = void*;
using Status = int;  // rocblas_status
inline constexpr Status kSuccess = 0;
inline constexpr Status kNotImplemented = 2;
inline constexpr Status kMemoryError = 5;
inline constexpr Status kExcludedFromBuild = 14;
inline constexpr Status kArchMismatch = 15;
inline constexpr int kOperationNone = 111;
inline constexpr int kDatatypeF16 = 150;
inline constexpr int kDatatypeF32 = 151;
inline constexpr int kDatatypeF64 = 152;
inline constexpr int kDatatypeBF16 = 168;
inline constexpr int kGemmAlgoStandard = 0;
/// rocblas_status's name ("rocblas_status_invalid_size"), or "rocblas_status <code>".
std::string StatusName(Status status);
}  // namespace rocblas

/// A rocblas_status from `call` as a Status: Ok for success; kUnavailable (the benchmark is
/// skipped with the reason) where this rocBLAS can't do it on this GPU — not implemented,
/// excluded from the build, architecture mismatch, out of device memory; kInternal otherwise.
parity::Status RocblasStatus(rocblas::Status status, std::string_view call);

/// The distinct HIP runtimes (libamdhip64.so*) this process has loaded, by real path.
std::vector<std::string> LoadedHipRuntimes();
/// Ok when `runtimes` (LoadedHipRuntimes() after loading `rocblas_path`) holds at most one;
/// else kUnavailable naming them: a hipStream_t of one runtime handed to a rocBLAS bound to the
/// other is not a stream there (Debian's libamdhip64.so.5 beside ROCm 6's .so.6).
parity::Status CheckOneHipRuntime(const std::vector<std::string>& runtimes,
                                  const std::string& rocblas_path);

/// The rocBLAS library, loaded once: the calls parity makes, resolved by name.
class RocblasLibrary {
 public:
  /// Loads the first of: $PARITY_ROCBLAS_LIBRARY (a path), librocblas.so.5, .so.4, .so.0,
  /// librocblas.so, each also under /opt/rocm/lib. kUnavailable with every attempt's dlerror
  /// when none loads, with the symbol's name when one that parity calls is missing, or when
  /// the library brought a second HIP runtime into the process (CheckOneHipRuntime).
  static Result<std::shared_ptr<RocblasLibrary>> Load();
  /// The same for one path (tests).
  static Result<std::shared_ptr<RocblasLibrary>> LoadFrom(const std::string& path);

  const std::string& path() const { return path_; }
  /// rocblas_get_version_string, e.g. "4.2.0.1a2b3c"; empty when the library doesn't say.
  const std::string& version() const { return version_; }

  /// A handle bound to `stream` (a hipStream_t), destroyed with the returned object.
  Result<std::shared_ptr<void>> CreateHandle(void* stream) const;

  /// C = A·B row-major (A m×k, B k×n, C m×n) of `dtype` on the handle's stream: float64 and
  /// float32 with rocblas_dgemm/sgemm, float16 and bfloat16 with rocblas_gemm_ex and float32
  /// compute. kUnavailable for other dtypes and dimensions past 32 bits; a failed call as
  /// RocblasStatus maps it, with the rocblas_status name.
  parity::Status Gemm(void* handle, DType dtype, int64_t m, int64_t n, int64_t k, const void* a,
                      const void* b, void* c) const;
  /// "rocBLAS <version> rocblas_sgemm" and the like: what Gemm calls for `dtype`.
  std::string Describe(DType dtype) const;

 private:
  using CreateFn = rocblas::Status (*)(rocblas::Handle*);
  using DestroyFn = rocblas::Status (*)(rocblas::Handle);
  using SetStreamFn = rocblas::Status (*)(rocblas::Handle, void*);
  using SgemmFn = rocblas::Status (*)(rocblas::Handle, int, int, int32_t, int32_t, int32_t,
                                      const float*, const float*, int32_t, const float*, int32_t,
                                      const float*, float*, int32_t);
  using DgemmFn = rocblas::Status (*)(rocblas::Handle, int, int, int32_t, int32_t, int32_t,
                                      const double*, const double*, int32_t, const double*, int32_t,
                                      const double*, double*, int32_t);
  using GemmExFn = rocblas::Status (*)(rocblas::Handle, int, int, int32_t, int32_t, int32_t,
                                       const void*, const void*, int, int32_t, const void*, int,
                                       int32_t, const void*, const void*, int, int32_t, void*, int,
                                       int32_t, int, int, int32_t, uint32_t);
  using VersionSizeFn = rocblas::Status (*)(std::size_t*);
  using VersionFn = rocblas::Status (*)(char*, std::size_t);

  void* library_ = nullptr;
  std::string path_;
  std::string version_;
  CreateFn create_ = nullptr;
  DestroyFn destroy_ = nullptr;
  SetStreamFn set_stream_ = nullptr;
  SgemmFn sgemm_ = nullptr;
  DgemmFn dgemm_ = nullptr;
  GemmExFn gemm_ex_ = nullptr;
};

}  // namespace parity::bench::gpu

#endif  // PARITY_BENCH_GPU_ROCBLAS_LOADER_H_
