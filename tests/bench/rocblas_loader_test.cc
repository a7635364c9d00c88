// SPDX-License-Identifier: Apache-2.0
// The hip plugin's rocBLAS loader against a fake of rocBLAS's C ABI (fake_rocblas.cc): symbols
// resolved, the version read, row-major GEMMs mapped onto column-major calls correctly for
// float64, float32 and float16, failures named by their rocblas_status, handles destroyed, and
// a library without a call parity makes refused with that call's name.
#include "bench/gpu/rocblas_loader.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/float_format.h"

namespace parity::bench::gpu {
namespace {

std::string FakePath(const char* name) { return std::string(PARITY_TEST_PLUGINS) + "/" + name; }

template <typename T>
std::vector<T> RowMajorProduct(int64_t m, int64_t n, int64_t k, const std::vector<T>& a,
                               const std::vector<T>& b) {
  std::vector<T> c(m * n, T(0));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p) c[i * n + j] += a[i * k + p] * b[p * n + j];
    }
  }
  return c;
}

TEST(RocblasLoader, LoadsTheFakeAndReadsItsVersion) {
  auto lib = RocblasLibrary::LoadFrom(FakePath("libfake_rocblas.so"));
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  EXPECT_EQ((*lib)->version(), "9.8.7.fake");
  EXPECT_NE((*lib)->Describe(DType::kFloat32).find("rocBLAS 9.8.7.fake rocblas_sgemm"),
            std::string::npos);
  EXPECT_NE((*lib)->Describe(DType::kBFloat16).find("bf16_r, compute f32_r"), std::string::npos);
  EXPECT_EQ((*lib)->Describe(DType::kInt8), "");
}

TEST(RocblasLoader, RowMajorProductsForEachDtype) {
  auto lib = RocblasLibrary::LoadFrom(FakePath("libfake_rocblas.so"));
  ASSERT_TRUE(lib.ok()) << lib.status().message();
  auto open = reinterpret_cast<int (*)()>(
      dlsym(dlopen(FakePath("libfake_rocblas.so").c_str(), RTLD_NOW), "fake_rocblas_open_handles"));
  ASSERT_NE(open, nullptr);
  {
    auto handle = (*lib)->CreateHandle(nullptr);
    ASSERT_TRUE(handle.ok()) << handle.status().message();
    EXPECT_EQ(open(), 1);
    const int64_t m = 3, n = 5, k = 4;  // a swapped dimension or operand changes the product
    std::vector<double> a(m * k), b(k * n);
    for (int64_t i = 0; i < m * k; ++i) a[i] = double(i % 5) - 2.0;
    for (int64_t i = 0; i < k * n; ++i) b[i] = double(i % 3) + 1.0;
    const std::vector<double> want = RowMajorProduct(m, n, k, a, b);

    std::vector<double> c(m * n, -1.0);
    ASSERT_TRUE(
        (*lib)->Gemm(handle->get(), DType::kFloat64, m, n, k, a.data(), b.data(), c.data()).ok());
    EXPECT_EQ(c, want);

    std::vector<float> fa(a.begin(), a.end()), fb(b.begin(), b.end()), fc(m * n, -1.0f);
    ASSERT_TRUE((*lib)
                    ->Gemm(handle->get(), DType::kFloat32, m, n, k, fa.data(), fb.data(), fc.data())
                    .ok());
    for (int64_t i = 0; i < m * n; ++i) EXPECT_EQ(fc[i], float(want[i])) << i;

    std::vector<uint16_t> ha(m * k), hb(k * n), hc(m * n, 0xFFFF);
    for (int64_t i = 0; i < m * k; ++i) ha[i] = DoubleToHalf(a[i]);
    for (int64_t i = 0; i < k * n; ++i) hb[i] = DoubleToHalf(b[i]);
    ASSERT_TRUE((*lib)
                    ->Gemm(handle->get(), DType::kFloat16, m, n, k, ha.data(), hb.data(), hc.data())
                    .ok());
    for (int64_t i = 0; i < m * n; ++i) EXPECT_EQ(HalfToFloat(hc[i]), float(want[i])) << i;

    // The fake's gemm_ex has float16 only: bfloat16 reaches it as type 168 and is refused.
    const Status bf16 =
        (*lib)->Gemm(handle->get(), DType::kBFloat16, m, n, k, ha.data(), hb.data(), hc.data());
    // Not implemented is a SKIP with the reason, not an internal error.
    EXPECT_EQ(bf16.code(), StatusCode::kUnavailable);
    EXPECT_NE(bf16.message().find("rocblas_gemm_ex failed: rocblas_status_not_implemented"),
              std::string::npos)
        << bf16.message();

    // Column-major m is the row-major n: 13 columns make the fake's sgemm fail.
    std::vector<float> big(13 * 13);
    const Status failed =
        (*lib)->Gemm(handle->get(), DType::kFloat32, 2, 13, 2, big.data(), big.data(), big.data());
    EXPECT_NE(failed.message().find("rocblas_sgemm failed: rocblas_status_invalid_size"),
              std::string::npos)
        << failed.message();
    EXPECT_EQ(failed.code(), StatusCode::kInternal);
    // 14 columns: the fake answers rocblas_status_arch_mismatch (15), a SKIP with the reason.
    const Status arch =
        (*lib)->Gemm(handle->get(), DType::kFloat32, 2, 14, 2, big.data(), big.data(), big.data());
    EXPECT_EQ(arch.code(), StatusCode::kUnavailable);
    EXPECT_NE(arch.message().find("rocblas_sgemm failed: rocblas_status_arch_mismatch"),
              std::string::npos)
        << arch.message();
    EXPECT_EQ(
        (*lib)->Gemm(handle->get(), DType::kInt32, 2, 2, 2, a.data(), a.data(), c.data()).code(),
        StatusCode::kUnavailable);
    EXPECT_EQ((*lib)
                  ->Gemm(handle->get(), DType::kFloat32, int64_t{1} << 31, 2, 2, a.data(), a.data(),
                         c.data())
                  .code(),
              StatusCode::kUnavailable);
  }
  EXPECT_EQ(open(), 0);  // the handle was destroyed with its owner
}

