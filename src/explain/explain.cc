// SPDX-License-Identifier: Apache-2.0
#include "explain/explain.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "compare/entries.h"
#include "explain/side_evidence.h"
#include "io/dump.h"

namespace parity {
namespace {

// Whether `record` (a container) holds `inner`: a module path prefix, or the root "model".
bool Contains(const DumpRecord& container, const std::string& inner) {
  if (container.name == "model" || container.name.empty()) return true;
  return inner.size() > container.name.size() && inner.starts_with(container.name) &&
         inner[container.name.size()] == '.';
}

// " (Adam or AdamW ...)": the optimizer an optimizer pass's ops show, or "" when none fits.
// The fused optimizers are one op each (_fused_adam_, _fused_adamw_); Adam and AdamW otherwise
// divide by a square root (addcdiv_ after sqrt, one tensor at a time or _foreach_); SGD adds the
// scaled gradient (add_ with alpha) and divides by nothing.
std::string OptimizerName(const std::set<std::string>& ops) {
  auto has = [&](const char* op) {
    return ops.count(op) > 0 || ops.count(std::string("_foreach_") + op) > 0;
  };
  if (ops.count("_fused_adamw_") > 0) return " (AdamW, fused: _fused_adamw_)";
  if (ops.count("_fused_adam_") > 0) return " (Adam, fused: _fused_adam_)";
  if (has("addcdiv_") && (has("sqrt") || has("sqrt_"))) {
    return " (Adam or AdamW: addcdiv_ after sqrt)";
  }
  if (has("add_") && !has("addcdiv_") && !has("sqrt")) return " (SGD: add_ of the scaled gradient)";
  return "";
}

// Whether some input is stored in another dtype on each side.
bool InputDtypesDiffer(const DumpRecord& a, const DumpRecord& b) {
  for (std::size_t i = 0; i < a.inputs.size() && i < b.inputs.size(); ++i) {
    if (a.inputs[i].DTypeName() != b.inputs[i].DTypeName()) return true;
  }
  return false;
}

// forward < backward < optimizer (a version 1 dump knows the first two).
int PassRank(const std::string& pass) {
  if (pass == "forward") return 0;
  if (pass == "backward") return 1;
  return 2;
}

}  // namespace

std::vector<const OpExplanation*> ExplainReport::not_judged() const {
  std::vector<const OpExplanation*> out;
  for (const OpExplanation& e : ops) {
    if (e.cause == Cause::kNotJudged) out.push_back(&e);
  }
  return out;
}

std::vector<const OpExplanation*> ExplainReport::origins() const {
  std::vector<const OpExplanation*> out;
  for (const OpExplanation& e : ops) {
    if (IsOrigin(e.cause)) out.push_back(&e);
  }
  return out;
}

int ExplainReport::exit_code() const { return input_difference || !origins().empty() ? 1 : 0; }

Result<ExplainReport> RunExplain(const ExplainOptions& options) {
  PARITY_ASSIGN_OR_RETURN(DumpDir a, DumpDir::Open(options.a));
  PARITY_ASSIGN_OR_RETURN(DumpDir b, DumpDir::Open(options.b));
  ExplainReport report;
  report.a = options.a;
  report.b = options.b;
  for (const std::string& w : a.warnings()) report.warnings.push_back("A: " + w);
  for (const std::string& w : b.warnings()) report.warnings.push_back("B: " + w);
  if (!a.parts().empty() && !b.parts().empty()) {
    const DumpPart& pa = a.parts().front();
    const DumpPart& pb = b.parts().front();
    if (pa.version != pb.version || pa.level != pb.level) {
      report.warnings.push_back(fmt::format(
          "A is format version {} ({} level), B version {} ({} level): records are matched "
          "where both give the fields (a version 1 record is step 0, pass forward or backward); "
          "ops named differently at the two levels are structural",
          pa.version, pa.level, pb.version, pb.level));
    }
  }
  report.coverage_a = CoverageOf(a);
  report.coverage_b = CoverageOf(b);
  report.evidence = CompareEvidence(a, b);
  auto pairs = PairRecords(a, b, &report.warnings);
  // Execution order: by rank, step, pass (forward, backward, optimizer), then A's seq (B's
  // for records of B only).
  auto order = [](const std::pair<const DumpRecord*, const DumpRecord*>& p) {
    const DumpRecord* r = p.first != nullptr ? p.first : p.second;
    return std::make_tuple(r->rank, r->step, PassRank(r->pass), r->seq, p.first == nullptr);
  };
  std::stable_sort(pairs.begin(), pairs.end(),
                   [&](const auto& x, const auto& y) { return order(x) < order(y); });

  // Calls whose outputs differed, by (rank, step, pass): what a container's difference comes
  // from.
  std::map<std::tuple<int64_t, int64_t, std::string>, std::vector<std::string>> diverged;
  const DivergedBefore diverged_inside = [&](const DumpRecord& container) {
    auto it = diverged.find({container.rank, container.step, container.pass});
    if (it == diverged.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(),
                       [&](const std::string& name) { return Contains(container, name); });
  };
  // Each module's first forward record per (rank, step): what a backward origin is the
  // gradient of.
  std::map<std::tuple<int64_t, int64_t, std::string>, const DumpRecord*> forward_of;
  for (const auto& [ra, rb] : pairs) {
    const DumpRecord* r = ra != nullptr ? ra : rb;
    if (r->pass == "forward" && !r->module.empty()) {
      forward_of.try_emplace({r->rank, r->step, r->module}, r);
    }
  }
  // The optimizer each (rank, step) ran, recognised from its optimizer-pass ops.
  std::map<std::pair<int64_t, int64_t>, std::set<std::string>> optimizer_ops;
  for (const auto& [ra, rb] : pairs) {
    const DumpRecord* r = ra != nullptr ? ra : rb;
    if (r->pass == "optimizer") optimizer_ops[{r->rank, r->step}].insert(r->op);
  }
  // Each rank's first step: params that differ there were loaded, not computed. Until a
  // rank's first call whose outputs differ, inputs that differ came from no recorded op: data.
  std::map<int64_t, int64_t> first_step;
  std::set<int64_t> diverged_ranks;
  // Ops whose bound both runs exceed by comparable errors: the first such call's figures and
  // how many more, in the order first seen (one warning per op).
  std::vector<std::pair<const OpExplanation*, int64_t>> too_tight;
  std::map<std::string, std::size_t> too_tight_at;
  for (const auto& [ra, rb] : pairs) {
    const DumpRecord& any = ra != nullptr ? *ra : *rb;
    first_step.try_emplace(any.rank, any.step);
    const bool nothing_diverged_yet = diverged_ranks.count(any.rank) == 0;
    if (options.name && ::fnmatch(options.name->c_str(), any.name.c_str(), 0) != 0) continue;
    PARITY_ASSIGN_OR_RETURN(OpExplanation e, ExplainPair(a, ra, b, rb, diverged_inside));
    const bool loaded_params = e.params_differ && any.step == first_step[any.rank];
    // Inputs that differ only as autocast's casts make them (another float dtype) are not data.
    if (ra != nullptr && rb != nullptr && (nothing_diverged_yet || loaded_params) &&
        !e.inputs_identical && !InputDtypesDiffer(*ra, *rb)) {
      // Data no recorded op computed: the first call's inputs, or weights as loaded.
      if (!report.input_difference) {
        report.input_difference = true;
        report.input_difference_detail =
            fmt::format("{} of seq {} '{}' differ by {:.2g} (relative rms)",
                        e.params_differ ? "the params" : "the inputs", e.seq, e.name,
                        e.input_diff.value_or(0.0));
      }
      if (e.cause == Cause::kInherited) {
        e.reason = fmt::format("input data differ: {} ({})",
                               e.params_differ ? "its params differ"
                                               : "the first op's inputs "
                                                 "differ",
                               e.reason);
      }
    }
    // A call not judged counts as diverged for a container only where its outputs are known
    // to differ; for the input-data test it may have diverged (so later inputs that differ
    // are not claimed as input data).
    const bool known_different =
        e.cause != Cause::kNotJudged || (e.output_diff && *e.output_diff > 0.0);
    if (e.cause != Cause::kIdentical && e.cause != Cause::kStructural && known_different) {
      diverged[{e.rank, e.step, e.pass}].push_back(e.name);
    }
    if (e.cause != Cause::kIdentical) diverged_ranks.insert(e.rank);
    if (IsOrigin(e.cause) && e.pass == "backward" && !any.module.empty()) {
      auto it = forward_of.find({any.rank, any.step, any.module});
      e.reason += it != forward_of.end()
                      ? fmt::format("; in the gradient of module '{}' (its forward: {} at seq {})",
                                    any.module, it->second->op, it->second->seq)
                      : fmt::format("; in the gradient of module '{}'", any.module);
    } else if (IsOrigin(e.cause) && e.pass == "optimizer") {
      e.reason +=
          "; first in the optimizer step" + OptimizerName(optimizer_ops[{any.rank, any.step}]);
    }
    if (e.time_us_a && e.time_us_b && *e.time_us_a > 0) {
      report.slowest_on_b.push_back({e.seq, e.step, e.name, e.op, *e.time_us_a, *e.time_us_b});
    }
    report.ops.push_back(std::move(e));
  }
  for (const OpExplanation& e : report.ops) {
    if (!e.bound_too_tight) continue;
    auto [it, first] = too_tight_at.try_emplace(e.op, too_tight.size());
    if (first) {
      too_tight.emplace_back(&e, 0);
    } else {
      ++too_tight[it->second].second;
    }
  }
  for (const auto& [e, more] : too_tight) {
    report.warnings.push_back(fmt::format(
        "the bound for {} is too tight here: both runs exceed it (A {:.2g}, B {:.2g} relative rms "
        "error against the float64 replay, within {}x of each other; seq {} '{}', step {}, {}){}: "
        "not judged, not an origin",
        e->op, e->local_err_a.value_or(0.0), e->local_err_b.value_or(0.0),
        explain_internal::kComparableErrors, e->seq, e->name, e->step, e->pass,
        more > 0 ? fmt::format(", and in {} more call{}", more, more == 1 ? "" : "s") : ""));
  }
  std::stable_sort(report.slowest_on_b.begin(), report.slowest_on_b.end(),
                   [](const SlowOp& x, const SlowOp& y) { return x.ratio() > y.ratio(); });
  std::erase_if(report.slowest_on_b, [](const SlowOp& s) { return s.ratio() <= 1.0; });
  if (report.slowest_on_b.size() > static_cast<std::size_t>(std::max(options.slowest, 0))) {
    report.slowest_on_b.resize(static_cast<std::size_t>(std::max(options.slowest, 0)));
  }
  return report;
}

}  // namespace parity
