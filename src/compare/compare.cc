// SPDX-License-Identifier: Apache-2.0
#include "compare/compare.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <cmath>
#include <limits>
#include <optional>

#include "compare/context.h"
#include "compare/entries.h"
#include "compare/scale.h"
#include "io/tensor_stats.h"

namespace parity {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

bool Selected(const std::vector<std::string>& only, const std::string& name) {
  if (only.empty()) return true;
  for (const std::string& glob : only) {
    if (::fnmatch(glob.c_str(), name.c_str(), 0) == 0) return true;
  }
  return false;
}

// A dump tensor's position among its record's tensors of its role ("output.1": 1).
std::size_t SlotIndex(const Entry& e) {
  const std::size_t dot = e.slot.rfind('.');
  if (dot == std::string::npos) return 0;
  std::size_t index = 0;
  for (std::size_t i = dot + 1; i < e.slot.size(); ++i) {
    if (e.slot[i] < '0' || e.slot[i] > '9') return 0;
    index = index * 10 + static_cast<std::size_t>(e.slot[i] - '0');
  }
  return index;
}

TensorContext ContextFor(const EntryPair& pair, const Side& a, const Side& b,
                         const std::string& op) {
  const Entry& e = pair.b != nullptr ? *pair.b : *pair.a;
  if (e.record == nullptr) {
    TensorContext c;
    c.dtype = e.meta.dtype;
    c.shape = e.meta.shape;
    if (!op.empty()) {
      c.op = op;
      c.role = "output";
    }
    return c;
  }
  // Each side's manifest: of the record's own directory (a rank's, in a distributed dump).
  auto manifest = [](const Side& side, const Entry* x) {
    return x != nullptr && x->record != nullptr ? &side.dump->ManifestFor(*x->record)
                                                : &side.dump->manifest();
  };
  return RecordContext(*e.record, e.role, e.meta.dtype, e.meta.shape,
                       {manifest(a, pair.a), manifest(b, pair.b)}, SlotIndex(e));
}

// For `auto` on a reduction op's output in a dump: the scale of its summands, from B's inputs.
Status ApplySummandScale(const Entry& e, Tolerance* t) {
  if (t->policy != "auto" || !t->needs_output_scale || !t->k || e.record == nullptr) {
    return Status::Ok();
  }
  const DumpRecord& r = *e.record;
  std::vector<Tensor> inputs;
  std::vector<std::pair<std::string, Tensor>> params;
  for (const DumpTensorRef& ref : r.inputs) {
    if (!ref.has_data()) return Status::Ok();
    PARITY_ASSIGN_OR_RETURN(Tensor tensor, e.dump->Load(r, ref));
    inputs.push_back(std::move(tensor));
  }
  for (const auto& [key, ref] : r.params) {
    if (!ref.has_data()) continue;
    PARITY_ASSIGN_OR_RETURN(Tensor tensor, e.dump->Load(r, ref));
    params.emplace_back(key, std::move(tensor));
  }
  PARITY_ASSIGN_OR_RETURN(std::optional<double> scale,
                          SummandScale(r.op, *t->k, inputs, params, r.attrs, SlotIndex(e)));
  if (scale) {
    t->needs_output_scale = false;
    t->scale = *scale;
    t->scale_source = "summands";
    t->atol = t->atol_per_scale * *scale;
  }
  return Status::Ok();
}

struct StatsView {
  std::optional<double> min, max, mean, l2;
  std::optional<int64_t> nan, inf;
  int64_t count = 0;
};

Result<StatsView> StatsOf(const Entry& e) {
  StatsView v;
  v.count = 1;
  for (int64_t d : e.meta.shape) v.count *= d;
  if (e.stats_only()) {
    const RecordedStats& s = *e.ref->stats;
    v.min = s.min;
    v.max = s.max;
    v.mean = s.mean;
    v.l2 = s.l2;
    v.nan = s.nan;
    v.inf = s.inf;
    return v;
  }
  PARITY_ASSIGN_OR_RETURN(Tensor t, e.Load());
  PARITY_ASSIGN_OR_RETURN(TensorStats s, ComputeStats(t));
  auto as_double = [](const std::optional<StatValue>& x) -> std::optional<double> {
    if (!x) return std::nullopt;
    return std::visit([](auto value) { return static_cast<double>(value); }, *x);
  };
  v.min = as_double(s.min);
  v.max = as_double(s.max);
  v.mean = s.mean;
  if (s.mean && s.std) {
    v.l2 = std::sqrt(static_cast<double>(s.finite) * (*s.std * *s.std + *s.mean * *s.mean));
  }
  v.nan = s.nan;
  v.inf = s.inf;
  return v;
}

// Whether the two sides' bytes are equal, told by their recorded digests: known only when both
// are statistics-only dump tensors carrying a digest (hex: the capture writes "error: ..." where
// computing one failed) by the same algorithm (their manifests' `hash`, named on both sides).
std::optional<bool> SameDigests(const EntryPair& pair) {
  auto digest = [](const Entry& e) -> const std::string* {
    if (!e.stats_only() || e.dump == nullptr || e.record == nullptr || !e.ref->stats->hash) {
      return nullptr;
    }
    const std::string& hex = *e.ref->stats->hash;
    if (hex.empty() || hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      return nullptr;
    }
    return &hex;
  };
  const std::string* x = digest(*pair.a);
  const std::string* y = digest(*pair.b);
  if (x == nullptr || y == nullptr) return std::nullopt;
  const std::string& algorithm = pair.a->dump->parts()[pair.a->record->part].hash;
  if (algorithm.empty() || algorithm != pair.b->dump->parts()[pair.b->record->part].hash) {
    return std::nullopt;
  }
  return *x == *y;
}

// Statistics-only tensors: compare what both sides recorded. Equal digests are bitwise-equal
// data; different digests fail a bitwise tolerance, and under any other tell nothing of the
// difference's size: the statistics judge it, and without statistics in common the pair is
// not compared.
Status CompareStats(const EntryPair& pair, Tolerance t, TensorResult* r) {
  const std::optional<bool> same_bytes = SameDigests(pair);
  Json digest;
  if (same_bytes) {
    digest = {{"algorithm", pair.a->dump->parts()[pair.a->record->part].hash},
              {"a", *pair.a->ref->stats->hash},
              {"b", *pair.b->ref->stats->hash},
              {"equal", *same_bytes}};
    // Different bytes are different values under a bitwise criterion, and for integer and
    // bool dtypes under an exact one; a float's may differ only in a zero's sign or a NaN's
    // payload, which "exact" accepts.
    const auto dtype = DTypeFromName(r->dtype);
    const bool bytes_decide =
        t.criterion == Criterion::kBitwise ||
        (t.criterion == Criterion::kUlps && t.max_ulps == 0 && dtype && !IsFloat(*dtype));
    if (*same_bytes || bytes_decide) {
      r->stats_comparison = {{"statistics_only", true}, {"digest", digest}};
      r->tolerance = t;
      r->pass = *same_bytes;
      r->severity = r->pass ? 0.0 : 2.0;
      r->reason = r->pass ? "statistics only: equal digests (bitwise identical)"
                          : "statistics only: the digests differ (the data is not identical)";
      return Status::Ok();
    }
  }
  PARITY_ASSIGN_OR_RETURN(StatsView a, StatsOf(*pair.a));
  PARITY_ASSIGN_OR_RETURN(StatsView b, StatsOf(*pair.b));
  if (t.criterion != Criterion::kAbsRel) {
    t.rtol = t.criterion == Criterion::kBitwise ? 0.0
                                                : 2.0 * static_cast<double>(t.max_ulps + 1) *
                                                      UnitRoundoff(DTypeFromName(r->dtype).value());
    t.atol = 0.0;
  }
  if (t.needs_output_scale && b.l2 && b.count > 0) {
    t.SetOutputScale(*b.l2 / std::sqrt(static_cast<double>(b.count)));
  }
  Json checks = Json::array();
  int failures = 0;
  auto check = [&](const char* stat, const std::optional<double>& x, const std::optional<double>& y,
                   double allowed) {
    if (!x || !y) return;
    const bool pass = std::fabs(*x - *y) <= allowed || (*x == *y);
    failures += !pass;
    Json c = {{"stat", stat}, {"pass", pass}};
    SetNumber(c, "a", *x);
    SetNumber(c, "b", *y);
    SetNumber(c, "allowed", allowed);
    checks.push_back(std::move(c));
  };
  auto count = [&](const char* stat, const std::optional<int64_t>& x,
                   const std::optional<int64_t>& y) {
    if (!x || !y) return;
    failures += *x != *y;
    checks.push_back({{"stat", stat}, {"a", *x}, {"b", *y}, {"pass", *x == *y}});
  };
  count("nan", a.nan, b.nan);
  count("inf", a.inf, b.inf);
  auto bound = [&](const std::optional<double>& y) {
    return t.atol + t.rtol * std::fabs(y.value_or(0));
  };
  check("mean", a.mean, b.mean, bound(b.mean));
  check("min", a.min, b.min, bound(b.min));
  check("max", a.max, b.max, bound(b.max));
  check("l2", a.l2, b.l2,
        t.rtol * b.l2.value_or(0) + t.atol * std::sqrt(static_cast<double>(b.count)));
  r->stats_comparison = {{"statistics_only", true}, {"checks", checks}};
  if (same_bytes) r->stats_comparison["digest"] = digest;
  if (checks.empty()) {  // nothing to judge by: neither equal nor different
    r->not_compared = true;
    if (same_bytes) r->tolerance = t;  // what they were not judged by: the reason says why
    r->reason = same_bytes ? "not compared: the digests differ (not bitwise identical), and no "
                             "statistic recorded on both sides measures by how much"
                           : "not compared: statistics only, and no statistic recorded on both "
                             "sides";
    return Status::Ok();
  }
  r->tolerance = t;
  r->pass = failures == 0;
  r->severity = r->pass ? 0.0 : 2.0;
  r->reason = r->pass ? fmt::format("statistics only: {} statistics agree", checks.size())
                      : fmt::format(
                            "statistics only: {} of {} statistics differ beyond "
                            "the tolerance",
                            failures, checks.size());
  return Status::Ok();
}

std::string FormatTolerance(const Tolerance& t) {
  switch (t.criterion) {
    case Criterion::kBitwise:
      return "bitwise";
    case Criterion::kUlps:
      return fmt::format("{} ulp", t.max_ulps);
    case Criterion::kAbsRel:
      break;
  }
  return fmt::format("atol {:.3g} + rtol {:.3g}·|b|", t.atol, t.rtol);
}

void Judge(const PairMetrics& m, const Tolerance& t, TensorResult* r) {
  const int64_t position_mismatches = m.nan_mismatch + m.inf_mismatch;
  r->pass = WithinTolerance(m, t);
  switch (t.criterion) {
    case Criterion::kBitwise:
      r->severity = r->pass ? 0.0 : kInf;
      break;
    case Criterion::kUlps:
      r->severity = m.max_ulp / std::max<double>(1.0, static_cast<double>(t.max_ulps));
      break;
    case Criterion::kAbsRel:
      r->severity =
          t.atol > 0 ? std::max(0.0, m.max_excess) / t.atol : (m.max_excess > 0 ? kInf : 0.0);
      break;
  }
  if (position_mismatches > 0) r->severity = kInf;
  if (r->pass) {
    r->reason = t.criterion == Criterion::kBitwise
                    ? "bitwise identical"
                    : fmt::format("max |a-b| {:.3g}, max {:g} ulp: within {}", m.max_abs, m.max_ulp,
                                  FormatTolerance(t));
  }
}

// The reason of a failing tensor, from metrics judged against its tolerance.
void ExplainFailure(const PairMetrics& m, const Tolerance& t, TensorResult* r) {
  std::string reason;
  auto positions = [](int64_t n) { return fmt::format("{} position{}", n, n == 1 ? "" : "s"); };
  if (m.nan_mismatch > 0)
    reason += "NaN where the other has none at " + positions(m.nan_mismatch) + "; ";
  if (m.inf_mismatch > 0) reason += "Inf differs at " + positions(m.inf_mismatch) + "; ";
  const int64_t beyond = m.violations - m.nan_mismatch - m.inf_mismatch;
  if (t.criterion == Criterion::kBitwise) {
    reason += fmt::format("{} of {} elements differ bitwise", m.count - m.identical, m.count);
  } else if (beyond > 0) {
    reason += fmt::format("{} of {} elements beyond {} (worst {:.3g}x the allowance)",
                          std::max<int64_t>(beyond, 0), m.count, FormatTolerance(t), m.max_ratio);
  }
  if (reason.ends_with("; ")) reason.resize(reason.size() - 2);
  r->reason = reason;
  if (m.max_ratio > 0) r->severity = std::max(r->severity, m.max_ratio);
}

void JudgeGolden(const GoldenError& ea, const GoldenError& eb, double ratio, DType dtype,
                 TensorResult* r) {
  GoldenVerdict g{ea, eb};
  const double u = std::max(UnitRoundoff(dtype), std::ldexp(1.0, -53));
  g.floor_rmse = 2.0 * u * eb.golden_rms;
  g.floor_max_abs = 2.0 * u * eb.golden_max_abs;
  const double allowed_rmse = std::max(ratio * ea.rmse, g.floor_rmse);
  const double allowed_max = std::max(ratio * ea.max_abs, g.floor_max_abs);
  const bool rmse_ok = eb.rmse <= allowed_rmse;
  const bool max_ok = eb.max_abs <= allowed_max;
  const bool nonfinite_ok = eb.nonfinite_mismatch <= ea.nonfinite_mismatch;
  r->pass = rmse_ok && max_ok && nonfinite_ok;
  r->severity =
      std::max(allowed_rmse > 0 ? eb.rmse / allowed_rmse : (eb.rmse > 0 ? kInf : 0.0),
               allowed_max > 0 ? eb.max_abs / allowed_max : (eb.max_abs > 0 ? kInf : 0.0));
  if (!nonfinite_ok) r->severity = kInf;
  r->reason = fmt::format(
      "against the golden: B's rmse {:.3g} {} max({:g}x A's {:.3g}, floor {:.3g}); B's max "
      "|err| {:.3g} {} max({:g}x A's {:.3g}, floor {:.3g})",
      eb.rmse, rmse_ok ? "<=" : ">", ratio, ea.rmse, g.floor_rmse, eb.max_abs, max_ok ? "<=" : ">",
      ratio, ea.max_abs, g.floor_max_abs);
  if (!nonfinite_ok) {
    r->reason += fmt::format("; B has {} NaN/Inf mismatches with the golden, A {}",
                             eb.nonfinite_mismatch, ea.nonfinite_mismatch);
  }
  r->golden = g;
}

Status CompareOne(const CompareOptions& options, const EntryPair& pair, const Side& a,
                  const Side& b, bool has_golden, TensorResult* r) {
  const TensorContext context = ContextFor(pair, a, b, options.op);
  Tolerance t = ResolveTolerance(options.tolerance, options.rules, pair.name, context);
  if (pair.a->stats_only() || pair.b->stats_only()) return CompareStats(pair, t, r);
  PARITY_RETURN_IF_ERROR(ApplySummandScale(*pair.b, &t));
  PARITY_ASSIGN_OR_RETURN(Tensor ta, pair.a->Load());
  PARITY_ASSIGN_OR_RETURN(Tensor tb, pair.b->Load());
  MetricsOptions mo;
  mo.rtol = t.criterion == Criterion::kAbsRel ? t.rtol : 0.0;
  mo.tiny = options.tiny.value_or(SmallestNormal(ta.dtype()));
  mo.worst = options.worst;
  // Judge in the same pass when the tolerance is complete; `auto` on the output's own rms
  // learns its atol from this pass, and a failing tensor then gets a second one.
  mo.tolerance = t.needs_output_scale ? nullptr : &t;
  PARITY_ASSIGN_OR_RETURN(PairMetrics m, ComputePairMetrics(ta, tb, mo));
  t.SetOutputScale(m.rms_b());
  r->tolerance = t;
  Judge(m, t, r);
  if (pair.golden != nullptr && pair.golden->comparable() && !pair.golden->stats_only() &&
      pair.golden->meta.shape == pair.a->meta.shape && IsFloat(ta.dtype())) {
    PARITY_ASSIGN_OR_RETURN(Tensor tg, pair.golden->Load());
    PARITY_ASSIGN_OR_RETURN(GoldenError ea, ComputeGoldenError(ta, tg));
    PARITY_ASSIGN_OR_RETURN(GoldenError eb, ComputeGoldenError(tb, tg));
    JudgeGolden(ea, eb, options.ratio, ta.dtype(), r);
  } else if (has_golden) {
    r->reason += "; no matching golden tensor, judged by the tolerance";
  }
  if (!r->pass && !r->golden) {
    if (!m.judged) {
      mo.tolerance = &*r->tolerance;
      PARITY_ASSIGN_OR_RETURN(m, ComputePairMetrics(ta, tb, mo));
    }
    ExplainFailure(m, t, r);
  }
  r->metrics = std::move(m);
  return Status::Ok();
}

}  // namespace

