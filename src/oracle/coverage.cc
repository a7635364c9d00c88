// SPDX-License-Identifier: Apache-2.0
#include "oracle/coverage.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text_table.h"
#include "oracle/oracle.h"
#include "oracle/replay.h"

namespace parity {
namespace {

// "0", "0-2" for a contiguous run, else "0, 2, 5".
std::string Range(const std::vector<int64_t>& values) {
  if (values.empty()) return "none";
  if (values.size() > 1 &&
      values.back() - values.front() + 1 == static_cast<int64_t>(values.size())) {
    return fmt::format("{}-{}", values.front(), values.back());
  }
  return fmt::format("{}", fmt::join(values, ", "));
}

constexpr const char* kPasses[] = {"forward", "backward", "optimizer"};

}  // namespace

DumpCoverage CoverageOf(const DumpDir& dump) {
  DumpCoverage c;
  std::set<int64_t> steps;
  c.version = dump.version();
  c.level = dump.level();
  c.mode = dump.mode();
  for (const DumpRecord& r : dump.records()) {
    ++c.records;
    steps.insert(r.step);
    auto [it, added] = c.ops.try_emplace(r.op);
    OpCoverage& op = it->second;
    if (added) op.replayable = Replayable(r.op);
    ++op.records;
    ++op.passes[r.pass];
    (NotReplayableReason(r).empty() ? c.replayable : c.compared_only) += 1;
    auto count = [&](const DumpTensorRef& ref) {
      if (ref.comparable()) return;
      ++c.not_comparable;
      ++c.not_comparable_reasons[ref.not_comparable];
    };
    for (const DumpTensorRef& ref : r.inputs) count(ref);
    for (const auto& [key, ref] : r.params) count(ref);
    for (const DumpTensorRef& ref : r.outputs) count(ref);
  }
  c.omitted = dump.Omitted();
  // The steps with records: a manifest also lists the step a capture stopped at, before any
  // record of it (its generators' state is the end of the last step).
  c.steps.assign(steps.begin(), steps.end());
  c.ranks = dump.Ranks();
  return c;
}

Json CoverageJson(const DumpCoverage& c) {
  Json ops = Json::object();
  for (const auto& [name, op] : c.ops) {
    Json passes = Json::object();
    for (const auto& [pass, n] : op.passes) passes[pass] = n;
    ops[name] = {{"records", op.records}, {"replayable", op.replayable}, {"passes", passes}};
  }
  Json omitted = Json::object();
  for (const auto& [name, n] : c.omitted) omitted[name] = n;
  Json reasons = Json::object();
  for (const auto& [reason, n] : c.not_comparable_reasons) reasons[reason] = n;
  return {{"version", c.version},
          {"level", c.level},
          {"mode", c.mode},
          {"records", c.records},
          {"ops", std::move(ops)},
          {"replayable", c.replayable},
          {"compared_only", c.compared_only},
          {"not_comparable", c.not_comparable},
          {"not_comparable_reasons", std::move(reasons)},
          {"omitted", std::move(omitted)},
          {"steps", c.steps},
          {"ranks", c.ranks}};
}

std::string CoverageLine(const DumpCoverage& c) {
  std::string line =
      fmt::format("{} record{} of {} op{} ({} replayable, {} compared only), step{} {}, rank{} {}",
                  c.records, c.records == 1 ? "" : "s", c.ops.size(), c.ops.size() == 1 ? "" : "s",
                  c.replayable, c.compared_only, c.steps.size() == 1 ? "" : "s", Range(c.steps),
                  c.ranks.size() == 1 ? "" : "s", Range(c.ranks));
  if (!c.omitted.empty()) {
    int64_t total = 0;
    std::vector<std::string> each;
    for (const auto& [name, n] : c.omitted) {
      total += n;
      each.push_back(fmt::format("{} {}", name, n));
    }
    line += fmt::format(", {} omitted ({})", total, fmt::join(each, ", "));
  }
  if (c.not_comparable > 0) {
    std::vector<std::string> each;
    for (const auto& [reason, n] : c.not_comparable_reasons) {
      each.push_back(fmt::format("{} {}", n, reason));
    }
    line += fmt::format(", {} tensor{} not comparable ({})", c.not_comparable,
                        c.not_comparable == 1 ? "" : "s", fmt::join(each, "; "));
  }
  return line;
}

std::string CoverageText(const DumpCoverage& c, const std::string& indent) {
  std::string out = fmt::format("{}coverage (version {}, level {}, mode {}): {}\n", indent,
                                c.version, c.level, c.mode, CoverageLine(c));
  if (c.ops.empty()) return out;
  Table table({"op", "records", "forward", "backward", "optimizer", "replay"},
              {false, true, true, true, true, false});
  for (const auto& [name, op] : c.ops) {
    std::vector<std::string> row{name, std::to_string(op.records)};
    for (const char* pass : kPasses) {
      const auto it = op.passes.find(pass);
      row.push_back(it == op.passes.end() ? "-" : std::to_string(it->second));
    }
    row.push_back(op.replayable ? "yes" : "no");
    table.AddRow(std::move(row));
  }
  out += table.Render(indent + "  ");
  return out;
}

}  // namespace parity
