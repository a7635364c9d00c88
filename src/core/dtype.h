// SPDX-License-Identifier: Apache-2.0
// Element types, with the names docs/DESIGN.md uses everywhere in JSON.
#ifndef PARITY_CORE_DTYPE_H_
#define PARITY_CORE_DTYPE_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace parity {

enum class DType : unsigned char {
  kBool,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kFloat8E4M3FN,
  kFloat8E5M2,
};

enum class DTypeKind : unsigned char { kBool, kSignedInt, kUnsignedInt, kFloat };

/// Static facts about a dtype.
struct DTypeInfo {
  DType dtype;
  std::string_view name;  ///< docs/DESIGN.md name: "float32", "bfloat16", "float8_e4m3fn", ...
  DTypeKind kind;
  std::size_t itemsize;  ///< bytes per element
  int mantissa_bits;     ///< explicit fraction bits for floats, 0 otherwise
  int exponent_bits;     ///< exponent field width for floats, 0 otherwise
};

/// Every dtype, in enum order.
std::span<const DTypeInfo> AllDTypes();

const DTypeInfo& Info(DType dtype);
inline std::string_view Name(DType dtype) { return Info(dtype).name; }
inline std::size_t ItemSize(DType dtype) { return Info(dtype).itemsize; }
inline bool IsFloat(DType dtype) { return Info(dtype).kind == DTypeKind::kFloat; }

/// The dtype with this docs/DESIGN.md name, or nothing.
std::optional<DType> DTypeFromName(std::string_view name);

/// Unit roundoff u = 2^-(t+1) of a float dtype with t fraction bits; 0 for exact types.
double UnitRoundoff(DType dtype);

}  // namespace parity

#endif  // PARITY_CORE_DTYPE_H_
