// SPDX-License-Identifier: Apache-2.0
#include "core/dtype.h"

#include <array>
#include <cmath>

namespace parity {
namespace {

using K = DTypeKind;

constexpr std::array<DTypeInfo, 15> kDTypes = {{
    {DType::kBool, "bool", K::kBool, 1, 0, 0},
    {DType::kInt8, "int8", K::kSignedInt, 1, 0, 0},
    {DType::kInt16, "int16", K::kSignedInt, 2, 0, 0},
    {DType::kInt32, "int32", K::kSignedInt, 4, 0, 0},
    {DType::kInt64, "int64", K::kSignedInt, 8, 0, 0},
    {DType::kUInt8, "uint8", K::kUnsignedInt, 1, 0, 0},
    {DType::kUInt16, "uint16", K::kUnsignedInt, 2, 0, 0},
    {DType::kUInt32, "uint32", K::kUnsignedInt, 4, 0, 0},
    {DType::kUInt64, "uint64", K::kUnsignedInt, 8, 0, 0},
    {DType::kFloat16, "float16", K::kFloat, 2, 10, 5},
    {DType::kBFloat16, "bfloat16", K::kFloat, 2, 7, 8},
    {DType::kFloat32, "float32", K::kFloat, 4, 23, 8},
    {DType::kFloat64, "float64", K::kFloat, 8, 52, 11},
    {DType::kFloat8E4M3FN, "float8_e4m3fn", K::kFloat, 1, 3, 4},
    {DType::kFloat8E5M2, "float8_e5m2", K::kFloat, 1, 2, 5},
}};

}  // namespace

std::span<const DTypeInfo> AllDTypes() { return kDTypes; }

const DTypeInfo& Info(DType dtype) { return kDTypes[static_cast<std::size_t>(dtype)]; }

std::optional<DType> DTypeFromName(std::string_view name) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.name == name) return info.dtype;
  }
  return std::nullopt;
}

double UnitRoundoff(DType dtype) {
  const DTypeInfo& info = Info(dtype);
  if (info.kind != DTypeKind::kFloat) return 0.0;
  return std::ldexp(1.0, -(info.mantissa_bits + 1));
}

}  // namespace parity
