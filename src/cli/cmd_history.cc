// SPDX-License-Identifier: Apache-2.0
// parity history: the runs recorded in the results store, newest first, or with --benchmark
// how each metric series moved from its first run to its last.
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "cli/command.h"
#include "cli/common.h"
#include "core/exit_code.h"
#include "core/json_util.h"
#include "core/text_table.h"
#include "store/json.h"
#include "store/store.h"
#include "store/trend.h"

namespace parity::cli {
namespace {

/// An age back from now: a non-negative number and a unit, s, m, h, d or w ("30d", "1.5h").
std::optional<double> ParseAge(std::string_view text) {
  if (text.size() < 2) return std::nullopt;
  double unit = 0.0;
  switch (text.back()) {
    case 's':
      unit = 1.0;
      break;
    case 'm':
      unit = 60.0;
      break;
    case 'h':
      unit = 3600.0;
      break;
    case 'd':
      unit = 86400.0;
      break;
    case 'w':
      unit = 7 * 86400.0;
      break;
    default:
      return std::nullopt;
  }
  const std::string_view number = text.substr(0, text.size() - 1);
  if (number.find_first_not_of("0123456789.") != std::string_view::npos || number[0] == '.') {
    return std::nullopt;
  }
  double value = 0.0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size()) return std::nullopt;
  const double seconds = value * unit;
  if (!std::isfinite(seconds) || seconds > 1e12) return std::nullopt;
  return seconds;
}

/// A UTC date, "2026-11-01", optionally with a time, "2026-11-01T14:05[:30][Z]" (a space in
/// place of the T too), as Unix seconds.
std::optional<double> ParseDate(std::string_view text) {
  const auto at = [&](std::size_t i) { return i < text.size() ? text[i] : '\0'; };
  const auto digits = [&](std::size_t pos, std::size_t len, int& out) {
    if (pos + len > text.size()) return false;
    out = 0;
    for (std::size_t i = pos; i < pos + len; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!digits(0, 4, year) || at(4) != '-' || !digits(5, 2, month) || at(7) != '-' ||
      !digits(8, 2, day)) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year(year),
                                         std::chrono::month(static_cast<unsigned>(month)),
                                         std::chrono::day(static_cast<unsigned>(day))};
  if (!date.ok()) return std::nullopt;
  std::size_t pos = 10;
  if (at(pos) == 'T' || at(pos) == ' ') {
    if (!digits(pos + 1, 2, hour) || at(pos + 3) != ':' || !digits(pos + 4, 2, minute)) {
      return std::nullopt;
    }
    pos += 6;
    if (at(pos) == ':') {
      if (!digits(pos + 1, 2, second)) return std::nullopt;
      pos += 3;
    }
    if (hour > 23 || minute > 59 || second > 59) return std::nullopt;
  }
  if (at(pos) == 'Z') ++pos;
  if (pos != text.size()) return std::nullopt;
  const double days = std::chrono::sys_days(date).time_since_epoch().count();
  return days * 86400.0 + hour * 3600.0 + minute * 60.0 + second;
}

/// --since: an age back from `now` or a UTC date, as Unix seconds.
Result<double> ParseSince(const std::string& text, double now) {
  if (auto age = ParseAge(text)) return now - *age;
  if (auto date = ParseDate(text)) return *date;
  return Status::Invalid("--since", fmt::format("'{}' is not an age (30d, 12h, 90m, 3600s) or a "
                                                "UTC date (2026-11-01, 2026-11-01T14:05)",
                                                text));
}

/// Unix seconds as UTC text in strftime's `format`.
std::string Utc(double seconds, const char* format) {
  if (!std::isfinite(seconds)) return "?";
  const auto t = static_cast<std::time_t>(std::floor(seconds));
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) return "?";
  char buffer[64];
  return std::strftime(buffer, sizeof buffer, format, &tm) > 0 ? buffer : "?";
}

