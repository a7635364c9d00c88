// SPDX-License-Identifier: Apache-2.0
// cuRAND's Philox4x32-10 device state on the CPU: the stream `curand_init(seed, subsequence,
// offset, &state)` then `curand`, `curand_uniform`, `curand_normal`, ... return, as CUDA 13's
// curand_kernel.h, curand_philox4x32_x.h, curand_uniform.h and curand_normal.h define them.
// The Philox4x32-10 bijection itself is Random123's (Salmon et al., SC'11).
#ifndef PARITY_RNG_PHILOX_H_
#define PARITY_RNG_PHILOX_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "core/status.h"
#include "io/tensor.h"

namespace parity {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

/// Philox4x32 with 10 rounds (Random123's philox4x32_R(10, ctr, key)).
PhiloxCounter Philox4x32_10(const PhiloxCounter& counter, const PhiloxKey& key);

/// curandStatePhilox4_32_10_t and the device API's functions on it.
class CurandPhilox {
 public:
  /// curand_init(seed, subsequence, offset, &state): the key is the seed's two 32-bit halves,
  /// the subsequence the counter's high 64 bits, the offset skips that many 32-bit values.
  CurandPhilox(uint64_t seed, uint64_t subsequence, uint64_t offset);

  /// curand(): the next 32-bit value.
  uint32_t Next();
  /// curand4(): the next four 32-bit values (one Philox block, whatever the position).
  std::array<uint32_t, 4> Next4();
  /// curand_uniform(): x·2^-32 + 2^-33 in float, in (0, 1].
  float Uniform();
  /// curand_uniform_double(): x·2^-32 + 2^-32 in double (one 32-bit value).
  double UniformDouble();
  /// curand_normal(): Box–Muller on two values, the second kept for the next call. sin and
  /// cos are the C library's sinf/cosf (cuRAND's host branch); on the device cuRAND uses the
  /// __sincosf intrinsic, whose results may differ in the last bits.
  float Normal();
  /// curand_normal_double(): Box–Muller on one curand4() block (53-bit u and v), the second
  /// value kept. sin(πv), cos(πv) from the C library (the device uses sincospi).
  double NormalDouble();

  /// skipahead(n) and skipahead_sequence(n).
  void Skipahead(uint64_t n);
  void SkipaheadSequence(uint64_t n);

  const PhiloxCounter& counter() const { return counter_; }

 private:
  void Increment();            // Philox_State_Incr(s)
  void Increment(uint64_t n);  // Philox_State_Incr(s, n)
  void IncrementHigh(uint64_t n);
  void Refresh() { output_ = Philox4x32_10(counter_, key_); }

  PhiloxCounter counter_{};
  PhiloxKey key_{};
  PhiloxCounter output_{};
  uint32_t state_ = 0;  // position in output_
  bool has_extra_ = false, has_extra_double_ = false;
  float extra_ = 0.0f;
  double extra_double_ = 0.0;
};

/// `count` values of curand_init(seed, subsequence, offset)'s stream as `dist` gives them:
/// "uint32" (curand), "uniform", "normal" (float32), "uniform_double" or "normal_double"
/// (float64); a tensor named "philox" of shape [count]. Fails on another `dist`.
Result<Tensor> PhiloxStream(uint64_t seed, uint64_t subsequence, uint64_t offset, int64_t count,
                            std::string_view dist);

/// The float and double conversions of curand_uniform.h and curand_normal.h.
float CurandUniform(uint32_t x);
double CurandUniformDouble(uint32_t x);
/// _curand_box_muller(x, y) with the C library's sinf/cosf.
std::array<float, 2> CurandBoxMuller(uint32_t x, uint32_t y);
/// _curand_box_muller_double(x0, x1, y0, y1) with the C library's sin/cos of πv.
std::array<double, 2> CurandBoxMullerDouble(uint32_t x0, uint32_t x1, uint32_t y0, uint32_t y1);

}  // namespace parity

#endif  // PARITY_RNG_PHILOX_H_
