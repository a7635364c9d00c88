// SPDX-License-Identifier: Apache-2.0
#include "rng/philox.h"

#include <Random123/philox.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace parity {
namespace {

// curand_globals.h (CUDA 13).
constexpr float k2Pow32Inv = 2.3283064e-10f;                  // CURAND_2POW32_INV
constexpr double k2Pow32InvDouble = 2.3283064365386963e-10;   // CURAND_2POW32_INV_DOUBLE
constexpr double k2Pow53InvDouble = 1.1102230246251565e-16;   // CURAND_2POW53_INV_DOUBLE
constexpr float k2Pow32Inv2Pi = 2.3283064e-10f * 6.2831855f;  // CURAND_2POW32_INV_2PI
constexpr double kPiDouble = 3.1415926535897932;              // CURAND_PI_DOUBLE

}  // namespace

PhiloxCounter Philox4x32_10(const PhiloxCounter& counter, const PhiloxKey& key) {
  r123::Philox4x32_R<10> philox;
  r123::Philox4x32_R<10>::ctr_type c = {{counter[0], counter[1], counter[2], counter[3]}};
  r123::Philox4x32_R<10>::key_type k = {{key[0], key[1]}};
  const auto r = philox(c, k);
  return {r.v[0], r.v[1], r.v[2], r.v[3]};
}

CurandPhilox::CurandPhilox(uint64_t seed, uint64_t subsequence, uint64_t offset) {
  key_ = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  SkipaheadSequence(subsequence);
  Skipahead(offset);
}

void CurandPhilox::Increment() {
  if (++counter_[0] != 0) return;
  if (++counter_[1] != 0) return;
  if (++counter_[2] != 0) return;
  ++counter_[3];
}

// Philox_State_Incr(s, n), carries included exactly as the header writes them.
void CurandPhilox::Increment(uint64_t n) {
  const auto lo = static_cast<uint32_t>(n);
  auto hi = static_cast<uint32_t>(n >> 32);
  counter_[0] += lo;
  if (counter_[0] < lo) ++hi;
  counter_[1] += hi;
  if (hi <= counter_[1]) return;
  if (++counter_[2] != 0) return;
  ++counter_[3];
}

void CurandPhilox::IncrementHigh(uint64_t n) {
  const auto lo = static_cast<uint32_t>(n);
  auto hi = static_cast<uint32_t>(n >> 32);
  counter_[2] += lo;
  if (counter_[2] < lo) ++hi;
  counter_[3] += hi;
}

void CurandPhilox::Skipahead(uint64_t n) {
  state_ += static_cast<uint32_t>(n & 3);
  n /= 4;
  if (state_ > 3) {
    n += 1;
    state_ -= 4;
  }
  Increment(n);
  Refresh();
}

void CurandPhilox::SkipaheadSequence(uint64_t n) {
  IncrementHigh(n);
  Refresh();
}

uint32_t CurandPhilox::Next() {
  const uint32_t value = output_[state_++];
  if (state_ == 4) {
    Increment();
    Refresh();
    state_ = 0;
  }
  return value;
}

std::array<uint32_t, 4> CurandPhilox::Next4() {
  const PhiloxCounter previous = output_;
  Increment();
  Refresh();
  std::array<uint32_t, 4> r{};
  for (uint32_t i = 0; i < 4; ++i) {
    const uint32_t k = state_ + i;
    r[i] = k < 4 ? previous[k] : output_[k - 4];
  }
  return r;
}

float CurandUniform(uint32_t x) { return static_cast<float>(x) * k2Pow32Inv + (k2Pow32Inv / 2.0f); }

double CurandUniformDouble(uint32_t x) {
  return static_cast<double>(x) * k2Pow32InvDouble + k2Pow32InvDouble;
}

std::array<float, 2> CurandBoxMuller(uint32_t x, uint32_t y) {
  const float u = static_cast<float>(x) * k2Pow32Inv + (k2Pow32Inv / 2);
  const float v = static_cast<float>(y) * k2Pow32Inv2Pi + (k2Pow32Inv2Pi / 2);
  const float s = std::sqrt(-2.0f * std::log(u));
  return {std::sin(v) * s, std::cos(v) * s};
}

std::array<double, 2> CurandBoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t y0, uint32_t y1) {
  const uint64_t zx = static_cast<uint64_t>(x0) ^ (static_cast<uint64_t>(x1) << (53 - 32));
  const double u = static_cast<double>(zx) * k2Pow53InvDouble + (k2Pow53InvDouble / 2.0);
  const uint64_t zy = static_cast<uint64_t>(y0) ^ (static_cast<uint64_t>(y1) << (53 - 32));
  const double v = static_cast<double>(zy) * (k2Pow53InvDouble * 2.0) + k2Pow53InvDouble;
  const double s = std::sqrt(-2.0 * std::log(u));
  return {std::sin(v * kPiDouble) * s, std::cos(v * kPiDouble) * s};
}

float CurandPhilox::Uniform() { return CurandUniform(Next()); }

double CurandPhilox::UniformDouble() { return CurandUniformDouble(Next()); }

float CurandPhilox::Normal() {
  if (has_extra_) {
    has_extra_ = false;
    return extra_;
  }
  const uint32_t x = Next();
  const uint32_t y = Next();
  const std::array<float, 2> v = CurandBoxMuller(x, y);
  extra_ = v[1];
  has_extra_ = true;
  return v[0];
}

double CurandPhilox::NormalDouble() {
  if (has_extra_double_) {
    has_extra_double_ = false;
    return extra_double_;
  }
  const std::array<uint32_t, 4> x = Next4();
  const std::array<double, 2> v = CurandBoxMullerDouble(x[0], x[1], x[2], x[3]);
  extra_double_ = v[1];
  has_extra_double_ = true;
  return v[0];
}

Result<Tensor> PhiloxStream(uint64_t seed, uint64_t subsequence, uint64_t offset, int64_t count,
                            std::string_view dist) {
  if (dist != "uint32" && dist != "uniform" && dist != "normal" && dist != "uniform_double" &&
      dist != "normal_double") {
    return Status::Invalid(std::string(dist),
                           "unknown distribution (uint32, uniform, normal, uniform_double, "
                           "normal_double)");
  }
  if (count < 0 || count > (int64_t{1} << 32)) {
    return Status::Invalid(std::to_string(count), "count must lie in [0, 2^32]");
  }
  CurandPhilox state(seed, subsequence, offset);
  const auto n = static_cast<std::size_t>(count);
  const bool is_double = dist.ends_with("double");
  const DType dtype = dist == "uint32" ? DType::kUInt32
                      : is_double      ? DType::kFloat64
                                       : DType::kFloat32;
  std::vector<std::byte> buffer(n * ItemSize(dtype));
  for (std::size_t i = 0; i < n; ++i) {
    std::byte* p = buffer.data() + i * ItemSize(dtype);
    if (dist == "uint32") {
      const uint32_t v = state.Next();
      std::memcpy(p, &v, sizeof v);
    } else if (dist == "uniform" || dist == "normal") {
      const float v = dist == "uniform" ? state.Uniform() : state.Normal();
      std::memcpy(p, &v, sizeof v);
    } else {
      const double v = dist == "uniform_double" ? state.UniformDouble() : state.NormalDouble();
      std::memcpy(p, &v, sizeof v);
    }
  }
  PARITY_ASSIGN_OR_RETURN(TensorMeta meta, MakeTensorMeta("philox", "philox", dtype, {count}));
  return Tensor::Owned(std::move(meta), std::move(buffer));
}

}  // namespace parity
