// SPDX-License-Identifier: Apache-2.0
#include "bench/gpu/rocblas_loader.h"

#include <link.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <string_view>

#include "bench/gpu/gemm_args.h"
#include "core/dynlib.h"

namespace parity::bench::gpu {
namespace rocblas {

std::string StatusName(Status status) {
  static constexpr std::array<std::string_view, 16> kNames = {"rocblas_status_success",
                                                              "rocblas_status_invalid_handle",
                                                              "rocblas_status_not_implemented",
                                                              "rocblas_status_invalid_pointer",
                                                              "rocblas_status_invalid_size",
                                                              "rocblas_status_memory_error",
                                                              "rocblas_status_internal_error",
                                                              "rocblas_status_perf_degraded",
                                                              "rocblas_status_size_query_mismatch",
                                                              "rocblas_status_size_increased",
                                                              "rocblas_status_size_unchanged",
                                                              "rocblas_status_invalid_value",
                                                              "rocblas_status_continue",
                                                              "rocblas_status_check_numerics_fail",
                                                              "rocblas_status_excluded_from_build",
                                                              "rocblas_status_arch_mismatch"};
  if (status >= 0 && status < static_cast<int>(kNames.size())) {
    return std::string(kNames[static_cast<std::size_t>(status)]);
  }
  return "rocblas_status " + std::to_string(status);
}

}  // namespace rocblas

namespace {}  // namespace

parity::Status RocblasStatus(rocblas::Status status, std::string_view call) {
  if (status == rocblas::kSuccess) return parity::Status::Ok();
  std::string message = "rocBLAS: " + std::string(call) + " failed: " + rocblas::StatusName(status);
  switch (status) {
    case rocblas::kNotImplemented:
    case rocblas::kMemoryError:
    case rocblas::kExcludedFromBuild:
    case rocblas::kArchMismatch:
      return parity::Status::Unavailable(std::move(message) +
                                         " (this rocBLAS can't run it on this GPU)");
    default:
      return parity::Status::Internal(std::move(message));
  }
}

namespace {

parity::Status Check(rocblas::Status status, std::string_view call) {
  return RocblasStatus(status, call);
}

}  // namespace

std::vector<std::string> LoadedHipRuntimes() {
  std::vector<std::string> found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        const std::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        const std::size_t slash = name.rfind('/');
        const std::string_view base = name.substr(slash == std::string_view::npos ? 0 : slash + 1);
        if (base.rfind("libamdhip64.so", 0) != 0) return 0;
        char real[PATH_MAX];
        const std::string path(name);
        auto* out = static_cast<std::vector<std::string>*>(data);
        out->push_back(realpath(path.c_str(), real) != nullptr ? std::string(real) : path);
        return 0;
      },
      &found);
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

parity::Status CheckOneHipRuntime(const std::vector<std::string>& runtimes,
                                  const std::string& rocblas_path) {
  if (runtimes.size() <= 1) return parity::Status::Ok();
  std::string names;
  for (const std::string& r : runtimes) names += (names.empty() ? "" : " and ") + r;
  return parity::Status::Unavailable(
      rocblas_path + " brought a second HIP runtime into the process (" + names +
      "): the plugin's streams are not that runtime's; build the hip plugin against the ROCm "
      "this rocBLAS belongs to (PARITY_HIPCC, PARITY_AMDHIP64) or point PARITY_ROCBLAS_LIBRARY "
      "at a rocBLAS of the plugin's ROCm");
}

Result<std::shared_ptr<RocblasLibrary>> RocblasLibrary::Load() {
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("PARITY_ROCBLAS_LIBRARY"); path != nullptr && *path != '\0') {
    candidates.emplace_back(path);
  } else {
    for (const char* name :
         {"librocblas.so.5", "librocblas.so.4", "librocblas.so.0", "librocblas.so"}) {
      candidates.emplace_back(name);
      candidates.push_back(std::string("/opt/rocm/lib/") + name);
    }
  }
  std::string tried;
  for (const std::string& candidate : candidates) {
    Result<std::shared_ptr<RocblasLibrary>> library = LoadFrom(candidate);
    if (library.ok()) {
      PARITY_RETURN_IF_ERROR(CheckOneHipRuntime(LoadedHipRuntimes(), candidate));
      return library;
    }
    // A library that loads but lacks a call parity makes is the answer, not the next candidate.
    if (library.status().message().find("lacks") != std::string::npos) return library.status();
    tried += (tried.empty() ? "" : "; ") + library.status().message();
  }
  return parity::Status::Unavailable("rocBLAS not found (" + tried + ")");
}

