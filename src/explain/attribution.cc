// SPDX-License-Identifier: Apache-2.0
#include "explain/attribution.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "compare/context.h"
#include "compare/tolerance.h"
#include "core/dtype.h"
#include "explain/precision.h"
#include "explain/record_checks.h"
#include "explain/side_evidence.h"
#include "oracle/replay.h"

namespace parity {
namespace {

using explain_internal::AttrDifference;
using explain_internal::BoundText;
using explain_internal::ComparableErrors;
using explain_internal::CompareMasks;
using explain_internal::Difference;
using explain_internal::Evaluate;
using explain_internal::ExplainFromStats;
using explain_internal::ExplainNotComparable;
using explain_internal::HasStatsOnly;
using explain_internal::IsCastOp;
using explain_internal::IsRandomOp;
using explain_internal::kComparableErrors;
using explain_internal::LocalText;
using explain_internal::MaskTest;
using explain_internal::MatchText;
using explain_internal::NotComparableTensors;
using explain_internal::PrecisionEvidence;
using explain_internal::RateAgrees;
using explain_internal::SamplesAgree;
using explain_internal::Sci;
using explain_internal::ShareText;
using explain_internal::SideEval;
using explain_internal::SidePrecision;
using explain_internal::StructuralMismatch;

bool AllFinite(const OpCall& call) {
  auto finite = [](const Array& a) {
    return std::all_of(a.data.begin(), a.data.end(), [](double x) { return std::isfinite(x); });
  };
  return std::all_of(call.inputs.begin(), call.inputs.end(), finite) &&
         std::all_of(call.params.begin(), call.params.end(),
                     [&](const auto& p) { return finite(p.second); });
}

// --- reduced precision -----------------------------------------------------------------------

std::optional<Precision> PrecisionOfDType(DType d) {
  if (d == DType::kBFloat16) return Precision::kBFloat16;
  if (d == DType::kFloat16) return Precision::kFloat16;
  return std::nullopt;
}

// The widest float dtype among a record's inputs and params (its item size; 0 when none).
DType WidestFloatInput(const LoadedRecord& l) {
  DType widest = DType::kBool;
  auto consider = [&](DType d) {
    if (IsFloat(d) && (!IsFloat(widest) || ItemSize(d) > ItemSize(widest))) widest = d;
  };
  for (const Tensor& t : l.inputs) consider(t.dtype());
  for (const auto& [key, t] : l.params) consider(t.dtype());
  return widest;
}

// When side X stores its output in a narrower float dtype than the other side and than its
// own inputs (autocast at the module level), or runs a matmul or convolution on operands
// narrower than the other side's (autocast at the aten level, whose casts are records of
// their own), the narrow dtype it computed in.
std::optional<Precision> CastDown(const std::string& op, const LoadedRecord& x,
                                  const LoadedRecord& other) {
  if (x.outputs.empty() || other.outputs.empty()) return std::nullopt;
  const DType dx = x.outputs[0].dtype(), dother = other.outputs[0].dtype();
  if (!IsFloat(dx) || !IsFloat(dother) || ItemSize(dx) >= ItemSize(dother)) return std::nullopt;
  const DType widest = WidestFloatInput(x), other_widest = WidestFloatInput(other);
  if (!IsFloat(widest)) return std::nullopt;
  if (ItemSize(dx) < ItemSize(widest)) return PrecisionOfDType(dx);
  if (IsMatmulOrConv(op) && IsFloat(other_widest) && ItemSize(widest) < ItemSize(other_widest)) {
    return PrecisionOfDType(dx);
  }
  return std::nullopt;
}

std::string Side(bool b) { return b ? "B" : "A"; }

std::string InputNote(const OpExplanation& e) {
  if (e.inputs_identical) return "";
  return fmt::format("; its inputs also differ by {}", Sci(e.input_diff.value_or(0.0)));
}

}  // namespace

std::string_view CauseName(Cause cause) {
  switch (cause) {
    case Cause::kIdentical:
      return "identical";
    case Cause::kWithinRounding:
      return "within-rounding";
    case Cause::kReducedPrecision:
      return "reduced-precision";
    case Cause::kRngDivergence:
      return "rng-divergence";
    case Cause::kNonfinite:
      return "nonfinite";
    case Cause::kInherited:
      return "inherited";
    case Cause::kAlgorithmic:
      return "algorithmic";
    case Cause::kStructural:
      return "structural";
    case Cause::kNotJudged:
      return "not-judged";
  }
  return "?";
}

bool IsOrigin(Cause cause) {
  return cause != Cause::kIdentical && cause != Cause::kWithinRounding &&
         cause != Cause::kInherited && cause != Cause::kNotJudged;
}

Result<OpExplanation> ExplainPair(const DumpDir& a, const DumpRecord* ra, const DumpDir& b,
                                  const DumpRecord* rb, const DivergedBefore& diverged_inside) {
  OpExplanation e;
  const DumpRecord& any = ra != nullptr ? *ra : *rb;
  e.seq = any.seq;
  e.rank = any.rank;
  e.step = any.step;
  e.call = any.call;
  e.name = any.name;
  e.op = any.op;
  e.pass = any.pass;
  if (ra != nullptr) e.source = ra->source;
  if (!e.source && rb != nullptr) e.source = rb->source;
  if (ra == nullptr || rb == nullptr) {
    e.replayed = false;
    if (IsCastOp(any.op)) {  // autocast's casts: matched around, never an origin
      const std::string to =
          any.outputs.empty() ? std::string("another dtype") : any.outputs[0].DTypeName();
      e.cause = Cause::kInherited;
      e.reason = fmt::format(
          "a cast to {} recorded in {} only (as autocast inserts): matched "
          "around, not an origin",
          to, ra != nullptr ? "A" : "B");
      return e;
    }
    e.cause = Cause::kStructural;
    e.reason = fmt::format("recorded in {} only", ra != nullptr ? "A" : "B");
    return e;
  }
  e.time_us_a = ra->time_us;
  e.time_us_b = rb->time_us;
  if (std::string s = StructuralMismatch(*ra, *rb); !s.empty()) {
    e.cause = Cause::kStructural;
    e.reason = s;
    return e;
  }
  // A tensor the dumps do not hold (not stored, complex): never judged by what is absent.
  if (std::string what = NotComparableTensors(*ra, *rb); !what.empty()) {
    PARITY_RETURN_IF_ERROR(ExplainNotComparable(a, *ra, b, *rb, what, &e));
    return e;
  }
  if (HasStatsOnly(*ra) || HasStatsOnly(*rb)) {
    const std::string& hash_a = a.parts()[ra->part].hash;
    ExplainFromStats(*ra, *rb, !hash_a.empty() && hash_a == b.parts()[rb->part].hash, &e);
    return e;
  }
  PARITY_ASSIGN_OR_RETURN(LoadedRecord la, LoadRecord(a, *ra));
  PARITY_ASSIGN_OR_RETURN(LoadedRecord lb, LoadRecord(b, *rb));

  // How far apart the two sides' inputs, params and outputs are.
  double input_diff = 0.0;
  for (std::size_t i = 0; i < la.call.inputs.size(); ++i) {
    Difference d;
    d.Add(la.call.inputs[i], lb.call.inputs[i]);
    e.inputs_identical = e.inputs_identical && d.identical;
    input_diff = std::max(input_diff, d.rel());
  }
  for (std::size_t i = 0; i < la.call.params.size(); ++i) {
    Difference d;
    d.Add(la.call.params[i].second, lb.call.params[i].second);
    e.inputs_identical = e.inputs_identical && d.identical;
    e.params_differ = e.params_differ || !d.identical;
    input_diff = std::max(input_diff, d.rel());
  }
  e.input_diff = input_diff;
  Difference out;
  for (std::size_t i = 0; i < la.call.recorded_outputs.size(); ++i) {
    out.Add(la.call.recorded_outputs[i], lb.call.recorded_outputs[i]);
  }
  e.output_diff = out.rel();

  PARITY_ASSIGN_OR_RETURN(SideEval ea, Evaluate(*ra, la));
  PARITY_ASSIGN_OR_RETURN(SideEval eb, Evaluate(*rb, lb));
  e.replayed = ea.replayed && eb.replayed;
  if (ea.replayed) e.local_err_a = ea.local.rel_rmse();
  if (eb.replayed) e.local_err_b = eb.local.rel_rmse();
  const std::string locals = fmt::format("{}; {}", LocalText("A", ea), LocalText("B", eb));

  // NaN or Inf where the other side has finite values: where did it first appear?
  if (out.nonfinite_mismatch) {
    const bool on_b = out.nonfinite_b > out.nonfinite_a;
    const LoadedRecord& x = on_b ? lb : la;
    const SideEval& ex = on_b ? eb : ea;
    const int64_t count = on_b ? out.nonfinite_b : out.nonfinite_a;
    const int64_t other = on_b ? out.nonfinite_a : out.nonfinite_b;
    if (AllFinite(x.call)) {
      e.cause = Cause::kNonfinite;
      std::string replay_note = "not replayed";
      if (ex.replayed) {
        replay_note = ex.local.nonfinite_match ? "the float64 replay overflows the same way"
                                               : "the float64 replay on the same inputs is "
                                                 "finite there";
      }
      e.reason = fmt::format(
          "NaN/Inf first appears here on {}: {} non-finite output values "
          "({} has {}) from finite inputs; {}",
          Side(on_b), count, Side(!on_b), other, replay_note);
    } else {
      e.cause = Cause::kInherited;
      e.reason = fmt::format("{}'s non-finite outputs come with non-finite inputs", Side(on_b));
    }
    return e;
  }
  if (out.identical) {
    e.cause = Cause::kIdentical;
    e.reason = e.inputs_identical
                   ? "bitwise-equal outputs"
                   : fmt::format("bitwise-equal outputs although the inputs differ by {}",
                                 Sci(input_diff));
    return e;
  }

  // The same op called with other arguments (an optimizer's eps or lr, a norm's eps ...): a
  // different computation, whatever the rounding.
  if (std::string differ = AttrDifference(*ra, *rb); !differ.empty()) {
    e.cause = Cause::kAlgorithmic;
    e.reason = fmt::format("called with other arguments ({}); outputs differ by {}", differ,
                           Sci(*e.output_diff));
    return e;
  }

  // Random ops: masks that differ elementwise but agree in rate.
  if ((e.op == "dropout" || e.op == "native_dropout") && e.replayed) {
    const MaskTest m = CompareMasks(la.call, lb.call);
    if (m.applies && m.disagree > 0) {
      if (!ea.within() || !eb.within()) {
        e.cause = Cause::kAlgorithmic;
        e.reason = fmt::format("kept values are not input/(1-p) on {}: {}",
                               !eb.within() ? "B" : "A", locals);
        return e;
      }
      const bool rate_a = RateAgrees(m.rate_a, m.p, m.n), rate_b = RateAgrees(m.rate_b, m.p, m.n);
      const double share = static_cast<double>(m.disagree) / static_cast<double>(m.n);
      if (rate_a && rate_b) {
        e.cause = Cause::kRngDivergence;
        e.reason = fmt::format(
            "dropout masks differ at {:.1f}% of positions (independent masks: {:.1f}%) but drop "
            "rates A {:.4f}, B {:.4f} agree with p = {} over {} elements: different random "
            "streams, same distribution",
            100.0 * share, 100.0 * 2.0 * m.p * (1.0 - m.p), m.rate_a, m.rate_b, m.p, m.n);
      } else {
        e.cause = Cause::kAlgorithmic;
        e.reason = fmt::format("drop rate {} {:.4f} is not p = {} (over {} elements, ±{:.4f})",
                               rate_b ? "A" : "B", rate_b ? m.rate_a : m.rate_b, m.p, m.n,
                               5.0 * std::sqrt(m.p * (1.0 - m.p) / static_cast<double>(m.n)));
      }
      return e;
    }
  }

  // A side that stores the output narrower than the other and than its own inputs cast down
  // (autocast): reduced precision, confirmed by a replay where possible.
  for (bool on_b : {true, false}) {
    const LoadedRecord& x = on_b ? lb : la;
    const LoadedRecord& other = on_b ? la : lb;
    const std::optional<Precision> p = CastDown(e.op, x, other);
    if (!p) continue;
    const SideEval& ex = on_b ? eb : ea;
    e.cause = Cause::kReducedPrecision;
    e.effective_precision = PrecisionName(*p);
    e.reason = fmt::format(
        "{} computes {} in {} ({} output from {} operands, cast down as "
        "autocast does; {} keeps {})",
        Side(on_b), e.op, PrecisionName(*p), Name(x.outputs[0].dtype()), Name(WidestFloatInput(x)),
        Side(!on_b), Name(other.outputs[0].dtype()));
    if (ex.replayed) {
      const Variant v{*p, Rounding::kNearestEven, true, true};
      if (auto replayed = ReplayVariant(x.call, v); replayed.ok()) {
        const Agreement agree =
            Agree(x.call.recorded_outputs, *replayed, ex.tolerance.atol, ex.tolerance.rtol, *p);
        e.reason +=
            Reproduces(agree, ex.local)
                ? fmt::format("; a replay with {} matches {} {}{}", v.Describe(), Side(on_b),
                              MatchText(agree.rel_rmse()), ShareText(agree.share_within()))
                : fmt::format("; a replay with {} differs from {} by {}", v.Describe(), Side(on_b),
                              Sci(agree.rel_rmse()));
      }
    }
    e.reason += InputNote(e);
    return e;
  }

  if (e.replayed) {
    if (ea.within() && eb.within()) {
      if (e.inputs_identical) {
        e.cause = Cause::kWithinRounding;
        e.reason = fmt::format(
            "both sides within {} of their float64 replays ({}); outputs "
            "differ by {}",
            BoundText(eb.tolerance), locals, Sci(*e.output_diff));
      } else {
        e.cause = Cause::kInherited;
        e.reason = fmt::format(
            "accurate on its own inputs on both sides ({}); its inputs "
            "differ by {}",
            locals, Sci(input_diff));
      }
      return e;
    }
    // Beyond the float32 bound on at least one side: which precision reproduces it?
    std::vector<std::string> evidence;
    std::optional<SidePrecision> precision_b, precision_a;
    for (bool on_b : {true, false}) {
      const SideEval& ex = on_b ? eb : ea;
      if (ex.within()) continue;
      if (auto found = PrecisionEvidence(Side(on_b), e.op, on_b ? lb : la, ex,
                                         on_b ? b.ManifestFor(*rb) : a.ManifestFor(*ra))) {
        evidence.push_back(found->text);
        (on_b ? precision_b : precision_a) = std::move(found);
      }
    }
    // Both beyond by comparable errors: the bound is too tight for this call (A, the trusted
    // side, misses it as far), not a divergence B starts; unless a precision found on inputs
    // that differ explains it.
    if (!ea.within() && !eb.within() && ComparableErrors(ea, eb) &&
        (e.inputs_identical || (!precision_a && !precision_b))) {
      e.cause = Cause::kNotJudged;
      e.bound_too_tight = true;
      e.reason = fmt::format(
          "the bound is too tight here: both runs exceed {} by comparable errors ({}; within "
          "{}x of each other), so it cannot tell whether either computes {} worse than the other",
          BoundText(eb.tolerance), locals, kComparableErrors, e.op);
      for (const std::string& text : evidence) e.reason += "; " + text;
      e.reason += InputNote(e);
      return e;
    }
    if (precision_b || precision_a) {
      e.cause = Cause::kReducedPrecision;
      e.effective_precision = (precision_b ? *precision_b : *precision_a).Name();
      std::string text = evidence[0];
      for (std::size_t i = 1; i < evidence.size(); ++i) text += "; also " + evidence[i];
      const bool a_within = ea.within(), b_within = eb.within();
      if (precision_b && a_within) text += "; " + LocalText("A", ea);
      if (precision_a && b_within) text += "; " + LocalText("B", eb);
      e.reason = text + InputNote(e);
      return e;
    }
    const bool on_b = !eb.within();
    const SideEval& ex = on_b ? eb : ea;
    const std::string magnitude = MagnitudeText(ex.tolerance, ex.local.rmse());
    e.cause = Cause::kAlgorithmic;
    e.reason = fmt::format(
                   "{} is beyond {} ({} of {} elements past it){} and no tf32, bf16 or "
                   "fp16 replay reproduces it; {}",
                   LocalText(Side(on_b), ex), BoundText(ex.tolerance), ex.local.violations,
                   ex.local.finite + ex.local.violations, magnitude.empty() ? "" : ", " + magnitude,
                   LocalText(Side(!on_b), on_b ? ea : eb)) +
               InputNote(e);
    return e;
  }

  // Not replayed: compared only.
  const std::string why = !ea.replayed ? ea.not_replayed : eb.not_replayed;
  const std::string prefix = fmt::format("not replayed ({}); compared only", why);
  if (!e.inputs_identical) {
    e.cause = Cause::kInherited;
    e.reason = fmt::format("{}: its inputs differ by {}", prefix, Sci(input_diff));
    return e;
  }
  if (e.op == "module" && diverged_inside && diverged_inside(*ra)) {
    e.cause = Cause::kInherited;
    e.reason = prefix + ": a container whose inner calls differ (attributed there)";
    return e;
  }
  if (IsRandomOp(e.op) && !la.call.recorded_outputs.empty()) {
    // Equal inputs, different draws: different generator states give other values from the
    // same distribution (the manifests' digests say at which step the states part).
    bool agree_all = true;
    std::string figures;
    const std::size_t outputs =
        std::min(la.call.recorded_outputs.size(), lb.call.recorded_outputs.size());
    for (std::size_t i = 0; i < outputs && agree_all; ++i) {
      agree_all = SamplesAgree(la.call.recorded_outputs[i], lb.call.recorded_outputs[i], &figures);
    }
    e.cause = agree_all ? Cause::kRngDivergence : Cause::kAlgorithmic;
    e.reason =
        fmt::format("{}: a random op whose outputs differ on equal inputs; {} ({}){}", prefix,
                    agree_all ? "they agree in distribution: different random streams"
                              : "they do not agree in distribution",
                    figures, agree_all ? "" : ", beyond five standard errors");
    return e;
  }
  const Tensor& out_a = la.outputs[0];
  Tolerance t = ResolveTolerance(ToleranceRequest{}, {}, ra->name,
                                 RecordContext(*ra, "output", out_a.dtype(), out_a.meta().shape,
                                               {&a.ManifestFor(*ra), &b.ManifestFor(*rb)}));
  Agreement agree;
  for (std::size_t i = 0; i < la.call.recorded_outputs.size(); ++i) {
    const Array& x = la.call.recorded_outputs[i];
    if (t.needs_output_scale) {
      double sq = 0.0;
      for (double v : x.data) sq += std::isfinite(v) ? v * v : 0.0;
      t.SetOutputScale(x.data.empty() ? 0.0 : std::sqrt(sq / static_cast<double>(x.data.size())));
    }
    agree.Add(lb.call.recorded_outputs[i], x, t.atol, t.rtol);
  }
  if (agree.within_bound()) {
    e.cause = Cause::kWithinRounding;
    e.reason = fmt::format("{}: outputs differ by {}, within the {} tolerance ({})", prefix,
                           Sci(*e.output_diff), t.policy, t.reason);
    return e;
  }
  if (auto grid = OutputGrid(lb.call.recorded_outputs)) {
    e.cause = Cause::kReducedPrecision;
    e.effective_precision = PrecisionName(*grid);
    e.reason = fmt::format(
        "{}: on equal inputs B's outputs differ by {} and all lie on the {} "
        "grid",
        prefix, Sci(*e.output_diff), PrecisionName(*grid));
    return e;
  }
  e.cause = Cause::kAlgorithmic;
  e.reason = fmt::format(
      "{}: on equal inputs the outputs differ by {}, beyond the {} tolerance "
      "({})",
      prefix, Sci(*e.output_diff), t.policy, t.reason);
  return e;
}

}  // namespace parity
