// SPDX-License-Identifier: Apache-2.0
#include "core/float_format.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>

namespace parity {
namespace {

constexpr uint64_t Bit(int n) { return uint64_t{1} << n; }

// Largest finite code (without sign) of the format.
uint64_t MaxFiniteCode(const FloatFormat& f) {
  const int width = f.exponent_bits + f.mantissa_bits;
  if (f.specials == FloatFormat::Specials::kFiniteNanOnly) return Bit(width) - 2;
  return (((Bit(f.exponent_bits) - 1)) << f.mantissa_bits) - 1;
}

uint32_t NanCode(uint64_t double_bits, const FloatFormat& f) {
  const int width = f.exponent_bits + f.mantissa_bits;
  if (f.specials == FloatFormat::Specials::kFiniteNanOnly) {
    return static_cast<uint32_t>(Bit(width) - 1);
  }
  const uint64_t payload = (double_bits & (Bit(52) - 1)) >> (52 - f.mantissa_bits);
  const uint64_t exponent = (Bit(f.exponent_bits) - 1) << f.mantissa_bits;
  return static_cast<uint32_t>(exponent | payload | Bit(f.mantissa_bits - 1));
}

uint32_t OverflowCode(const FloatFormat& f, Overflow overflow) {
  if (overflow == Overflow::kSaturating) return static_cast<uint32_t>(MaxFiniteCode(f));
  if (f.specials == FloatFormat::Specials::kFiniteNanOnly) {
    return static_cast<uint32_t>(Bit(f.exponent_bits + f.mantissa_bits) - 1);
  }
  return static_cast<uint32_t>((Bit(f.exponent_bits) - 1) << f.mantissa_bits);
}

template <const FloatFormat& kFormat>
const std::array<float, 256>& Float8Table() {
  static const std::array<float, 256> table = [] {
    std::array<float, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) t[i] = static_cast<float>(DecodeFloat(i, kFormat));
    return t;
  }();
  return table;
}

}  // namespace

uint32_t EncodeFloat(double x, const FloatFormat& f, Overflow overflow) {
  const uint64_t xbits = std::bit_cast<uint64_t>(x);
  const int width = f.exponent_bits + f.mantissa_bits;
  const uint32_t sign = static_cast<uint32_t>(xbits >> 63) << width;
  if (std::isnan(x)) return sign | NanCode(xbits, f);
  if (std::isinf(x)) return sign | OverflowCode(f, overflow);
  const double a = std::fabs(x);
  if (a == 0.0) return sign;

  int frexp_exponent = 0;
  std::frexp(a, &frexp_exponent);                 // a = m * 2^frexp_exponent, m in [0.5, 1)
  const int64_t e = int64_t{frexp_exponent} - 1;  // a = (2m) * 2^e
  const int64_t emin = 1 - int64_t{f.bias};
  const int64_t emax = (f.specials == FloatFormat::Specials::kIeee)
                           ? (int64_t{1} << f.exponent_bits) - 2 - f.bias
                           : (int64_t{1} << f.exponent_bits) - 1 - f.bias;
  if (e > emax + 1) return sign | OverflowCode(f, overflow);

  // Scale so that one unit is the quantum (ulp) at this exponent; the scaling is exact.
  const int64_t quantum_exponent = (e < emin ? emin : e) - f.mantissa_bits;
  const double r = std::ldexp(a, static_cast<int>(-quantum_exponent));  // < 2^(mantissa+1)
  double n = std::floor(r);
  const double rest = r - n;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(n, 2.0) != 0.0)) n += 1.0;
  const auto units = static_cast<uint64_t>(n);

  // Subnormal and normal codes are contiguous: a carry out of the mantissa bumps the exponent.
  const uint64_t code =
      (e < emin) ? units : (static_cast<uint64_t>(e - emin) << f.mantissa_bits) + units;
  if (code > MaxFiniteCode(f)) return sign | OverflowCode(f, overflow);
  return sign | static_cast<uint32_t>(code);
}

double DecodeFloat(uint32_t bits, const FloatFormat& f) {
  const int width = f.exponent_bits + f.mantissa_bits;
  const bool negative = (bits >> width) & 1u;
  const uint64_t code = bits & (Bit(width) - 1);
  const uint64_t exponent_field = code >> f.mantissa_bits;
  const uint64_t mantissa = code & (Bit(f.mantissa_bits) - 1);
  double value = 0.0;
  if (f.specials == FloatFormat::Specials::kFiniteNanOnly && code == Bit(width) - 1) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (f.specials == FloatFormat::Specials::kIeee &&
             exponent_field == Bit(f.exponent_bits) - 1) {
    if (mantissa == 0) {
      value = std::numeric_limits<double>::infinity();
    } else {
      // Keep the payload in the top fraction bits, as a hardware widening does.
      const uint64_t payload = mantissa << (52 - f.mantissa_bits);
      value = std::bit_cast<double>(uint64_t{0x7ff} << 52 | payload);
    }
  } else if (exponent_field == 0) {
    value = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    value = std::ldexp(static_cast<double>(mantissa | Bit(f.mantissa_bits)),
                       static_cast<int>(exponent_field) - f.bias - f.mantissa_bits);
  }
  return negative ? -value : value;
}

double MaxFinite(const FloatFormat& f) {
  return DecodeFloat(static_cast<uint32_t>(MaxFiniteCode(f)), f);
}

uint16_t FloatToBFloat16(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float Float8E4M3FNToFloat(uint8_t bits) { return Float8Table<kFloat8E4M3FNFormat>()[bits]; }
float Float8E5M2ToFloat(uint8_t bits) { return Float8Table<kFloat8E5M2Format>()[bits]; }

float RoundToTf32(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return std::bit_cast<float>((u & 0xffffe000u) | 0x00400000u);
  u += 0xfffu + ((u >> 13) & 1u);
  return std::bit_cast<float>(u & 0xffffe000u);
}

float RoundToBFloat16(float x) { return BFloat16ToFloat(FloatToBFloat16(x)); }

float RoundToFloat16(float x) { return HalfToFloat(FloatToHalf(x)); }

}  // namespace parity