Result<std::shared_ptr<RocblasLibrary>> RocblasLibrary::LoadFrom(const std::string& path) {
  // Kept loaded for the life of the process, as the plugins are: handles outlive any scope.
  Result<void*> opened = parity::OpenLibrary(path);
  if (!opened.ok()) return opened.status();
  auto lib = std::make_shared<RocblasLibrary>();
  lib->library_ = *opened;
  lib->path_ = path;
  parity::SymbolResolver symbols(*opened, path);
  symbols.Require({"rocblas_create_handle"}, &lib->create_);
  symbols.Require({"rocblas_destroy_handle"}, &lib->destroy_);
  symbols.Require({"rocblas_set_stream"}, &lib->set_stream_);
  symbols.Require({"rocblas_sgemm"}, &lib->sgemm_);
  symbols.Require({"rocblas_dgemm"}, &lib->dgemm_);
  symbols.Require({"rocblas_gemm_ex"}, &lib->gemm_ex_);
  if (!symbols.missing().empty()) {
    return parity::Status::Unavailable(path + " lacks " + symbols.missing() +
                                       ", which parity calls");
  }
  VersionSizeFn version_size = nullptr;
  VersionFn version = nullptr;
  std::size_t size = 0;
  if (symbols.Optional({"rocblas_get_version_string_size"}, &version_size) != nullptr &&
      symbols.Optional({"rocblas_get_version_string"}, &version) != nullptr &&
      version_size(&size) == rocblas::kSuccess && size > 0 && size < 4096) {
    std::string text(size, '\0');
    if (version(text.data(), size) == rocblas::kSuccess) {
      text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
      lib->version_ = text;
    }
  }
  return lib;
}

Result<std::shared_ptr<void>> RocblasLibrary::CreateHandle(void* stream) const {
  rocblas::Handle handle = nullptr;
  PARITY_RETURN_IF_ERROR(Check(create_(&handle), "rocblas_create_handle"));
  std::shared_ptr<void> owned(handle, [destroy = destroy_](void* h) { destroy(h); });
  PARITY_RETURN_IF_ERROR(Check(set_stream_(handle, stream), "rocblas_set_stream"));
  return owned;
}

parity::Status RocblasLibrary::Gemm(void* handle, DType dtype, int64_t m, int64_t n, int64_t k,
                                    const void* a, const void* b, void* c) const {
  const ColumnMajorGemm g = FromRowMajor(m, n, k, a, b, c);
  if (!g.FitsInt32()) {
    return parity::Status::Unavailable("rocBLAS takes 32-bit dimensions; this GEMM has more");
  }
  const auto gm = static_cast<int32_t>(g.m), gn = static_cast<int32_t>(g.n),
             gk = static_cast<int32_t>(g.k), lda = static_cast<int32_t>(g.lda),
             ldb = static_cast<int32_t>(g.ldb), ldc = static_cast<int32_t>(g.ldc);
  const int none = rocblas::kOperationNone;
  switch (dtype) {
    case DType::kFloat64: {
      const double one = 1.0, zero = 0.0;
      return Check(
          dgemm_(handle, none, none, gm, gn, gk, &one, static_cast<const double*>(g.a), lda,
                 static_cast<const double*>(g.b), ldb, &zero, static_cast<double*>(g.c), ldc),
          "rocblas_dgemm");
    }
    case DType::kFloat32: {
      const float one = 1.0f, zero = 0.0f;
      return Check(
          sgemm_(handle, none, none, gm, gn, gk, &one, static_cast<const float*>(g.a), lda,
                 static_cast<const float*>(g.b), ldb, &zero, static_cast<float*>(g.c), ldc),
          "rocblas_sgemm");
    }
    case DType::kFloat16:
    case DType::kBFloat16: {
      const int type = dtype == DType::kFloat16 ? rocblas::kDatatypeF16 : rocblas::kDatatypeBF16;
      const float one = 1.0f, zero = 0.0f;  // alpha and beta in the compute type
      return Check(gemm_ex_(handle, none, none, gm, gn, gk, &one, g.a, type, lda, g.b, type, ldb,
                            &zero, g.c, type, ldc, g.c, type, ldc, rocblas::kDatatypeF32,
                            rocblas::kGemmAlgoStandard, 0, 0),
                   "rocblas_gemm_ex");
    }
    default:
      return parity::Status::Unavailable(std::string("rocBLAS: no GEMM for ") +
                                         std::string(Name(dtype)));
  }
}

std::string RocblasLibrary::Describe(DType dtype) const {
  std::string call;
  if (dtype == DType::kFloat64) call = "rocblas_dgemm";
  if (dtype == DType::kFloat32) call = "rocblas_sgemm";
  if (dtype == DType::kFloat16) call = "rocblas_gemm_ex f16_r, compute f32_r";
  if (dtype == DType::kBFloat16) call = "rocblas_gemm_ex bf16_r, compute f32_r";
  if (call.empty()) return "";
  return "rocBLAS " + (version_.empty() ? std::string("(version unknown)") : version_) + " " +
         call + " (" + path_ + ")";
}

}  // namespace parity::bench::gpu
