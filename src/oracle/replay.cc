// SPDX-License-Identifier: Apache-2.0
#include "oracle/replay.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <cmath>

#include "compare/context.h"
#include "compare/metrics.h"
#include "compare/scale.h"
#include "core/text_table.h"
#include "oracle/kernels.h"
#include "oracle/regions.h"

namespace parity {
namespace {

Status LoadTensors(const DumpDir& dump, const DumpRecord& record, LoadedRecord* l) {
  for (const DumpTensorRef& ref : record.inputs) {
    PARITY_ASSIGN_OR_RETURN(Tensor t, dump.Load(record, ref));
    l->inputs.push_back(std::move(t));
  }
  for (const auto& [key, ref] : record.params) {
    PARITY_ASSIGN_OR_RETURN(Tensor t, dump.Load(record, ref));
    l->params.emplace_back(key, std::move(t));
  }
  for (const DumpTensorRef& ref : record.outputs) {
    PARITY_ASSIGN_OR_RETURN(Tensor t, dump.Load(record, ref));
    l->outputs.push_back(std::move(t));
  }
  return Status::Ok();
}

Status ToOpCall(const DumpRecord& record, LoadedRecord* l) {
  OpCall& call = l->call;
  call.op = record.op;
  call.attrs = record.attrs;
  bool named = false;
  for (const DumpTensorRef& ref : record.inputs) named = named || !ref.arg.empty();
  for (std::size_t i = 0; i < l->inputs.size(); ++i) {
    const Tensor& t = l->inputs[i];
    PARITY_ASSIGN_OR_RETURN(Array a, ToArray(t));
    call.inputs.push_back(std::move(a));
    call.input_dtypes.push_back(t.dtype());
    if (named) call.input_args.push_back(record.inputs[i].arg);
    call.input_positions.push_back(record.inputs[i].index.value_or(-1));
  }
  for (const auto& [key, t] : l->params) {
    PARITY_ASSIGN_OR_RETURN(Array a, ToArray(t));
    call.params.emplace_back(key, std::move(a));
  }
  for (const Tensor& t : l->outputs) {
    PARITY_ASSIGN_OR_RETURN(Array a, ToArray(t));
    call.recorded_outputs.push_back(std::move(a));
  }
  return Status::Ok();
}

// The first tensor of `record` parity does not compare, and why ("input 0 not stored:
// sparse_coo layout", "output 0 is complex64: ..."); "" when there is none.
std::string NotComparable(const DumpRecord& record) {
  auto why = [](const std::string& what, const DumpTensorRef& ref) {
    if (!ref.not_stored.empty()) return fmt::format("{} not stored: {}", what, ref.not_stored);
    return fmt::format("{} is {}", what, ref.not_comparable);
  };
  for (std::size_t i = 0; i < record.inputs.size(); ++i) {
    if (!record.inputs[i].comparable()) return why(fmt::format("input {}", i), record.inputs[i]);
  }
  for (const auto& [key, ref] : record.params) {
    if (!ref.comparable()) return why("param '" + key + "'", ref);
  }
  for (std::size_t i = 0; i < record.outputs.size(); ++i) {
    if (!record.outputs[i].comparable()) {
      return why(fmt::format("output {}", i), record.outputs[i]);
    }
  }
  return "";
}

std::string StatsOnly(const DumpRecord& record) {
  if (std::string why = NotComparable(record); !why.empty()) return why;
  for (const DumpTensorRef& ref : record.inputs) {
    if (!ref.has_data()) return "an input was saved as statistics only";
  }
  for (const auto& [key, ref] : record.params) {
    if (!ref.has_data()) return "param '" + key + "' was saved as statistics only";
  }
  for (const DumpTensorRef& ref : record.outputs) {
    if (!ref.has_data()) return "an output was saved as statistics only";
  }
  if (record.outputs.empty()) return "no output recorded";
  return "";
}

std::string Reason(const Status& status) {
  std::string message = status.message();
  constexpr std::string_view kPrefix = "not replayable: ";
  if (message.starts_with(kPrefix)) message.erase(0, kPrefix.size());
  return message;
}

}  // namespace

void ReplayError::Add(const Array& recorded, const Array& oracle) {
  for (std::size_t j = 0; j < oracle.data.size() && j < recorded.data.size(); ++j) {
    const double got = recorded.data[j], want = oracle.data[j];
    if (std::isfinite(got) && std::isfinite(want)) {
      const double d = got - want;
      max_abs = std::max(max_abs, std::fabs(d));
      sum_sq += d * d;
      oracle_sq += want * want;
      ++finite;
    }
  }
}

void ReplayError::Into(OpReplay* r) const {
  r->max_abs = max_abs;
  if (finite > 0) {
    r->rmse = std::sqrt(sum_sq / static_cast<double>(finite));
    const double rms = std::sqrt(oracle_sq / static_cast<double>(finite));
    r->rel_rmse = rms > 0 ? r->rmse / rms : (r->rmse > 0 ? INFINITY : 0.0);
  }
}

Result<LoadedRecord> LoadRecord(const DumpDir& dump, const DumpRecord& record) {
  const std::string missing = StatsOnly(record);
  if (!missing.empty()) return Status::Invalid("", "not replayable: " + missing);
  LoadedRecord l;
  PARITY_RETURN_IF_ERROR(LoadTensors(dump, record, &l));
  PARITY_RETURN_IF_ERROR(ToOpCall(record, &l));
  return l;
}

Result<OpCall> LoadOpCall(const DumpDir& dump, const DumpRecord& record) {
  PARITY_ASSIGN_OR_RETURN(LoadedRecord l, LoadRecord(dump, record));
  return std::move(l.call);
}

std::string NotReplayableReason(const DumpRecord& record) {
  // A tensor the dump does not hold (or a complex one) first: whatever the op, no replay
  // could be judged without it.
  if (std::string why = NotComparable(record); !why.empty()) return why;
  if (!Replayable(record.op)) {
    OpCall bare;
    bare.op = record.op;
    return Reason(Replay(bare).status());
  }
  return StatsOnly(record);
}

Result<OpReplay> ReplayRecord(const DumpDir& dump, const DumpRecord& record) {
  OpReplay r;
  r.seq = record.seq;
  r.rank = record.rank;
  r.step = record.step;
  r.call = record.call;
  r.name = record.name;
  r.op = record.op;
  r.pass = record.pass;
  r.time_us = record.time_us;
  if (record.op == kCompiledRegionOp) return ReplayRegion(dump, record, std::move(r));
  if (const std::string why = NotReplayableReason(record); !why.empty()) {
    r.reason = why;
    return r;
  }
  PARITY_ASSIGN_OR_RETURN(LoadedRecord loaded, LoadRecord(dump, record));
  const OpCall& call = loaded.call;
  auto replayed = Replay(call);
  if (!replayed.ok()) {
    r.reason = Reason(replayed.status());
    return r;
  }
  const std::vector<Array>& oracle = *replayed;
  if (oracle.size() != loaded.outputs.size()) {
    r.reason = fmt::format("the replay gives {} outputs, the record has {}", oracle.size(),
                           loaded.outputs.size());
    return r;
  }
  ReplayError error;
  r.within_bound = true;
  const std::optional<RandomCheck> random = CheckRandomOp(call);
  // A random op's mask output is the record's own: comparing it with itself judges nothing.
  // So are a GPU attention kernel's outputs past its values (its RNG state ...).
  const std::size_t judged_outputs =
      random ? std::min<std::size_t>(oracle.size(), 1) : ValueOutputs(call, oracle.size());
  for (std::size_t i = 0; i < judged_outputs; ++i) {
    const Tensor& recorded = loaded.outputs[i];
    const Array& expected = oracle[i];
    if (expected.shape != recorded.meta().shape) {
      r.reason = fmt::format("the replay's output has shape {}, the record {}",
                             ShapeString(expected.shape), ShapeString(recorded.meta().shape));
      return r;
    }
    error.Add(call.recorded_outputs[i], expected);
    // Judge against the oracle rounded to the recorded dtype, with `auto`'s tolerance.
    PARITY_ASSIGN_OR_RETURN(Tolerance t,
                            OutputTolerance(record, loaded, i, {&dump.ManifestFor(record)}));
    PARITY_ASSIGN_OR_RETURN(OutputJudgement j, JudgeOutput(recorded, expected, std::move(t)));
    r.within_bound = r.within_bound && j.within;
    if (i == 0) r.tolerance = std::move(j.tolerance);
  }
  r.replayable = true;
  error.Into(&r);
  if (random) {
    // The output given the mask is still judged: beyond it, or a drop rate that is not p, is
    // a finding; else nothing is said of the values.
    r.judged = !r.within_bound || !random->holds;
    r.reason = !r.within_bound ? fmt::format("beyond the bound given its mask: {}; {}",
                                             r.tolerance->reason, random->text)
                               : random->text;
    r.within_bound = false;
    return r;
  }
  r.reason = r.within_bound ? fmt::format("within the {} bound", r.tolerance->policy)
                            : fmt::format("beyond the bound: {}", r.tolerance->reason);
  return r;
}

Result<ReplayReport> RunReplay(const ReplayOptions& options) {
  PARITY_ASSIGN_OR_RETURN(DumpDir dump, DumpDir::Open(options.dump));
  ReplayReport report;
  report.dump = options.dump;
  report.warnings = dump.warnings();
  for (const DumpRecord& record : dump.records()) {
    if (options.seq && record.seq != *options.seq) continue;
    if (options.name && ::fnmatch(options.name->c_str(), record.name.c_str(), 0) != 0) continue;
    PARITY_ASSIGN_OR_RETURN(OpReplay r, ReplayRecord(dump, record));
    if (!r.replayable) {
      ++report.not_replayable;
    } else {
      ++report.replayed;
      if (!r.judged) {
        ++report.not_judged;
      } else {
        (r.within_bound ? report.within : report.outside) += 1;
      }
    }
    report.ops.push_back(std::move(r));
  }
  return report;
}

Json ReplayReportJson(const ReplayReport& report) {
  Json doc = Document("parity-replay", 1);
  doc["dump"] = report.dump;
  doc["summary"] = {{"ops", report.ops.size()},        {"replayed", report.replayed},
                    {"within_bound", report.within},   {"outside_bound", report.outside},
                    {"not_judged", report.not_judged}, {"not_replayable", report.not_replayable}};
  doc["warnings"] = report.warnings;
  Json ops = Json::array();
  for (const OpReplay& r : report.ops) {
    Json j = Json::object();
    j["seq"] = r.seq;
    j["rank"] = r.rank;
    j["step"] = r.step;
    j["name"] = r.name;
    j["op"] = r.op;
    j["pass"] = r.pass;
    j["call"] = r.call;
    j["replayable"] = r.replayable;
    j["reason"] = r.reason;
    if (r.replayable) {
      SetNumber(j, "max_abs", r.max_abs);
      SetNumber(j, "rmse", r.rmse);
      SetNumber(j, "rel_rmse", r.rel_rmse);
      const Tolerance& t = *r.tolerance;
      SetNumber(j, "bound",
                t.criterion == Criterion::kAbsRel ? t.atol
                : t.criterion == Criterion::kUlps ? static_cast<double>(t.max_ulps)
                                                  : 0.0);
      j["tolerance"] = t.ToJson();
      j["within_bound"] = r.within_bound;
      j["judged"] = r.judged;
    }
    if (r.time_us) SetNumber(j, "time_us", *r.time_us);
    ops.push_back(std::move(j));
  }
  doc["ops"] = std::move(ops);
  return doc;
}

std::string ReplayReportText(const ReplayReport& report) {
  std::string out = fmt::format("parity replay {} ({} op calls)\n", report.dump, report.ops.size());
  for (const std::string& w : report.warnings) out += "  warning: " + w + "\n";
  Table table({"seq", "name", "op", "verdict", "max_abs", "rel_rmse", "bound", "note"},
              {true, false, false, false, true, true, false, false});
  for (const OpReplay& r : report.ops) {
    std::string bound = "-";
    if (r.tolerance) {
      const Tolerance& t = *r.tolerance;
      bound = t.criterion == Criterion::kAbsRel ? fmt::format("{:.3g} + {:.3g}·|b|", t.atol, t.rtol)
              : t.criterion == Criterion::kUlps ? fmt::format("{} ulp", t.max_ulps)
                                                : "bitwise";
    }
    table.AddRow({std::to_string(r.seq), r.name, r.op,
                  !r.replayable ? "SKIP"
                  : !r.judged   ? "not judged"
                                : (r.within_bound ? "ok" : "OUTSIDE"),
                  r.replayable ? fmt::format("{:.3g}", r.max_abs) : "-",
                  r.replayable ? fmt::format("{:.3g}", r.rel_rmse) : "-", bound,
                  r.replayable && r.judged && r.within_bound ? "" : r.reason});
  }
  out += table.Render("  ");
  out += fmt::format(
      "\nSummary: {} op calls, {} replayed ({} within their bound, {} outside, {} not judged: "
      "random ops), {} skipped (not replayable)\n",
      report.ops.size(), report.replayed, report.within, report.outside, report.not_judged,
      report.not_replayable);
  return out;
}

}  // namespace parity
