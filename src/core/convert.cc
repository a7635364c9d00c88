// SPDX-License-Identifier: Apache-2.0
#include "core/convert.h"

#include <cstdint>
#include <cstring>

#include "core/float_format.h"

namespace parity {
namespace {

template <typename T, typename F>
void Widen(const std::byte* src, std::span<double> out, F&& to_double) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    T value;
    std::memcpy(&value, src + i * sizeof(T), sizeof(T));
    out[i] = to_double(value);
  }
}

template <typename T>
void Plain(const std::byte* src, std::span<double> out) {
  Widen<T>(src, out, [](T v) { return static_cast<double>(v); });
}

}  // namespace

void ConvertToFloat64(DType dtype, const std::byte* src, std::span<double> out) {
  switch (dtype) {
    case DType::kBool:
      return Widen<uint8_t>(src, out, [](uint8_t v) { return v != 0 ? 1.0 : 0.0; });
    case DType::kInt8:
      return Plain<int8_t>(src, out);
    case DType::kInt16:
      return Plain<int16_t>(src, out);
    case DType::kInt32:
      return Plain<int32_t>(src, out);
    case DType::kInt64:
      return Plain<int64_t>(src, out);
    case DType::kUInt8:
      return Plain<uint8_t>(src, out);
    case DType::kUInt16:
      return Plain<uint16_t>(src, out);
    case DType::kUInt32:
      return Plain<uint32_t>(src, out);
    case DType::kUInt64:
      return Plain<uint64_t>(src, out);
    case DType::kFloat16:
      return Widen<uint16_t>(src, out, [](uint16_t v) { return double{HalfToFloat(v)}; });
    case DType::kBFloat16:
      return Widen<uint16_t>(src, out, [](uint16_t v) { return double{BFloat16ToFloat(v)}; });
    case DType::kFloat32:
      return Plain<float>(src, out);
    case DType::kFloat64:
      return Plain<double>(src, out);
    case DType::kFloat8E4M3FN:
      return Widen<uint8_t>(src, out, [](uint8_t v) { return double{Float8E4M3FNToFloat(v)}; });
    case DType::kFloat8E5M2:
      return Widen<uint8_t>(src, out, [](uint8_t v) { return double{Float8E5M2ToFloat(v)}; });
  }
}

double ElementToFloat64(DType dtype, const std::byte* element) {
  double out = 0.0;
  ConvertToFloat64(dtype, element, std::span<double>(&out, 1));
  return out;
}

}  // namespace parity
