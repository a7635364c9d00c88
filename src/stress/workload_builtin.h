// SPDX-License-Identifier: Apache-2.0
// The built-in stress workloads (gemm-burn, stream-burn, train), and what the three share:
// reading parameters, the state blob Save() returns, and the bit flips of the SDC drill.
#ifndef PARITY_STRESS_WORKLOAD_BUILTIN_H_
#define PARITY_STRESS_WORKLOAD_BUILTIN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/dtype.h"
#include "core/json_util.h"
#include "core/status.h"
#include "stress/workload.h"

namespace parity::stress {

/// gemm-burn: C = A·B over and over, every entry against the first product, sampled entries
/// against float64 (workload_gemm_burn.cc).
std::unique_ptr<StressWorkload> MakeGemmBurn();
/// stream-burn: BabelStream's copy, mul, add and triad, every element of a, b and c against
/// BabelStream's expected value after every repetition (workload_stream_burn.cc).
std::unique_ptr<StressWorkload> MakeStreamBurn();
/// train: a small MLP trained with SGD in float32 on the backend's GEMM, reporting its loss
/// (workload_train.cc).
std::unique_ptr<StressWorkload> MakeTrain();

namespace internal {

/// SDC events a step lists at most; a step that finds more lists the first ones (in the order
/// its checks ran) and counts the rest in StepResult::sdc_unlisted.
inline constexpr std::size_t kMaxSdcEventsPerStep = 16;

/// SplitMix64's finaliser: where a drill plants its flip, from its seed.
uint64_t Mix64(uint64_t z);

/// 64-bit FNV-1a of `bytes`, continuing from `hash`.
inline constexpr uint64_t kFnv1aOffset = 0xcbf29ce484222325ull;
uint64_t Fnv1a(std::span<const std::byte> bytes, uint64_t hash = kFnv1aOffset);

/// Reads one workload's parameters. Numbers may arrive as JSON numbers or as strings of one;
/// an integer parameter accepts an integer-valued float. A parameter that is absent or null
/// takes its default. Every error is kInvalidInput and names the workload and the parameter.
class ParamReader {
 public:
  /// kInvalidInput when `params` is neither an object nor null, or names a parameter not in
  /// `known`: "workload gemm-burn takes n, dtype, math, seed; not 'lr'".
  static Result<ParamReader> Make(std::string_view workload, const Params& params,
                                  std::span<const std::string_view> known);

  /// An integer in [min, max].
  Result<int64_t> Int(std::string_view name, int64_t fallback, int64_t min, int64_t max) const;
  /// A finite number above `above` and at most `max`.
  Result<double> Real(std::string_view name, double fallback, double above, double max) const;
  /// A string, one of `choices`.
  Result<std::string> Choice(std::string_view name, std::string_view fallback,
                             std::span<const std::string_view> choices) const;

 private:
  ParamReader(std::string_view workload, Params params)
      : workload_(workload), params_(std::move(params)) {}
  /// The value of `name`, or null when it is absent.
  const Json* Find(std::string_view name) const;

  std::string workload_;
  Params params_;
};

/// A state as Save() writes it, little-endian: "PARITYSW", u32 format version (1), u32 header
/// bytes, the header (JSON: "workload", "step", "params" and the workload's own fields),
/// u64 payload bytes, the payload (the workload's binary data), u64 FNV-1a of every byte
/// before it. `header` must hold "workload" and "step".
std::string EncodeState(const Json& header, std::string_view payload);

/// A state read back.
struct DecodedState {
  Json header;  ///< an object with "workload" (the one asked for) and "step" (>= 0)
  int64_t step = 0;
  std::string payload;
};

/// Reads a state of `workload`. kInvalidInput ("workload X: state ...") for anything that is
/// not a whole, intact state of that workload: a short or long blob, a foreign magic, a
/// checksum mismatch, a header that isn't JSON, another workload's state.
Result<DecodedState> DecodeState(std::string_view state, std::string_view workload);

/// The bits of an element of `dtype` (a float type) whose flip rounding can't explain, in the
/// order a drill tries them: the exponent bits but the highest, starting at one chosen by
/// `seed` and wrapping, then the highest exponent bit, then the three leading fraction bits.
/// Bit 0 is the least significant of the element read as an unsigned integer.
std::vector<int> FlipCandidateBits(DType dtype, uint64_t seed);

/// Flips bit `bit` of the element of `itemsize` bytes at `element` (native byte order).
void FlipBit(std::byte* element, std::size_t itemsize, int bit);

}  // namespace internal
}  // namespace parity::stress

#endif  // PARITY_STRESS_WORKLOAD_BUILTIN_H_