Result<CompareReport> RunCompare(const CompareOptions& options) {
  PARITY_ASSIGN_OR_RETURN(Side a, OpenSide(options.a));
  PARITY_ASSIGN_OR_RETURN(Side b, OpenSide(options.b));
  std::optional<Side> golden;
  if (options.golden) {
    PARITY_ASSIGN_OR_RETURN(Side g, OpenSide(*options.golden));
    golden = std::move(g);
  }
  return CompareSides(options, a, b, golden ? &*golden : nullptr);
}

Result<CompareReport> CompareSides(const CompareOptions& options, const Side& a, const Side& b,
                                   const Side* golden) {
  CompareReport report;
  report.a = a.path;
  report.b = b.path;
  report.golden = golden != nullptr ? golden->path : "";
  report.kind = a.kind == Side::Kind::kDump        ? "dumps"
                : a.kind == Side::Kind::kDirectory ? "directories"
                                                   : "files";
  for (const Side* side : {&a, &b}) {
    report.warnings.insert(report.warnings.end(), side->warnings.begin(), side->warnings.end());
  }
  PARITY_ASSIGN_OR_RETURN(std::vector<EntryPair> pairs, PairSides(a, b, golden, &report.warnings));
  for (const EntryPair& pair : pairs) {
    if (!Selected(options.only, pair.name)) continue;
    TensorResult r;
    r.name = pair.name;
    const Entry& any = pair.a != nullptr ? *pair.a : *pair.b;
    r.dtype = any.DTypeName();
    r.shape = any.meta.shape;
    r.shape_known = any.ref == nullptr || any.ref->shape_known;
    if (!pair.structural.empty()) {
      r.structural = true;
      r.reason = "structural: " + pair.structural;
      r.severity = kInf;
    } else if (!pair.not_compared.empty()) {
      // Never judged by what is absent: a not-stored side has neither data nor statistics.
      r.not_compared = true;
      r.reason = "not compared: " + pair.not_compared;
    } else {
      PARITY_RETURN_IF_ERROR(CompareOne(options, pair, a, b, golden != nullptr, &r));
    }
    if (r.not_compared) {
      ++report.not_compared;
    } else if (r.pass) {
      ++report.passed;
    } else {
      ++report.failed;
      report.structural += r.structural;
      if (!report.first_divergence && report.kind == "dumps") report.first_divergence = r.name;
    }
    report.tensors.push_back(std::move(r));
  }
  return report;
}

}  // namespace parity
