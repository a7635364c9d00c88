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
#include "oracle/replay.h"

namespace parity {
namespace {

// --- differences between the two sides -------------------------------------------------------

struct Difference {
  bool identical = true;  // same values, NaN at the same places
  int64_t nonfinite_a = 0, nonfinite_b = 0;
  bool nonfinite_mismatch = false;
  double sum_sq = 0.0, a_sq = 0.0;

  void Add(const Array& a, const Array& b) {
    for (std::size_t j = 0; j < a.data.size() && j < b.data.size(); ++j) {
      const double x = a.data[j], y = b.data[j];
      const bool fx = std::isfinite(x), fy = std::isfinite(y);
      nonfinite_a += !fx;
      nonfinite_b += !fy;
      if (!fx || !fy) {
        const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
        if (!same) nonfinite_mismatch = true;
        identical = identical && same;
        continue;
      }
      identical = identical && x == y;
      sum_sq += (x - y) * (x - y);
      a_sq += x * x;
    }
  }
  double rel() const {
    if (a_sq > 0) return std::sqrt(sum_sq / a_sq);
    return sum_sq > 0 ? INFINITY : 0.0;
  }
};

bool AllFinite(const OpCall& call) {
  auto finite = [](const Array& a) {
    return std::all_of(a.data.begin(), a.data.end(), [](double x) { return std::isfinite(x); });
  };
  return std::all_of(call.inputs.begin(), call.inputs.end(), finite) &&
         std::all_of(call.params.begin(), call.params.end(),
                     [&](const auto& p) { return finite(p.second); });
}

std::string Sci(double x) { return fmt::format("{:.2g}", x); }

std::string MatchText(double rel_rmse) {
  return rel_rmse == 0.0 ? "exactly" : "to " + Sci(rel_rmse) + " (relative rms)";
}

// " at 99.6% of its elements" where a replay agrees with fewer than all of them.
std::string ShareText(double share) {
  return share < 1.0 ? fmt::format(" at {:.1f}% of its elements", 100.0 * share) : "";
}

// --- one side against the oracle -------------------------------------------------------------

struct SideEval {
  bool replayed = false;
  std::string not_replayed;  // why, when not
  std::vector<Array> oracle;
  Tolerance tolerance;  // the first output's, at float32 compute
  Agreement local;
  bool within() const { return replayed && local.within_bound(); }
};

std::string StripPrefix(std::string message) {
  constexpr std::string_view kPrefix = "not replayable: ";
  if (message.starts_with(kPrefix)) message.erase(0, kPrefix.size());
  return message;
}

// Replays one side and judges its outputs against the float32 bound of `auto`.
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
    } else {
      e.local.Add(got, e.oracle[i], t.atol, t.rtol);
    }
    if (i == 0) e.tolerance = t;
  }
  e.replayed = true;
  return e;
}

std::string BoundText(const Tolerance& t) {
  if (t.criterion == Criterion::kBitwise) return "bitwise";
  if (t.k) return fmt::format("the float32 bound λ√K·u, K={}", *t.k);
  return "the float32 bound";
}

// --- structure -------------------------------------------------------------------------------

std::string StructuralMismatch(const DumpRecord& a, const DumpRecord& b) {
  if (a.op != b.op) return fmt::format("op '{}' in A, '{}' in B", a.op, b.op);
  if (a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size() ||
      a.params.size() != b.params.size()) {
    return fmt::format("A has {}/{}/{} inputs/params/outputs, B {}/{}/{}", a.inputs.size(),
                       a.params.size(), a.outputs.size(), b.inputs.size(), b.params.size(),
                       b.outputs.size());
  }
  auto check = [](const std::string& what, const DumpTensorRef& x,
                  const DumpTensorRef& y) -> std::string {
    if (x.shape != y.shape) {
      return fmt::format("{} has shape {} in A, {} in B", what, ShapeString(x.shape),
                         ShapeString(y.shape));
    }
    if (x.dtype != y.dtype && (!IsFloat(x.dtype) || !IsFloat(y.dtype))) {
      return fmt::format("{} is {} in A, {} in B", what, Name(x.dtype), Name(y.dtype));
    }
    return "";
  };
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    if (auto s = check(fmt::format("input {}", i), a.inputs[i], b.inputs[i]); !s.empty()) return s;
  }
  for (std::size_t i = 0; i < a.params.size(); ++i) {
    if (a.params[i].first != b.params[i].first) {
      return fmt::format("param '{}' in A, '{}' in B", a.params[i].first, b.params[i].first);
    }
    if (auto s = check("param '" + a.params[i].first + "'", a.params[i].second, b.params[i].second);
        !s.empty()) {
      return s;
    }
  }
  for (std::size_t i = 0; i < a.outputs.size(); ++i) {
    if (auto s = check(fmt::format("output {}", i), a.outputs[i], b.outputs[i]); !s.empty()) {
      return s;
    }
  }
  return "";
}

