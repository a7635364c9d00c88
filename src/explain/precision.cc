// SPDX-License-Identifier: Apache-2.0
#include "explain/precision.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <string_view>

#include "core/float_format.h"

namespace parity {
namespace {

struct Grid {
  int mantissa_bits;
  int min_exponent;  // of the smallest normal
};

Grid GridOf(Precision p) {
  switch (p) {
    case Precision::kTf32:
      return {10, -126};
    case Precision::kBFloat16:
      return {7, -126};
    case Precision::kFloat16:
      return {10, -14};
  }
  return {23, -126};
}

bool OnGrid(double x, Precision p) { return RoundTo(x, p) == x; }

// Finite float32 `f` with its low `drop` significand bits rounded off, ties away from zero or
// toward zero (`r` is one of those): tf32's and bf16's bit patterns are float32's with those bits
// clear. Adding to the pattern adds to the magnitude, a carry moving into the exponent (past the
// largest finite value, to Inf), so half of the dropped unit added, then the bits cleared, rounds
// ties away from zero (CUTLASS's round_half_ulp_truncate).
double DropFloatBits(float f, int drop, Rounding r) {
  const uint32_t dropped = (uint32_t{1} << drop) - 1;
  uint32_t u = std::bit_cast<uint32_t>(f);
  if (r == Rounding::kNearestAway) u += uint32_t{1} << (drop - 1);
  return std::bit_cast<float>(u & ~dropped);
}

// Finite `x` on float16's grid, ties away from zero or toward zero: a multiple of the grid's
// spacing at |x| (exact: the spacing is a power of two), past 65504 Inf or, toward zero, 65504.
double HalfAwayOrTruncated(double x, Rounding r) {
  constexpr double kLargest = 65504.0;
  const double spacing = UlpOf(x, Precision::kFloat16);
  const double units = std::fabs(x) / spacing;
  double y = (r == Rounding::kNearestAway ? std::floor(units + 0.5) : std::floor(units)) * spacing;
  if (y > kLargest) y = r == Rounding::kTowardZero ? kLargest : INFINITY;
  return std::copysign(y, x);
}

}  // namespace

bool IsMatmulOrConv(const std::string& raw_op) {
  const std::string op = FamilyOf(raw_op).name;  // aten's mm, addmm, convolution ... too
  return op == "linear" || op == "matmul" || op == "bmm" || op == "conv1d" || op == "conv2d" ||
         op == "scaled_dot_product_attention";
}

std::string PrecisionName(Precision p) {
  switch (p) {
    case Precision::kTf32:
      return "tf32";
    case Precision::kBFloat16:
      return "bf16";
    case Precision::kFloat16:
      return "fp16";
  }
  return "?";
}

double PrecisionRoundoff(Precision p) { return std::ldexp(1.0, -(GridOf(p).mantissa_bits + 1)); }

std::string RoundingName(Rounding r) {
  switch (r) {
    case Rounding::kNearestEven:
      return "ties to even";
    case Rounding::kNearestAway:
      return "ties away from zero";
    case Rounding::kTowardZero:
      return "toward zero";
  }
  return "?";
}

double RoundTo(double x, Precision p, Rounding r) {
  if (!std::isfinite(x)) return x;
  if (r == Rounding::kNearestEven) {
    switch (p) {
      case Precision::kTf32:
        return RoundToTf32(static_cast<float>(x));
      case Precision::kBFloat16:
        return BFloat16ToFloat(DoubleToBFloat16(x));
      case Precision::kFloat16:
        return HalfToFloat(DoubleToHalf(x));
    }
  }
  switch (p) {
    case Precision::kTf32:
      return DropFloatBits(static_cast<float>(x), 13, r);
    case Precision::kBFloat16:
      return DropFloatBits(static_cast<float>(x), 16, r);
    case Precision::kFloat16:
      return HalfAwayOrTruncated(x, r);
  }
  return x;
}

double UlpOf(double x, Precision p) {
  const Grid g = GridOf(p);
  int exponent = g.min_exponent;
  if (x != 0.0 && std::isfinite(x)) exponent = std::max(std::ilogb(x), g.min_exponent);
  return std::ldexp(1.0, exponent - g.mantissa_bits);
}

std::optional<Precision> OutputGrid(const std::vector<Array>& outputs, int64_t min_values) {
  int64_t finite = 0;
  bool bf16 = true, fp16 = true;
  for (const Array& a : outputs) {
    for (double x : a.data) {
      if (!std::isfinite(x)) continue;
      ++finite;
      bf16 = bf16 && OnGrid(x, Precision::kBFloat16);
      fp16 = fp16 && OnGrid(x, Precision::kFloat16);
      if (!bf16 && !fp16) return std::nullopt;
    }
  }
  // Values that are all small integers or zeros lie on every grid and prove nothing either.
  int64_t informative = 0;
  for (const Array& a : outputs) {
    for (double x : a.data) {
      if (std::isfinite(x) && x != std::nearbyint(x)) ++informative;
      if (informative >= min_values) break;
    }
  }
  if (finite < min_values || informative < min_values) return std::nullopt;
  if (bf16) return Precision::kBFloat16;
  if (fp16) return Precision::kFloat16;
  return std::nullopt;
}

namespace {

// Adds the pairs of `got` and `want` to `a`, element j allowed allowance(j, want[j]).
template <typename Allowance>
void AddPairs(Agreement* a, const Array& got, const Array& want, Allowance allowance) {
  if (got.data.size() != want.data.size()) {
    a->all_within = a->sizes_match = false;
    ++a->violations;
    return;
  }
  const std::vector<double>& g = got.data;
  const std::vector<double>& w = want.data;
  for (std::size_t j = 0; j < g.size(); ++j) {
    if (!std::isfinite(g[j]) || !std::isfinite(w[j])) {
      const bool same = (std::isnan(g[j]) && std::isnan(w[j])) || g[j] == w[j];
      if (!same) {
        a->nonfinite_match = a->all_within = false;
        ++a->violations;
      }
      continue;
    }
    const double d = g[j] - w[j];
    const double allowed = allowance(j, w[j]);
    if (std::fabs(d) > allowed) {
      a->all_within = false;
      ++a->violations;
      a->max_excess = std::max(a->max_excess, allowed > 0 ? std::fabs(d) / allowed : INFINITY);
    } else {
      ++a->within;
    }
    a->sum_sq += d * d;
    a->allowed_sq += allowed * allowed;
    a->want_sq += w[j] * w[j];
    ++a->finite;
  }
}

}  // namespace

void Agreement::Add(const Array& got, const Array& want, double atol, double rtol,
                    std::optional<Precision> ulp_of) {
  AddPairs(this, got, want, [&](std::size_t, double w) {
    return atol + rtol * std::fabs(w) + (ulp_of ? UlpOf(w, *ulp_of) : 0.0);
  });
}

void Agreement::AddScaled(const Array& got, const Array& want, double atol_per_scale,
                          const std::vector<double>& scale, double rtol) {
  if (scale.size() != want.data.size()) {
    all_within = sizes_match = false;
    ++violations;
    return;
  }
  AddPairs(this, got, want, [&](std::size_t j, double w) {
    return atol_per_scale * scale[j] + rtol * std::fabs(w);
  });
}

double Agreement::rmse() const {
  return finite > 0 ? std::sqrt(sum_sq / static_cast<double>(finite)) : 0.0;
}

double Agreement::rel_rmse() const {
  if (want_sq > 0) return std::sqrt(sum_sq / want_sq);
  return sum_sq > 0 ? INFINITY : 0.0;
}

double Agreement::allowed_rms() const {
  return finite > 0 ? std::sqrt(allowed_sq / static_cast<double>(finite)) : 0.0;
}

double Agreement::share_within() const {
  if (!sizes_match || within + violations == 0) return 0.0;
  return static_cast<double>(within) / static_cast<double>(within + violations);
}

bool Agreement::within_bound() const {
  if (all_within) return true;
  constexpr int64_t kRare = 100000;  // one violation allowed per this many pairs
  constexpr double kMaxExcess = 4.0;
  return sizes_match && nonfinite_match && violations <= finite / kRare &&
         max_excess <= kMaxExcess && rmse() <= allowed_rms();
}

Agreement Agree(const std::vector<Array>& got, const std::vector<Array>& want, double atol,
                double rtol, std::optional<Precision> ulp_of) {
  Agreement r;
  if (got.size() != want.size()) {
    r.all_within = r.sizes_match = false;
    return r;
  }
  for (std::size_t i = 0; i < got.size(); ++i) r.Add(got[i], want[i], atol, rtol, ulp_of);
  return r;
}

bool Reproduces(const Agreement& variant, const Agreement& plain) {
  return variant.sizes_match && variant.nonfinite_match && variant.finite > 0 &&
         variant.share_within() >= kVariantShare && variant.rmse() <= variant.allowed_rms() &&
         variant.rmse() <= kVariantGain * plain.rmse();
}

std::string Variant::Describe() const {
  const bool truncated = rounding == Rounding::kTowardZero;
  std::string what = round_inputs && round_output ? " inputs and output"
                     : round_inputs               ? " inputs"
                                                  : " output";
  if (keep_added && round_inputs && precision != Precision::kTf32) what += ", the bias as is";
  return fmt::format("{}-{}{} ({})", PrecisionName(precision), truncated ? "truncated" : "rounded",
                     what, RoundingName(rounding));
}

std::vector<Variant> CandidateVariants(const std::string& op, std::optional<Precision> grid) {
  std::vector<Variant> out;
  if (IsMatmulOrConv(op)) {
    // Tensor cores take float32 operands converted inside the kernel, each library its own way
    // (PTX cvt.rna / cvt.rn / cvt.rz to tf32; CUTLASS's round_half_ulp_truncate is RNA).
    for (Rounding r : {Rounding::kNearestEven, Rounding::kNearestAway, Rounding::kTowardZero}) {
      out.push_back({Precision::kTf32, r, true, false});
    }
  }
  // bf16 and fp16 operands are tensors converted before the op, by the framework's casts
  // (autocast, .to(dtype)), which round to nearest even.
  for (Precision p : {Precision::kBFloat16, Precision::kFloat16}) {
    const bool on_grid = grid == p;
    out.push_back({p, Rounding::kNearestEven, true, on_grid});
    // Computed from full-precision inputs but stored through the narrow type.
    if (on_grid) out.push_back({p, Rounding::kNearestEven, false, true});
  }
  // fp16 operands with the bias added in float32: what tf32 computes, where fp16's range holds.
  if (IsMatmulOrConv(op)) {
    out.push_back({Precision::kFloat16, Rounding::kNearestEven, true, false, true});
  }
  return out;
}

namespace {

// Whether input `i` of `call` is a float tensor, and whether it is the op's added term (an aten
// op's bias, or addmm's and baddbmm's self: FamilyOf's first input is 1 when self is 0).
bool FloatInput(const OpCall& call, std::size_t i) {
  return i >= call.input_dtypes.size() || IsFloat(call.input_dtypes[i]);
}

bool AddedInput(const OpCall& call, std::size_t i) {
  const std::size_t added_at = FamilyOf(call.op).first_input;
  const std::string_view arg =
      i < call.input_args.size() ? std::string_view(call.input_args[i]) : "";
  return arg == "bias" || (added_at > 0 && arg == "self");
}

// Whether `call` has an added term (a bias param or input, addmm's self).
bool HasAddedTerm(const OpCall& call) {
  for (std::size_t i = 0; i < call.inputs.size(); ++i) {
    if (AddedInput(call, i)) return true;
  }
  return call.Param("bias") != nullptr;
}

// `call` replayed with its float operands rounded to `p` in mode `r` (when `round_inputs`;
// the added term only when `round_added`) and its outputs to `p` (when `round_output`).
Result<std::vector<Array>> ReplayRounded(const OpCall& call, Precision p, Rounding r,
                                         bool round_inputs, bool round_added, bool round_output) {
  OpCall rounded = call;
  if (round_inputs) {
    auto round_all = [&](Array& a) {
      for (double& x : a.data) x = RoundTo(x, p, r);
    };
    for (std::size_t i = 0; i < rounded.inputs.size(); ++i) {
      if (!round_added && AddedInput(call, i)) continue;
      if (FloatInput(call, i)) round_all(rounded.inputs[i]);
    }
    for (auto& [key, a] : rounded.params) {
      if (!round_added && key == "bias") continue;
      round_all(a);
    }
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<Array> outputs, Replay(rounded));
  if (round_output) {
    for (Array& a : outputs) {
      for (double& x : a.data) x = RoundTo(x, p);
    }
  }
  return outputs;
}

// "1.5e+05" for the texts of the range test.
std::string Magnitude(double x) { return fmt::format("{:.3g}", x); }

// Whether the data tell fp16 from tf32 where `best` (an inputs-only variant of a matmul or
// convolution in one of them) reproduced `outputs` with agreement `agree`: the other precision's
// replay, the added term treated as `best` treats it, to nearest even. Fills `f`'s
// fp16_or_tf32 and ten_bits_evidence.
void TellTenBitsApart(const OpCall& call, const std::vector<Array>& outputs, const Variant& best,
                      const Agreement& agree, const Agreement& plain, double atol, double rtol,
                      PrecisionFinding* f) {
  const Precision other =
      best.precision == Precision::kTf32 ? Precision::kFloat16 : Precision::kTf32;
  const bool round_added = best.precision != Precision::kTf32 && !best.keep_added;
  const Fp16RangeCheck range = CheckFp16Range(call, round_added);
  auto twin = ReplayRounded(call, other, Rounding::kNearestEven, true, round_added, false);
  const std::optional<Agreement> by_twin =
      twin.ok() ? std::optional(Agree(outputs, *twin, atol, rtol)) : std::nullopt;
  const bool reproduces = by_twin && Reproduces(*by_twin, plain);
  // The best's residual, but never below float32's own rounding of the output: an output
  // stored in float32 is no closer to any replay than that.
  const double floor =
      std::ldexp(1.0, -24) *
      (agree.finite > 0 ? std::sqrt(agree.want_sq / static_cast<double>(agree.finite)) : 0.0);
  const double best_rmse = std::max(agree.rmse(), floor);
  if (!twin.ok() || (reproduces && !(by_twin->rmse() > kTellApart * best_rmse))) {
    f->fp16_or_tf32 = true;
    std::erase_if(f->equally_close, [&](const Variant& v) { return v.precision == other; });
    f->ten_bits_evidence =
        range.outside == 0
            ? std::string(
                  "fp16 and tf32 round these operands alike: none lies outside fp16's normal "
                  "range")
            : fmt::format(
                  "the {} operand value{} outside fp16's normal range (non-zero |x| from {} to "
                  "{}) move{} the output too little to tell fp16 from tf32",
                  range.outside, range.outside == 1 ? "" : "s", Magnitude(range.smallest_nonzero),
                  Magnitude(range.largest), range.outside == 1 ? "s" : "");
    if (best.rounding != Rounding::kNearestEven) {
      f->ten_bits_evidence += fmt::format(
          "; rounded to nearest even, as a cast to fp16 rounds, they replay within {}x as close",
          kTellApart);
    }
    return;
  }
  const std::string how_far =
      reproduces ? fmt::format("the {} replay is {:.2g}x as far from the output",
                               PrecisionName(other), by_twin->rmse() / best_rmse)
                 : fmt::format("the {} replay does not reproduce the output", PrecisionName(other));
  if (best.precision == Precision::kTf32 && best.rounding != Rounding::kNearestEven) {
    f->ten_bits_evidence = fmt::format(
        "the operands are rounded {}, as no cast to fp16 rounds (casts round to nearest "
        "even): {}",
        best.rounding == Rounding::kTowardZero ? "toward zero" : "with ties away from zero",
        how_far);
    return;
  }
  if (range.outside == 0) {  // not expected: in range both round alike
    f->ten_bits_evidence = "the fp16 and tf32 replays differ: " + how_far;
    return;
  }
  f->ten_bits_evidence = fmt::format(
      "{} operand value{} outside fp16's normal range (non-zero |x| from {} to {}), where fp16 and "
      "tf32 round differently: {}",
      range.outside, range.outside == 1 ? " lies" : "s lie", Magnitude(range.smallest_nonzero),
      Magnitude(range.largest), how_far);
}

}  // namespace

bool InFp16NormalRange(double x) {
  const double m = std::fabs(x);
  return !std::isfinite(x) || m == 0.0 || (m >= std::ldexp(1.0, -14) && m <= 65504.0);
}

Fp16RangeCheck CheckFp16Range(const OpCall& call, bool with_added) {
  Fp16RangeCheck r;
  auto scan = [&](const Array& a) {
    for (double x : a.data) {
      if (!std::isfinite(x)) continue;
      const double m = std::fabs(x);
      if (!InFp16NormalRange(x)) ++r.outside;
      r.largest = std::max(r.largest, m);
      if (m > 0.0 && (r.smallest_nonzero == 0.0 || m < r.smallest_nonzero)) r.smallest_nonzero = m;
    }
  };
  for (std::size_t i = 0; i < call.inputs.size(); ++i) {
    if (FloatInput(call, i) && (with_added || !AddedInput(call, i))) scan(call.inputs[i]);
  }
  for (const auto& [key, a] : call.params) {
    if (with_added || key != "bias") scan(a);
  }
  return r;
}

Result<std::vector<Array>> ReplayVariant(const OpCall& call, const Variant& variant) {
  // tf32 rounds what the tensor cores multiply; the bias is added in float32 afterwards.
  return ReplayRounded(call, variant.precision, variant.rounding, variant.round_inputs,
                       variant.precision != Precision::kTf32 && !variant.keep_added,
                       variant.round_output);
}

std::string MagnitudeText(const Tolerance& tolerance, double local_rmse) {
  const double scale = tolerance.scale.value_or(0.0);
  if (!(scale > 0) || !(local_rmse > 0)) return "";
  // Rounding the operands perturbs each summand by about u, so the sum by about u times the
  // summands' l2 norm (the scale); float32 accumulation adds √K·u32 of it.
  const double log2u = std::log2(local_rmse / scale);
  const char* nearest = log2u > -9.5    ? "2^-8 (bf16)"
                        : log2u > -17.5 ? "2^-11 (tf32, fp16)"
                                        : "2^-24 (float32)";
  return fmt::format("magnitude: rms error ≈ 2^{:.1f} × the {} scale, one rounding at u = {}",
                     log2u, tolerance.scale_source == "summands" ? "summands'" : "output's",
                     nearest);
}

PrecisionFinding InferPrecision(const OpCall& call, const std::vector<Array>& outputs,
                                const Tolerance& tolerance, double local_rmse) {
  PrecisionFinding f;
  f.magnitude = MagnitudeText(tolerance, local_rmse);
  // float32's allowance: what separates the candidate's own rounding from fp32 accumulation.
  const double atol = tolerance.atol, rtol = tolerance.rtol;
  f.grid = OutputGrid(outputs);
  auto plain_replay = Replay(call);
  if (!plain_replay.ok()) {
    f.precision = f.grid;
    return f;
  }
  const Agreement plain = Agree(outputs, *plain_replay, atol, rtol);
  // Accurate in float32 but for a few elements (another summation order): nothing to infer.
  if (plain.share_within() >= kVariantShare) {
    f.grid.reset();
    return f;
  }
  std::optional<Agreement> best;
  const bool has_added = HasAddedTerm(call);
  for (const Variant& v : CandidateVariants(call.op, f.grid)) {
    if (v.keep_added && !has_added) continue;  // the same replay as without
    auto replayed = ReplayVariant(call, v);
    if (!replayed.ok()) continue;
    const Agreement agree = Agree(outputs, *replayed, atol, rtol,
                                  v.round_output ? std::optional(v.precision) : std::nullopt);
    if (!Reproduces(agree, plain)) continue;
    if (best && agree.sum_sq == best->sum_sq) {
      f.equally_close.push_back(v);
    } else if (!best || agree.sum_sq < best->sum_sq) {
      best = agree;
      f.variant = v;
      f.equally_close.clear();
    }
  }
  if (best) {
    f.precision = f.variant->precision;
    f.variant_rel_rmse = best->rel_rmse();
    f.variant_share = best->share_within();
    const bool ten_bits =
        f.variant->precision == Precision::kTf32 || f.variant->precision == Precision::kFloat16;
    if (ten_bits && IsMatmulOrConv(call.op) && f.variant->round_inputs &&
        !f.variant->round_output) {
      TellTenBitsApart(call, outputs, *f.variant, *best, plain, atol, rtol, &f);
    }
  } else if (f.grid) {
    f.precision = f.grid;
  }
  return f;
}

}  // namespace parity
