// SPDX-License-Identifier: Apache-2.0
#include "explain/side_evidence.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "explain/platform.h"
#include "explain/record_checks.h"
#include "oracle/oracle.h"

namespace parity::explain_internal {
namespace {

std::string StripPrefix(std::string message) {
  constexpr std::string_view kPrefix = "not replayable: ";
  if (message.starts_with(kPrefix)) message.erase(0, kPrefix.size());
  return message;
}

// "inputs rounded to 10 fraction bits (ties to even)": a variant that fp16 and tf32 replay
// alike, named without picking one.
std::string TenBitsDescribe(const Variant& v) {
  return fmt::format("inputs rounded to 10 fraction bits ({})", RoundingName(v.rounding));
}

}  // namespace

std::string MatchText(double rel_rmse) {
  return rel_rmse == 0.0 ? "exactly" : "to " + Sci(rel_rmse) + " (relative rms)";
}

std::string ShareText(double share) {
  return share < 1.0 ? fmt::format(" at {:.1f}% of its elements", 100.0 * share) : "";
}

Result<SideEval> Evaluate(const DumpRecord& record, const LoadedRecord& loaded) {
  SideEval e;
  if (!Replayable(record.op)) {
    e.not_replayed = NotReplayableReason(record);
    return e;
  }
  auto replayed = Replay(loaded.call);
  if (!replayed.ok()) {
    e.not_replayed = StripPrefix(replayed.status().message());
    return e;
  }
  if (replayed->size() != loaded.outputs.size()) {
    e.not_replayed = fmt::format("the replay gives {} outputs, the record has {}", replayed->size(),
                                 loaded.outputs.size());
    return e;
  }
  e.oracle = std::move(*replayed);
  for (std::size_t i = 0; i < e.oracle.size(); ++i) {
    if (e.oracle[i].shape != loaded.outputs[i].meta().shape) {
      e.not_replayed = "the replay's output shape differs from the record's";
      e.oracle.clear();
      return e;
    }
    PARITY_ASSIGN_OR_RETURN(Tolerance t, OutputTolerance(record, loaded, i, {}));
    if (t.needs_output_scale) {
      double sq = 0.0;
      int64_t n = 0;
      for (double x : e.oracle[i].data) {
        if (std::isfinite(x)) sq += x * x, ++n;
      }
      t.SetOutputScale(n > 0 ? std::sqrt(sq / static_cast<double>(n)) : 0.0);
    }
    const Array& got = loaded.call.recorded_outputs[i];
    if (t.criterion == Criterion::kBitwise) {
      // Data movement: the oracle rounded to the stored dtype, exactly.
      const Tensor rounded = FromArray(e.oracle[i], loaded.outputs[i].dtype(), "oracle");
      PARITY_ASSIGN_OR_RETURN(Array want, ToArray(rounded));
      e.local.Add(got, want, 0.0, 0.0);
    } else if (t.criterion == Criterion::kUlps) {
      e.local.Add(got, e.oracle[i], 0.0, 2.0 * static_cast<double>(t.max_ulps) * t.u_storage);
    } else if (t.element_scale) {
      e.local.AddScaled(got, e.oracle[i], t.atol_per_scale, *t.element_scale, t.rtol);
    } else {
      e.local.Add(got, e.oracle[i], t.atol, t.rtol);
    }
    if (i == 0) e.tolerance = t;
  }
  e.replayed = true;
  return e;
}

bool ComparableErrors(const SideEval& a, const SideEval& b) {
  const double x = a.local.rel_rmse(), y = b.local.rel_rmse();
  if (!std::isfinite(x) || !std::isfinite(y) || !(x > 0) || !(y > 0)) return false;
  return std::max(x, y) <= kComparableErrors * std::min(x, y);
}

std::string BoundText(const Tolerance& t) {
  if (t.criterion == Criterion::kBitwise) return "bitwise";
  if (t.k) return fmt::format("the float32 bound λ√K·u, K={}", *t.k);
  return "the float32 bound";
}

std::string LocalText(const std::string& side, const SideEval& e) {
  if (!e.replayed) return fmt::format("{} not replayed ({})", side, e.not_replayed);
  return fmt::format("{}'s local error {} of rms", side, Sci(e.local.rel_rmse()));
}

std::string SidePrecision::Name() const {
  return precision ? PrecisionName(*precision) : std::string(kFp16OrTf32);
}

std::optional<SidePrecision> PrecisionEvidence(const std::string& side, const std::string& op,
                                               const LoadedRecord& l, const SideEval& e,
                                               const Json& manifest) {
  const PrecisionFinding f =
      InferPrecision(l.call, l.call.recorded_outputs, e.tolerance, e.local.rmse());
  if (!f.precision) return std::nullopt;
  SidePrecision s;
  s.precision = f.precision;
  std::string settled = f.ten_bits_evidence;
  if (f.fp16_or_tf32) {
    const TenBitsResolution r = ResolveTenBits(side, manifest, op);
    s.precision = r.precision;
    settled += "; " + r.why;
  }
  std::string text = fmt::format("{} is beyond {}", LocalText(side, e), BoundText(e.tolerance));
  if (!f.magnitude.empty()) text += " (" + f.magnitude + ")";
  if (f.variant) {
    const std::string ran =
        s.precision ? PrecisionName(*s.precision) : "fp16 or tf32: 10 fraction bits";
    text += fmt::format("; a replay with {} matches {} {}{}: {} ran in {}",
                        f.fp16_or_tf32 ? TenBitsDescribe(*f.variant) : f.variant->Describe(), side,
                        MatchText(f.variant_rel_rmse), ShareText(f.variant_share), op, ran);
    if (!f.fp16_or_tf32 && f.variant->precision == Precision::kTf32) {
      text += fmt::format(" ({})", RoundingName(f.variant->rounding));
    }
    if (!settled.empty()) text += " (" + settled + ")";
    for (const Variant& v : f.equally_close) {
      const bool other_mode = f.fp16_or_tf32 && v.precision == f.variant->precision &&
                              v.rounding != f.variant->rounding;
      if (other_mode && s.precision == Precision::kFloat16) continue;  // casts round to even
      text += other_mode
                  ? fmt::format(
                        " (rounding {} matches equally: the data cannot tell the modes "
                        "apart)",
                        RoundingName(v.rounding))
                  : fmt::format(" (one with {} matches equally: the data cannot tell them apart)",
                                v.Describe());
    }
  } else {
    text += fmt::format(
        "; {}'s outputs all lie on the {} grid, though no replay variant "
        "reproduces them: {} stored or computed in {}",
        side, s.Name(), op, s.Name());
  }
  s.text = text + ManifestNote(side, manifest, op, s.precision);
  return s;
}

}  // namespace parity::explain_internal
