// SPDX-License-Identifier: Apache-2.0
#include "core/simd.h"

#include <atomic>
#include <cstdlib>
#include <string_view>

namespace parity {
namespace {

Isa Widest() {
#if defined(__x86_64__)
  // Feature by feature: clang 14 knows neither the level names nor "f16c" and "movbe" (which
  // every CPU with AVX2 and BMI2 has).
  __builtin_cpu_init();
  const bool v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
  if (v4) return Isa::kV4;
  if (v3) return Isa::kV3;
#endif
  return Isa::kBaseline;
}

Isa FromEnvironment() {
  Isa isa = Widest();
  if (const char* env = std::getenv("PARITY_ISA")) {
    const std::string_view name(env);
    Isa wanted = isa;
    if (name == "baseline") wanted = Isa::kBaseline;
    if (name == "v3") wanted = Isa::kV3;
    if (name == "v4") wanted = Isa::kV4;
    if (static_cast<int>(wanted) < static_cast<int>(isa)) isa = wanted;
  }
  return isa;
}

std::atomic<int>& Active() {
  static std::atomic<int> active{static_cast<int>(FromEnvironment())};
  return active;
}

}  // namespace

bool IsaSupported(Isa isa) { return static_cast<int>(isa) <= static_cast<int>(Widest()); }

Isa ActiveIsa() { return static_cast<Isa>(Active().load(std::memory_order_relaxed)); }

void SetIsa(Isa isa) {
  const Isa widest = Widest();
  Active().store(static_cast<int>(static_cast<int>(isa) < static_cast<int>(widest) ? isa : widest));
}

const char* IsaName(Isa isa) {
  switch (isa) {
    case Isa::kV4:
      return "x86-64-v4";
    case Isa::kV3:
      return "x86-64-v3";
    case Isa::kBaseline:
      break;
  }
  return "baseline";
}

}  // namespace parity
