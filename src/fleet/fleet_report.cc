// SPDX-License-Identifier: Apache-2.0
#include "fleet/fleet_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "accept/bundle_view.h"
#include "bench/result.h"
#include "bench/stats.h"
#include "core/text_table.h"
#include "env/env_diff.h"
#include "fleet/fleet_collect.h"

namespace parity::fleet {
namespace {

namespace fs = std::filesystem;

// The commonest value of `key` over the members' flattened fingerprints (ties: the first).
Json Commonest(const std::map<std::string, std::map<std::string, Json>>& prints,
               const std::string& key) {
  std::vector<std::pair<Json, int>> counts;
  for (const auto& [member, flat] : prints) {
    const auto it = flat.find(key);
    const Json v = it == flat.end() ? Json(nullptr) : it->second;
    auto c =
        std::find_if(counts.begin(), counts.end(), [&](const auto& p) { return p.first == v; });
    if (c == counts.end()) {
      counts.emplace_back(v, 1);
    } else {
      ++c->second;
    }
  }
  auto best = std::max_element(counts.begin(), counts.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  return best == counts.end() ? Json(nullptr) : best->first;
}

}  // namespace

bool ExplainsSpeed(const std::string& key) {
  static const char* const kWords[] = {"driver",
                                       "firmware",
                                       "vbios",
                                       "clock",
                                       "power",
                                       "pcie",
                                       "link",
                                       "numa",
                                       "kernel",
                                       "version",
                                       "environment",
                                       "settings",
                                       "model",
                                       "memory_bytes",
                                       "cores",
                                       "threads",
                                       "governor",
                                       "gfx_target",
                                       "compute_capability"};
  std::string lower = key;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* w : kWords) {
    if (lower.find(w) != std::string::npos) return true;
  }
  return false;
}

double MedianAbsoluteDeviation(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  const double m = bench::Median(values);
  std::vector<double> d;
  d.reserve(values.size());
  for (double v : values) d.push_back(std::fabs(v - m));
  return bench::Median(d);
}

Result<FleetReport> MakeFleetReport(const std::string& fleet_dir,
                                    const FleetReportOptions& options) {
  FleetReport report;
  report.fleet_dir = fleet_dir;
  PARITY_ASSIGN_OR_RETURN(report.manifest, LoadFleetManifest(fleet_dir));
  const std::string manifest_path = (fs::path(fleet_dir) / "fleet.json").string();
  std::map<std::string, std::map<std::string, Json>> prints;  // member → flattened fingerprint
  std::map<std::string, FleetBenchmark> by_key;
  std::vector<std::string> order;
  for (const Json& m : report.manifest["members"]) {
    const std::string name = m["name"];
    if (m["status"] != "ok" || !m.contains("bundle") || !m["bundle"].is_string()) {
      report.failed.push_back({{"name", name},
                               {"rank", m.value("rank", Json())},
                               {"reason", m.value("reason", Json("no bundle"))}});
      continue;
    }
    const std::string rel = m["bundle"];
    if (rel.empty() || rel.front() == '/' || rel.find("..") != std::string::npos) {
      return Status::Invalid(manifest_path, fmt::format("member {}: 'bundle' '{}' is not a path "
                                                        "inside the fleet directory",
                                                        name, rel));
    }
    PARITY_ASSIGN_OR_RETURN(accept::BundleView bundle,
                            accept::OpenBundle((fs::path(fleet_dir) / rel).string()));
    if (!bundle.problem.empty()) return Status::Invalid(bundle.path, bundle.problem);
    report.members.push_back(name);
    if (bundle.manifest.contains("fingerprint")) {
      prints[name] = env::Flatten(bundle.manifest["fingerprint"], "");
    } else {
      prints[name] = {};
    }
    for (const accept::StageView* stage : bundle.OfKind("bench")) {
      if (stage->result.empty()) continue;
      PARITY_ASSIGN_OR_RETURN(Json doc,
                              accept::ReadBundleJson(bundle, stage->result, "parity-bench"));
      PARITY_ASSIGN_OR_RETURN(bench::BenchDocument parsed,
                              bench::ParseBenchDocument(doc.dump(), bundle.PathOf(stage->result)));
      for (const bench::BenchResult& r : parsed.results) {
        if (r.outcome != bench::Outcome::kOk || r.samples.empty()) continue;
        const std::string key = fmt::format("{}/{}", stage->name, r.Key());
        auto [it, fresh] = by_key.try_emplace(key);
        if (fresh) {
          order.push_back(key);
          it->second.key = key;
          it->second.label = fmt::format("{}: {}", stage->name, r.Label());
          it->second.unit = r.unit;
          it->second.higher_is_better = r.higher_is_better;
        }
        it->second.values[name] =
            r.run_medians.empty() ? bench::Median(r.samples) : bench::Median(r.run_medians);
      }
    }
  }
  if (report.members.size() < 3) {
    report.notes.push_back(fmt::format(
        "{} member(s) with results: outliers need at least 3 to tell the fleet's median apart",
        report.members.size()));
  }
  for (const std::string& key : order) {
    FleetBenchmark b = std::move(by_key[key]);
    std::vector<double> values;
    for (const auto& [member, v] : b.values) values.push_back(v);
    b.median = bench::Median(values);
    b.mad = MedianAbsoluteDeviation(values);
    b.min = *std::min_element(values.begin(), values.end());
    b.max = *std::max_element(values.begin(), values.end());
    const double spread = std::max(b.mad, options.min_relative_mad * std::fabs(b.median));
    if (values.size() >= 3 && spread > 0.0) {
      for (const std::string& member : report.members) {
        const auto it = b.values.find(member);
        if (it == b.values.end()) continue;
        const double off = b.higher_is_better ? b.median - it->second : it->second - b.median;
        if (off <= options.k * spread) continue;
        Outlier o;
        o.member = member;
        o.value = it->second;
        o.deviations = off / spread;
        for (const auto& [k, v] : prints[member]) {
          if (!ExplainsSpeed(k)) continue;
          const Json fleet = Commonest(prints, k);
          if (fleet != v) o.differences.push_back({k, v, fleet});
        }
        for (const auto& [other, flat] : prints) {  // keys this member lacks
          for (const auto& entry : flat) {
            const std::string& k = entry.first;  // a plain name: lambdas capture it in clang 15
            if (ExplainsSpeed(k) && !prints[member].contains(k)) {
              const Json fleet = Commonest(prints, k);
              if (!fleet.is_null() &&
                  std::none_of(o.differences.begin(), o.differences.end(),
                               [&](const FingerprintDifference& d) { return d.key == k; })) {
                o.differences.push_back({k, nullptr, fleet});
              }
            }
          }
        }
        b.outliers.push_back(std::move(o));
        ++report.outliers;
      }
    }
    report.benchmarks.push_back(std::move(b));
  }
  return report;
}

Json FleetReportJson(const FleetReport& report, const FleetReportOptions& options) {
  Json doc = Document("parity-fleet-report", 1);
  doc["fleet"] = report.fleet_dir;
  doc["k"] = options.k;
  doc["members"] = report.members;
  doc["failed"] = report.failed;
  Json list = Json::array();
  for (const FleetBenchmark& b : report.benchmarks) {
    Json outliers = Json::array();
    for (const Outlier& o : b.outliers) {
      Json diffs = Json::array();
      for (const FingerprintDifference& d : o.differences) {
        diffs.push_back({{"key", d.key}, {"value", d.value}, {"fleet", d.fleet}});
      }
      outliers.push_back({{"member", o.member},
                          {"value", o.value},
                          {"deviations", o.deviations},
                          {"differences", std::move(diffs)}});
    }
    list.push_back({{"key", b.key},
                    {"label", b.label},
                    {"unit", b.unit},
                    {"better", b.higher_is_better ? "higher" : "lower"},
                    {"median", b.median},
                    {"mad", b.mad},
                    {"min", b.min},
                    {"max", b.max},
                    {"values", b.values},
                    {"outliers", std::move(outliers)}});
  }
  doc["benchmarks"] = std::move(list);
  doc["outliers"] = report.outliers;
  doc["notes"] = report.notes;
  doc["inject"] = report.manifest.value("inject", Json());
  return doc;
}

std::string FleetReportText(const FleetReport& report, const FleetReportOptions& options) {
  std::string text = fmt::format("parity fleet report: {} ({} members with results, {} failed)\n",
                                 report.fleet_dir, report.members.size(), report.failed.size());
  if (const Json inject = report.manifest.value("inject", Json()); inject.is_string()) {
    text += fmt::format("  injected for a test: {}\n", inject.get<std::string>());
  }
  for (const Json& f : report.failed) {
    text += fmt::format("  FAILED {}: {}\n", f["name"].get<std::string>(), f["reason"].dump());
  }
  Table table({"benchmark", "unit", "median", "MAD", "min", "max", "outliers"},
              {false, false, true, true, true, true, false});
  for (const FleetBenchmark& b : report.benchmarks) {
    std::string names;
    for (const Outlier& o : b.outliers) {
      names += fmt::format("{}{} ({:.3g}, {:.1f} MAD)", names.empty() ? "" : ", ", o.member,
                           o.value, o.deviations);
    }
    table.AddRow({b.label, b.unit, fmt::format("{:.4g}", b.median), fmt::format("{:.3g}", b.mad),
                  fmt::format("{:.4g}", b.min), fmt::format("{:.4g}", b.max),
                  names.empty() ? "-" : names});
  }
  text += fmt::format("\n{}", table.Render("  "));
  for (const FleetBenchmark& b : report.benchmarks) {
    for (const Outlier& o : b.outliers) {
      text += fmt::format(
          "\nOUTLIER {} on {}: {:.4g} {} against the fleet's {:.4g} ({:.1f} MAD "
          "on the slow side; k = {})\n",
          o.member, b.label, o.value, b.unit, b.median, o.deviations, options.k);
      if (o.differences.empty()) {
        text += "  its fingerprint matches the fleet's in every key that could explain it\n";
      }
      for (const FingerprintDifference& d : o.differences) {
        text += fmt::format("  {}: {} (fleet: {})\n", d.key, d.value.dump(), d.fleet.dump());
      }
    }
  }
  for (const std::string& n : report.notes) text += fmt::format("note: {}\n", n);
  text += fmt::format("\n{} outlier(s)\n", report.outliers);
  return text;
}

}  // namespace parity::fleet
