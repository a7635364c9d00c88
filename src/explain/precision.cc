// SPDX-License-Identifier: Apache-2.0
#include "explain/precision.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>

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

void Agreement::Add(const Array& got, const Array& want, double atol, double rtol,
                    std::optional<Precision> ulp_of) {
  if (got.data.size() != want.data.size()) {
    all_within = sizes_match = false;
    ++violations;
    return;
  }
  const std::vector<double>& g = got.data;
  const std::vector<double>& w = want.data;
  for (std::size_t j = 0; j < g.size(); ++j) {
    if (!std::isfinite(g[j]) || !std::isfinite(w[j])) {
      const bool same = (std::isnan(g[j]) && std::isnan(w[j])) || g[j] == w[j];
      if (!same) {
        nonfinite_match = all_within = false;
        ++violations;
      }
      continue;
    }
    const double d = g[j] - w[j];
    double allowed = atol + rtol * std::fabs(w[j]);
    if (ulp_of) allowed += UlpOf(w[j], *ulp_of);
    if (std::fabs(d) > allowed) {
      all_within = false;
      ++violations;
      max_excess = std::max(max_excess, allowed > 0 ? std::fabs(d) / allowed : INFINITY);
    } else {
      ++within;
    }
    sum_sq += d * d;
    allowed_sq += allowed * allowed;
    want_sq += w[j] * w[j];
    ++finite;
  }
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
  const std::string what = round_inputs && round_output ? " inputs and output"
                           : round_inputs               ? " inputs"
                                                        : " output";
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
  return out;
}

Result<std::vector<Array>> ReplayVariant(const OpCall& call, const Variant& variant) {
  OpCall rounded = call;
  if (variant.round_inputs) {
    auto round_all = [&](Array& a) {
      for (double& x : a.data) x = RoundTo(x, variant.precision, variant.rounding);
    };
    // An aten op's added term (convolution's bias, addmm's and baddbmm's self) is an input.
    const std::size_t added_at = FamilyOf(call.op).first_input;  // 1 for addmm: self is 0
    for (std::size_t i = 0; i < rounded.inputs.size(); ++i) {
      const bool is_float = i >= rounded.input_dtypes.size() || IsFloat(rounded.input_dtypes[i]);
      const std::string_view arg =
          i < rounded.input_args.size() ? std::string_view(rounded.input_args[i]) : "";
      const bool added_term = arg == "bias" || (added_at > 0 && arg == "self");
      if (variant.precision == Precision::kTf32 && added_term) continue;
      if (is_float) round_all(rounded.inputs[i]);
    }
    for (auto& [key, a] : rounded.params) {
      // tf32 rounds what the tensor cores multiply; the bias is added in float32 afterwards.
      if (variant.precision == Precision::kTf32 && key == "bias") continue;
      round_all(a);
    }
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<Array> outputs, Replay(rounded));
  if (variant.round_output) {
    for (Array& a : outputs) {
      for (double& x : a.data) x = RoundTo(x, variant.precision);
    }
  }
  return outputs;
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
  for (const Variant& v : CandidateVariants(call.op, f.grid)) {
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
  } else if (f.grid) {
    f.precision = f.grid;
  }
  return f;
}

}  // namespace parity