TEST(RocblasLoader, LibraryWithoutGemmExIsRefusedByName) {
  auto lib = RocblasLibrary::LoadFrom(FakePath("libfake_rocblas_incomplete.so"));
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(lib.status().message().find("lacks rocblas_gemm_ex, which parity calls"),
            std::string::npos)
      << lib.status().message();
}

TEST(RocblasLoader, SearchHonoursTheEnvironmentAndSaysWhatItTried) {
  setenv("PARITY_ROCBLAS_LIBRARY", FakePath("libfake_rocblas.so").c_str(), 1);
  auto found = RocblasLibrary::Load();
  EXPECT_TRUE(found.ok()) << found.status().message();
  setenv("PARITY_ROCBLAS_LIBRARY", "/nonexistent/librocblas.so.4", 1);
  auto missing = RocblasLibrary::Load();
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("rocBLAS not found ("), std::string::npos);
  EXPECT_NE(missing.status().message().find("/nonexistent/librocblas.so.4"), std::string::npos);
  unsetenv("PARITY_ROCBLAS_LIBRARY");
  EXPECT_EQ(rocblas::StatusName(4), "rocblas_status_invalid_size");
  EXPECT_EQ(rocblas::StatusName(99), "rocblas_status 99");
  EXPECT_EQ(rocblas::StatusName(15), "rocblas_status_arch_mismatch");
}

TEST(RocblasLoader, TwoHipRuntimesInOneProcessAreRefused) {
  EXPECT_TRUE(CheckOneHipRuntime({}, "librocblas.so.4").ok());
  EXPECT_TRUE(CheckOneHipRuntime({"/opt/rocm/lib/libamdhip64.so.6"}, "librocblas.so.4").ok());
  const Status two = CheckOneHipRuntime({"/opt/rocm-6.2.0/lib/libamdhip64.so.6.2.60200",
                                         "/usr/lib/x86_64-linux-gnu/libamdhip64.so.5"},
                                        "/opt/rocm/lib/librocblas.so.4");
  EXPECT_EQ(two.code(), StatusCode::kUnavailable);
  EXPECT_NE(two.message().find("second HIP runtime"), std::string::npos) << two.message();
  EXPECT_NE(two.message().find("libamdhip64.so.5"), std::string::npos) << two.message();
  // This process holds at most the hip plugin's runtime (its tests load it); never two.
  EXPECT_LE(LoadedHipRuntimes().size(), 1u);
}

TEST(RocblasLoader, StatusesThatMeanThisGpuCannotAreUnavailable) {
  EXPECT_TRUE(RocblasStatus(rocblas::kSuccess, "rocblas_sgemm").ok());
  for (const rocblas::Status status : {rocblas::kNotImplemented, rocblas::kMemoryError,
                                       rocblas::kExcludedFromBuild, rocblas::kArchMismatch}) {
    const Status s = RocblasStatus(status, "rocblas_gemm_ex");
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.message();
    EXPECT_NE(s.message().find(rocblas::StatusName(status)), std::string::npos) << s.message();
  }
  for (const rocblas::Status status : {1, 3, 4, 6, 11, 99}) {
    EXPECT_EQ(RocblasStatus(status, "rocblas_sgemm").code(), StatusCode::kInternal) << status;
  }
}

}  // namespace
}  // namespace parity::bench::gpu
