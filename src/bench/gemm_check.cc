// SPDX-License-Identifier: Apache-2.0
#include "bench/gemm_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error_bound.h"

namespace parity::bench {
namespace {

uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

constexpr int kSampled = 16;

}  // namespace

double GemmInputValue(uint64_t seed, uint64_t salt, uint64_t i) {
  const uint64_t bits = Mix(Mix(seed * 0x9E3779B97F4A7C15ull + salt) + i);
  // 53 random bits in [0, 1), mapped to [-1, 1).
  return static_cast<double>(bits >> 11) * 0x1.0p-52 - 1.0;
}

GemmSample SampleRowsAndColumns(int64_t n, uint64_t seed) {
  GemmSample s;
  for (auto [out, salt] : {std::pair{&s.rows, uint64_t{3}}, std::pair{&s.columns, uint64_t{4}}}) {
    if (n <= kSampled) {
      for (int64_t i = 0; i < n; ++i) out->push_back(i);
      continue;
    }
    out->push_back(0);
    out->push_back(n - 1);
    for (uint64_t draw = 0; static_cast<int>(out->size()) < kSampled; ++draw) {
      const int64_t i = static_cast<int64_t>(Mix(Mix(seed + salt) + draw) % uint64_t(n));
      if (std::find(out->begin(), out->end(), i) == out->end()) out->push_back(i);
    }
    std::sort(out->begin(), out->end());
  }
  return s;
}

std::string GemmLabel(DType dtype, GemmMath math) {
  return math == GemmMath::kTf32 ? "tf32" : std::string(Name(dtype));
}

GemmCheck CheckGemmSample(DType dtype, GemmMath math, int64_t n, std::span<const double> a,
                          std::span<const double> b, const GemmSample& sample,
                          std::span<const double> c) {
  GemmCheck check;
  check.dtype = GemmLabel(dtype, math);
  check.k = n;
  check.lambda = kDefaultLambda;
  if (dtype == DType::kFloat64) {
    check.u_compute = check.u_storage = std::ldexp(1.0, -53);
  } else if (dtype == DType::kBFloat16) {
    check.u_compute = std::ldexp(1.0, -24);
    check.u_storage = std::ldexp(1.0, -8);
  } else if (dtype == DType::kFloat16) {
    check.u_compute = std::ldexp(1.0, -24);
    check.u_storage = std::ldexp(1.0, -11);
  } else if (math == GemmMath::kTf32) {
    // Operands rounded to 10 fraction bits: a relative error of 2^-11 in each.
    check.u_compute = std::ldexp(1.0, -11);
    check.u_storage = std::ldexp(1.0, -24);
  } else {
    check.u_compute = check.u_storage = std::ldexp(1.0, -24);
  }
  const double growth = DotProductGrowth(n, check.u_compute, check.lambda);
  std::size_t index = 0;
  for (int64_t i : sample.rows) {
    for (int64_t j : sample.columns) {
      double ref = 0.0, norm2 = 0.0;
      for (int64_t k = 0; k < n; ++k) {
        const double p = a[i * n + k] * b[k * n + j];
        ref += p;
        norm2 += p * p;
      }
      const double value = c[index++];
      const double bound =
          growth * std::sqrt(norm2) + (growth + 2.0 * check.u_storage) * std::abs(ref);
      const double error = std::abs(value - ref);
      ++check.checked;
      const bool ok = std::isfinite(value) && error <= bound;
      const double ratio = bound > 0.0 ? error / bound : (error == 0.0 ? 0.0 : INFINITY);
      check.max_error_over_bound =
          std::isfinite(value) ? std::max(check.max_error_over_bound, ratio) : INFINITY;
      if (!ok) {
        if (check.failures == 0) {
          check.bad_row = i;
          check.bad_column = j;
          check.bad_value = value;
          check.bad_reference = ref;
          check.bad_bound = bound;
        }
        ++check.failures;
      }
    }
  }
  return check;
}

std::string GemmCheck::Summary() const {
  if (ok()) {
    return fmt::format("{} sampled entries within parity compare's auto bound", checked);
  }
  return fmt::format(
      "C[{}, {}] = {:.9g} but the float64 product is {:.9g} (bound {:.3g}): {} of {} sampled "
      "entries outside parity compare's auto bound for {} (K = {})",
      bad_row, bad_column, bad_value, bad_reference, bad_bound, failures, checked, dtype, k);
}

Json GemmCheck::ToJson() const {
  Json j = {{"method", "sampled entries against a float64 product; parity compare's auto bound"},
            {"checked", checked},
            {"failures", failures},
            {"k", k},
            {"lambda", lambda},
            {"u_compute", u_compute},
            {"u_storage", u_storage}};
  SetNumber(j, "max_error_over_bound", max_error_over_bound);
  if (!ok()) j["first_failure"] = Summary();
  return j;
}

}  // namespace parity::bench
