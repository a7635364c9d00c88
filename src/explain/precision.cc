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

bool IsMatmulOrConv(const std::string& op) {
  return op == "linear" || op == "matmul" || op == "bmm" || op == "conv1d" || op == "conv2d" ||
         op == "scaled_dot_product_attention";
}

bool OnGrid(double x, Precision p) { return RoundTo(x, p) == x; }

}  // namespace

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

double RoundTo(double x, Precision p, bool truncate) {
  if (!std::isfinite(x)) return x;
  const float f = static_cast<float>(x);
  switch (p) {
    case Precision::kTf32:
      if (truncate) return std::bit_cast<float>(std::bit_cast<uint32_t>(f) & 0xffffe000u);
      return RoundToTf32(f);
    case Precision::kBFloat16:
      if (truncate) return std::bit_cast<float>(std::bit_cast<uint32_t>(f) & 0xffff0000u);
      return BFloat16ToFloat(DoubleToBFloat16(x));
    case Precision::kFloat16:
      return HalfToFloat(DoubleToHalf(x));
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
    all_within = false;
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
    }
    sum_sq += d * d;
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

Agreement Agree(const std::vector<Array>& got, const std::vector<Array>& want, double atol,
                double rtol, std::optional<Precision> ulp_of) {
  Agreement r;
  if (got.size() != want.size()) {
    r.all_within = false;
    return r;
  }
  for (std::size_t i = 0; i < got.size(); ++i) r.Add(got[i], want[i], atol, rtol, ulp_of);
  return r;
}

std::string Variant::Describe() const {
  const std::string name = PrecisionName(precision) + (truncate ? "-truncated" : "-rounded");
  if (round_inputs && round_output) return name + " inputs and output";
  if (round_inputs) return name + " inputs";
  return name + " output";
}

std::vector<Variant> CandidateVariants(const std::string& op, std::optional<Precision> grid) {
  std::vector<Variant> out;
  if (IsMatmulOrConv(op)) {
    out.push_back({Precision::kTf32, false, true, false});
    out.push_back({Precision::kTf32, true, true, false});
  }
  for (Precision p : {Precision::kBFloat16, Precision::kFloat16}) {
    const bool on_grid = grid == p;
    out.push_back({p, false, true, on_grid});
    // Computed from full-precision inputs but stored through the narrow type.
    if (on_grid) out.push_back({p, false, false, true});
  }
  return out;
}

Result<std::vector<Array>> ReplayVariant(const OpCall& call, const Variant& variant) {
  OpCall rounded = call;
  if (variant.round_inputs) {
    auto round_all = [&](Array& a) {
      for (double& x : a.data) x = RoundTo(x, variant.precision, variant.truncate);
    };
    for (std::size_t i = 0; i < rounded.inputs.size(); ++i) {
      const bool is_float = i >= rounded.input_dtypes.size() || IsFloat(rounded.input_dtypes[i]);
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
  f.grid = OutputGrid(outputs);
  // float32's allowance: what separates the candidate's own rounding from fp32 accumulation.
  const double atol = tolerance.atol, rtol = tolerance.rtol;
  for (const Variant& v : CandidateVariants(call.op, f.grid)) {
    auto replayed = ReplayVariant(call, v);
    if (!replayed.ok()) continue;
    const Agreement agree = Agree(outputs, *replayed, atol, rtol,
                                  v.round_output ? std::optional(v.precision) : std::nullopt);
    if (agree.all_within) {
      f.precision = v.precision;
      f.variant = v;
      f.variant_rel_rmse = agree.rel_rmse();
      break;
    }
  }
  if (!f.precision && f.grid) f.precision = f.grid;
  f.magnitude = MagnitudeText(tolerance, local_rmse);
  return f;
}

}  // namespace parity