bool HasStatsOnly(const DumpRecord& r) {
  auto stats_only = [](const DumpTensorRef& ref) { return !ref.has_data(); };
  return std::any_of(r.inputs.begin(), r.inputs.end(), stats_only) ||
         std::any_of(r.outputs.begin(), r.outputs.end(), stats_only) ||
         std::any_of(r.params.begin(), r.params.end(),
                     [&](const auto& p) { return stats_only(p.second); });
}

// Records saved as statistics: judged on those (l2, NaN and Inf counts) alone. With
// `digests` (both dumps name the same hash algorithm), two tensors that both carry a digest
// are the same exactly when their digests are.
void ExplainFromStats(const DumpRecord& a, const DumpRecord& b, bool digests, OpExplanation* e) {
  e->replayed = false;
  auto stats = [](const DumpTensorRef& ref) { return ref.stats.value_or(RecordedStats{}); };
  bool digests_differ = false;
  auto same = [&](const DumpTensorRef& x, const DumpTensorRef& y) {
    const RecordedStats s = stats(x), t = stats(y);
    if (digests && s.hash && t.hash) return *s.hash == *t.hash;
    return s.min == t.min && s.max == t.max && s.mean == t.mean && s.l2 == t.l2 && s.nan == t.nan &&
           s.inf == t.inf;
  };
  bool inputs_same = true;
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    if (!a.inputs[i].has_data() || !b.inputs[i].has_data()) {
      inputs_same = inputs_same && same(a.inputs[i], b.inputs[i]);
    }
  }
  bool outputs_same = true, nonfinite_differs = false;
  double l2_rel = 0.0;
  for (std::size_t i = 0; i < a.outputs.size(); ++i) {
    const RecordedStats s = stats(a.outputs[i]), t = stats(b.outputs[i]);
    const bool same_output = same(a.outputs[i], b.outputs[i]);
    outputs_same = outputs_same && same_output;
    digests_differ = digests_differ || (digests && !same_output && s.hash && t.hash);
    nonfinite_differs = nonfinite_differs || s.nan != t.nan || s.inf != t.inf;
    if (s.l2 && t.l2 && *s.l2 > 0) l2_rel = std::max(l2_rel, std::fabs(*s.l2 - *t.l2) / *s.l2);
  }
  const std::string prefix = "compared on recorded statistics only (no tensor data)";
  e->output_diff = l2_rel;
  if (outputs_same) {
    e->cause = Cause::kIdentical;
    e->reason = prefix + ": equal statistics";
  } else if (!inputs_same) {
    e->cause = Cause::kInherited;
    e->reason = prefix + ": its inputs' statistics already differ";
  } else if (nonfinite_differs) {
    e->cause = Cause::kNonfinite;
    e->reason = prefix + ": NaN/Inf counts differ on equal input statistics";
  } else if (l2_rel <= 1e-5) {
    e->cause = Cause::kWithinRounding;
    e->reason =
        prefix + (l2_rel == 0.0 && digests_differ
                      ? std::string(": output digests differ, their statistics agree")
                      : fmt::format(": output l2 norms differ by {} (relative)", Sci(l2_rel)));
  } else {
    e->cause = Cause::kAlgorithmic;
    e->reason = prefix + fmt::format(": output l2 norms differ by {} on equal input statistics",
                                     Sci(l2_rel));
  }
}

// The ops that only change a tensor's dtype (autocast inserts them on one side only).
bool IsCastOp(std::string_view op) {
  return op == "_to_copy" || op == "to" || op == "_autocast_to_reduced_precision" ||
         op == "_autocast_to_full_precision";
}

// Attrs that say where or how a tensor is placed, not what is computed: two platforms differ
// there by design.
bool PlacementAttr(const std::string& key) {
  static constexpr std::string_view kPlacement[] = {"device",        "pin_memory",   "layout",
                                                    "memory_format", "non_blocking", "generator"};
  return std::find(std::begin(kPlacement), std::end(kPlacement), key) != std::end(kPlacement);
}

