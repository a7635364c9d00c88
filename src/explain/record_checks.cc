// SPDX-License-Identifier: Apache-2.0
// What two matched records say without a replay: structure, statistics, tensors the dumps do
// not hold, arguments, and the tests of random ops.
#include "explain/record_checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "core/dtype.h"

namespace parity::explain_internal {
namespace {

// A slot of a record: "input 0", "param 'weight'", "output 1", with the two sides' tensors.
struct Slot {
  std::string what;
  const DumpTensorRef* a;
  const DumpTensorRef* b;
};

// The slots of two records of the same structure, in record order.
std::vector<Slot> Slots(const DumpRecord& a, const DumpRecord& b) {
  std::vector<Slot> out;
  for (std::size_t i = 0; i < a.inputs.size() && i < b.inputs.size(); ++i) {
    out.push_back({fmt::format("input {}", i), &a.inputs[i], &b.inputs[i]});
  }
  for (std::size_t i = 0; i < a.params.size() && i < b.params.size(); ++i) {
    out.push_back({"param '" + a.params[i].first + "'", &a.params[i].second, &b.params[i].second});
  }
  for (std::size_t i = 0; i < a.outputs.size() && i < b.outputs.size(); ++i) {
    out.push_back({fmt::format("output {}", i), &a.outputs[i], &b.outputs[i]});
  }
  return out;
}

// "not stored: sparse_coo layout", "is complex64: parity compares real dtypes only (...)".
std::string Describe(const DumpTensorRef& ref) {
  if (!ref.not_stored.empty()) return "not stored: " + ref.not_stored;
  return "is " + ref.not_comparable;
}

enum class Match { kSame, kDiffer, kUnknown };

// Two tensors by their recorded statistics: by digests where `digests` and both carry one, else
// by the statistics both record; unknown when they record none in common (a side with data
// and no statistics, or statistics of other kinds).
Match MatchStats(const DumpTensorRef& x, const DumpTensorRef& y, bool digests) {
  if (!x.stats || !y.stats) return Match::kUnknown;
  const RecordedStats& s = *x.stats;
  const RecordedStats& t = *y.stats;
  if (digests && s.hash && t.hash) return *s.hash == *t.hash ? Match::kSame : Match::kDiffer;
  int both = 0;
  bool differ = false;
  auto check = [&](const auto& p, const auto& q) {
    if (!p || !q) return;
    ++both;
    differ = differ || *p != *q;
  };
  check(s.min, t.min);
  check(s.max, t.max);
  check(s.mean, t.mean);
  check(s.l2, t.l2);
  check(s.nan, t.nan);
  check(s.inf, t.inf);
  if (differ) return Match::kDiffer;
  return both > 0 ? Match::kSame : Match::kUnknown;
}

// The combined match of several tensors: differ if any differs, else unknown if any is.
Match Combine(Match acc, Match m) {
  if (acc == Match::kDiffer || m == Match::kDiffer) return Match::kDiffer;
  if (acc == Match::kUnknown || m == Match::kUnknown) return Match::kUnknown;
  return Match::kSame;
}

// Attrs that say where or how a tensor is placed, not what is computed: two platforms differ
// there by design.
bool PlacementAttr(const std::string& key) {
  static constexpr std::string_view kPlacement[] = {"device",        "pin_memory",   "layout",
                                                    "memory_format", "non_blocking", "generator"};
  return std::find(std::begin(kPlacement), std::end(kPlacement), key) != std::end(kPlacement);
}

}  // namespace

void Difference::Add(const Array& a, const Array& b) {
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

std::string Sci(double x) { return fmt::format("{:.2g}", x); }

// --- structure -------------------------------------------------------------------------------

std::string StructuralMismatch(const DumpRecord& a, const DumpRecord& b) {
  if (a.op != b.op) return fmt::format("op '{}' in A, '{}' in B", a.op, b.op);
  if (a.inputs.size() != b.inputs.size() || a.outputs.size() != b.outputs.size() ||
      a.params.size() != b.params.size()) {
    return fmt::format("A has {}/{}/{} inputs/params/outputs, B {}/{}/{}", a.inputs.size(),
                       a.params.size(), a.outputs.size(), b.inputs.size(), b.params.size(),
                       b.outputs.size());
  }
  for (std::size_t i = 0; i < a.params.size(); ++i) {
    if (a.params[i].first != b.params[i].first) {
      return fmt::format("param '{}' in A, '{}' in B", a.params[i].first, b.params[i].first);
    }
  }
  for (const Slot& s : Slots(a, b)) {
    const DumpTensorRef& x = *s.a;
    const DumpTensorRef& y = *s.b;
    if (x.shape_known && y.shape_known && x.shape != y.shape) {
      return fmt::format("{} has shape {} in A, {} in B", s.what, ShapeString(x.shape),
                         ShapeString(y.shape));
    }
    const bool both_float =
        x.dtype_name.empty() && y.dtype_name.empty() && IsFloat(x.dtype) && IsFloat(y.dtype);
    if (x.DTypeName() != y.DTypeName() && !both_float) {
      return fmt::format("{} is {} in A, {} in B", s.what, x.DTypeName(), y.DTypeName());
    }
  }
  return "";
}

// --- tensors the dumps do not hold -----------------------------------------------------------

std::string NotComparableTensors(const DumpRecord& a, const DumpRecord& b) {
  std::string first;
  int more = 0;
  for (const Slot& s : Slots(a, b)) {
    const bool in_a = !s.a->comparable(), in_b = !s.b->comparable();
    if (!in_a && !in_b) continue;
    if (!first.empty()) {
      ++more;
      continue;
    }
    if (in_a && in_b && s.a->not_comparable == s.b->not_comparable) {
      first = fmt::format("{} in A and B {}", s.what, Describe(*s.a));
    } else if (in_a && in_b) {
      first = fmt::format("{} in A {}; in B {}", s.what, Describe(*s.a), Describe(*s.b));
    } else {
      first = fmt::format("{} in {} {}", s.what, in_a ? "A" : "B", Describe(in_a ? *s.a : *s.b));
    }
  }
  if (more > 0) first += fmt::format(" (and {} more tensor{})", more, more == 1 ? "" : "s");
  return first;
}

Status ExplainNotComparable(const DumpDir& a, const DumpRecord& ra, const DumpDir& b,
                            const DumpRecord& rb, const std::string& what, OpExplanation* e) {
  e->replayed = false;
  e->cause = Cause::kNotJudged;
  const bool outputs_held = !ra.outputs.empty() &&
                            std::all_of(ra.outputs.begin(), ra.outputs.end(),
                                        [](const DumpTensorRef& r) { return r.comparable(); }) &&
                            std::all_of(rb.outputs.begin(), rb.outputs.end(),
                                        [](const DumpTensorRef& r) { return r.comparable(); });
  // The same op called with other arguments is a different computation, whatever it read.
  const std::string differ = AttrDifference(ra, rb);
  if (!outputs_held) {
    if (!differ.empty()) {
      e->cause = Cause::kAlgorithmic;
      e->reason = fmt::format("called with other arguments ({}); {}", differ, what);
      return Status::Ok();
    }
    e->reason = fmt::format("not judged: {}; no output is held on both sides to compare", what);
    return Status::Ok();
  }
  // Every output is held on both sides: compare them (data bitwise, else by statistics).
  Difference out;
  Match stats = Match::kSame;
  bool by_data = false;
  for (std::size_t i = 0; i < ra.outputs.size(); ++i) {
    const DumpTensorRef& x = ra.outputs[i];
    const DumpTensorRef& y = rb.outputs[i];
    if (x.has_data() && y.has_data()) {
      PARITY_ASSIGN_OR_RETURN(Tensor tx, a.Load(ra, x));
      PARITY_ASSIGN_OR_RETURN(Tensor ty, b.Load(rb, y));
      PARITY_ASSIGN_OR_RETURN(Array ax, ToArray(tx));
      PARITY_ASSIGN_OR_RETURN(Array ay, ToArray(ty));
      out.Add(ax, ay);
      by_data = true;
    } else {
      const std::string& hash_a = a.parts()[ra.part].hash;
      const bool digests = !hash_a.empty() && hash_a == b.parts()[rb.part].hash;
      stats = Combine(stats, MatchStats(x, y, digests));
    }
  }
  if (by_data) e->output_diff = out.rel();
  if (out.identical && stats == Match::kSame) {
    e->cause = Cause::kIdentical;
    e->reason = fmt::format("{} outputs; {}: its inputs are not judged",
                            by_data ? "bitwise-equal" : "equal recorded statistics of its", what);
    return Status::Ok();
  }
  if (!differ.empty()) {
    e->cause = Cause::kAlgorithmic;
    e->reason = fmt::format("called with other arguments ({}); {}", differ, what);
    return Status::Ok();
  }
  if (!out.identical || stats == Match::kDiffer) {
    e->reason = fmt::format(
        "not judged: its outputs differ{}, but {}: whether the difference starts here or "
        "upstream cannot be told",
        by_data && !out.identical ? " by " + Sci(out.rel()) : std::string(), what);
    return Status::Ok();
  }
  e->reason = fmt::format(
      "not judged: {}; its outputs' statistics recorded on both sides tell nothing", what);
  return Status::Ok();
}

// --- statistics only -------------------------------------------------------------------------

bool HasStatsOnly(const DumpRecord& r) {
  auto stats_only = [](const DumpTensorRef& ref) { return !ref.has_data(); };
  return std::any_of(r.inputs.begin(), r.inputs.end(), stats_only) ||
         std::any_of(r.outputs.begin(), r.outputs.end(), stats_only) ||
         std::any_of(r.params.begin(), r.params.end(),
                     [&](const auto& p) { return stats_only(p.second); });
}

void ExplainFromStats(const DumpRecord& a, const DumpRecord& b, bool digests, OpExplanation* e) {
  e->replayed = false;
  // Inputs and params: those held as statistics on either side (both with data are not read
  // here: a side with data and no statistics is no evidence, so the match is unknown).
  Match inputs = Match::kSame;
  for (const Slot& s : Slots(a, b)) {
    if (s.what.starts_with("output")) continue;
    if (!s.a->has_data() || !s.b->has_data()) {
      inputs = Combine(inputs, MatchStats(*s.a, *s.b, digests));
    }
  }
  Match outputs = Match::kSame;
  bool digests_differ = false, nonfinite_differs = false, l2_known = true;
  double l2_rel = 0.0;
  for (std::size_t i = 0; i < a.outputs.size(); ++i) {
    const DumpTensorRef& x = a.outputs[i];
    const DumpTensorRef& y = b.outputs[i];
    const Match m = MatchStats(x, y, digests);
    outputs = Combine(outputs, m);
    const RecordedStats s = x.stats.value_or(RecordedStats{});
    const RecordedStats t = y.stats.value_or(RecordedStats{});
    digests_differ = digests_differ || (digests && m == Match::kDiffer && s.hash && t.hash);
    nonfinite_differs = nonfinite_differs || (s.nan && t.nan && *s.nan != *t.nan) ||
                        (s.inf && t.inf && *s.inf != *t.inf);
    if (s.l2 && t.l2) {
      if (*s.l2 > 0) l2_rel = std::max(l2_rel, std::fabs(*s.l2 - *t.l2) / *s.l2);
      if (*s.l2 == 0 && *t.l2 != 0) l2_rel = INFINITY;
    } else {
      l2_known = false;
    }
  }
  const std::string prefix = "compared on recorded statistics only (no tensor data)";
  if (l2_known) e->output_diff = l2_rel;
  if (outputs == Match::kSame) {
    e->cause = Cause::kIdentical;
    e->reason = prefix + ": equal statistics";
    return;
  }
  e->cause = Cause::kNotJudged;
  if (outputs == Match::kUnknown) {
    e->reason = prefix + ": not judged: no output statistic recorded on both sides";
    return;
  }
  if (inputs == Match::kDiffer) {
    e->cause = Cause::kInherited;
    e->reason = prefix + ": its inputs' statistics already differ";
  } else if (inputs == Match::kUnknown) {
    e->reason = prefix +
                ": not judged: its output statistics differ, but its inputs are not recorded "
                "comparably on both sides (an origin cannot be told from an inherited "
                "difference)";
  } else if (nonfinite_differs) {
    e->cause = Cause::kNonfinite;
    e->reason = prefix + ": NaN/Inf counts differ on equal input statistics";
  } else if (!l2_known) {
    e->reason = prefix +
                ": not judged: its output statistics differ on equal input statistics, and "
                "the l2 norms that would tell rounding from a real difference are not recorded "
                "on both sides";
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

// --- arguments -------------------------------------------------------------------------------

// The ops that only change a tensor's dtype (autocast inserts them on one side only).
bool IsCastOp(std::string_view op) {
  return op == "_to_copy" || op == "to" || op == "_autocast_to_reduced_precision" ||
         op == "_autocast_to_full_precision";
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

}  // namespace parity::explain_internal