/// "5 passed, 1 failed, 1 skipped": the stages counted by status, the usual ones first.
std::string StageSummary(const std::vector<store::StageRecord>& stages) {
  static constexpr std::string_view kOrder[] = {"passed",      "failed",  "error",
                                                "interrupted", "running", "skipped"};
  std::map<std::string, int> counts;
  for (const store::StageRecord& s : stages) ++counts[s.status.empty() ? "unknown" : s.status];
  std::string out;
  const auto add = [&](const std::string& status, int count) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", count, status);
  };
  for (std::string_view status : kOrder) {
    if (auto it = counts.find(std::string(status)); it != counts.end()) {
      add(it->first, it->second);
      counts.erase(it);
    }
  }
  for (const auto& [status, count] : counts) add(status, count);
  return out;
}

/// A figure for a table cell: four significant digits, whole numbers when large.
std::string FormatValue(double v) {
  const double a = std::abs(v);
  if (std::isfinite(v) && a >= 1e4 && a < 1e12) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

/// A series' params for a table cell: "n=1024,k=8" for a flat object, "" for {}.
std::string ParamsText(const std::string& params) {
  if (params.empty() || params == "{}") return "";
  const Json json = Json::parse(params, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return params;
  std::string out;
  for (const auto& item : json.items()) {
    const Json& value = item.value();
    out += out.empty() ? "" : ",";
    out += item.key() + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

std::string RunsText(const std::vector<store::RunRecord>& runs) {
  Table table({"started", "kind", "node", "level", "status", "stages", "plan", "bundle"},
              {false, false, false, true});
  for (const store::RunRecord& r : runs) {
    table.AddRow({Utc(r.started, "%Y-%m-%d %H:%M"), r.kind, r.node,
                  r.level ? std::to_string(*r.level) : "", r.status, StageSummary(r.stages), r.plan,
                  r.bundle});
  }
  return table.Render();
}

std::string TrendsText(const std::vector<store::Trend>& trends) {
  Table table({"node", "metric", "dtype", "params", "points", "first", "last", "change", "since",
               "verdict"},
              {false, false, false, false, true, true, true, true});
  std::map<std::string, std::size_t> verdicts;
  for (const store::Trend& t : trends) {
    const std::string unit = t.unit.empty() ? "" : " " + t.unit;
    table.AddRow({t.node, t.name, t.dtype, ParamsText(t.params), std::to_string(t.points),
                  FormatValue(t.first) + unit, FormatValue(t.last) + unit,
                  t.change ? fmt::format("{:+.1f}%", *t.change * 100.0) : "",
                  Utc(t.first_started, "%Y-%m-%d"), t.verdict});
    ++verdicts[t.verdict];
  }
  std::string summary;
  for (const char* verdict : {"regressed", "improved", "changed", "steady", "single"}) {
    if (auto it = verdicts.find(verdict); it != verdicts.end()) {
      summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", it->second, verdict);
    }
  }
  return table.Render() + fmt::format("\n{} series: {}\n", trends.size(), summary);
}

}  // namespace

int RunHistory(int argc, char** argv) {
  CommonOptions common;
  std::string db, node, kind, pattern, since_text;
  int limit = 20;
  double threshold_percent = 5.0;
  bool fail_on_regression = false;
  auto app = MakeApp(
      "history",
      "List the runs recorded in the results store (every collect and accept), newest first, "
      "or with --benchmark how each metric series (node, metric, dtype, params) moved from its "
      "first run to its last: regressed or improved when the last value is worse or better "
      "than the first by more than the threshold and (in log ratio) 3 times the larger cv of the "
      "two, steady "
      "otherwise, changed when the metric has no known better direction, single with one "
      "point; invalid results are left out. The store is $XDG_DATA_HOME/parity/parity.db, "
      "else ~/.local/share/parity/parity.db; a store of an older schema is upgraded when it is "
      "opened. Exit 0, 1 with --fail-on-regression when a series regressed, 2 on bad input.",
      &common);
  app->add_option("--db", db, "the results store (default: the path above)")->option_text("PATH");
  app->add_option("--node", node, "only runs on this host")->option_text("H");
  app->add_option("--kind", kind, "only runs of this kind: collect or accept")->option_text("K");
  app->add_option("--benchmark", pattern,
                  "show trends of the metrics whose name matches PATTERN (a glob: 'stream.*', "
                  "'gemm', '*' for all) instead of the runs")
      ->option_text("PATTERN");
  app->add_option("--since", since_text,
                  "only runs started in the last AGE (30d, 12h, 90m, 3600s) or since a UTC date "
                  "(2026-11-01, 2026-11-01T14:05)")
      ->option_text("AGE|DATE");
  app->add_option("--limit", limit, "at most N runs, newest first; 0 for all (default 20)")
      ->check(CLI::Range(0, 1 << 30))
      ->option_text("N");
  app->add_option("--threshold", threshold_percent,
                  "the smallest change, in percent of the first value, that counts as a "
                  "regression or improvement (default 5)")
      ->check(CLI::Range(0.0, 1e6))
      ->option_text("PCT");
  app->add_flag("--fail-on-regression", fail_on_regression,
                "with --benchmark: exit 1 when any series regressed");
  if (auto code = Parse(*app, common, argc, argv)) return *code;

  const bool trends_view = app->count("--benchmark") > 0;
  if (fail_on_regression && !trends_view) {
    return Fail(Status::Invalid(
        "", "--fail-on-regression needs --benchmark PATTERN ('*' for every metric)"));
  }
  std::optional<double> since;
  if (!since_text.empty()) {
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto parsed = ParseSince(since_text, now);
    if (!parsed.ok()) return Fail(parsed.status());
    since = *parsed;
  }
  if (db.empty()) db = store::DefaultPath();
  if (db.empty()) {
    return Fail(Status::Invalid("", "no results store: set XDG_DATA_HOME or HOME, or give --db"));
  }

  Json doc = Document("parity-history", 1);
  doc["db"] = db;
  std::error_code ec;
  if (!std::filesystem::exists(db, ec) && !ec) {
    // Nothing recorded yet: report that without creating the store.
    doc[trends_view ? "trends" : "runs"] = Json::array();
    if (common.human()) std::printf("no runs recorded in %s\n", db.c_str());
    if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
    return kExitOk;
  }
  auto opened = store::Store::Open(db);
  if (!opened.ok()) return Fail(opened.status());
  store::Store& results = **opened;

  bool regressed = false;
  std::string text;
  if (trends_view) {
    store::SeriesQuery query;
    query.node = node;
    query.kind = kind;
    query.name_glob = pattern;
    query.since = since;
    auto points = results.Series(query);
    if (!points.ok()) return Fail(points.status());
    const std::vector<store::Trend> trends =
        store::ComputeTrends(*points, threshold_percent / 100.0);
    Json list = Json::array();
    for (const store::Trend& t : trends) {
      list.push_back(store::TrendJson(t));
      regressed = regressed || t.verdict == "regressed";
    }
    doc["trends"] = std::move(list);
    text = trends.empty() ? fmt::format("no recorded metric matches '{}' in {}\n", pattern, db)
                          : TrendsText(trends);
  } else {
    store::RunQuery query;
    query.node = node;
    query.kind = kind;
    query.since = since;
    query.limit = static_cast<std::size_t>(limit);
    auto runs = results.Runs(query);
    if (!runs.ok()) return Fail(runs.status());
    Json list = Json::array();
    for (const store::RunRecord& r : *runs) list.push_back(store::RunJson(r));
    doc["runs"] = std::move(list);
    const bool filtered = !node.empty() || !kind.empty() || since.has_value();
    if (runs->empty()) {
      text = filtered ? fmt::format("no recorded run in {} matches\n", db)
                      : fmt::format("no runs recorded in {}\n", db);
    } else {
      text = RunsText(*runs);
    }
  }
  if (common.human()) std::fputs(text.c_str(), stdout);
  if (Status s = WriteJsonOutput(common, doc); !s.ok()) return Fail(s);
  return fail_on_regression && regressed ? kExitCheckFailed : kExitOk;
}

}  // namespace parity::cli