// The attrs the two records give differently, "name A value, B value" each ("" when equal);
// placement attrs are left out.
std::string AttrDifference(const DumpRecord& a, const DumpRecord& b) {
  std::string out;
  for (const auto& [key, value] : a.attrs.items()) {
    if (PlacementAttr(key)) continue;
    const auto other = b.attrs.find(key);
    const Json missing;
    const Json& vb = other != b.attrs.end() ? *other : missing;
    const bool same = value == vb || (value.is_number() && vb.is_number() &&
                                      value.get<double>() == vb.get<double>());
    if (same) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("{} A {}, B {}", key,
                       value.dump(-1, ' ', false, Json::error_handler_t::replace),
                       vb.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  for (const auto& [key, value] : b.attrs.items()) {
    if (a.attrs.contains(key) || PlacementAttr(key)) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("{} A absent, B {}", key,
                       value.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  return out;
}

// --- dropout: the RNG test -------------------------------------------------------------------

struct MaskTest {
  bool applies = false;  // training dropout with 0 < p < 1
  double p = 0.0;
  int64_t n = 0;         // positions where both inputs are non-zero
  int64_t disagree = 0;  // of those, where one side dropped and the other kept
  double rate_a = 0.0, rate_b = 0.0;
};

MaskTest CompareMasks(const OpCall& a, const OpCall& b) {
  MaskTest m;
  // PyTorch's defaults where an attr is absent or null (a replayed record has valid ones).
  const auto p_it = a.attrs.find("p");
  const auto training_it = a.attrs.find(a.op == "native_dropout" ? "train" : "training");
  const double p = p_it != a.attrs.end() && p_it->is_number() ? p_it->get<double>() : 0.5;
  const bool training =
      training_it == a.attrs.end() || !training_it->is_boolean() || training_it->get<bool>();
  if (!training || !(p > 0.0 && p < 1.0) || a.inputs.empty() || b.inputs.empty() ||
      a.recorded_outputs.empty() || b.recorded_outputs.empty()) {
    return m;
  }
  m.applies = true;
  m.p = p;
  const auto& xa = a.inputs[0].data;
  const auto& xb = b.inputs[0].data;
  const auto& ya = a.recorded_outputs[0].data;
  const auto& yb = b.recorded_outputs[0].data;
  int64_t dropped_a = 0, dropped_b = 0;
  for (std::size_t i = 0; i < xa.size() && i < xb.size(); ++i) {
    if (xa[i] == 0.0 || xb[i] == 0.0) continue;
    const bool da = ya[i] == 0.0, db = yb[i] == 0.0;
    ++m.n;
    dropped_a += da;
    dropped_b += db;
    m.disagree += da != db;
  }
  if (m.n > 0) {
    m.rate_a = static_cast<double>(dropped_a) / static_cast<double>(m.n);
    m.rate_b = static_cast<double>(dropped_b) / static_cast<double>(m.n);
  }
  return m;
}

// Whether a drop rate measured on n positions agrees with p (five standard deviations).
bool RateAgrees(double rate, double p, int64_t n) {
  const double sd = std::sqrt(p * (1.0 - p) / static_cast<double>(n));
  return std::fabs(rate - p) <= 5.0 * sd + 1.0 / static_cast<double>(n);
}

// --- aten's random ops: same distribution, different streams ----------------------------------

// The aten ops whose outputs are drawn from a generator (version 2 dumps name aten ops).
bool IsRandomOp(std::string_view op) {
  static constexpr std::string_view kRandom[] = {
      "bernoulli",    "bernoulli_", "uniform_",    "normal_", "normal",         "random_",
      "exponential_", "geometric_", "log_normal_", "cauchy_", "native_dropout", "rand",
      "rand_like",    "randn",      "randn_like",  "randint", "randint_like",   "randperm",
      "multinomial",  "poisson",    "dropout"};
  return std::find(std::begin(kRandom), std::end(kRandom), op) != std::end(kRandom);
}

// Whether two samples agree in distribution: means within five standard errors and variances
// within five standard errors of their ratio (normal approximation, fine for the thousands of
// elements of a mask or a fill). Fills `why` with the figures.
bool SamplesAgree(const Array& a, const Array& b, std::string* why) {
  auto moments = [](const Array& x) {
    double sum = 0.0, sq = 0.0;
    for (double v : x.data) sum += v;
    const double n = static_cast<double>(x.data.size());
    const double mean = sum / n;
    for (double v : x.data) sq += (v - mean) * (v - mean);
    return std::pair{mean, n > 1 ? sq / (n - 1) : 0.0};
  };
  if (a.data.size() < 2 || b.data.size() < 2) {
    *why = "too few elements to compare distributions";
    return false;
  }
  const auto [ma, va] = moments(a);
  const auto [mb, vb] = moments(b);
  const double na = static_cast<double>(a.data.size()), nb = static_cast<double>(b.data.size());
  const double se_mean = std::sqrt(va / na + vb / nb);
  const bool means = std::fabs(ma - mb) <= 5.0 * se_mean + 1e-12 * (std::fabs(ma) + 1.0);
  const double se_ratio = std::sqrt(2.0 / na + 2.0 / nb);
  const bool variances = (va == 0.0 && vb == 0.0) ||
                         (va > 0.0 && vb > 0.0 && std::fabs(std::log(va / vb)) <= 5.0 * se_ratio);
  *why = fmt::format(
      "means A {:.4g}, B {:.4g}; variances A {:.4g}, B {:.4g}; over {} and {} "
      "elements",
      ma, mb, va, vb, a.data.size(), b.data.size());
  return means && variances;
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

std::string LocalText(const std::string& side, const SideEval& e) {
  if (!e.replayed) return fmt::format("{} not replayed ({})", side, e.not_replayed);
  return fmt::format("{}'s local error {} of rms", side, Sci(e.local.rel_rmse()));
}

// What the side's manifest declared about the precision found (framework.settings), if
// anything: a setting that says the mode was off points at a library that ignored it.
std::string ManifestNote(const std::string& side, const Json& manifest, const std::string& op,
                         Precision p) {
  const Json* settings = nullptr;
  if (auto f = manifest.find("framework"); f != manifest.end() && f->is_object()) {
    if (auto s = f->find("settings"); s != f->end() && s->is_object()) settings = &*s;
  }
  if (settings == nullptr) return "";
  const std::string family = FamilyOf(op).name;
  const bool conv = family == "conv1d" || family == "conv2d";
  if (p == Precision::kTf32) {
    const char* key = conv ? "allow_tf32_cudnn" : "allow_tf32_matmul";
    auto it = settings->find(key);
    if (it == settings->end() || !it->is_boolean()) return "";
    return it->get<bool>() ? fmt::format("; {}'s manifest allows it ({} = true)", side, key)
                           : fmt::format(
                                 "; yet {}'s manifest says {} = false: the setting did not reach "
                                 "the library that ran it",
                                 side, key);
  }
  if (p == Precision::kBFloat16 && !conv) {
    auto it = settings->find("float32_matmul_precision");
    if (it != settings->end() && it->is_string() && it->get<std::string>() == "medium") {
      return fmt::format("; {}'s manifest allows it (float32_matmul_precision = medium)", side);
    }
  }
  return "";
}

// The evidence for one side's reduced precision, or nothing when no test names one.
std::optional<std::string> PrecisionEvidence(const std::string& side, const std::string& op,
                                             const LoadedRecord& l, const SideEval& e,
                                             const Json& manifest, Precision* found) {
  const PrecisionFinding f =
      InferPrecision(l.call, l.call.recorded_outputs, e.tolerance, e.local.rmse());
  if (!f.precision) return std::nullopt;
  *found = *f.precision;
  std::string text = fmt::format("{} is beyond {}", LocalText(side, e), BoundText(e.tolerance));
  if (!f.magnitude.empty()) text += " (" + f.magnitude + ")";
  if (f.variant) {
    text += fmt::format("; a replay with {} matches {} {}{}: {} ran in {}", f.variant->Describe(),
                        side, MatchText(f.variant_rel_rmse), ShareText(f.variant_share), op,
                        PrecisionName(*f.precision));
    if (f.variant->precision == Precision::kTf32) {
      text += fmt::format(" ({})", RoundingName(f.variant->rounding));
    }
    for (const Variant& v : f.equally_close) {
      text += fmt::format(" (one with {} matches equally: the data cannot tell them apart)",
                          v.Describe());
    }
  } else {
    text += fmt::format(
        "; {}'s outputs all lie on the {} grid, though no replay variant "
        "reproduces them: {} stored or computed in {}",
        side, PrecisionName(*f.precision), op, PrecisionName(*f.precision));
  }
  return text + ManifestNote(side, manifest, op, *f.precision);
}

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
  }
  return "?";
}

bool IsOrigin(Cause cause) {
  return cause != Cause::kIdentical && cause != Cause::kWithinRounding &&
         cause != Cause::kInherited;
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
  if (ra == nullptr || rb == nullptr) {
    e.replayed = false;
    if (IsCastOp(any.op)) {  // autocast's casts: matched around, never an origin
      const std::string to = any.outputs.empty() ? std::string("another dtype")
                                                 : std::string(Name(any.outputs[0].dtype));
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
    std::optional<Precision> precision_b, precision_a;
    for (bool on_b : {true, false}) {
      const SideEval& ex = on_b ? eb : ea;
      if (ex.within()) continue;
      Precision p{};
      if (auto text = PrecisionEvidence(Side(on_b), e.op, on_b ? lb : la, ex,
                                        on_b ? b.ManifestFor(*rb) : a.ManifestFor(*ra), &p)) {
        evidence.push_back(*text);
        (on_b ? precision_b : precision_a) = p;
      }
    }
    if (precision_b || precision_a) {
      e.cause = Cause::kReducedPrecision;
      e.effective_precision = PrecisionName(precision_b ? *precision_b : *precision_a);
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
