// SPDX-License-Identifier: Apache-2.0
#include "accept/criteria.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <vector>

#include "core/file_util.h"
#include "core/spellcheck.h"
#include "core/yaml_util.h"
#include "quality/quality.h"

namespace parity::accept {
namespace {

Result<double> Number(const YAML::Node& node, std::string_view key, double min, double max) {
  if (!node.IsScalar()) return YamlAt(node, fmt::format("'{}' must be a number", key));
  const std::string& s = node.Scalar();
  double value = 0.0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), value);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(value)) {
    return YamlAt(node, fmt::format("'{}' must be a number, not '{}'", key, s));
  }
  if (value < min || value > max) {
    return YamlAt(node, fmt::format("'{}' is {}; it must be in [{}, {}]", key, s, min, max));
  }
  return value;
}

Result<int64_t> Count(const YAML::Node& node, std::string_view key) {
  if (!node.IsScalar()) return YamlAt(node, fmt::format("'{}' must be a count", key));
  const std::string& s = node.Scalar();
  int64_t value = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), value);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || value < 0) {
    return YamlAt(node, fmt::format("'{}' must be a count (0, 1, ...), not '{}'", key, s));
  }
  return value;
}

Status ParseNumerics(const YAML::Node& node, const std::string& dir, NumericsCriteria& out) {
  return ForEachKey(
      node, "numerics",
      {"tolerance", "rtol", "atol", "golden", "ratio", "explain", "allow_inherited"},
      [&](const std::string& key, const YAML::Node& v) -> Status {
        if (key == "tolerance") {
          PARITY_ASSIGN_OR_RETURN(out.tolerance.policy, YamlText(v, key));
          const std::string& p = out.tolerance.policy;
          if (p != "auto" && p != "torch" && p != "exact" && p != "explicit") {
            std::vector<std::string_view> policies = {"auto", "torch", "exact", "explicit"};
            std::string message = fmt::format("unknown tolerance policy '{}'", p);
            if (auto best = Suggest(p, policies))
              message += fmt::format(" (did you mean '{}'?)", *best);
            return YamlAt(v, message + "; the policies: auto, torch, exact, explicit (rtol/atol)");
          }
        } else if (key == "rtol" || key == "atol") {
          PARITY_ASSIGN_OR_RETURN(double x, Number(v, key, 0.0, 1e30));
          (key == "rtol" ? out.tolerance.rtol : out.tolerance.atol) = x;
        } else if (key == "golden") {
          PARITY_ASSIGN_OR_RETURN(std::string g, YamlText(v, key));
          std::filesystem::path p(g);
          out.golden = p.is_absolute() ? g : (std::filesystem::path(dir) / p).string();
        } else if (key == "ratio") {
          PARITY_ASSIGN_OR_RETURN(out.ratio, Number(v, key, 1.0, 1e6));
        } else if (key == "explain") {
          PARITY_ASSIGN_OR_RETURN(out.explain, YamlFlag(v, key));
        } else {
          PARITY_ASSIGN_OR_RETURN(out.allow_inherited, YamlFlag(v, key));
        }
        return Status::Ok();
      });
}

Status ParseQuality(const YAML::Node& node, QualityCriteria& out) {
  return ForEachKey(
      node, "quality", {"metric", "margin", "relative"},
      [&](const std::string& key, const YAML::Node& v) -> Status {
        if (key == "metric") {
          PARITY_ASSIGN_OR_RETURN(out.metric, YamlText(v, key));
          const auto metrics = QualityMetrics();
          if (std::find(metrics.begin(), metrics.end(), out.metric) == metrics.end()) {
            std::string message = fmt::format("unknown metric '{}'", out.metric);
            if (auto best = Suggest(out.metric, metrics)) {
              message += fmt::format(" (did you mean '{}'?)", *best);
            }
            return YamlAt(v, message);
          }
        } else if (key == "margin") {
          PARITY_ASSIGN_OR_RETURN(out.margin, Number(v, key, 0.0, 1e9));
        } else {
          PARITY_ASSIGN_OR_RETURN(out.relative, YamlFlag(v, key));
        }
        return Status::Ok();
      });
}

Status ParseThroughput(const YAML::Node& node, ThroughputCriteria& out) {
  return ForEachKey(
      node, "throughput", {"min_ratio", "suites", "confidence"},
      [&](const std::string& key, const YAML::Node& v) -> Status {
        if (key == "min_ratio") {
          PARITY_ASSIGN_OR_RETURN(out.min_ratio, Number(v, key, 0.0, 1e6));
        } else if (key == "confidence") {
          PARITY_ASSIGN_OR_RETURN(out.confidence, Number(v, key, 0.5, 0.9999));
        } else {
          if (!v.IsMap()) return YamlAt(v, "'suites' must map suite names to minimum ratios");
          for (const auto& entry : v) {
            const std::string suite = entry.first.IsScalar() ? entry.first.Scalar() : "";
            if (suite.empty()) return YamlAt(entry.first, "a suite name is empty");
            PARITY_ASSIGN_OR_RETURN(double x, Number(entry.second, "suites." + suite, 0.0, 1e6));
            out.suites[suite] = x;
          }
        }
        return Status::Ok();
      });
}

