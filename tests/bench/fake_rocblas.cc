// SPDX-License-Identifier: Apache-2.0
// A fake of rocBLAS's C ABI, built as libfake_rocblas.so for the loader's tests: the calls the
// hip plugin makes, computing column-major GEMMs on host memory as rocBLAS does on the device,
// so a wrong operand order, leading dimension or type code shows as a wrong product. Built
// again with FAKE_ROCBLAS_INCOMPLETE (no rocblas_gemm_ex) as libfake_rocblas_incomplete.so.
// rocblas_sgemm answers rocblas_status_invalid_size (4) when m is 13, as a failing call, and
// rocblas_status_arch_mismatch (15) when m is 14, as on a GPU its kernels don't cover.
#include <cstdint>
#include <cstring>

namespace {

int handles = 0;

[[maybe_unused]] float HalfBitsToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h >> 15) << 31;
  const int exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        mant <<= 1;
        ++e;
      } while ((mant & 0x400) == 0);
      bits = sign | uint32_t(127 - 15 - e) << 23 | (mant & 0x3FF) << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | mant << 13;
  } else {
    bits = sign | uint32_t(exp - 15 + 127) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename Load, typename Store>
void Gemm(int m, int n, int k, const void* a, int lda, const void* b, int ldb, void* c, int ldc,
          Load load, Store store) {
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      double sum = 0.0;
      for (int p = 0; p < k; ++p) sum += load(a, i + p * lda) * load(b, p + j * ldb);
      store(c, i + j * ldc, sum);
    }
  }
}

}  // namespace

extern "C" {

int rocblas_create_handle(void** handle) {
  *handle = &handles;
  ++handles;
  return 0;
}
int rocblas_destroy_handle(void*) {
  --handles;
  return 0;
}
int rocblas_set_stream(void*, void*) { return 0; }
int rocblas_get_version_string_size(std::size_t* size) {
  *size = std::strlen("9.8.7.fake") + 1;
  return 0;
}
int rocblas_get_version_string(char* buffer, std::size_t size) {
  std::strncpy(buffer, "9.8.7.fake", size);
  return 0;
}
/// How many handles are open: the test checks they are destroyed.
int fake_rocblas_open_handles() { return handles; }

int rocblas_sgemm(void*, int transa, int transb, int m, int n, int k, const float* alpha,
                  const float* a, int lda, const float* b, int ldb, const float* beta, float* c,
                  int ldc) {
  if (transa != 111 || transb != 111 || *alpha != 1.0f || *beta != 0.0f) return 11;
  if (m == 13) return 4;   // rocblas_status_invalid_size
  if (m == 14) return 15;  // rocblas_status_arch_mismatch
  Gemm(
      m, n, k, a, lda, b, ldb, c, ldc,
      [](const void* p, int i) { return double(static_cast<const float*>(p)[i]); },
      [](void* p, int i, double v) { static_cast<float*>(p)[i] = float(v); });
  return 0;
}

int rocblas_dgemm(void*, int transa, int transb, int m, int n, int k, const double* alpha,
                  const double* a, int lda, const double* b, int ldb, const double* beta, double* c,
                  int ldc) {
  if (transa != 111 || transb != 111 || *alpha != 1.0 || *beta != 0.0) return 11;
  Gemm(
      m, n, k, a, lda, b, ldb, c, ldc,
      [](const void* p, int i) { return static_cast<const double*>(p)[i]; },
      [](void* p, int i, double v) { static_cast<double*>(p)[i] = v; });
  return 0;
}

#ifndef FAKE_ROCBLAS_INCOMPLETE
// float16 (150) only, with float32 compute (151); the product rounded by truncation to the
// float16 grid is close enough for the test, which checks the mapping, not the rounding.
int rocblas_gemm_ex(void*, int transa, int transb, int m, int n, int k, const void* alpha,
                    const void* a, int a_type, int lda, const void* b, int b_type, int ldb,
                    const void* beta, const void* c, int c_type, int ldc, void* d, int d_type,
                    int ldd, int compute_type, int algo, int32_t, uint32_t) {
  if (transa != 111 || transb != 111 || algo != 0) return 11;
  if (a_type != 150 || b_type != 150 || c_type != 150 || d_type != 150 || compute_type != 151) {
    return 2;  // not implemented here
  }
  if (c != d || ldc != ldd) return 11;
  if (*static_cast<const float*>(alpha) != 1.0f || *static_cast<const float*>(beta) != 0.0f) {
    return 11;
  }
  // Outputs stored as float32 bits' upper half would lose the test's integers; store the value
  // as float16 exactly (the test's products are small integers).
  Gemm(
      m, n, k, a, lda, b, ldb, d, ldd,
      [](const void* p, int i) {
        return double(HalfBitsToFloat(static_cast<const uint16_t*>(p)[i]));
      },
      [](void* p, int i, double v) {
        // Small integers only: exponent and 10-bit fraction.
        uint16_t h = 0;
        if (v != 0.0) {
          const bool negative = v < 0;
          double x = negative ? -v : v;
          int e = 0;
          while (x >= 2.0) {
            x /= 2.0;
            ++e;
          }
          h = static_cast<uint16_t>((negative ? 0x8000 : 0) | (e + 15) << 10 |
                                    static_cast<int>((x - 1.0) * 1024.0));
        }
        static_cast<uint16_t*>(p)[i] = h;
      });
  return 0;
}
#endif

}  // extern "C"
