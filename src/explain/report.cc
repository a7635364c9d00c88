// SPDX-License-Identifier: Apache-2.0
// The reports of `parity explain`: JSON (format parity-explain v1) and text.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/text_table.h"
#include "explain/explain.h"

namespace parity {
namespace {

void SetOptional(Json& j, std::string_view key, const std::optional<double>& value) {
  if (value) {
    SetNumber(j, key, *value);
  } else {
    j[std::string(key)] = nullptr;
  }
}

Json PrecisionJson(const OpExplanation& e) {
  return e.effective_precision ? Json(*e.effective_precision) : Json(nullptr);
}

std::string Short(const std::optional<double>& x) {
  return x ? fmt::format("{:.2g}", *x) : std::string("-");
}

constexpr std::size_t kNotJudgedLines = 20;  // not-judged calls listed in the text

}  // namespace

Json SourceJson(const RecordSource& source) {
  Json j = {{"file", source.file}, {"line", source.line}};
  if (!source.function.empty()) j["function"] = source.function;
  if (!source.code.empty()) j["code"] = source.code;
  return j;
}

std::string SourceText(const RecordSource& source) {
  std::string out = fmt::format("at {}:{}", source.file, source.line);
  if (!source.function.empty()) out += " in " + source.function;
  if (!source.code.empty()) out += ": " + source.code;
  return out;
}

Json OpExplanationJson(const OpExplanation& e) {
  Json j = Json::object();
  j["seq"] = e.seq;
  j["rank"] = e.rank;
  j["step"] = e.step;
  j["name"] = e.name;
  j["op"] = e.op;
  j["pass"] = e.pass;
  j["call"] = e.call;
  j["cause"] = CauseName(e.cause);
  j["reason"] = e.reason;
  j["replayed"] = e.replayed;
  SetOptional(j, "local_err_a", e.local_err_a);
  SetOptional(j, "local_err_b", e.local_err_b);
  SetOptional(j, "input_diff", e.input_diff);
  SetOptional(j, "output_diff", e.output_diff);
  j["effective_precision"] = PrecisionJson(e);
  SetOptional(j, "time_us_a", e.time_us_a);
  SetOptional(j, "time_us_b", e.time_us_b);
  if (e.source) j["source"] = SourceJson(*e.source);
  return j;
}

Json ExplainReportJson(const ExplainReport& report) {
  Json doc = Document("parity-explain", 1);
  doc["a"] = report.a;
  doc["b"] = report.b;
  doc["coverage"] = {{"a", CoverageJson(report.coverage_a)},
                     {"b", CoverageJson(report.coverage_b)}};
  doc["evidence"] = EvidenceJson(report.evidence);
  doc["input_difference"] = report.input_difference;
  if (report.input_difference) doc["input_difference_detail"] = report.input_difference_detail;
  Json origins = Json::array();
  for (const OpExplanation* e : report.origins()) {
    origins.push_back({{"seq", e->seq},
                       {"rank", e->rank},
                       {"step", e->step},
                       {"name", e->name},
                       {"op", e->op},
                       {"pass", e->pass},
                       {"call", e->call},
                       {"cause", CauseName(e->cause)},
                       {"effective_precision", PrecisionJson(*e)},
                       {"reason", e->reason}});
    if (e->source) origins.back()["source"] = SourceJson(*e->source);
  }
  doc["origins"] = std::move(origins);
  Json ops = Json::array();
  std::map<std::string_view, int64_t> counts;
  for (const OpExplanation& e : report.ops) {
    ++counts[CauseName(e.cause)];
    Json j = OpExplanationJson(e);
    ops.push_back(std::move(j));
  }
  doc["ops"] = std::move(ops);
  Json slow = Json::array();
  for (const SlowOp& s : report.slowest_on_b) {
    Json j = {{"seq", s.seq}, {"step", s.step}, {"name", s.name}, {"op", s.op}};
    SetNumber(j, "time_us_a", s.time_us_a);
    SetNumber(j, "time_us_b", s.time_us_b);
    SetNumber(j, "ratio", s.ratio());
    slow.push_back(std::move(j));
  }
  doc["slowest_on_b"] = std::move(slow);
  Json summary = {{"ops", report.ops.size()}, {"origins", report.origins().size()}};
  for (const auto& [cause, n] : counts) summary[std::string(cause)] = n;
  doc["summary"] = std::move(summary);
  doc["warnings"] = report.warnings;
  return doc;
}

std::string ExplainReportText(const ExplainReport& report) {
  std::string out =
      fmt::format("parity explain {} {} ({} op calls)\n", report.a, report.b, report.ops.size());
  for (const std::string& w : report.warnings) out += "  warning: " + w + "\n";
  out += fmt::format("  A: {}\n  B: {}\n", CoverageLine(report.coverage_a),
                     CoverageLine(report.coverage_b));
  out += EvidenceText(report.evidence, "  ");
  out += report.input_difference
             ? fmt::format("\nInput data differ: {}\n", report.input_difference_detail)
             : std::string("\nInput data: identical\n");
  const std::vector<const OpExplanation*> origins = report.origins();
  // Steps and ranks are shown when the dumps have more than one.
  std::set<int64_t> steps, ranks;
  for (const OpExplanation& e : report.ops) {
    steps.insert(e.step);
    ranks.insert(e.rank);
  }
  const bool show_step = steps.size() > 1, show_rank = ranks.size() > 1;
  auto where = [&](const OpExplanation& e) {
    return (show_rank ? fmt::format("rank {} ", e.rank) : "") +
           (show_step ? fmt::format("step {} ", e.step) : "");
  };
  const std::vector<const OpExplanation*> not_judged = report.not_judged();
  auto source = [](const OpExplanation& e) {
    return e.source ? "      " + SourceText(*e.source) + "\n" : std::string();
  };
  if (origins.empty()) {
    out += not_judged.empty()
               ? "\nNo origin: every difference is identical, within rounding or inherited.\n"
               : fmt::format(
                     "\nNo origin among the calls judged: every difference is identical, within "
                     "rounding or inherited; {} not judged (below).\n",
                     not_judged.size());
  } else {
    out += fmt::format("\nOrigins ({}), in execution order:\n", origins.size());
    for (const OpExplanation* e : origins) {
      out += fmt::format("  {}seq {} {} ({}): {}{}\n      {}\n", where(*e), e->seq, e->name, e->op,
                         CauseName(e->cause),
                         e->effective_precision ? " [" + *e->effective_precision + "]" : "",
                         e->reason);
      out += source(*e);
    }
  }
  if (!not_judged.empty()) {
    out += fmt::format(
        "\nNot judged ({}): the dumps do not hold what judging them needs, or both runs exceed "
        "the bound; neither origins nor cleared:\n",
        not_judged.size());
    for (std::size_t i = 0; i < not_judged.size() && i < kNotJudgedLines; ++i) {
      const OpExplanation& e = *not_judged[i];
      out += fmt::format("  {}seq {} {} ({}): {}\n", where(e), e.seq, e.name, e.op, e.reason);
      out += source(e);
    }
    if (not_judged.size() > kNotJudgedLines) {
      out +=
          fmt::format("  ... and {} more (--json has all)\n", not_judged.size() - kNotJudgedLines);
    }
  }
  out += "\nPer op:\n";
  std::vector<std::string> header{"seq",     "name",     "op",      "cause",  "prec",
                                  "in_diff", "out_diff", "local_A", "local_B"};
  std::vector<bool> numeric{true, false, false, false, false, true, true, true, true};
  if (show_step) {
    header.insert(header.begin(), "step");
    numeric.insert(numeric.begin(), true);
  }
  if (show_rank) {
    header.insert(header.begin(), "rank");
    numeric.insert(numeric.begin(), true);
  }
  Table table(std::move(header), std::move(numeric));
  std::map<std::string_view, int64_t> counts;
  for (const OpExplanation& e : report.ops) {
    ++counts[CauseName(e.cause)];
    std::vector<std::string> row{std::to_string(e.seq),
                                 e.name,
                                 e.op,
                                 std::string(CauseName(e.cause)) + (e.replayed ? "" : "*"),
                                 e.effective_precision.value_or("-"),
                                 Short(e.input_diff),
                                 Short(e.output_diff),
                                 Short(e.local_err_a),
                                 Short(e.local_err_b)};
    if (show_step) row.insert(row.begin(), std::to_string(e.step));
    if (show_rank) row.insert(row.begin(), std::to_string(e.rank));
    table.AddRow(std::move(row));
  }
  out += table.Render("  ");
  const bool compared_only = std::any_of(report.ops.begin(), report.ops.end(),
                                         [](const OpExplanation& e) { return !e.replayed; });
  out += fmt::format(
      "  (diffs: relative rms between A and B; local: each side against the "
      "float64 replay on its own inputs{})\n",
      compared_only ? "; * compared only, not replayed" : "");
  if (!report.slowest_on_b.empty()) {
    out += "\nSlowest on B relative to A:\n";
    Table slow({"seq", "name", "op", "A us", "B us", "B/A"},
               {true, false, false, true, true, true});
    for (const SlowOp& s : report.slowest_on_b) {
      slow.AddRow({std::to_string(s.seq), s.name, s.op, fmt::format("{:.1f}", s.time_us_a),
                   fmt::format("{:.1f}", s.time_us_b), fmt::format("{:.2f}", s.ratio())});
    }
    out += slow.Render("  ");
  }
  std::string tally;
  for (const auto& [cause, n] : counts) {
    tally += fmt::format("{}{} {}", tally.empty() ? "" : ", ", n, cause);
  }
  out += fmt::format("\nSummary: {} op calls ({}); {} origin{}\n", report.ops.size(), tally,
                     origins.size(), origins.size() == 1 ? "" : "s");
  return out;
}

}  // namespace parity