Status ParseStability(const YAML::Node& node, StabilityCriteria& out) {
  return ForEachKey(node, "stability",
                    {"max_junction_celsius", "max_sdc_events", "max_uncorrectable_ecc",
                     "max_xid_events", "max_unrecovered_faults", "max_fatal_alerts"},
                    [&](const std::string& key, const YAML::Node& v) -> Status {
                      if (key == "max_junction_celsius") {
                        PARITY_ASSIGN_OR_RETURN(out.max_junction_celsius,
                                                Number(v, key, -273.15, 1000.0));
                        return Status::Ok();
                      }
                      PARITY_ASSIGN_OR_RETURN(int64_t n, Count(v, key));
                      if (key == "max_sdc_events") out.max_sdc_events = n;
                      if (key == "max_uncorrectable_ecc") out.max_uncorrectable_ecc = n;
                      if (key == "max_xid_events") out.max_xid_events = n;
                      if (key == "max_unrecovered_faults") out.max_unrecovered_faults = n;
                      if (key == "max_fatal_alerts") out.max_fatal_alerts = n;
                      return Status::Ok();
                    });
}

}  // namespace

double ThroughputCriteria::MinRatio(const std::string& suite) const {
  auto it = suites.find(suite);
  return it == suites.end() ? min_ratio : it->second;
}

Result<Criteria> ParseCriteria(std::string_view text, const std::string& path) {
  Criteria criteria;
  criteria.source = path;
  PARITY_ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(text, path));
  if (root.IsNull()) return criteria;  // an empty file: the defaults
  const std::string dir =
      std::filesystem::absolute(std::filesystem::path(path)).parent_path().string();
  Status status;
  try {
    status = ForEachKey(root, "", {"numerics", "quality", "throughput", "stability", "strict"},
                        [&](const std::string& key, const YAML::Node& v) -> Status {
                          if (key == "numerics") return ParseNumerics(v, dir, criteria.numerics);
                          if (key == "quality") return ParseQuality(v, criteria.quality);
                          if (key == "throughput") return ParseThroughput(v, criteria.throughput);
                          if (key == "stability") return ParseStability(v, criteria.stability);
                          PARITY_ASSIGN_OR_RETURN(criteria.strict, YamlFlag(v, key));
                          return Status::Ok();
                        });
  } catch (const YAML::Exception& e) {
    status = Status::Invalid("", e.what());
  }
  if (!status.ok()) return Status::Invalid(path, status.message());
  NumericsCriteria& n = criteria.numerics;
  if ((n.tolerance.rtol || n.tolerance.atol) && n.tolerance.policy == "auto") {
    n.tolerance.policy = "explicit";
  }
  if (n.tolerance.policy == "explicit" && !n.tolerance.rtol && !n.tolerance.atol) {
    return Status::Invalid(path, "numerics: tolerance 'explicit' needs rtol or atol");
  }
  if (n.tolerance.policy == "explicit") {
    if (!n.tolerance.rtol) n.tolerance.rtol = 0.0;
    if (!n.tolerance.atol) n.tolerance.atol = 0.0;
  }
  return criteria;
}

Result<Criteria> LoadCriteria(const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, kMaxCriteriaBytes, "criteria"));
  return ParseCriteria(text, path);
}

Json CriteriaToJson(const Criteria& c) {
  Json numerics = {{"tolerance", c.numerics.tolerance.policy},
                   {"ratio", c.numerics.ratio},
                   {"explain", c.numerics.explain},
                   {"allow_inherited", c.numerics.allow_inherited}};
  if (c.numerics.tolerance.rtol) numerics["rtol"] = *c.numerics.tolerance.rtol;
  if (c.numerics.tolerance.atol) numerics["atol"] = *c.numerics.tolerance.atol;
  numerics["golden"] = c.numerics.golden ? Json(*c.numerics.golden) : Json();
  Json suites = Json::object();
  for (const auto& [suite, ratio] : c.throughput.suites) suites[suite] = ratio;
  return {{"source", c.source},
          {"strict", c.strict},
          {"numerics", numerics},
          {"quality",
           {{"metric", c.quality.metric},
            {"margin", c.quality.margin},
            {"relative", c.quality.relative}}},
          {"throughput",
           {{"min_ratio", c.throughput.min_ratio},
            {"suites", suites},
            {"confidence", c.throughput.confidence}}},
          {"stability",
           {{"max_junction_celsius", c.stability.max_junction_celsius},
            {"max_sdc_events", c.stability.max_sdc_events},
            {"max_uncorrectable_ecc", c.stability.max_uncorrectable_ecc},
            {"max_xid_events", c.stability.max_xid_events},
            {"max_unrecovered_faults", c.stability.max_unrecovered_faults},
            {"max_fatal_alerts", c.stability.max_fatal_alerts}}}};
}

}  // namespace parity::accept
