// SPDX-License-Identifier: Apache-2.0
// Exact conversions between float32/float64 and the narrow float formats (float16, bfloat16,
// tf32, float8 e4m3fn and e5m2), rounding to nearest even as the formats define it.
#ifndef PARITY_CORE_FLOAT_FORMAT_H_
#define PARITY_CORE_FLOAT_FORMAT_H_

#include <bit>
#include <cstdint>

namespace parity {

/// A binary floating-point format with a sign bit, `exponent_bits` and `mantissa_bits`.
struct FloatFormat {
  enum class Specials : unsigned char {
    kIeee,           ///< all-ones exponent holds Inf (zero mantissa) and NaN (non-zero)
    kFiniteNanOnly,  ///< no Inf; only the all-ones pattern (either sign) is NaN (e4m3fn)
  };
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Specials specials;
};

inline constexpr FloatFormat kFloat16Format{5, 10, 15, FloatFormat::Specials::kIeee};
inline constexpr FloatFormat kBFloat16Format{8, 7, 127, FloatFormat::Specials::kIeee};
/// NVIDIA TensorFloat-32: float32's exponent with float16's 10 fraction bits (19 bits wide).
inline constexpr FloatFormat kTf32Format{8, 10, 127, FloatFormat::Specials::kIeee};
inline constexpr FloatFormat kFloat8E4M3FNFormat{4, 3, 7, FloatFormat::Specials::kFiniteNanOnly};
inline constexpr FloatFormat kFloat8E5M2Format{5, 2, 15, FloatFormat::Specials::kIeee};

/// What a finite value beyond the largest finite number becomes.
enum class Overflow : unsigned char {
  kNonSaturating,  ///< Inf where the format has it, NaN otherwise (PyTorch, ml_dtypes)
  kSaturating,     ///< the largest finite number of that sign; Inf also saturates (OCP SAT)
};

/// Rounds `x` to the nearest value of `format` (ties to even) and returns its bit pattern in
/// the low 1 + exponent_bits + mantissa_bits bits. Rounds once, directly from the float64 value,
/// so there is no double-rounding error. NaN keeps its sign and the top payload bits and comes
/// out quiet (e4m3fn has a single NaN per sign). Subnormals are produced, never flushed.
uint32_t EncodeFloat(double x, const FloatFormat& format,
                     Overflow overflow = Overflow::kNonSaturating);

/// The exact value of the bit pattern `bits` of `format` (every such value fits a float64).
double DecodeFloat(uint32_t bits, const FloatFormat& format);

/// The largest finite value of `format`.
double MaxFinite(const FloatFormat& format);

// Fast paths for the common formats. Results equal EncodeFloat/DecodeFloat.

/// float16 bits to float32 (exact). Branch-free, so that loops over it vectorise.
inline float HalfToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t magnitude = bits & 0x7fffu;  // exponent and mantissa
  const uint32_t normal = (magnitude << 13) + ((127u - 15u) << 23);
  const uint32_t inf_nan = (magnitude << 13) | 0x7f800000u;
  // Subnormals (and zero) are mantissa * 2^-24, exact in float32.
  const uint32_t subnormal = std::bit_cast<uint32_t>(static_cast<float>(magnitude) * 0x1p-24f);
  const uint32_t result = magnitude >= 0x7c00u   ? inf_nan
                          : magnitude >= 0x0400u ? normal
                                                 : subnormal;
  return std::bit_cast<float>(sign | result);
}
inline uint16_t FloatToHalf(float x) {
  return static_cast<uint16_t>(EncodeFloat(x, kFloat16Format));
}
inline uint16_t DoubleToHalf(double x) {
  return static_cast<uint16_t>(EncodeFloat(x, kFloat16Format));
}

/// bfloat16 bits to float32 (exact).
inline float BFloat16ToFloat(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}
/// float32 to bfloat16 bits, ties to even; NaN stays NaN (quiet, sign and top payload kept).
uint16_t FloatToBFloat16(float x);
inline uint16_t DoubleToBFloat16(double x) {
  return static_cast<uint16_t>(EncodeFloat(x, kBFloat16Format));
}

/// float8 bits to float32 (exact), through a 256-entry table.
float Float8E4M3FNToFloat(uint8_t bits);
float Float8E5M2ToFloat(uint8_t bits);
inline uint8_t DoubleToFloat8E4M3FN(double x, Overflow overflow = Overflow::kNonSaturating) {
  return static_cast<uint8_t>(EncodeFloat(x, kFloat8E4M3FNFormat, overflow));
}
inline uint8_t DoubleToFloat8E5M2(double x, Overflow overflow = Overflow::kNonSaturating) {
  return static_cast<uint8_t>(EncodeFloat(x, kFloat8E5M2Format, overflow));
}

/// float32 rounded to the precision of another format, returned as float32 (ties to even).
/// tf32 and bfloat16 keep float32's range; float16 overflows to Inf past 65504 and has
/// subnormals below 2^-14.
float RoundToTf32(float x);
float RoundToBFloat16(float x);
float RoundToFloat16(float x);

}  // namespace parity

#endif  // PARITY_CORE_FLOAT_FORMAT_H_
